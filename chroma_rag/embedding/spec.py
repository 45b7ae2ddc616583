"""Typy wspólne dla modeli embeddingów lokalnych (``embedder``) i serwerowych (``remote``) – w osobnym module,
żeby tamte dwa nie importowały siebie nawzajem."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

Progress = Callable[[int], None]


class Embedder(Protocol):
    """Zamienia teksty na znormalizowane wektory; ``model_id`` jest zapisywany w kolekcji.

    ``dim`` modelu zdalnego bywa znane dopiero po pierwszym wywołaniu (wcześniej ``None``).
    """

    model_id: str
    dim: int | None

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelSpec:
    """Rozbiór opisu modelu: dostawca, nazwa modelu u dostawcy, żądana liczba wymiarów."""

    provider: str
    name: str
    dimensions: int | None = None

    @property
    def model_id(self) -> str:
        suffix = f"@{self.dimensions}" if self.dimensions else ""
        return f"{self.provider}:{self.name}{suffix}"
