"""Publiczne API Pythona; CLI jest cienką warstwą nad nim.

    from chroma_rag import Index
    index = Index("chroma_db")
    index.add(["dane/"])
    for hit in index.search("Ile dni urlopu?", k=3, filters=SearchFilters(types=["dokument"])):
        print(hit.file, hit.art, hit.similarity)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .embedding import DEFAULT_MODEL, Embedder, get_embedder
from .errors import UserError
from .filters import SearchFilters
from .indexing import IndexReport, Progress, collect_files, index_files
from .models import Hit
from .search import search
from .store import ChunkCollection, Store


@dataclass
class FileInfo:
    """Zaindeksowany plik: nazwa, rodzaj, rok, liczba fragmentów i modele, którymi go zaindeksowano."""

    name: str
    path: str
    type: str
    year: int
    chunks: int
    models: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "plik": self.name,
            "sciezka": self.path,
            "typ": self.type,
            "rok": self.year,
            "fragmenty": self.chunks,
            "modele": self.models,
        }


class Index:
    """Indeks dokumentów w folderze bazy Chromy albo na serwerze Chromy (``server="http://host:8000"``,
    albo zmienna ``CHROMA_RAG_SERWER``; token ``token`` / ``CHROMA_RAG_SERWER_TOKEN``)."""

    def __init__(
        self,
        path: str | Path | None = None,
        model: str | None = None,
        server: str | None = None,
        token: str | None = None,
    ) -> None:
        self.store = Store(Path(path) if path else None, server=server, token=token)
        self._model_spec = model
        self._embedder: Embedder | None = None

    def _resolve_model_spec(self) -> str:
        """Model jawnie podany, z ``CHROMA_RAG_MODEL``, a gdy baza ma jedną kolekcję – ten, którym ją
        zbudowano."""
        spec = self._model_spec or os.environ.get("CHROMA_RAG_MODEL")
        if spec:
            return spec
        models = list(self.store.indexed_models())
        return models[0] if len(models) == 1 else DEFAULT_MODEL

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self._resolve_model_spec())
        return self._embedder

    def _collection(self, create: bool = False) -> ChunkCollection:
        return self.store.chunks(self.embedder.model_id, self.embedder.dim, create=create)

    def add(
        self,
        paths: Iterable[str | Path],
        doc_type: str | None = None,
        progress: Progress | None = None,
    ) -> IndexReport:
        """Indeksuje pliki i foldery (rekurencyjnie); ponowne indeksowanie pliku go zastępuje."""
        files = collect_files(Path(p) for p in paths)
        return index_files(files, self._collection(create=True), self.embedder, doc_type, progress)

    def search(
        self,
        question: str,
        k: int = 5,
        filters: SearchFilters | None = None,
        min_similarity: float | None = None,
    ) -> list[Hit]:
        """Fragmenty najbardziej podobne do pytania, spełniające filtry (najlepszy pierwszy)."""
        return search(self._collection(), self.embedder, question, k, filters, min_similarity)

    def files(self) -> list[FileInfo]:
        """Zaindeksowane pliki ze wszystkich kolekcji (modeli) bazy."""
        self.store.require_existing()
        infos: dict[str, FileInfo] = {}
        for model_id, dim in self.store.indexed_models().items():
            for meta in self.store.chunks(model_id, dim).metadatas().values():
                name = str(meta["plik"])
                info = infos.setdefault(
                    name, FileInfo(name, str(meta["sciezka"]), str(meta["typ"]), int(meta["rok"]), 0)
                )
                if model_id not in info.models:
                    info.models.append(model_id)
                if model_id == info.models[0]:
                    info.chunks += 1
        return sorted(infos.values(), key=lambda info: info.name)

    def remove(self, name: str) -> int:
        """Usuwa wszystkie fragmenty pliku ze wszystkich kolekcji; zwraca ich liczbę."""
        self.store.require_existing()
        removed = 0
        for model_id, dim in self.store.indexed_models().items():
            collection = self.store.chunks(model_id, dim)
            ids = list(collection.metadatas({"plik": name}))
            collection.delete(ids)
            removed += len(ids)
        if not removed:
            known = ", ".join(info.name for info in self.files()) or "brak"
            raise UserError(f"W indeksie nie ma pliku „{name}”; zaindeksowane pliki: {known}.")
        return removed
