"""Obserwowanie folderów (indeksuj/serwuj --obserwuj): zmiany plików zbierane przez watchfiles (inotify albo
odpytywanie na udziałach sieciowych), indeksowane dopiero, gdy pliki przestaną się zmieniać, przez tę samą
synchronizację co ``indeksuj --usun-brakujace`` (blokada bazy, wycofanie przerwanego zapisu)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from ..errors import UserError
from ..ingest.loading import SUPPORTED_SUFFIXES
from .discovery import inside
from .report import IndexReport, Progress

# A file counts as complete once no event arrived for SETTLE_SECONDS and its size and mtime did not change
# over one more such interval: a copy in progress keeps producing events (inotify) or changing stats (polling).
SETTLE_SECONDS = 1.0
POLL_DELAY_MS = 500
# /proc/mounts types where inotify sees no changes made by other machines.
NETWORK_FILESYSTEMS = frozenset({
    "cifs", "smb3", "smbfs", "nfs", "nfs4", "ncpfs", "afs", "9p", "ceph", "glusterfs", "fuse.glusterfs",
    "fuse.sshfs", "fuse.rclone", "davfs", "fuse.davfs2", "lustre", "gpfs",
})


@dataclass
class WatchState:
    """Co robi obserwator – do wypisania w CLI i do ``/api/stan`` serwera."""

    folders: list[str] = field(default_factory=list)
    polling: bool = False
    state: str = "startuje"  # startuje / czeka / indeksuje / zakonczony
    pending: list[str] = field(default_factory=list)
    syncs: int = 0
    last_sync: float | None = None
    last_error: str | None = None
    # the synchronization under way (StateProgress): the file being indexed, files done and to do (0: not yet known)
    current: str | None = None
    files_done: int = 0
    files_total: int = 0

    def to_json(self) -> dict[str, object]:
        """Stan dla ``/api/stan``. Czytają go członkowie zespołu, nie tylko operator, więc foldery i pliki mają same
        nazwy, a błąd – nazwę folderu zamiast jego ścieżki na serwerze."""
        names = {folder: PurePath(folder).name for folder in self.folders}
        error = self.last_error
        for folder, name in sorted(names.items(), key=lambda item: -len(item[0])):  # the longest path first
            error = error.replace(folder, name) if error else error
        return {
            "foldery": list(names.values()), "odpytywanie": self.polling, "stan": self.state,
            "oczekujace": [PurePath(path).name for path in self.pending], "synchronizacje": self.syncs,
            "ostatnia_synchronizacja": self.last_sync, "blad": error,
            "postep": {"plik": self.current, "gotowe": self.files_done, "razem": self.files_total},
        }


class StateProgress(Progress):
    """Postęp jednej synchronizacji zapisywany w ``WatchState`` (strona pokazuje z ``/api/stan``, jaki plik idzie
    i ile gotowych): nazwa pliku bez folderu, bo stan czytają członkowie zespołu, nie tylko operator."""

    def __init__(self, state: WatchState) -> None:
        self.state = state
        state.current, state.files_done, state.files_total = None, 0, 0

    def reading(self, path: Path) -> None:
        self.state.current = path.name

    def start(self, files: int, chunks: int) -> None:
        self.state.files_total = files

    def start_file(self, path: Path, chunks: int) -> None:
        self.state.current = path.name

    def finish_file(self, path: Path) -> None:
        self.state.files_done += 1


def network_filesystem(path: Path, mounts: Path = Path("/proc/mounts")) -> str | None:
    """Typ systemu plików sieciowego, na którym leży ``path`` (najdłuższy pasujący punkt montowania), albo None."""
    try:
        lines = mounts.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = path.resolve()
    best, best_type = -1, None
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = Path(parts[1].replace("\\040", " "))
        if (target == point or point in target.parents) and len(point.parts) > best:
            best, best_type = len(point.parts), parts[2]
    return best_type if best_type in NETWORK_FILESYSTEMS else None


def watch_folders(
    folders: list[Path],
    sync: Callable[[], IndexReport],
    *,
    polling: bool | None = None,
    ignore: Iterable[Path] = (),
    stop: threading.Event | None = None,
    state: WatchState | None = None,
    on_report: Callable[[IndexReport], None] | None = None,
    on_error: Callable[[str], None] | None = None,
    settle: float = SETTLE_SECONDS,
) -> None:
    """Synchronizuje od razu, potem po każdej serii zmian, aż do ``stop`` (albo Ctrl-C – KeyboardInterrupt).

    ``polling`` None: odpytywanie tylko dla folderów na systemach sieciowych. Błąd synchronizacji (np. baza
    zablokowana dłużej niż czekanie) trafia do ``on_error``, a zmiany czekają na następną próbę."""
    from watchfiles import DefaultFilter, watch

    state = state if state is not None else WatchState()
    state.folders = [str(f) for f in folders]
    state.polling = polling if polling is not None else any(network_filesystem(f) for f in folders)
    relevant = _filter(DefaultFilter(ignore_paths=[str(Path(p).resolve()) for p in ignore]),
                       [os.path.realpath(f) for f in folders])

    def run_sync() -> bool:
        state.state = "indeksuje"
        try:
            report = sync()
        except UserError as exc:
            state.last_error = str(exc)
            if on_error:
                on_error(str(exc))
            return False
        finally:
            state.state = "czeka"
        state.syncs += 1
        state.last_sync = time.time()
        state.last_error = None
        if on_report:
            on_report(report)
        return True

    pending: set[str] = set()
    seen: dict[str, tuple[int, int] | None] | None = None
    started = False
    try:
        for changes in watch(
            *folders, watch_filter=relevant, stop_event=stop, rust_timeout=int(settle * 1000),
            yield_on_timeout=True, force_polling=state.polling, poll_delay_ms=POLL_DELAY_MS,
            ignore_permission_denied=True,
        ):
            if not started:  # the first catch-up runs once watching has begun, so nothing changed during it is lost
                started = True
                run_sync()
            if changes:
                pending |= {path for _, path in changes}
                state.pending = sorted(pending)
                seen = None
                continue
            if not pending:
                continue
            now = {path: _stat(path) for path in pending}
            if now != seen:  # first quiet interval, or a slow writer changed the file without an event
                seen = now
                continue
            if run_sync():
                pending.clear()
                state.pending = []
            seen = None
    finally:
        state.state = "zakonczony"


def _filter(default: Callable[[object, str], bool], roots: list[str]) -> Callable[[object, str], bool]:
    """Zmiany, po których warto synchronizować. Powiadomienia idą też za linkami do folderów poza obserwowanymi
    (tak obserwuje system), ale to, co tam leży, i tak nie jest indeksowane (``discovery``) – liczy się tylko
    sam link, który leży w folderze."""

    def relevant(change: object, path: str) -> bool:
        if not default(change, path):
            return False
        where = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))  # the entry itself
        if not any(inside(where, root) for root in roots):
            return False
        suffix = Path(path).suffix.lower()
        # a moved or deleted folder arrives as one event for the folder itself
        return suffix in SUPPORTED_SUFFIXES or not suffix or Path(path).is_dir()

    return relevant


def _stat(path: str) -> tuple[int, int] | None:
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


class BackgroundWatch:
    """``watch_folders`` w wątku tła serwera; ``state`` czyta ``/api/stan`` (z postępem: ``sync`` dostaje
    ``StateProgress``), ``stop`` kończy po bieżącym zapisie."""

    def __init__(self, folders: list[Path], sync: Callable[[Progress], IndexReport], polling: bool | None = None,
                 ignore: Iterable[Path] = ()) -> None:
        self.state = WatchState(folders=[str(f) for f in folders])
        self._stop = threading.Event()
        self._args = (folders, lambda: sync(StateProgress(self.state)), polling, list(ignore))
        self._thread = threading.Thread(target=self._run, name="chroma-rag-obserwuj", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 60.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        folders, sync, polling, ignore = self._args
        try:
            watch_folders(folders, sync, polling=polling, ignore=ignore, stop=self._stop, state=self.state)
        except Exception as exc:  # the server keeps answering; the status route tells why indexing stopped
            self.state.last_error = f"Obserwowanie folderów przerwał nieoczekiwany błąd: {exc}"
