"""Przegląd skupisk migawki przez faiss: odwrócone listy z kodami PQ 4-bitowymi (``IndexIVFPQFastScan``),
filtr jako mapa bitów wierszy sprawdzana podczas przeglądu list (``IDSelectorBitmap``).

Dlaczego tak: przegląd 30 % skupisk przy milionie fragmentów w numpy (kody int8 → float32 i iloczyn) kosztował
200–300 ms na zapytanie, w faiss na kodach int8 (``IndexIVFScalarQuantizer``, 384 B na wiersz) 30–50 ms i 372 MiB
pamięci; kody PQ (192 podprzestrzenie po 2 wymiary, 4 bity: 96 B na wiersz) faiss przegląda tablicami w rejestrach
SIMD kilka razy szybciej. Są zgrubne (same dają recall@10 ok. 0,4), więc to tylko sito: ``coarse_candidates``
najlepszych z każdego segmentu migawka przelicza kodami int8, a czołówkę dokładnie w float32. Liczby i wybór:
docs/BENCHMARKS.md, sekcja o skali.

Listy = skupiska migawki (środki liczy przy budowie migawki ``train`` – k-średnie faiss); słownik PQ (reszt od
środka skupiska) każdy segment uczy się sam na swojej próbce: faiss porównuje odległości tylko w obrębie segmentu,
a kandydatów wszystkich segmentów szereguje już migawka. Segment mniejszy niż ``coarse_min_rows`` nie ma indeksu (jego
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

from .params import SnapshotParams

SUFFIX = ".pq.ivf"
ADD_BLOCK = 65_536  # rows converted from int8 and added to faiss at a time


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


def train(vectors: np.ndarray, clusters: int, params: SnapshotParams) -> np.ndarray:
    """Środki ``clusters`` skupisk (sferyczne k-średnie faiss na równomiernej próbce), powtarzalnie."""
    faiss = _faiss()

    step = max(1, len(vectors) // (params.sample_per_cluster * clusters))
    sample = np.ascontiguousarray(vectors[::step], dtype=np.float32)
    kmeans = faiss.Kmeans(sample.shape[1], clusters, niter=params.kmeans_rounds, spherical=True,
                          seed=params.kmeans_seed, max_points_per_centroid=params.sample_per_cluster)
    kmeans.train(sample)
    return np.asarray(kmeans.centroids, dtype=np.float32)


def build(quantized: np.ndarray, scale: np.ndarray, centroids: np.ndarray, offset: int,
          params: SnapshotParams) -> Any:
    """Indeks IVF-PQ segmentu: wiersz ``r`` segmentu na liście najbliższego środka, z id ``offset + r``; słownik PQ
    uczony na równomiernej próbce wierszy (powtarzalnie). Wiersze to kody int8 migawki razy skala: czytanie
    wektorów float32 przez mapowanie zostawiłoby ich strony (1,5 GiB przy milionie) w pamięci procesu, a błąd int8
    jest o rzędy mniejszy niż PQ."""
    faiss = _faiss()

    dim, clusters = quantized.shape[1], len(centroids)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(np.ascontiguousarray(centroids, dtype=np.float32))
    subspaces = dim // params.subspace_dims if dim % params.subspace_dims == 0 else dim
    index = faiss.IndexIVFPQFastScan(quantizer, dim, clusters, subspaces, params.code_bits,
                                     faiss.METRIC_INNER_PRODUCT)
    step = max(1, len(quantized) // params.training_rows)
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
