"""Postęp ``indeksuj`` na stderr: w terminalu jeden pasek całego przebiegu, w potoku zwykłe wiersze co ~10 s
i po każdym pliku (logi CI i ``2> plik`` nie dostają sekwencji sterujących)."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..indexing.report import Progress as IndexProgress
from ..plural import FILE, FRAGMENT, count

PLAIN_EVERY_S = 10.0


def eta(seconds: float) -> str:
    """„~45 s”, „~3 min 20 s”, „~1 h 05 min”."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"~{seconds} s"
    if seconds < 3600:
        return f"~{seconds // 60} min {seconds % 60:02d} s"
    return f"~{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def ocr_status(path: Path, done: int, pages: int, cached: bool) -> str:
    """„OCR: skan.pdf – strona 3/20” (strony bez warstwy tekstowej tego pliku)."""
    return f"OCR: {path.name} – strona {done}/{pages}{' (z pamięci)' if cached else ''}"


class RunProgress(IndexProgress):
    """Stan całego przebiegu: plik i/N, fragmenty gotowe/wszystkie, tempo, pozostały czas, bieżący plik."""

    def __init__(self, console: Console, clock=time.monotonic) -> None:
        self.console = console
        self.clock = clock
        self.files = self.chunks = self.file_no = self.done = 0
        self.reused = 0  # of ``done``: vectors taken ready (database, cache), not computed by the model
        self.current = ""
        self.started: float | None = None

    def reading(self, path: Path) -> None:
        self.current = path.name

    def start(self, files: int, chunks: int) -> None:
        """Sumy przebiegu; w długim przebiegu przychodzą, gdy model liczy już pierwszy plik (pliki wczytuje wątek
        w tle), więc tempo liczy się od początku pierwszego pliku, nie od tej chwili."""
        self.files, self.chunks = files, chunks
        self._begin()

    def start_file(self, path: Path, chunks: int) -> None:
        self._begin()
        self.file_no += 1
        self.current = path.name

    def _begin(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def advance(self, chunks: int) -> None:
        self.done += chunks

    def reuse(self, chunks: int) -> None:
        self.reused += chunks
        self.advance(chunks)

    def rate(self) -> float:
        """Tempo modelu: fragmenty policzone (bez wziętych gotowych z bazy) na sekundę przebiegu; gdy model nie
        policzył jeszcze nic, bo wszystko było gotowe (nowa wersja cięcia) – tempo cięcia i zapisu."""
        elapsed = self.clock() - self.started if self.started is not None else 0.0
        computed = self.done - self.reused
        return (computed or self.done) / elapsed if elapsed > 0 else 0.0

    def status(self, with_file: bool = True) -> str:
        """Stan przebiegu; zanim sumy są znane (pierwsze sekundy długiego przebiegu) – „…” i „zostało ?”."""
        rate = self.rate()
        known = self.files > 0
        left = eta((self.chunks - self.done) / rate) if rate and known else "?"
        files, chunks = (self.files, self.chunks) if known else ("…", "…")
        line = (f"plik {self.file_no}/{files} · fragmenty {self.done}/{chunks} · "
                f"{rate:.1f} fragm./s · zostało {left}")
        return f"{line} · {self.current}" if with_file else line


class BarProgress(RunProgress):
    """Pasek rich w terminalu; odświeżany przez rich kilka razy na sekundę, więc czas i tempo idą na bieżąco."""

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                            console=console, transient=True)
        self.task = self.bar.add_task("Wczytywanie…", total=None)

    def __enter__(self) -> BarProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def reading(self, path: Path) -> None:
        super().reading(path)
        self.bar.update(self.task, description=f"Wczytywanie: {path.name}")

    def ocr_page(self, path: Path, done: int, pages: int, cached: bool) -> None:
        self.bar.update(self.task, description=ocr_status(path, done, pages, cached))

    def start(self, files: int, chunks: int) -> None:
        super().start(files, chunks)
        self.bar.update(self.task, total=chunks or None, completed=self.done, description=self.status())

    def start_file(self, path: Path, chunks: int) -> None:
        super().start_file(path, chunks)
        self.bar.update(self.task, description=self.status())

    def advance(self, chunks: int) -> None:
        super().advance(chunks)
        self.bar.update(self.task, completed=self.done, description=self.status())


class PlainProgress(RunProgress):
    """Wiersz stanu co ``PLAIN_EVERY_S`` sekund i po każdym skończonym pliku."""

    def __init__(self, console: Console, clock=time.monotonic) -> None:
        super().__init__(console, clock)
        self.last_line = clock()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def start(self, files: int, chunks: int) -> None:
        super().start(files, chunks)
        if files:
            self._line(f"Do zaindeksowania: {count(files, FILE)}, {count(chunks, FRAGMENT)}.")

    def advance(self, chunks: int) -> None:
        super().advance(chunks)
        if self.clock() - self.last_line >= PLAIN_EVERY_S:
            self._line(self.status())

    def finish_file(self, path: Path) -> None:
        self._line(f"Gotowe: {path.name} ({self.status(with_file=False)})")

    def ocr_page(self, path: Path, done: int, pages: int, cached: bool) -> None:
        # a page takes seconds: the first one says OCR has begun, then a line as often as the other lines
        if done in (1, pages) or self.clock() - self.last_line >= PLAIN_EVERY_S:
            self._line(ocr_status(path, done, pages, cached))

    def _line(self, text: str) -> None:
        self.last_line = self.clock()
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)


class Silent(IndexProgress):
    """``--cicho``."""

    def __enter__(self) -> Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress_for(console: Console, quiet: bool) -> BarProgress | PlainProgress | Silent:
    if quiet:
        return Silent()
    return BarProgress(console) if console.is_terminal else PlainProgress(console)
