"""Wyszukiwanie plików do indeksowania: przejście po podanych ścieżkach (katalogi rekurencyjnie, bez ukrytych,
linki bez pętli) i odciski plików (rozmiar, czas modyfikacji, SHA-256), po których poznać zmianę.

Folder to granica: link w nim, który prowadzi poza niego (po rozwiązaniu wszystkich linków), jest pomijany, a plik,
którego prawdziwa ścieżka w chwili czytania nie jest już tą sprawdzoną przy przejściu, nie jest czytany – inaczej
ktoś z prawem zapisu w obserwowanym folderze wprowadziłby do indeksu (i na ``/dokumenty``) dowolny plik, który
może przeczytać indeksujący. Plik podany wprost (``indeksuj /a/b.pdf``) jest sam sobie granicą.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as stat_module
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import UserError, os_reason
from ..ingest.loading import is_supported, is_temporary
from ..storage.registry import FileRecord

TEXT_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class FileLimits:
    """Największe pliki, które warto czytać; większe są pomijane z powodem, zanim ktokolwiek policzy ich skrót."""

    # a text file this big is a log or a dump, not a document: embedding it would take hours on a laptop
    text_bytes: int = 20 * 1024 * 1024
    # the largest act in the test library (Kodeks cywilny, Dz.U.) is 1.3 MB and a 1,000-page scan at 300 dpi
    # a few hundred MB; a PDF or DOCX over 500 MB is a disk image or a broken copy, and hashing 2 GB took 35 s
    document_bytes: int = 500 * 1024 * 1024


FILE_LIMITS = FileLimits()


@dataclass(frozen=True)
class SourceFile:
    """Plik na dysku z odciskiem; ``key`` (ścieżka bezwzględna bez linków) identyfikuje go w rejestrze."""

    path: Path
    key: str
    size: int
    mtime: float
    hash: str


class Folders(list[Path]):
    """Podane foldery (jak lista) i ``escapes``: prawdziwe ścieżki, dokąd prowadzą znalezione w nich linki wychodzące
    poza nie – to, co tam leży, wcześniejsza wersja mogła zaindeksować przez link, więc ``vanished`` to usuwa."""

    def __init__(self, folders: Iterable[Path] = (), escapes: Iterable[str] = ()) -> None:
        super().__init__(folders)
        self.escapes = list(escapes)


@dataclass
class FoundFiles:
    """Wynik przejścia po ścieżkach: pliki do indeksowania i pominięte (z powodem)."""

    files: list[Path]
    skipped: dict[str, str]
    folders: Folders


def collect_files(paths: Iterable[Path], allow_empty: bool = False) -> FoundFiles:
    """Obsługiwane pliki z podanych ścieżek (katalogi rekurencyjnie, bez ukrytych, linki bez pętli, każdy
    plik raz). Błędna ścieżka przerywa wszystko, zanim baza zostanie dotknięta."""
    found: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    folders = Folders()
    given: list[str] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"Ścieżka „{path}” nie istnieje – sprawdź, czy nie ma literówki.")
        if path.is_dir():
            folders.append(path)
            before = (len(found), len(skipped))
            for file in _walk(path, skipped, folders.escapes):
                key = _key(file)
                found.setdefault(key, _named(file, key))
            if (len(found), len(skipped)) == before and not allow_empty:
                raise UserError(
                    f"W folderze „{path}” nie ma plików HTML, ODT, RTF, PDF, DOCX, TXT ani MD do zaindeksowania."
                )
        elif is_temporary(path):  # an Office lock file given by a glob (~$umowa.docx): not a document
            continue
        elif is_supported(path):
            key = _key(path)
            given.append(key)
            found.setdefault(key, _named(path, key))
        else:
            raise UserError(
                f"Plik „{path}” ma nieobsługiwany typ – obsługiwane są HTML, ODT, RTF, PDF, DOCX, TXT i MD."
            )
    # a file given by name in this same run is wanted, even if a link in a folder also leads to it
    folders.escapes = [t for t in folders.escapes if not any(inside(key, t) for key in given)]
    return FoundFiles(files=list(found.values()), skipped=skipped, folders=folders)  # in the order given


def _named(path: Path, key: str) -> Path:
    """Ścieżka do czytania: podana, gdy nie prowadzi przez żaden link, inaczej prawdziwa (link jest nazwany jak
    plik, do którego prowadzi) – ``fingerprint`` sprawdza potem, że nadal nie prowadzi przez link."""
    return path if os.path.abspath(path) == key else Path(key)


def inside(path: str, root: str) -> bool:
    """``path`` to ``root`` albo leży pod nim (obie ścieżki bezwzględne, już rozwiązane)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _walk(root: Path, skipped: dict[str, str], escapes: list[str]) -> Iterator[Path]:
    """Pliki pod ``root``; katalog odwiedzony raz (po urządzeniu i i-węźle), więc pętla linków się kończy. Link,
    którego prawdziwa ścieżka leży poza prawdziwą ścieżką ``root``, jest pomijany (z powodem), a ta ścieżka trafia
    do ``escapes``; link prowadzący do środka folderu prowadzi do pliku, który i tak jest indeksowany."""
    real_root = os.path.realpath(root)
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
                if entry.is_symlink() and not inside(target := os.path.realpath(path), real_root):
                    if entry.is_dir() or is_supported(path):  # other kinds of files are not looked at anyway
                        skipped[str(path)] = f"link prowadzi poza folder „{root}” – indeksuję tylko pliki z folderu"
                        escapes.append(target)
                    continue
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


def fingerprint(files: list[Path], skipped: dict[str, str], limits: FileLimits = FILE_LIMITS) -> list[SourceFile]:
    """Rozmiar, czas modyfikacji i SHA-256 plików; plik nieczytelny albo za duży (``limits``, sprawdzane przed
    liczeniem skrótu) trafia do pominiętych, tak samo
    plik, który od przejścia po folderze stał się linkiem (albo leży teraz za linkiem) – ścieżki z
    ``collect_files`` nie prowadzą przez linki, więc klucz pliku zostaje ścieżką sprawdzoną przy przejściu."""
    sources = []
    for path in files:
        try:
            handle = open_unlinked(path)
            if handle is None:
                skipped[str(path)] = "plik stał się linkiem w trakcie indeksowania – pominięty, jak link poza folder"
                continue
            with handle:
                stat = os.fstat(handle.fileno())
                too_large = _too_large(path, stat.st_size, limits)
                if too_large:
                    skipped[str(path)] = too_large
                    continue
                digest = _hash(handle)
            sources.append(SourceFile(path, _key(path), stat.st_size, stat.st_mtime, digest))
        except OSError as exc:
            skipped[str(path)] = f"nie da się odczytać pliku ({os_reason(exc)})"
    return sources


def _too_large(path: Path, size: int, limits: FileLimits) -> str | None:
    """Powód pominięcia pliku większego niż jego limit albo ``None``."""
    text = path.suffix.lower() in TEXT_SUFFIXES
    limit = limits.text_bytes if text else limits.document_bytes
    if size <= limit:
        return None
    said = f"{'plik tekstowy' if text else 'plik'} ma {size / 2**20:.0f} MB, limit to {limit // 2**20} MB – "
    return said + ("podziel go na mniejsze części" if text else
                   "tak duży plik to raczej obraz dysku albo uszkodzona kopia; podziel dokument na mniejsze pliki")


def open_unlinked(path: Path) -> BinaryIO | None:
    """Zwykły plik otwarty do czytania tylko wtedy, gdy ani on, ani żaden folder na jego ścieżce nie jest linkiem
    (prawdziwa ścieżka to ta podana); inaczej ``None``. Sprawdzenie po otwarciu (i-węzeł otwartego pliku i pliku
    pod prawdziwą ścieżką), więc podmiana w międzyczasie niczego nie otwiera. Błąd odczytu – ``OSError``."""
    absolute = os.path.abspath(path)
    try:
        descriptor = os.open(absolute, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the file itself is a link
            return None
        raise
    handle = os.fdopen(descriptor, "rb")
    try:
        opened = os.fstat(descriptor)
        real = os.path.realpath(absolute)
        now = os.stat(real)
    except OSError:
        handle.close()
        raise
    if real != absolute or not stat_module.S_ISREG(opened.st_mode) or \
            (opened.st_dev, opened.st_ino) != (now.st_dev, now.st_ino):
        handle.close()
        return None
    return handle


def _hash(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def file_hash(path: Path) -> str:
    with path.open("rb") as handle:
        return _hash(handle)


def vanished(record: FileRecord, folders: list[Path]) -> bool:
    """Plik z rejestru leżał w jednym z podanych folderów, a teraz go tam nie ma (albo jest tam link prowadzący poza
    foldery) – albo leży tam, dokąd prowadzi link wychodzący z folderu (``Folders.escapes``): taki plik wcześniejsza
    wersja indeksowała przez link."""
    roots = [os.path.realpath(folder) for folder in folders]
    if any(inside(record.path, root) for root in roots):
        real = os.path.realpath(record.path)
        return not os.path.exists(record.path) or not any(inside(real, root) for root in roots)
    return any(inside(record.path, target) for target in getattr(folders, "escapes", ()))
