"""Przegląd skupisk migawki przez faiss: odwrócone listy (``IndexIVFScalarQuantizer``) z kodami int8 segmentu,
filtr jako mapa bitów wierszy sprawdzana podczas przeglądu list (``IDSelectorBitmap``).

Dlaczego faiss: przegląd 30 % skupisk przy milionie fragmentów w numpy (kody int8 → float32 blokami i iloczyn)
kosztował 200–300 ms na zapytanie; faiss liczy iloczyny prosto na kodach (SIMD), bez kopii. Liczby i wybór:
docs/BENCHMARKS.md, sekcja o skali.

Kody są te same co w migawce (``c = round(wektor / skala)``, int8), zapisane jako ``QT_8bit`` (zakres osobny dla
wymiaru) z zakresem dobranym tak, że faiss odkodowuje dokładnie ``c·skala``: ``vmin = -127,5·skala``,
``vdiff = 255·skala``, kod ``c + 127``. Iloczyn z pytaniem to więc to samo przybliżone podobieństwo co w numpy.
(``QT_8bit_direct`` się nie nadaje: faiss zaokrągla wtedy i pytanie do bajtów.) Skupiska
i ich przydział są z migawki (listy = skupiska; ich środki liczy przy budowie migawki ``train`` – k-średnie faiss,
sam indeks niczego się nie uczy), wynik faiss to tylko kandydaci: najlepszych
przeliczamy dokładnie w float32. Plik indeksu (``<segment>.ivf``) to dane pochodne segmentu: mapowany
z dysku, budowany przy zapisie segmentu (albo przy pierwszym użyciu, gdy go brak) i zapisywany atomowo."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np

SUFFIX = ".ivf"
ADD_BLOCK = 65_536
# Clusters: spherical k-means of faiss on an even sample of this many rows per cluster (64k at 1M), enough rounds
# to settle – 6 rounds of the earlier hand-written k-means left neighbours of a question spread over twice as
# many clusters (docs/BENCHMARKS.md, section on scale).
SAMPLE_PER_CLUSTER = 64
KMEANS_ROUNDS = 20
KMEANS_SEED = 1234
# A single query scans its lists on every core (faiss splits the lists between threads); the default splits
# queries, so one question used one core (at 1M, 300 lists: 57 → 35 ms on 2 cores).
PARALLEL_OVER_LISTS = 1


def _faiss() -> Any:
    """Moduł faiss z pasywnym czekaniem wątków jego OpenMP. faiss ma własny runtime OpenMP (osobny od modelu
    embeddingów), którego wątki po każdym przeglądzie domyślnie kręcą się w pętli i zabierają oba rdzenie reszcie
    zapytania (numpy, noga słów): przy 1 mln hybryda bez filtra – mediana 85 ms wobec 74 ms (docs/BENCHMARKS.md).
    Runtime czyta zmienną raz, przy wczytaniu biblioteki, więc ustawiamy ją tylko na czas pierwszego importu."""
    if "faiss" in sys.modules:
        return sys.modules["faiss"]
    chosen = os.environ.get("OMP_WAIT_POLICY")
    os.environ["OMP_WAIT_POLICY"] = chosen or "PASSIVE"
    try:
        import faiss
    finally:
        if chosen is None:
            del os.environ["OMP_WAIT_POLICY"]
    return faiss


def train(vectors: np.ndarray, clusters: int) -> np.ndarray:
    """Środki ``clusters`` skupisk (sferyczne k-średnie faiss na równomiernej próbce), powtarzalnie."""
    faiss = _faiss()

    step = max(1, len(vectors) // (SAMPLE_PER_CLUSTER * clusters))
    sample = np.ascontiguousarray(vectors[::step], dtype=np.float32)
    kmeans = faiss.Kmeans(sample.shape[1], clusters, niter=KMEANS_ROUNDS, spherical=True, seed=KMEANS_SEED,
                          max_points_per_centroid=SAMPLE_PER_CLUSTER)
    kmeans.train(sample)
    return np.asarray(kmeans.centroids, dtype=np.float32)


def build(quantized: np.ndarray, starts: np.ndarray, centroids: np.ndarray, scale: np.ndarray, offset: int) -> Any:
    """Indeks IVF segmentu: wiersz ``r`` segmentu na liście swojego skupiska, z id ``offset + r``."""
    faiss = _faiss()

    dim, clusters = quantized.shape[1], len(centroids)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(np.ascontiguousarray(centroids, dtype=np.float32))
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, clusters, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT, False)
    scale = np.asarray(scale, dtype=np.float32)
    faiss.copy_array_to_vector(np.concatenate([-127.5 * scale, 255 * scale]).astype(np.float32), index.sq.trained)
    index.is_trained = True  # lists are the snapshot's clusters and ranges its scale: nothing to learn
    index.parallel_mode = PARALLEL_OVER_LISTS
    lists = np.repeat(np.arange(clusters, dtype=np.int64), np.diff(starts))
    for start in range(0, len(quantized), ADD_BLOCK):
        codes = np.ascontiguousarray(quantized[start : start + ADD_BLOCK], dtype=np.float32) * scale
        ids = np.arange(offset + start, offset + start + len(codes), dtype=np.int64)
        assigned = np.ascontiguousarray(lists[start : start + len(codes)])
        index.add_core(len(codes), faiss.swig_ptr(codes), faiss.swig_ptr(ids), faiss.swig_ptr(assigned))
    return index


def save(index: Any, path: Path) -> None:
    """Zapis atomowy (plik pod ostateczną nazwą jest zawsze cały); błąd dysku tylko pomija zapis."""
    faiss = _faiss()

    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        faiss.write_index(index, str(staging))
        os.replace(staging, path)
    except (OSError, RuntimeError):
        staging.unlink(missing_ok=True)


def open_mapped(path: Path) -> Any | None:
    """Indeks z pliku, mapowany (``None``, gdy pliku nie ma albo jest uszkodzony)."""
    faiss = _faiss()

    if not path.exists():
        return None
    try:
        index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
    except RuntimeError:
        return None
    index.parallel_mode = PARALLEL_OVER_LISTS
    return index


def search(index: Any, unit: np.ndarray, allowed: np.ndarray, probes: int, keep: int) -> np.ndarray:
    """Globalne wiersze ``keep`` najlepszych kandydatów wśród ``allowed`` (mapa bitów ``np.packbits(mask,
    bitorder="little")`` wszystkich wierszy migawki) na ``probes`` najbliższych listach."""
    faiss = _faiss()

    selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(allowed))  # n: bytes of the bitmap
    params = faiss.SearchParametersIVF(sel=selector, nprobe=int(probes))
    _, labels = index.search(np.ascontiguousarray(unit.reshape(1, -1), dtype=np.float32), keep, params=params)
    found = labels[0]
    return found[found >= 0]
