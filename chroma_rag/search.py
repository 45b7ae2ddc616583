"""Wyszukiwanie: pytanie → wektor zapytania → najbliższe fragmenty spełniające filtry."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from .embedding import Embedder
from .errors import UserError
from .filters import SearchFilters, build_where
from .models import Hit
from .store import ChunkCollection


def search(
    collection: ChunkCollection,
    embedder: Embedder,
    question: str,
    k: int = 5,
    filters: SearchFilters | None = None,
    min_similarity: float | None = None,
) -> list[Hit]:
    """Najlepsze fragmenty (najlepszy pierwszy); poniżej ``min_similarity`` nic nie zwraca."""
    if not question.strip():
        raise UserError("Pytanie jest puste – wpisz, czego szukasz.")
    if k < 1:
        raise UserError("Liczba wyników (-k/--ile) musi być dodatnia.")
    filters = filters or SearchFilters()
    check_known_files(collection, filters.files)
    hits = collection.query(embedder.embed_query(question), k, build_where(filters))
    if min_similarity is not None and hits and hits[0].similarity < min_similarity:
        return []
    return hits


def check_known_files(collection: ChunkCollection, names: Iterable[str]) -> None:
    """Nazwa w ``--plik``, której nie ma w indeksie, to błąd z podpowiedzią najbliższych nazw."""
    missing = [name for name in names if not collection.metadatas({"plik": name}, limit=1)]
    if not missing:
        return
    indexed = sorted({str(m["plik"]) for m in collection.metadatas().values()})
    name = missing[0]
    close = difflib.get_close_matches(name, indexed, n=3, cutoff=0.4)
    hint = f" Może chodziło o: {', '.join(close)}?" if close else ""
    raise UserError(f"W indeksie nie ma pliku „{name}”.{hint} Listę plików pokazuje: chroma-rag lista.")
