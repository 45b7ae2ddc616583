"""Wektory policzone, a jeszcze niezapisane w indeksie – dopisywane na dysk porcja po porcji.

Zapis pliku do indeksu jest „wszystko albo nic” (``file_writes.write_file``), więc Ctrl-C albo kill w połowie
długiego pliku gubiłby wszystkie jego wektory. Ta pamięć leży obok, poza zapisem pliku: każda porcja wektorów
trafia tu zaraz po policzeniu (skrót tekstu → wektor), a następny przebieg bierze je stąd zamiast z modelu.
Każdy proces pisze do własnego pliku (``host-pid``), więc równoległe ``indeksuj`` sobie nie przeszkadzają;
urwany ostatni rekord (kill w trakcie dopisywania) jest pomijany. Po udanym przebiegu pliki procesów, które
już nie żyją, i własny są usuwane."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .locking import process_alive

HASH_BYTES = 32  # preparing.text_hash: 32 hex characters


class VectorCache:
    """Pamięć wektorów jednego modelu (o wymiarze ``dim``) w folderze ``folder``."""

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self._mine = folder / f"{socket.gethostname()}-{os.getpid()}-{dim}.bin"
        self._record = HASH_BYTES + 4 * dim
        # per file: bytes already read and text hash → offset of its (last) record. ``indeksuj`` asks once per file
        # and its own file grows with every batch: reading every file whole each time was quadratic in the run
        # (at 100k fragments ~150 MB per indexed file).
        self._seen: dict[Path, tuple[int, dict[str, int]]] = {}

    def load(self, wanted: Iterable[str]) -> dict[str, np.ndarray]:
        """Zapamiętane wektory tekstów o skrótach ``wanted`` (ze wszystkich plików tego wymiaru; przy tym samym
        skrócie w kilku – z ostatniego). Każdy plik czytany raz, potem tylko dopisany koniec."""
        wanted = set(wanted)
        found: dict[str, np.ndarray] = {}
        files = self._files()
        for path in set(self._seen) - set(files):
            del self._seen[path]
        for path in files:
            offsets = self._offsets(path)
            hits = [(digest, offsets[digest]) for digest in wanted if digest in offsets]
            if not hits:
                continue
            try:
                with path.open("rb") as handle:
                    for digest, offset in hits:
                        handle.seek(offset + HASH_BYTES)
                        found[digest] = np.frombuffer(handle.read(4 * self.dim), np.float32).copy()
            except (OSError, ValueError):
                continue
        return found

    def _offsets(self, path: Path) -> dict[str, int]:
        """Skrót → pozycja rekordu w pliku ``path``, dociągnięte o rekordy dopisane od ostatniego razu (urwany
        ostatni rekord – kill w trakcie dopisywania – czeka, aż będzie cały, albo zostaje pominięty)."""
        scanned, offsets = self._seen.get(path, (0, {}))
        try:
            size = path.stat().st_size
            if size < scanned:  # replaced meanwhile: read anew
                scanned, offsets = 0, {}
            usable = scanned + (size - scanned) // self._record * self._record
            if usable > scanned:
                with path.open("rb") as handle:
                    handle.seek(scanned)
                    data = handle.read(usable - scanned)
                usable = scanned + len(data) - len(data) % self._record
                for start in range(0, usable - scanned, self._record):
                    offsets[data[start : start + HASH_BYTES].decode("ascii", "replace")] = scanned + start
        except OSError:
            return offsets
        self._seen[path] = (usable, offsets)
        return offsets

    def append(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Dopisuje porcję; błąd dysku tylko wyłącza pamięć (indeksowanie idzie dalej bez niej)."""
        payload = b"".join(
            digest.encode("ascii")[:HASH_BYTES].ljust(HASH_BYTES) + np.asarray(v, np.float32).tobytes()
            for digest, v in zip(hashes, vectors, strict=True)
        )
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with self._mine.open("ab") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError:
            return

    def clean(self) -> None:
        """Po udanym przebiegu: własny plik i pliki procesów tego komputera, które już nie żyją."""
        host = socket.gethostname()
        for path in self._files():
            owner_host, _, rest = path.stem.rpartition("-")[0].rpartition("-")
            pid = rest
            if path == self._mine or (owner_host == host and pid.isdigit() and not process_alive(int(pid))):
                path.unlink(missing_ok=True)

    def _files(self) -> list[Path]:
        try:
            return sorted(self.folder.glob(f"*-{self.dim}.bin"))
        except OSError:
            return []

