"""Które zaindeksowane pliki ten serwer może wydać pod ``/dokumenty``: tylko zwykły plik dokładnie pod ścieżką
zapisaną w indeksie. Wspólny serwer Chromy indeksują też komputery zespołu (także Windows), więc pliku może tu nie
być nigdy – strona nie pokazuje wtedy linku do niego (pole ``plik_na_serwerze`` trafień i jednostek)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from ..api import Index
    from ..models import ShownNames


def team_names(index: Index) -> ShownNames:
    """Nazwy plików dla zespołu (``Index.shown_names``), a przy każdym trafieniu – czy serwer ma jego plik."""
    return replace(index.shown_names(), served=on_server_disk)


def on_server_disk(path: str) -> bool:
    """Czy pod ścieżką z indeksu jest zwykły plik, który ``open_indexed`` otworzy (bez dowiązań po drodze)."""
    return os.path.isabs(path) and os.path.realpath(path) == path and os.path.isfile(path)


def open_indexed(path: Path) -> BinaryIO | None:
    """Zaindeksowany plik otwarty tylko wtedy, gdy to wciąż zwykły plik dokładnie pod zapisaną ścieżką: dowiązanie
    w miejscu pliku (O_NOFOLLOW) albo któregoś folderu (rozwiązana ścieżka inna niż zapisana – indeks zapisuje
    ścieżki już rozwiązane) nie prowadzi nigdzie indziej, np. do /etc/passwd."""
    try:
        if os.path.realpath(path) != str(path):
            return None
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    handle = os.fdopen(descriptor, "rb")
    opened, now = os.fstat(descriptor), os.stat(os.path.realpath(path))
    # a folder swapped between the check and the open: the opened file is not the one at the recorded path
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (now.st_dev, now.st_ino):
        handle.close()
        return None
    return handle


def file_chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        yield from iter(lambda: handle.read(1 << 16), b"")
