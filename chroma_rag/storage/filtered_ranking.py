"""Ranking wektorowy z filtrem metadanych dla ``ChunkCollection``: HNSW bez filtra z nadpróbkowaniem
i sprawdzaniem ``where`` na kandydatach, dokładne liczenie wąskich filtrów, maska lokalnej migawki."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import snapshot as snapshots
from .where import matches_where, narrowing_part, supported

# Filtered search (see ChunkCollection.query): thresholds measured with bench/scale.py at 100k chunks.
# First HNSW round. Asking for n results raises the HNSW search breadth (ef) to n: at 100k chunks ef=100
# (Chroma's default) gives recall@5 0.91, ef=500 0.975–0.99, ef=1000 1.0 for a few ms more (bench/scale.py).
MIN_CANDIDATES = 1000
MAX_CANDIDATES = 2000  # a filter that would need more HNSW candidates is narrow: score its chunks exactly
EXACT_LIMIT = 8000  # ...unless it matches more chunks than this after all (then HNSW keeps growing)
OVERSAMPLE = 4


class FilteredRanking:
    """Wyszukiwanie najbliższych fragmentów z filtrem; część ``ChunkCollection`` (ta daje kolekcję Chromy,
    ``count`` i ``snapshot``)."""

    if TYPE_CHECKING:
        _collection: Any

        def count(self) -> int: ...

        def snapshot(self) -> snapshots.Snapshot | None: ...

    def ranked(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]]:
        """(id, podobieństwo) najbliższych ``k`` fragmentów spełniających ``where``, jak pełne przeszukanie
        z filtrem – bez pobierania treści (listy fuzji potrzebują tylko id).

        Filtrowane HNSW Chromy 1.5.9 jest przy 100 tys. fragmentów wolne i niedokładne (recall@5 ≈ 0,2 przy
        filtrze na połowę kolekcji), ``get(ids=…, where=…)`` kosztuje setki ms, a metadane ok. 0,1 ms na
        fragment. Dlatego: zwykłe HNSW bez filtra z nadpróbkowaniem, ``where`` sprawdzane w Pythonie na
        metadanych kolejnych kandydatów (tylko tylu, ilu trzeba do ``k`` trafień); gdy z kandydatów wynika,
        że filtr jest wąski (potrzeba by ponad ``MAX_CANDIDATES`` kandydatów), pasujące fragmenty liczymy
        dokładnie (numpy na ich wektorach). Progi: bench/scale.py i docs/BENCHMARKS.md.

        Z lokalną migawką (``snapshot``) bez Chromy: maska filtra na kolumnach migawki, iloczyny na
        pasujących wierszach (przy dużej kolekcji i szerokim filtrze – w najbliższych skupiskach, z int8
        i dokładnym przeliczeniem najlepszych, zob. ``snapshot.py``); z Chromy tylko treść ``k`` wyników.
        """
        if where is not None and not supported(where):
            return self._native(embedding, k, where)
        found = self.snapshot()
        if found is not None and found.covers(where):
            return self._from_snapshot(found, embedding, k, where)
        total = self.count()
        n = min(total, max(MIN_CANDIDATES, OVERSAMPLE * k))
        checked: dict[str, bool] = {}
        tried_exact = False
        while n > 0:
            candidates = self._hnsw_candidates(embedding, n)
            matched, seen = self._first_matches(candidates, k, where, checked, give_up=not tried_exact)
            # The k-th match must lie in the first 1/OVERSAMPLE of the list: the HNSW tail is the least exact.
            needed = math.ceil(OVERSAMPLE * seen * k / max(len(matched), 1))
            complete = n >= total and (len(matched) >= k or seen == len(candidates))
            if complete or (len(matched) >= k and n >= needed):
                return matched
            if needed > MAX_CANDIDATES and not tried_exact:
                tried_exact = True
                ranked = self._exact(embedding, k, where)
                if ranked is not None:
                    return ranked
            n = min(total, max(needed, 2 * n))
        return []

    def _from_snapshot(
        self, found: snapshots.Snapshot, embedding: np.ndarray, k: int, where: dict[str, Any] | None
    ) -> list[tuple[str, float]]:
        # no HNSW here: Chroma would load its index (1.5 GiB at 1M chunks) into this process
        return found.nearest(embedding, found.mask(where), k)

    def _hnsw_candidates(self, embedding: np.ndarray, n: int) -> list[tuple[str, float]]:
        result = self._collection.query(query_embeddings=[embedding], n_results=n, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]

    def _first_matches(
        self,
        candidates: list[tuple[str, float]],
        k: int,
        where: dict[str, Any] | None,
        checked: dict[str, bool],
        give_up: bool = False,
    ) -> tuple[list[tuple[str, float]], int]:
        """Pierwsze ``k`` kandydatów spełniających ``where`` i liczba przejrzanych kandydatów; metadane
        pobieramy porcjami rosnącymi od ``OVERSAMPLE*k`` (i pamiętamy między rundami). ``give_up``:
        przestań, gdy już widać, że filtr jest wąski (dokładne liczenie będzie tańsze)."""
        matched: list[tuple[str, float]] = []
        start, batch = 0, OVERSAMPLE * k
        while start < len(candidates):
            pending = [i for i, _ in candidates[start : start + batch] if i not in checked]
            if pending and where is not None:
                result = self._collection.get(ids=pending, include=["metadatas"])
                checked.update((i, matches_where(m or {}, where)) for i, m in zip(result["ids"], result["metadatas"],
                                                                                   strict=True))
            for position, (i, similarity) in enumerate(candidates[start : start + batch], start=start + 1):
                if where is None or checked.get(i, False):
                    matched.append((i, similarity))
                    if len(matched) == k:
                        return matched, position
            start, batch = start + batch, batch * 2
            if give_up and start < len(candidates) and OVERSAMPLE * start * k > MAX_CANDIDATES * max(len(matched), 1):
                return matched, start
        return matched, len(candidates)

    def _exact(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]] | None:
        """Dokładny ranking fragmentów pasujących do ``where``; ``None``, gdy filtr okazał się szeroki.

        Chroma dostaje tylko warunki zawężające: wykluczenia (``$ne``/``$nin``, np. uchylone jednostki)
        kosztują ją przejście po całej kolekcji, więc sprawdzamy je sami na najlepszych wynikach."""
        narrowing = narrowing_part(where)
        if narrowing is None:
            return None
        result = self._collection.get(where=narrowing, limit=EXACT_LIMIT + 1, include=["embeddings"])
        if len(result["ids"]) > EXACT_LIMIT:
            return None
        if not result["ids"]:
            return []
        vectors = np.asarray(result["embeddings"], dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        query = np.asarray(embedding, dtype=np.float32)
        similarities = vectors @ (query / max(float(np.linalg.norm(query)), 1e-12))
        ids = np.asarray(result["ids"])
        order = np.lexsort((ids, -similarities))  # best first, ties by id so the result is repeatable
        ranked = [(str(ids[j]), float(similarities[j])) for j in order]
        return self._first_matches(ranked, k, where if narrowing is not where else None, {})[0]

    def _native(self, embedding: np.ndarray, k: int, where: dict[str, Any]) -> list[tuple[str, float]]:
        """Filtr z operatorami, których nie sprawdzamy sami – zostawiamy go Chromie."""
        result = self._collection.query(query_embeddings=[embedding], n_results=k, where=where, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]
