"""Ranking wektorowy z filtrem metadanych prosto z Chromy (``ChunkCollection.ranked``): HNSW bez filtra
z nadpróbkowaniem i sprawdzaniem ``where`` na kandydatach, dokładne liczenie wąskich filtrów.

To ścieżka bez indeksu pochodnego: gdy migawki nie ma albo filtr dotyczy kluczy spoza niej
(``chroma_rag.derived.DerivedIndex`` decyduje, zob. docs/ARCHITEKTURA.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .where import matches_where, narrowing_part, supported


@dataclass(frozen=True)
class RankingParams:
    """Progi filtrowanego wyszukiwania w Chromie, zmierzone ``bench/scale.py`` przy 100 tys. fragmentów."""

    # First HNSW round. Asking for n results raises the HNSW search breadth (ef) to n: at 100k chunks ef=100
    # (Chroma's default) gives recall@5 0.91, ef=500 0.975–0.99, ef=1000 1.0 for a few ms more.
    min_candidates: int = 1000
    # a filter that would need more HNSW candidates is narrow: score its chunks exactly
    max_candidates: int = 2000
    # ...unless it matches more chunks than this after all (then HNSW keeps growing)
    exact_limit: int = 8000
    # the k-th match must lie in the first 1/oversample of the candidate list: the HNSW tail is the least exact
    oversample: int = 4


DEFAULT_RANKING = RankingParams()


class FilteredRanking:
    """Wyszukiwanie najbliższych fragmentów z filtrem; część ``ChunkCollection`` (ta daje kolekcję Chromy,
    ``count`` i progi ``ranking``)."""

    if TYPE_CHECKING:
        _collection: Any
        ranking: RankingParams

        def count(self) -> int: ...

    def ranked(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]]:
        """(id, podobieństwo) najbliższych ``k`` fragmentów spełniających ``where``, jak pełne przeszukanie
        z filtrem – bez pobierania treści (listy fuzji potrzebują tylko id).

        Filtrowane HNSW Chromy 1.5.9 jest przy 100 tys. fragmentów wolne i niedokładne (recall@5 ≈ 0,2 przy
        filtrze na połowę kolekcji), ``get(ids=…, where=…)`` kosztuje setki ms, a metadane ok. 0,1 ms na
        fragment. Dlatego: zwykłe HNSW bez filtra z nadpróbkowaniem, ``where`` sprawdzane w Pythonie na
        metadanych kolejnych kandydatów (tylko tylu, ilu trzeba do ``k`` trafień); gdy z kandydatów wynika,
        że filtr jest wąski (potrzeba by ponad ``ranking.max_candidates`` kandydatów), pasujące fragmenty liczymy
        dokładnie (numpy na ich wektorach). Progi: ``RankingParams``.
        """
        if where is not None and not supported(where):
            return self._native(embedding, k, where)
        oversample = self.ranking.oversample
        total = self.count()
        n = min(total, max(self.ranking.min_candidates, oversample * k))
        checked: dict[str, bool] = {}
        tried_exact = False
        while n > 0:
            candidates = self._hnsw_candidates(embedding, n)
            matched, seen = self._first_matches(candidates, k, where, checked, give_up=not tried_exact)
            needed = math.ceil(oversample * seen * k / max(len(matched), 1))
            complete = n >= total and (len(matched) >= k or seen == len(candidates))
            if complete or (len(matched) >= k and n >= needed):
                return matched
            if needed > self.ranking.max_candidates and not tried_exact:
                tried_exact = True
                ranked = self._exact(embedding, k, where)
                if ranked is not None:
                    return ranked
            n = min(total, max(needed, 2 * n))
        return []

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
        pobieramy porcjami rosnącymi od ``oversample·k`` (i pamiętamy między rundami). ``give_up``:
        przestań, gdy już widać, że filtr jest wąski (dokładne liczenie będzie tańsze)."""
        matched: list[tuple[str, float]] = []
        oversample, max_candidates = self.ranking.oversample, self.ranking.max_candidates
        start, batch = 0, oversample * k
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
            if give_up and start < len(candidates) and oversample * start * k > max_candidates * max(len(matched), 1):
                return matched, start
        return matched, len(candidates)

    def _exact(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]] | None:
        """Dokładny ranking fragmentów pasujących do ``where``; ``None``, gdy filtr okazał się szeroki.

        Chroma dostaje tylko warunki zawężające: wykluczenia (``$ne``/``$nin``, np. uchylone jednostki)
        kosztują ją przejście po całej kolekcji, więc sprawdzamy je sami na najlepszych wynikach."""
        narrowing = narrowing_part(where)
        if narrowing is None:
            return None
        limit = self.ranking.exact_limit
        result = self._collection.get(where=narrowing, limit=limit + 1, include=["embeddings"])
        if len(result["ids"]) > limit:
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
