"""Treść zapisów z dziennika zmian migawki (tryb folderu): fragmenty, które zapis właśnie wstawił do Chromy
(wektory, teksty, metadane), leżą w pliku obok dziennika, a czytelnik doganiający migawkę bierze je stąd
zamiast z ``get`` Chromy – w trybie folderu każdy ``get`` wczytuje do procesu cały HNSW kolekcji (przy milionie
fragmentów ~4 s z pamięci podręcznej systemu, z dysku więcej).

Wpis dziennika powstaje przed zmianą danych (``journal.journal``), a plik ``zapis-<znacznik po zapisie>.npz``
po niej – z tego, co zwraca Chroma – i przed ogłoszeniem nowego znacznika: pod nazwą tymczasową, ostateczną
dostaje jednym ``os.replace``. Czytelnik idzie po wpisach tylko do ogłoszonego znacznika, więc nie trafi na
połowę pliku. Brak albo uszkodzenie pliku to tylko brak skrótu – te fragmenty idą z Chromy. Rozmiar jest
ograniczony: pliki znikają z wpisami przyciętego dziennika, przy pełnej budowie migawki (wpisy prowadzące do
niej) i – najstarsze – ponad ``JournalLimits.pages_bytes`` bajtów.
"""

from __future__ import annotations

import os
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from . import records

PREFIX = "zapis-"
SUFFIX = ".npz"
STALE_SECONDS = 3600  # a temporary file this old belongs to a writer that died mid-write
INCLUDE = ["embeddings", "metadatas", "documents"]


def path(root: Path, marker: str) -> Path:
    return root / f"{PREFIX}{marker}{SUFFIX}"


def write(root: Path, marker: str, page: dict[str, Any], limit: int) -> None:
    """Zapisuje stronę ``get`` (``INCLUDE``) zapisu, po którym kolekcja ma znacznik ``marker``; pełny dysk
    kosztuje czytelników jeden ``get``, a nie zapis."""
    ids = [str(i) for i in page["ids"]]
    vectors = np.asarray(page["embeddings"], dtype=np.float32).reshape(len(ids), -1)
    blob, starts = records.pack(
        [records.encode(d, m) for d, m in zip(page["documents"], page["metadatas"], strict=True)]
    )
    target = path(root, marker)
    staging = root / f".{target.name}"
    try:
        np.savez(staging, id=np.array(ids, dtype=np.str_), wektory=vectors, tresc=blob, poczatki=starts)
        os.replace(staging, target)
    except OSError:
        staging.unlink(missing_ok=True)
    _prune(root, target.name, limit)


def read(root: Path, written: dict[str, str], dim: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Strony ``get`` fragmentów ``written`` (id → znacznik zapisu, który je ostatnio wstawił) z plików treści
    i id, których tam nie ma (brak albo uszkodzony plik) – te trzeba pobrać z Chromy."""
    by_marker: dict[str, set[str]] = defaultdict(set)
    for chunk_id, marker in written.items():
        by_marker[marker].add(chunk_id)
    pages: list[dict[str, Any]] = []
    missing: list[str] = []
    for marker, wanted in sorted(by_marker.items()):
        page = _load(path(root, marker), dim)
        # a later write of the same chunk has its own file: from this one only the chunks it wrote last
        rows = [] if page is None else [r for r, i in enumerate(page["ids"]) if i in wanted]
        if page is not None and rows:
            pages.append({key: [page[key][r] for r in rows] for key in ("ids", *INCLUDE)})
            wanted = wanted.difference(page["ids"][r] for r in rows)
        missing.extend(wanted)
    return pages, sorted(missing)


def _load(file: Path, dim: int) -> dict[str, Any] | None:
    """Strona z pliku; ``None``, gdy go nie ma albo jest uszkodzony (zip sprawdza sumy CRC czytanych tablic)."""
    try:
        with np.load(file, allow_pickle=False) as data:
            ids, vectors, blob, starts = data["id"], data["wektory"], data["tresc"], data["poczatki"]
        if vectors.shape != (len(ids), dim) or vectors.dtype != np.float32 or starts.shape != (len(ids) + 1,) or (
            int(starts[0]) != 0 or int(starts[-1]) != len(blob) or bool(np.any(np.diff(starts) < 0))
        ):
            return None
        decoded = [records.decode(r) for r in records.read(blob, starts, np.arange(len(ids)))]
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None
    if not all(isinstance(text, str) and isinstance(meta, dict) for text, meta in decoded):
        return None
    return {"ids": [str(i) for i in ids], "embeddings": list(vectors), "documents": [t for t, _ in decoded],
            "metadatas": [m for _, m in decoded]}


def remove(root: Path, markers: Iterable[str]) -> None:
    for marker in markers:
        path(root, marker).unlink(missing_ok=True)


def _prune(root: Path, keep: str, limit: int) -> None:
    """Najstarsze pliki treści ponad ``limit`` bajtów (nigdy właśnie zapisany ``keep``) i porzucone pliki
    tymczasowe znikają."""
    now = time.time()
    found: list[tuple[float, int, str]] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith(f".{PREFIX}") and now - entry.stat().st_mtime > STALE_SECONDS:
                os.unlink(entry.path)
            elif entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX):
                found.append((entry.stat().st_mtime, entry.stat().st_size, entry.name))
        except OSError:  # removed by someone else in the meantime
            continue
    total = sum(size for _, size, _ in found)
    for _, size, name in sorted(found):
        if total <= limit:
            return
        if name != keep:
            (root / name).unlink(missing_ok=True)
            total -= size
