"""Przegląd skupisk migawki przez faiss: odwrócone listy (``IndexIVFScalarQuantizer``) z kodami int8 segmentu,
filtr jako mapa bitów wierszy sprawdzana podczas przeglądu list (``IDSelectorBitmap``).

Dlaczego faiss: przegląd 30 % skupisk przy milionie fragmentów w numpy (kody int8 → float32 blokami i iloczyn)
kosztował 200–300 ms na zapytanie; faiss liczy iloczyny prosto na kodach (SIMD), bez kopii. Liczby i wybór:
docs/BENCHMARKS.md, sekcja o skali.

Kody są te same co w migawce (``c = round(wektor / skala)``, int8), zapisane jako ``QT_8bit`` (zakres osobny dla
wymiaru) z zakresem dobranym tak, że faiss odkodowuje dokładnie ``c·skala``: ``vmin = -127,5·skala``,
``vdiff = 255·skala``, kod ``c + 127``. Iloczyn z pytaniem to więc to samo przybliżone podobieństwo co w numpy.
(``QT_8bit_direct`` się nie nadaje: faiss zaokrągla wtedy i pytanie do bajtów.) Skupiska
i ich przydział są z migawki (listy = skupiska, bez uczenia), wynik faiss to tylko kandydaci: najlepszych
przeliczamy dokładnie w float32. Plik indeksu (``<segment>.ivf``) to dane pochodne segmentu: mapowany
z dysku, budowany przy zapisie segmentu (albo przy pierwszym użyciu, gdy go brak) i zapisywany atomowo."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np

SUFFIX = ".ivf"
ADD_BLOCK = 65_536


def build(quantized: np.ndarray, starts: np.ndarray, centroids: np.ndarray, scale: np.ndarray, offset: int) -> Any:
    """Indeks IVF segmentu: wiersz ``r`` segmentu na liście swojego skupiska, z id ``offset + r``."""
    import faiss

    dim, clusters = quantized.shape[1], len(centroids)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(np.ascontiguousarray(centroids, dtype=np.float32))
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, clusters, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT, False)
    scale = np.asarray(scale, dtype=np.float32)
    faiss.copy_array_to_vector(np.concatenate([-127.5 * scale, 255 * scale]).astype(np.float32), index.sq.trained)
    index.is_trained = True  # lists are the snapshot's clusters and ranges its scale: nothing to learn
    lists = np.repeat(np.arange(clusters, dtype=np.int64), np.diff(starts))
    for start in range(0, len(quantized), ADD_BLOCK):
        codes = np.ascontiguousarray(quantized[start : start + ADD_BLOCK], dtype=np.float32) * scale
        ids = np.arange(offset + start, offset + start + len(codes), dtype=np.int64)
        assigned = np.ascontiguousarray(lists[start : start + len(codes)])
        index.add_core(len(codes), faiss.swig_ptr(codes), faiss.swig_ptr(ids), faiss.swig_ptr(assigned))
    return index


def save(index: Any, path: Path) -> None:
    """Zapis atomowy (plik pod ostateczną nazwą jest zawsze cały); błąd dysku tylko pomija zapis."""
    import faiss

    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        faiss.write_index(index, str(staging))
        os.replace(staging, path)
    except (OSError, RuntimeError):
        staging.unlink(missing_ok=True)


def open_mapped(path: Path) -> Any | None:
    """Indeks z pliku, mapowany (``None``, gdy pliku nie ma albo jest uszkodzony)."""
    import faiss

    if not path.exists():
        return None
    try:
        return faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
    except RuntimeError:
        return None


def search(index: Any, unit: np.ndarray, allowed: np.ndarray, probes: int, keep: int) -> np.ndarray:
    """Globalne wiersze ``keep`` najlepszych kandydatów wśród ``allowed`` (mapa bitów ``np.packbits(mask,
    bitorder="little")`` wszystkich wierszy migawki) na ``probes`` najbliższych listach."""
    import faiss

    selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(allowed))  # n: bytes of the bitmap
    params = faiss.SearchParametersIVF(sel=selector, nprobe=int(probes))
    _, labels = index.search(np.ascontiguousarray(unit.reshape(1, -1), dtype=np.float32), keep, params=params)
    found = labels[0]
    return found[found >= 0]
