"""Struktury danych przepływające przez moduły: dokument → fragmenty → wyniki wyszukiwania; nazwy plików dla ludzi."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any, NamedTuple


@dataclass
class Document:
    """Tekst jednego pliku, strona po stronie (plik tekstowy to jedna „strona”)."""

    path: Path
    pages: list[str]
    kind: str  # "pdf", "txt", "md", "docx"
    footnotes: dict[str, str] = field(default_factory=dict)  # marker ("7", "I") → footnote text

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def text(self) -> str:
        return "\n".join(self.pages)


@dataclass
class Chunk:
    """Jednostka do zaindeksowania: artykuł/paragraf (lub jego część) albo akapit zwykłego dokumentu."""

    text: str
    art: str | None
    page_from: int
    page_to: int
    part: int = 1
    heading: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# Fields of a hit in JSON, always present (null when a chunk lacks one), in this order; then optional unit notes
# (uchylony, wersja, akt_zmieniany, zalacznik) when a chunk has them.
_HIT_JSON_FIELDS = (
    "plik", "art", "fragment", "czesci", "strona", "strona_do", "typ", "rok", "tytul", "dz_u", "rozdzial", "sciezka",
)
# Bookkeeping of the index (change detection), and a duplicate of "strona".
_INTERNAL_METADATA = {"hash", "tekst_hash", "strona_od"}


def unit_label(art: str | None) -> str:
    """„art. 5”, „art. 385^1”, „§ 3” (paragraf bez przedrostka „art.”); pusty napis, gdy jednostki nie ma."""
    art = (art or "").strip()
    if not art or art == "None":
        return ""
    return art if art.startswith("§") else f"art. {art}"


@dataclass
class Hit:
    """Fragment zwrócony przez wyszukiwanie; ``similarity`` to podobieństwo kosinusowe (więcej = lepiej)."""

    id: str
    text: str
    metadata: dict[str, Any]
    similarity: float
    score: float = 0.0  # wynik fuzji w trybie hybrydowym/słownym (ranking), 0 w trybie wektorowym
    cited: bool = False  # jednostka wskazana w pytaniu z aktem („art 90 kc”): pierwsza i nigdy nie odmawiana
    subunit: str = ""  # „§ 1”, „ust. 3 pkt 2”, gdy pytanie wskazało jednostkę z nimi („art. 148 § 1 kk”): część cytatu

    @property
    def file(self) -> str:
        return str(self.metadata.get("plik", ""))

    @property
    def art(self) -> str:
        return str(self.metadata.get("art", ""))

    @property
    def page(self) -> int:
        return int(self.metadata.get("strona", 0))

    @property
    def unit(self) -> str:
        """Jednostka do wyświetlenia i cytatu: „art. 5”, „art. 385^1”, „§ 3”; pusta, gdy fragment jej nie ma."""
        return unit_label(self.art)

    @property
    def cited_unit(self) -> str:
        """Jednostka, jak ją cytują prawnicy: z częścią (§, ust., pkt), którą wskazało pytanie, i zwyczajowym
        skrótem aktu – „art. 505 § 1 k.p.c.”, „art. 505 k.p.c.”; bez skrótu – ``unit`` (z częścią)."""
        if not self.unit:
            return ""
        return " ".join(part for part in (self.unit, self.subunit, str(self.metadata.get("skrot") or "")) if part)

    def to_json(self) -> dict[str, Any]:
        """Stała kolejność pól (docs/PRZEWODNIK.md, „Pola JSON”); bez pól wewnętrznych indeksu."""
        meta = self.metadata
        extra = sorted(key for key in meta if key not in _HIT_JSON_FIELDS and key not in _INTERNAL_METADATA)
        return {
            "id": self.id,
            **{key: meta.get(key) for key in _HIT_JSON_FIELDS},
            "rok": meta.get("rok") or None,  # 0: the document gives no year
            **{key: meta[key] for key in extra},
            **({"podjednostka": self.subunit} if self.subunit else {}),
            "podobienstwo": round(self.similarity, 4),
            "wynik": round(self.score, 6),
            "tekst": self.text,
        }


class Exchange(NamedTuple):
    """Wcześniejsza tura rozmowy tak, jak ją widzi model planujący: pytanie użytkownika i odpowiedź asystenta."""

    question: str
    answer: str


@dataclass
class Plan:
    """Plan zapytania od modelu czatu (``planning``): zapytania językiem ustaw, pliki, które najpewniej
    zawierają odpowiedź (``[]``: żaden), i jednostki („art. 144”, „§ 6”) – już sprawdzone z indeksem.

    ``error``: dlaczego planu nie ma (wtedy wyszukiwanie jest zwykłe) – zdaniem CLI, z adresem modelu i zmienną
    do sprawdzenia; ``team_error``: to samo słowami strony i MCP (``None``: to samo zdanie); ``cached``: plan
    z pamięci na dysku; ``standalone``: w rozmowie – pytanie dopowiadające przepisane przez model tak, żeby było
    zrozumiałe bez rozmowy (to jego się szuka; ``None``: pytanie zostaje, jak je zadano)."""

    queries: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    cached: bool = False
    standalone: str | None = None
    error: str | None = None
    team_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self, surface: str = "cli") -> dict[str, Any]:
        return {
            "zapytania": self.queries,
            "dokumenty": self.documents,
            "jednostki": self.units,
            "z_pamieci": self.cached,
            "blad": self.team_error if surface != "cli" and self.team_error is not None else self.error,
        }


class SearchResult(list[Hit]):
    """Wynik wyszukiwania: lista trafień (najlepsze pierwsze) i, gdy jest pusta, powód – ``"filtry"`` (filtry nie
    pasują do żadnego fragmentu) albo ``"prog"`` (nic nie jest wystarczająco trafne). ``plan``: plan zapytania
    od modelu czatu, gdy wyszukiwanie było planowane (``planning.Plan``), inaczej ``None``.

    Podklasa listy, żeby ``for hit in index.search(...)`` działało jak dotąd."""

    def __init__(self, hits: list[Hit] | None = None, reason: str | None = None, plan: Any = None) -> None:
        super().__init__(hits or [])
        self.reason = None if self else reason
        self.plan = plan

    @property
    def plan_failed(self) -> bool:
        """Wyszukiwanie miało być planowane, ale plan się nie udał (model czatu nie odpowiedział planem)."""
        return self.plan is not None and not self.plan.ok

    def to_json(self, surface: str = "cli") -> dict[str, Any]:
        """``szukaj --json`` i ``/api/szukaj`` (``surface="web"``): obiekt, bo sama lista nie powie, dlaczego
        jest pusta."""
        return {
            "wyniki": [hit.to_json() for hit in self],
            "powod": self.reason,
            "plan": self.plan.to_json(surface) if self.plan is not None else None,
        }


# Names of files for people: the bare name, with as many folders above it as same-named files from other folders
# need ("it/regulamin.md"). Answers cite a file by it and `lista` shows it; the team (page, JSON API, answer stream,
# saved conversations, MCP) sees a file only by it – the server's folders are none of its business (issue 38). The
# CLI, the operator's tool, keeps full paths in `--json`.


_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")  # C:\… or \\server\share\…


def stored_path(path: str) -> PurePath:
    """Ścieżka z indeksu jako ścieżka systemu, na którym ją zapisano: do wspólnego serwera Chromy indeksują też
    komputery z Windows („C:\\Kancelaria\\umowa.docx”)."""
    return PureWindowsPath(path) if _WINDOWS_PATH.match(path) else PurePosixPath(path)


def distinct_names(paths: Iterable[str]) -> dict[str, str]:
    """Ścieżka → nazwa, pod którą użytkownik ją rozpozna i poda (``--plik``, ``pokaz``, ``usun``): sama nazwa
    pliku, a przy imiennikach z innych folderów – z tyloma folderami nad nią, ile trzeba. Nigdy z korzeniem
    („/”): plik, którego cała ścieżka jest końcówką ścieżki imiennika, ma ją bez niego."""
    paths_by_name: dict[str, set[str]] = {}
    for path in paths:
        paths_by_name.setdefault(stored_path(path).name, set()).add(path)
    names: dict[str, str] = {}
    for name, same in paths_by_name.items():
        if len(same) == 1:
            names[same.pop()] = name
            continue
        parts = {path: _folders_and_name(path) for path in same}
        labels = {path: path for path in same}
        for depth in range(2, max(len(p) for p in parts.values()) + 1):
            labels = {path: "/".join(p[-depth:]) for path, p in parts.items()}
            if len(set(labels.values())) == len(labels):
                break
        names.update(labels)
    return names


def paths_named(name: str, paths: Iterable[str]) -> list[str]:
    """Ścieżki, które wskazuje nazwa z folderem („it/regulamin.md”) albo sama nazwa: te, które się nią kończą; gdy
    kilka – ta, której to nazwa (``distinct_names``): „x/r.md” to /x/r.md, choć kończy też /y/x/r.md."""
    wanted = tuple(part for part in re.split(r"[\\/]", name.strip()) if part)
    ending = [path for path in paths if wanted and _folders_and_name(path)[-len(wanted):] == wanted]
    if len(ending) < 2:
        return ending
    return [path for path, shown in distinct_names(ending).items() if shown == "/".join(wanted)] or ending


def _folders_and_name(path: str) -> tuple[str, ...]:
    stored = stored_path(path)
    return stored.parts[1:] if stored.anchor else stored.parts


@dataclass(frozen=True)
class ShownNames:
    """Ścieżki plików indeksu → nazwy, pod którymi widzi je zespół (``distinct_names``), i odpowiedzi JSON z tymi
    nazwami zamiast ścieżek: pole ``sciezka`` trafienia i pliku, ``inne_sciezki`` pliku. Z ``served`` (serwer:
    czy ma plik o tej ścieżce na dysku) trafienie dostaje też pole ``plik_na_serwerze``."""

    by_path: dict[str, str] = field(default_factory=dict)
    served: Callable[[str], bool] | None = None

    @classmethod
    def of(cls, documents: Iterable[str], copies: Iterable[str] = ()) -> ShownNames:
        """``documents``: ścieżki dokumentów indeksu – nazwane jak w ``lista`` i w cytatach; ``copies``: drugie ścieżki
        tych samych dokumentów (``inne_sciezki``) – nazwane tak, żeby nie pomylić ich z żadnym dokumentem."""
        documents, copies = list(documents), list(copies)
        every = distinct_names([*documents, *copies])
        return cls({**{path: every[path] for path in copies}, **distinct_names(documents)})

    def name(self, path: str) -> str:
        """Nazwa pliku o ścieżce ``path``. Ścieżka spoza indeksu (plik usunięty od zapisu rozmowy) – sama nazwa
        pliku; to, co nie jest ścieżką bezwzględną, jest już nazwą (rozmowa zapisana z nazwami) i zostaje."""
        known = self.by_path.get(path)
        if known is not None:
            return known
        stored = stored_path(path)
        return stored.name if stored.is_absolute() else path

    def hit(self, hit: dict[str, Any]) -> dict[str, Any]:
        """Trafienie w JSON (``Hit.to_json``) z nazwą w polu ``sciezka``."""
        path = str(hit.get("sciezka") or "")
        shown = {**hit, "sciezka": self.name(path)} if path else dict(hit)
        if self.served is not None:
            shown["plik_na_serwerze"] = self.served(self._path_of(path or str(hit.get("plik", ""))))
        return shown

    def _path_of(self, recorded: str) -> str:
        """Ścieżka pliku zapisanego ścieżką albo nazwą (rozmowa zapisana z nazwami); nieznana nazwa zostaje sobą."""
        if recorded in self.by_path:
            return recorded
        paths = [path for path, name in self.by_path.items() if name == recorded]
        return paths[0] if len(paths) == 1 else recorded

    def hits(self, hits: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self.hit(hit) for hit in hits]

    def file(self, file: dict[str, Any]) -> dict[str, Any]:
        """Plik w JSON (``FileInfo.to_json``) z nazwami w polach ``sciezka`` i ``inne_sciezki``."""
        return {**file, "sciezka": self.name(str(file["sciezka"])),
                "inne_sciezki": [self.name(str(path)) for path in file.get("inne_sciezki", [])]}

    def conversation(self, saved: dict[str, Any]) -> dict[str, Any]:
        """Zapis rozmowy (``Conversation.to_json``) ze źródłami tur nazwanymi – także rozmowy zapisanej, zanim
        zapis przestał zawierać ścieżki."""
        return {**saved, "tury": [{**turn, "zrodla": self.hits(turn.get("zrodla", []))} for turn in saved["tury"]]}
