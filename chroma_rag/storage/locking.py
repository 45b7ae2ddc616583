"""Blokada folderu bazy dla wielu procesów: czytelnicy współdzielą, piszący ma wyłączność.

Chroma jest bezpieczna dla wątków, ale nie dla procesów: dwa procesy piszące do jednego folderu gubią
wektory, a czytelnik otwierający bazę w trakcie zapisu widzi pół-zapisany indeks HNSW. Dlatego każdy
zapis do Chromy odbywa się pod blokadą wyłączną, a każde otwarcie+zapytanie pod blokadą współdzieloną.
Blokadę trzyma się krótko (sam zapis), a klienta Chromy zamyka przed jej zwolnieniem, żeby następne
otwarcie przeczytało z dysku stan po zapisach innych procesów.

Blokada to ``filelock.ReadWriteLock`` (transakcje SQLite na pliku w folderze bazy): system zwalnia ją sam,
gdy proces zginie (kill -9), więc nie ma „wiszących” blokad do ręcznego usuwania.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Protocol

from ..errors import UserError, os_reason
from .readonly import is_read_only

LOCK_FILE = "chroma-rag.blokada"
HOLDER_FILE = "chroma-rag.blokada.json"
DEFAULT_WAIT = 120.0
_FIRST_TRY = 0.2  # short first attempt, so a waiting writer can say who holds the lock


class DbLock:
    """Blokada czytelnicy/piszący jednego folderu bazy."""

    def __init__(self, db_path: Path, wait: float = DEFAULT_WAIT) -> None:
        self.db_path = Path(db_path)
        self.wait = wait
        self._lock = None

    def _rw_lock(self):
        if self._lock is None:
            from filelock import ReadWriteLock

            try:
                self.db_path.mkdir(parents=True, exist_ok=True)
                self._lock = ReadWriteLock(self.db_path / LOCK_FILE, is_singleton=False)
            except OSError as exc:
                raise UserError(
                    f"Nie można utworzyć folderu bazy „{self.db_path}” ({os_reason(exc)}) – podaj w --baza folder "
                    "w miejscu z prawem zapisu, np. ./chroma_db."
                ) from exc
        return self._lock

    @contextmanager
    def reading(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Blokada współdzielona: czeka tylko na trwający zapis (krótki), nie na całe indeksowanie. W folderze
        tylko do odczytu nie ma blokady (nikt przez ten montaż nie pisze; czytamy z kopii, ``readonly.py``)."""
        if is_read_only(self.db_path):
            yield
            return
        lock = self._rw_lock()
        self._acquire(lock.acquire_read, on_wait, " Spróbuj ponownie za chwilę.")
        try:
            yield
        finally:
            lock.release()

    @contextmanager
    def writing(self, on_wait: Callable[[str], None] | None = None, command: str = "indeksuj") -> Iterator[None]:
        """Blokada wyłączna; gdy zajęta, mówi kto ją trzyma i czeka do ``wait`` sekund."""
        if is_read_only(self.db_path):
            raise UserError(f"Folder bazy „{self.db_path}” jest tylko do odczytu – nie da się do niego zapisać.")
        lock = self._rw_lock()
        self._acquire(lock.acquire_write, on_wait, " Spróbuj później albo zwiększ --czekaj.")
        holder = self.db_path / HOLDER_FILE
        try:
            holder.write_text(json.dumps(_me(command)), encoding="utf-8")
            yield
        finally:
            holder.unlink(missing_ok=True)
            lock.release()

    def _acquire(self, acquire: Callable[..., object], on_wait: Callable[[str], None] | None, hint: str) -> None:
        from filelock import Timeout

        started = time.monotonic()
        try:
            acquire(timeout=min(_FIRST_TRY, self.wait))
        except Timeout:
            if on_wait:
                on_wait(f"{self._busy_message('Baza jest zajęta')} Czekam do {self.wait:.0f} s…")
            try:
                acquire(timeout=max(0.0, self.wait - (time.monotonic() - started)))
            except Timeout as exc:
                raise UserError(self._busy_message(f"Baza była zajęta przez {self.wait:.0f} s") + hint) from exc

    def holder(self) -> dict[str, object] | None:
        """Kto trzyma blokadę wyłączną (host, pid, od kiedy) – o ile to żyjący proces piszący."""
        try:
            info = json.loads((self.db_path / HOLDER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if info.get("host") == socket.gethostname() and not process_alive(int(info.get("pid", 0))):
            return None
        return info

    def _busy_message(self, prefix: str) -> str:
        info = self.holder()
        if not info:
            return f"{prefix} (trwa zapis albo odczyt w innym procesie)."
        return (
            f"{prefix}: zapisuje do niej {info.get('polecenie', 'chroma-rag')} na komputerze {info.get('host')} "
            f"(pid {info.get('pid')}) od {info.get('od')}."
        )


def _me(command: str) -> dict[str, object]:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "od": datetime.now().astimezone().isoformat(timespec="seconds"),
        "polecenie": f"chroma-rag {command}",
    }


def process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Openable(Protocol):
    path: Path
    needs_lock: bool

    def opened(self, reuse: bool = False) -> AbstractContextManager[None]: ...


@contextmanager
def read_session(
    store: _Openable, wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Spójny odczyt: blokada współdzielona + klient Chromy aktualny wobec zapisów innych procesów
    (``Store.opened``). Serwer Chromy sam szereguje zapisy, więc przy nim blokady w folderze nie ma."""
    with DbLock(store.path, wait).reading(on_wait) if store.needs_lock else nullcontext(), store.opened(reuse=True):
        yield


@contextmanager
def write_session(
    store: _Openable,
    wait: float = DEFAULT_WAIT,
    on_wait: Callable[[str], None] | None = None,
    command: str = "indeksuj",
) -> Iterator[None]:
    """Zapis na wyłączność: klient aktualny wobec zapisów innych procesów; po zapisie nowy znacznik zmiany
    (``Store.opened``)."""
    with DbLock(store.path, wait).writing(on_wait, command) if store.needs_lock else nullcontext(), store.opened():
        yield
