"""Przegląd skupisk migawki przez faiss: odwrócone listy z kodami PQ 4-bitowymi (``IndexIVFPQFastScan``),
filtr jako mapa bitów wierszy sprawdzana podczas przeglądu list (``IDSelectorBitmap``).

Dlaczego tak: przegląd 30 % skupisk przy milionie fragmentów w numpy (kody int8 → float32 i iloczyn) kosztował
200–300 ms na zapytanie, w faiss na kodach int8 (``IndexIVFScalarQuantizer``, 384 B na wiersz) 30–50 ms i 372 MiB
pamięci; kody PQ (192 podprzestrzenie po 2 wymiary, 4 bity: 96 B na wiersz) faiss przegląda tablicami w rejestrach
SIMD kilka razy szybciej. Są zgrubne (same dają recall@10 ok. 0,4), więc to tylko sito: ``CANDIDATES`` najlepszych
z każdego segmentu migawka przelicza kodami int8, a czołówkę dokładnie w float32. Liczby i wybór:
docs/BENCHMARKS.md, sekcja o skali.

Listy = skupiska migawki (środki liczy przy budowie migawki ``train`` – k-średnie faiss); słownik PQ (reszt od
środka skupiska) każdy segment uczy się sam na swojej próbce: faiss porównuje odległości tylko w obrębie segmentu,
a kandydatów wszystkich segmentów szereguje już migawka. Segment mniejszy niż ``MIN_ROWS`` nie ma indeksu (jego
pasujące wiersze są kandydatami wprost). Plik indeksu (``<segment>.pq.ivf``) to dane pochodne segmentu: mapowany
z dysku, budowany przy zapisie segmentu (albo przy pierwszym użyciu, gdy go brak – także w migawce sprzed PQ,
której pliki ``.ivf`` miały kody int8) i zapisywany atomowo."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np

SUFFIX = ".pq.ivf"
ADD_BLOCK = 65_536
# PQ subspaces of 2 dimensions (192 for 384): 4 dimensions each left recall@10 at 0.92 even after rescoring 10 000
# candidates
SUBSPACE_DIMS = 2
CODE_BITS = 4  # fast scan: 16 centroids per subspace, distance tables held in SIMD registers
# Candidates per segment passed on to int8 rescoring: at 1M (60 real questions, 30 % of the lists) 2000 gave
# recall@10 0.988, 5000 1.0 (docs/BENCHMARKS.md, section on scale)
CANDIDATES = 5000
MIN_ROWS = 2 * CANDIDATES  # a smaller segment's matching rows are all candidates anyway
TRAINING_ROWS = 65_536
# Clusters: spherical k-means of faiss on an even sample of this many rows per cluster (64k at 1M), enough rounds
# to settle – 6 rounds of the earlier hand-written k-means left neighbours of a question spread over twice as
# many clusters (docs/BENCHMARKS.md, section on scale).
SAMPLE_PER_CLUSTER = 64
KMEANS_ROUNDS = 20
KMEANS_SEED = 1234


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


def build(quantized: np.ndarray, scale: np.ndarray, centroids: np.ndarray, offset: int) -> Any:
    """Indeks IVF-PQ segmentu: wiersz ``r`` segmentu na liście najbliższego środka, z id ``offset + r``; słownik PQ
    uczony na równomiernej próbce wierszy (powtarzalnie). Wiersze to kody int8 migawki razy skala: czytanie
    wektorów float32 przez mapowanie zostawiłoby ich strony (1,5 GiB przy milionie) w pamięci procesu, a błąd int8
    jest o rzędy mniejszy niż PQ."""
    faiss = _faiss()

    dim, clusters = quantized.shape[1], len(centroids)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(np.ascontiguousarray(centroids, dtype=np.float32))
    subspaces = dim // SUBSPACE_DIMS if dim % SUBSPACE_DIMS == 0 else dim
    index = faiss.IndexIVFPQFastScan(quantizer, dim, clusters, subspaces, CODE_BITS, faiss.METRIC_INNER_PRODUCT)
    step = max(1, len(quantized) // TRAINING_ROWS)
    index.train(np.asarray(quantized[::step], dtype=np.float32) * scale)  # lists given: only the PQ is learnt
    for start in range(0, len(quantized), ADD_BLOCK):
        block = np.asarray(quantized[start : start + ADD_BLOCK], dtype=np.float32) * scale
        index.add_with_ids(block, np.arange(offset + start, offset + start + len(block), dtype=np.int64))
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
