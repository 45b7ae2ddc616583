"""Treść i metadane fragmentów jako rekordy bajtów (rekord = JSON ``[tekst, metadane]``): w plikach treści zapisów
dziennika (``journal_pages``) i w migawce indeksu pochodnego (``chroma_rag.derived``) – tam jeden plik bajtów na
segment i tablica początków rekordów, oba mapowane z dysku.

Dlaczego nie z Chromy: Chroma 1.5.9 w trybie folderu przy każdym ``get`` po id – także tylko z treścią
i metadanymi – wczytuje do procesu cały indeks HNSW kolekcji (sprawdzone: po takim ``get`` proces ma otwarte
``data_level0.bin`` i ``link_lists.bin``; przy milionie fragmentów to ok. 1,7 GiB). Z migawki wynik
wyszukiwania czyta tylko strony swoich ``k`` rekordów."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

BYTES_SUFFIX = ".tresc.bin"
STARTS_SUFFIX = ".tresc.npy"


def encode(document: str | None, metadata: dict[str, Any] | None) -> bytes:
    return json.dumps([document or "", metadata or {}], ensure_ascii=False, separators=(",", ":")).encode()


def pack(records: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Rekordy sklejone w jedną tablicę bajtów i początki kolejnych rekordów (``len + 1`` wartości)."""
    starts = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in records], out=starts[1:])
    return np.frombuffer(b"".join(records), dtype=np.uint8), starts


def write(path: Path, blob: np.ndarray) -> None:
    path.write_bytes(memoryview(np.ascontiguousarray(blob)))


def load(folder: Path, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Mapowane bajty i początki rekordów segmentu; ``ValueError``, gdy pliki nie pasują do ``rows``."""
    starts = np.load(folder / f"{name}{STARTS_SUFFIX}", mmap_mode="r")
    path = folder / f"{name}{BYTES_SUFFIX}"
    size = path.stat().st_size
    if starts.shape != (rows + 1,) or starts.dtype != np.int64 or int(starts[-1]) != size:
        raise ValueError("niezgodna treść segmentu")
    # an empty file cannot be mapped
    blob = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, dtype=np.uint8)
    return blob, starts


def read(blob: np.ndarray, starts: np.ndarray, rows: np.ndarray) -> list[bytes]:
    """Rekordy wierszy ``rows``. Z pliku przez ``pread``, nie przez mapowanie: strony czytane przez mapowanie
    zostają w RSS procesu, więc po wielu zapytaniach serwer trzymałby w nim całą treść kolekcji."""
    bounds = [(int(starts[r]), int(starts[r + 1])) for r in np.asarray(rows).tolist()]
    if not isinstance(blob, np.memmap):
        return [bytes(blob[a:b]) for a, b in bounds]
    handle = os.open(blob.filename, os.O_RDONLY)
    try:
        return [os.pread(handle, b - a, a) for a, b in bounds]
    finally:
        os.close(handle)


def decode(record: bytes) -> tuple[str, dict[str, Any]]:
    document, metadata = json.loads(record)
    return document, metadata
