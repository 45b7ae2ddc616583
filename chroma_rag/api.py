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
from typing import Any

from .embedding import DEFAULT_MODEL, Embedder, get_embedder
from .errors import UserError
from .evaluation import Question, evaluate, load_questions
from .filters import SearchFilters
from .indexing import IndexReport, Progress, collect_files, index_files
from .keyword import DEFAULT_LEMMATIZER, KeywordIndex, chunk_versions, collection_texts, index_folder
from .models import Hit
from .search import DEFAULT_MODE, DEFAULT_THRESHOLD, Searcher, SearchRequest
from .store import ChunkCollection, Store, collection_name


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
    """Indeks dokumentów w jednym folderze bazy Chromy."""

    def __init__(
        self, path: str | Path | None = None, model: str | None = None, lemmatizer: str = DEFAULT_LEMMATIZER
    ) -> None:
        self.store = Store(Path(path) if path else None)
        self._model_spec = model
        self._embedder: Embedder | None = None
        self._lemmatizer = lemmatizer
        self._keywords: dict[str, KeywordIndex] = {}

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
        collection = self._collection(create=True)
        report = index_files(files, collection, self.embedder, doc_type, progress)
        self.sync_keywords(collection, changed=True)
        return report

    def search(
        self,
        question: str,
        k: int = 5,
        filters: SearchFilters | None = None,
        mode: str = DEFAULT_MODE,
        threshold: float | None = DEFAULT_THRESHOLD,
    ) -> list[Hit]:
        """Fragmenty najlepiej pasujące do pytania, spełniające filtry (najlepszy pierwszy); pusta lista,
        gdy nic nie przekracza progu pewności (``threshold=None`` wyłącza próg)."""
        return self.searcher(mode).search(SearchRequest(question, k, filters, mode, threshold))

    def evaluate(
        self,
        questions: Path,
        k: int = 10,
        mode: str = DEFAULT_MODE,
        threshold: float | None = DEFAULT_THRESHOLD,
    ) -> dict[str, Any]:
        """``ocena``: hit@1/3/5/10, MRR, odmowy progu i pudła dla pytań z pliku JSONL."""
        loaded = load_questions(Path(questions))
        searcher = self.searcher(mode)

        def ranker(question: Question) -> list[Hit]:
            return searcher.rank(SearchRequest(question.text, k, question.filters, mode))

        return evaluate(loaded, ranker, lambda question, hits: searcher.refuses(question.text, hits, threshold))

    def searcher(self, mode: str = DEFAULT_MODE) -> Searcher:
        """Wyszukiwarka kolekcji tego modelu; indeks słów synchronizowany, gdy tryb go używa."""
        collection = self._collection()
        return Searcher(collection, self.embedder, self.sync_keywords(collection) if mode != "wektor" else None)

    def sync_keywords(self, collection: ChunkCollection | None = None, changed: bool = False) -> KeywordIndex:
        """Indeks słów zgodny z fragmentami kolekcji (dodane, zastąpione, usunięte). Sprawdzany raz na
        obiekt ``Index`` i po każdej zmianie, którą ten obiekt zrobił (``changed``)."""
        collection = collection or self._collection()
        name = collection_name(collection.model_id)
        keywords = self._keywords.get(name)
        if keywords is not None and not changed:
            return keywords
        if keywords is None:
            keywords = KeywordIndex(index_folder(self.store.path, name, self._lemmatizer), self._lemmatizer)
            self._keywords[name] = keywords
        keywords.sync(chunk_versions(collection.metadatas()), lambda ids: collection_texts(collection, ids))
        return keywords

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
            self.sync_keywords(collection, changed=True)
        if not removed:
            known = ", ".join(info.name for info in self.files()) or "brak"
            raise UserError(f"W indeksie nie ma pliku „{name}”; zaindeksowane pliki: {known}.")
        return removed
