"""Co przebieg ``indeksuj`` zgłasza: powiadomienia o postępie w trakcie, podsumowanie na koniec i uwagi o plikach,
które trzeba zaindeksować ponownie albo które zniknęły z folderów.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..ingest.chunking import CHUNKER_VERSION
from ..plural import FILE, count
from ..storage.registry import FileRecord
from .discovery import vanished


@dataclass
class IndexReport:
    """Podsumowanie przebiegu: co zaindeksowano, co bez zmian, co pominięto, co usunięto, ile trwało."""

    indexed: dict[str, int] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)
    same_document: dict[str, str] = field(default_factory=dict)  # new path → path already holding its chunks
    notes: list[str] = field(default_factory=list)
    embedded: int = 0
    reused: int = 0
    orphans_removed: int = 0
    pages: int = 0
    # seconds per stage; "czekanie na …" – the main thread waiting for a background stage; Index.add adds
    # "indeks slow" (catching the keyword index up after the write)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"wczytywanie": 0.0, "ciecie": 0.0, "embedding": 0.0, "zapis": 0.0}
    )

    @property
    def chunks(self) -> int:
        return sum(self.indexed.values())


class Progress:
    """Powiadomienia o postępie (CLI rysuje z nich pasek; API może je pominąć), zawsze z wątku wywołującego.
    Kolejność: ``reading`` przy wczytywaniu pliku (i ``ocr_page`` po każdej stronie skanu), ``start`` z sumą plików
    i fragmentów do zapisania, potem dla każdego pliku ``start_file``, ``advance`` (fragmenty gotowe, także wzięte
    z bazy) i ``finish_file`` (wektory gotowe, zapis idzie w tle). W długim przebiegu pliki wczytuje wątek w tle,
    a model zaczyna od razu, więc ``start`` przychodzi dopiero po wczytaniu wszystkich – zwykle w trakcie pierwszego
    pliku."""

    def reading(self, path: Path) -> None: ...
    def start(self, files: int, chunks: int) -> None: ...
    def start_file(self, path: Path, chunks: int) -> None: ...
    def advance(self, chunks: int) -> None: ...
    def finish_file(self, path: Path) -> None: ...

    def ocr_page(self, path: Path, done: int, pages: int, cached: bool) -> None:
        """Strona skanu ``path`` gotowa: ``done`` z ``pages`` stron tego pliku bez warstwy tekstowej, odczytana
        przez OCR albo wzięta z pamięci odczytanych stron (``cached``). Przychodzi przy odbieraniu wczytanych
        plików, więc strony wczytane w tle, gdy model liczył, zgłaszane są z opóźnieniem."""

    def reuse(self, chunks: int) -> None:
        """Fragmenty gotowe bez modelu (wektory z bazy, z pamięci przerwanego przebiegu, druga ścieżka tej samej
        treści): liczą się do gotowych, ale nie do tempa modelu, z którego idzie pozostały czas."""
        self.advance(chunks)


def stale_notes(records: list[FileRecord], model: str, this_run: set[str]) -> list[str]:
    """Co trzeba zaindeksować ponownie po zmianie wersji cięcia albo modelu (poza plikami tego przebiegu)."""
    notes = []
    old_cut = sorted(r.path for r in records if r.model == model and r.chunker != CHUNKER_VERSION
                     and r.path not in this_run)
    if old_cut:
        notes.append(
            f"{count(len(old_cut), FILE)} pocięto starszą wersją cięcia (obecna: {CHUNKER_VERSION}) – zaindeksuj je "
            f"ponownie: chroma-rag indeksuj {' '.join(_quoted(old_cut[:5]))}{' …' if len(old_cut) > 5 else ''}"
        )
    with_model = {r.path for r in records if r.model == model}
    other_only = sorted({r.path for r in records if r.model != model} - with_model - this_run)
    if other_only:
        others = ", ".join(sorted({r.model for r in records if r.model != model}))
        notes.append(
            f"{count(len(other_only), FILE)} zaindeksowano tylko modelem {others}, nie modelem {model} – żeby "
            f"wyszukiwać w nich tym modelem, zaindeksuj je nim: {' '.join(_quoted(other_only[:5]))}"
            f"{' …' if len(other_only) > 5 else ''}"
        )
    return notes


def vanished_note(records: list[FileRecord], model: str, folders: list[Path], report: IndexReport) -> list[str]:
    """Pliki z indeksu, których nie ma już w podanych folderach – bez ``--usun-brakujace`` zostają w wynikach."""
    gone = sorted({r.path for r in records if r.model == model and vanished(r, folders)} - set(report.moved))
    if not gone:
        return []
    return [
        f"{len(gone)} zaindeksowanych plików nie ma już w podanych folderach: {', '.join(_quoted(gone[:5]))}"
        f"{' …' if len(gone) > 5 else ''} – nadal są w wynikach; usuń je z indeksu: chroma-rag indeksuj "
        f"{' '.join(_quoted([str(f) for f in folders]))} --usun-brakujace"
    ]


def _quoted(paths: list[str]) -> list[str]:
    return [f'"{p}"' if " " in p else p for p in paths]
