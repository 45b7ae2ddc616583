"""Wyszukiwanie plików do indeksowania: przejście po podanych ścieżkach (katalogi rekurencyjnie, bez ukrytych,
linki bez pętli) i odciski plików (rozmiar, czas modyfikacji, SHA-256), po których poznać zmianę.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError, os_reason
from ..ingest.loading import is_supported, is_temporary
from ..storage.registry import FileRecord

TEXT_SUFFIXES = (".txt", ".md")
# A text file this big is a log or a dump, not a document: embedding it would take hours on a laptop.
MAX_TEXT_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    """Plik na dysku z odciskiem; ``key`` (ścieżka bezwzględna bez linków) identyfikuje go w rejestrze."""

    path: Path
    key: str
    size: int
    mtime: float
    hash: str


@dataclass
class FoundFiles:
    """Wynik przejścia po ścieżkach: pliki do indeksowania i pominięte (z powodem)."""

    files: list[Path]
    skipped: dict[str, str]
    folders: list[Path]


def collect_files(paths: Iterable[Path], allow_empty: bool = False) -> FoundFiles:
    """Obsługiwane pliki z podanych ścieżek (katalogi rekurencyjnie, bez ukrytych, linki bez pętli, każdy
    plik raz). Błędna ścieżka przerywa wszystko, zanim baza zostanie dotknięta."""
    found: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    folders: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"Ścieżka „{path}” nie istnieje – sprawdź, czy nie ma literówki.")
        if path.is_dir():
            folders.append(path)
            before = (len(found), len(skipped))
            for file in _walk(path, skipped):
                key = _key(file)
                found.setdefault(key, Path(key) if file.is_symlink() else file)  # a link is named as its target
            if (len(found), len(skipped)) == before and not allow_empty:
                raise UserError(f"W folderze „{path}” nie ma plików PDF, DOCX, TXT ani MD do zaindeksowania.")
        elif is_temporary(path):  # an Office lock file given by a glob (~$umowa.docx): not a document
            continue
        elif is_supported(path):
            found.setdefault(_key(path), path)
        else:
            raise UserError(f"Plik „{path}” ma nieobsługiwany typ – obsługiwane są PDF, DOCX, TXT i MD.")
    return FoundFiles(files=list(found.values()), skipped=skipped, folders=folders)  # in the order given


def _walk(root: Path, skipped: dict[str, str]) -> Iterator[Path]:
    """Pliki pod ``root``; katalog odwiedzony raz (po urządzeniu i i-węźle), więc pętla linków się kończy."""
    visited: set[tuple[int, int]] = set()
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            stat = folder.stat()
            if (stat.st_dev, stat.st_ino) in visited:
                continue
            visited.add((stat.st_dev, stat.st_ino))
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped[str(folder)] = f"nie da się odczytać folderu ({os_reason(exc)})"
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):  # .git, .DS_Store, editors' lock and temp files
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    subfolders.append(path)
                elif is_supported(path):
                    if entry.is_file():
                        yield path
                    elif entry.is_symlink():
                        skipped[str(path)] = "link wskazuje na nieistniejący plik albo na samego siebie"
            except OSError as exc:
                skipped[str(path)] = f"nie da się odczytać ({os_reason(exc)})"
        pending.extend(reversed(subfolders))  # popped from the end: subfolders in name order


def _key(path: Path) -> str:
    return str(path.resolve())


def fingerprint(files: list[Path], skipped: dict[str, str]) -> list[SourceFile]:
    """Rozmiar, czas modyfikacji i SHA-256 plików; plik nieczytelny albo za duży trafia do pominiętych."""
    sources = []
    for path in files:
        try:
            stat = path.stat()
            if path.suffix.lower() in TEXT_SUFFIXES and stat.st_size > MAX_TEXT_BYTES:
                skipped[str(path)] = (
                    f"plik tekstowy ma {stat.st_size / 2**20:.0f} MB, limit to {MAX_TEXT_BYTES // 2**20} MB – "
                    "podziel go na mniejsze części"
                )
                continue
            sources.append(SourceFile(path, _key(path), stat.st_size, stat.st_mtime, file_hash(path)))
        except OSError as exc:
            skipped[str(path)] = f"nie da się odczytać pliku ({os_reason(exc)})"
    return sources


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def vanished(record: FileRecord, folders: list[Path]) -> bool:
    """Plik z rejestru leżał w jednym z podanych folderów, a teraz go tam nie ma."""
    path = Path(record.path)
    return any(path.is_relative_to(folder.resolve()) for folder in folders) and not path.exists()
