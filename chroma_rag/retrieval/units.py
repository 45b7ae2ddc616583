"""Cała jednostka (artykuł, paragraf) złożona z jej fragmentów: części sklejone bez zakładek, ścieżka nagłówków,
strony i brzmienia – obecne „[…]” i przyszłe „<…>” – osobno."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import AmbiguousFile, MissingUnit, UserError
from ..filters import SearchFilters, build_where, normalize_article
from ..ingest.acts import cited_short_name
from ..models import Hit, unit_label
from .validation import resolve_files

# Metadata telling apart different units printed with the same number in one file (a quoted article of an amended
# act, an annex); the act's own unit, without them, comes first.
_ORIGIN_KEYS = ("akt_zmieniany", "zalacznik")
VERSION_LABELS = {"obecna": "[obecna]", "przyszla": "<przyszła>"}
# Parts of a long unit overlap by ~200 characters (chunking.UNIT_OVERLAP); a shorter common edge is a coincidence.
_MIN_OVERLAP = 20
_MAX_OVERLAP = 1000


@dataclass
class UnitVersion:
    """Jedno brzmienie jednostki: ``version`` to ``"obecna"``, ``"przyszla"`` albo ``None`` (jedyne)."""

    version: str | None
    text: str
    heading: str
    page_from: int
    page_to: int
    parts: int

    def to_json(self) -> dict[str, Any]:
        return {
            "wersja": self.version,
            "rozdzial": self.heading,
            "strona": self.page_from,
            "strona_do": self.page_to,
            "fragmenty": self.parts,
            "tekst": self.text,
        }


@dataclass
class Unit:
    """Cała jednostka pliku; ``versions`` – jej brzmienia (zwykle jedno)."""

    file: str
    art: str
    title: str
    repealed: bool
    versions: list[UnitVersion] = field(default_factory=list)
    path: str = ""  # the document's recorded path: never in to_json (a server's folders are not the team's business)

    @property
    def label(self) -> str:
        """„art. 5”, „§ 3” – sama jednostka."""
        return self.art if self.art.startswith("§") else f"art. {self.art}"

    @property
    def short(self) -> str:
        """Zwyczajowy skrót aktu po numerze jednostki („k.p.c.”, „Konstytucji RP”); pusty, gdy akt go nie ma."""
        return cited_short_name(self.title)

    @property
    def cited_label(self) -> str:
        """Jednostka ze skrótem aktu, jak w cytatach trafień: „art. 505 k.p.c.”, „§ 3”."""
        return f"{self.label} {self.short}" if self.short else self.label

    @property
    def page_from(self) -> int:
        return min(v.page_from for v in self.versions)

    @property
    def page_to(self) -> int:
        return max(v.page_to for v in self.versions)

    def to_json(self) -> dict[str, Any]:
        return {
            "plik": self.file,
            "art": self.art,
            "jednostka": self.label,
            "tytul": self.title,
            "skrot": self.short,
            "uchylony": self.repealed,
            "strona": self.page_from,
            "strona_do": self.page_to,
            "wersje": [v.to_json() for v in self.versions],
        }


def unit_file(requested: str, indexed: list[tuple[str, str]], holders: dict[str, str]) -> SearchFilters:
    """Plik jednostki jako filtr – nazwa, ścieżka albo nazwa z folderem, jak ``--plik`` (``resolve_files``, te same
    argumenty). Nazwa kilku różnych plików (różna treść w różnych folderach) to błąd z ich ścieżkami: sklejenie
    ich artykułów dałoby jednostkę, której nie ma w żadnym."""
    selection = resolve_files(SearchFilters(files=[requested]), indexed, holders)
    documents = sorted({holders.get(path, path) for name, path in indexed if name in selection.files})
    if len(documents) > 1:
        raise AmbiguousFile(requested, documents, cli_example=f"chroma-rag pokaz {documents[0]} ART")
    return selection


def unit_where(selection: SearchFilters, art: str) -> dict[str, Any] | None:
    """Filtr wszystkich fragmentów jednostki – także uchylonej (o nią też można zapytać wprost)."""
    return build_where(replace(selection, articles=[art], include_repealed=True))


def assemble_unit(file: str, art: str, chunks: list[Hit]) -> Unit:
    """Jednostka z jej fragmentów (w dowolnej kolejności); błąd użytkownika, gdy ich nie ma."""
    if not art.strip():
        raise UserError("Podaj numer artykułu lub paragrafu, np. 23, 385^1 albo '§ 6'.")
    if not chunks:
        raise MissingUnit(file, unit_label(art))
    own = min(chunks, key=lambda c: tuple(bool(c.metadata.get(k)) for k in _ORIGIN_KEYS))
    origin = tuple(own.metadata.get(k) for k in _ORIGIN_KEYS)
    same = [c for c in chunks if tuple(c.metadata.get(k) for k in _ORIGIN_KEYS) == origin]
    by_version: dict[str | None, list[Hit]] = {}
    for chunk in sorted(same, key=_reading_order):
        by_version.setdefault(chunk.metadata.get("wersja") or None, []).append(chunk)
    meta = own.metadata
    return Unit(
        file=str(meta.get("plik", file)),
        art=str(meta.get("art") or normalize_article(art)),
        title=str(meta.get("tytul") or ""),
        repealed=all(bool(c.metadata.get("uchylony")) for c in same),
        versions=[_version(version, parts) for version, parts in by_version.items()],
        path=str(meta.get("sciezka") or ""),
    )


def _reading_order(chunk: Hit) -> tuple[int, int, int]:
    version_rank = {"obecna": 0, "przyszla": 1}.get(str(chunk.metadata.get("wersja")), 0)
    return version_rank, int(chunk.metadata.get("fragment", 1)), int(chunk.metadata.get("strona_od", 0))


def _version(version: str | None, parts: list[Hit]) -> UnitVersion:
    text = parts[0].text
    for part in parts[1:]:
        text = join_overlapping(text, part.text)
    return UnitVersion(
        version=version,
        text=text,
        heading=str(parts[0].metadata.get("rozdzial") or ""),
        page_from=min(int(p.metadata.get("strona_od", p.page)) for p in parts),
        page_to=max(int(p.metadata.get("strona_do", p.page)) for p in parts),
        parts=len(parts),
    )


def join_overlapping(first: str, second: str) -> str:
    """Dwie kolejne części jednostki: druga zaczyna się zakładką – końcem pierwszej – którą pomijamy."""
    longest = min(len(first), len(second), _MAX_OVERLAP)
    for size in range(longest, _MIN_OVERLAP - 1, -1):
        if first.endswith(second[:size]):
            return first + second[size:]
    return f"{first}\n{second}"
