"""Wektory fragmentów pliku: dla tekstu już zaindeksowanego użyte ponownie (z bazy albo z pamięci wektorów
przerwanego przebiegu), reszta policzona modelem porcjami.
"""

from __future__ import annotations

import numpy as np

from ..embedding.embedder import Embedder
from ..storage.vector_cache import VectorCache
from .preparing import PreparedFile
from .report import Progress

CACHE_BATCH = 16  # vectors per model call; an interruption loses at most one such batch


def call_size(embedder: Embedder) -> int:
    """Fragmenty na jedno wywołanie modelu: ``CACHE_BATCH``, a dla serwera (Ollama, ``openai:``) jego paczka, gdy
    większa – każde zapytanie HTTP z 16 fragmentami zostawiałoby GPU serwera w połowie bezczynne."""
    return max(CACHE_BATCH, int(getattr(embedder, "batch_size", 0) or 0))


def embed_with_reuse(
    prepared: PreparedFile,
    reusable: dict[str, np.ndarray],
    embedder: Embedder,
    progress: Progress,
    cache: VectorCache | None = None,
) -> tuple[np.ndarray, int]:
    """Wektory fragmentów: dla tekstu identycznego jak już zaindeksowany – ten z bazy albo z pamięci wektorów
    przerwanego przebiegu (``cache``), reszta z modelu porcjami, każda porcja od razu do ``cache``.
    Zwraca też liczbę użytych ponownie."""
    hashes = [m["tekst_hash"] for m in prepared.metadatas]
    if cache is not None:
        reusable = {**cache.load(set(hashes) - set(reusable)), **reusable}
    vectors = np.empty((len(hashes), embedder.dim), dtype=np.float32)
    missing = []
    for i, digest in enumerate(hashes):
        if digest in reusable:
            vectors[i] = reusable[digest]
        else:
            missing.append(i)
    progress.reuse(len(hashes) - len(missing))
    size = call_size(embedder)
    for start in range(0, len(missing), size):
        batch = missing[start : start + size]
        vectors[batch] = embedder.embed_passages([prepared.embed_texts[i] for i in batch], progress=progress.advance)
        if cache is not None:
            cache.append([hashes[i] for i in batch], vectors[batch])
    return vectors, len(hashes) - len(missing)
