"""Baza na nośniku tylko do odczytu (płyta, udział zamontowany ``ro``, folder bez prawa zapisu).

Chroma 1.5.9 nie otwiera takiej bazy (przy otwarciu zapisuje do SQLite: „attempt to write a readonly
database”), a blokady i danych pochodnych (indeks słów, migawka) nie da się tam zapisać. Dlatego odczyt idzie
z kopii w pamięci podręcznej użytkownika, robionej raz na stan folderu (rozmiary i czasy modyfikacji plików);
nikt nie pisze do folderu przez ten montaż, więc odczyt nie potrzebuje blokady."""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

from ..errors import UserError, os_reason

_SKIPPED = ("chroma-rag.blokada*",)  # the lock of whoever mounted the folder writable is not ours to copy
_COMPLETE = ".kompletna"


def is_read_only(folder: Path) -> bool:
    """Folder istnieje, a nie da się w nim pisać."""
    return folder.is_dir() and not os.access(folder, os.W_OK)


def readable_copy(folder: Path, cache_root: Path) -> Path:
    """Aktualna kopia folderu bazy w ``cache_root`` (ta sama, dopóki folder się nie zmieni)."""
    source = folder.resolve()
    stamp = hashlib.sha1(_state(source).encode()).hexdigest()[:16]
    parent = cache_root / f"tylko-odczyt-{hashlib.sha1(str(source).encode()).hexdigest()[:12]}"
    target = parent / stamp
    if (target / _COMPLETE).exists():
        return target
    staging = parent / f".kopiowanie-{uuid.uuid4().hex}"
    try:
        shutil.copytree(source, staging, ignore=shutil.ignore_patterns(*_SKIPPED))
        (staging / _COMPLETE).touch()
        try:
            staging.rename(target)
        except OSError:  # another reader finished the same copy first
            shutil.rmtree(staging, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(
            f"Folder bazy „{folder}” jest tylko do odczytu, a jego kopii do odczytu nie da się zrobić w „{parent}” "
            f"({os_reason(exc)}) – ustaw CHROMA_RAG_CACHE na folder z prawem zapisu."
        ) from exc
    for old in parent.iterdir():  # earlier states of the folder
        if old != target and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)
    return target


def _state(folder: Path) -> str:
    entries = []
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            stat = path.stat()
            entries.append(f"{path.relative_to(folder)}\t{stat.st_size}\t{stat.st_mtime_ns}")
    return "\n".join(sorted(entries))
