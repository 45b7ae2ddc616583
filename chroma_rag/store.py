"""Trwała kolekcja Chromy (HNSW, cosinus): jedna kolekcja na model embeddingów w jednym folderze bazy."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UserError
from .models import Hit

DEFAULT_DB = "chroma_db"
COLLECTION_PREFIX = "fragmenty-"


def default_db_path() -> Path:
    return Path(os.environ.get("CHROMA_RAG_BAZA") or DEFAULT_DB)


def collection_name(model_id: str) -> str:
    """Nazwa kolekcji z identyfikatora modelu (Chroma dopuszcza tylko [a-zA-Z0-9._-])."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id).strip("-._")[:40]
    digest = hashlib.sha1(model_id.encode()).hexdigest()[:8]
    return f"{COLLECTION_PREFIX}{slug}-{digest}"


class Store:
    """Folder bazy z kolekcjami fragmentów; klient Chromy tworzony leniwie."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else default_db_path()
        self._client: Any = None

    def exists(self) -> bool:
        return (self.path / "chroma.sqlite3").exists()

    @property
    def client(self) -> Any:
        if self._client is None:
            import chromadb
            from chromadb.config import Settings

            self._client = chromadb.PersistentClient(
                path=str(self.path), settings=Settings(anonymized_telemetry=False)
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    @contextmanager
    def opened(self) -> Iterator[None]:
        """Klient tylko na czas jednej operacji: następne otwarcie czyta z dysku stan po zapisach innych
        procesów (otwarty klient trzyma w pamięci własną kopię indeksu HNSW)."""
        try:
            yield
        finally:
            self.close()

    def require_existing(self) -> None:
        if not self.exists():
            raise UserError(
                f"Baza „{self.path}” jeszcze nie istnieje – najpierw zaindeksuj dokumenty: "
                "chroma-rag indeksuj ŚCIEŻKA."
            )

    def indexed_models(self) -> dict[str, int]:
        """Modele, którymi zbudowano kolekcje w tej bazie, z wymiarem wektorów."""
        if not self.exists():
            return {}
        models = {}
        for collection in self.client.list_collections():
            if collection.name.startswith(COLLECTION_PREFIX):
                meta = collection.metadata or {}
                models[str(meta.get("model"))] = int(meta.get("wymiar", 0))
        return models

    def chunks(self, model_id: str, dim: int, create: bool = False) -> ChunkCollection:
        """Kolekcja fragmentów danego modelu; inny wymiar niż zapisany to błąd, nie ciche śmieci."""
        name = collection_name(model_id)
        if create:
            collection = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"model": model_id, "wymiar": dim},
            )
        else:
            self.require_existing()
            models = self.indexed_models()
            if model_id not in models:
                built_with = ", ".join(sorted(models)) or "żadnym"
                raise UserError(
                    f"Baza „{self.path}” została zbudowana modelem {built_with}, a pytasz modelem "
                    f"{model_id}: użyj --model z tym samym modelem albo zaindeksuj dokumenty tym modelem."
                )
            collection = self.client.get_collection(name, embedding_function=None)
        stored_dim = int((collection.metadata or {}).get("wymiar", dim))
        if stored_dim != dim:
            raise UserError(
                f"Kolekcja modelu {model_id} ma wektory o wymiarze {stored_dim}, a model daje {dim}: "
                "zaindeksuj dokumenty ponownie tym modelem w nowej bazie."
            )
        return ChunkCollection(collection, self.client.get_max_batch_size())


class ChunkCollection:
    """Operacje na fragmentach jednej kolekcji, z podziałem na porcje wg limitu klienta."""

    def __init__(self, collection: Any, max_batch: int) -> None:
        self._collection = collection
        self._max_batch = max_batch

    @property
    def model_id(self) -> str:
        return str(self._collection.metadata["model"])

    def count(self) -> int:
        return int(self._collection.count())

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        for start in range(0, len(ids), self._max_batch):
            end = start + self._max_batch
            self._collection.upsert(
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),
            )

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._max_batch):
            self._collection.delete(ids=list(ids[start : start + self._max_batch]))

    def metadatas(
        self, where: dict[str, Any] | None = None, limit: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Metadane fragmentów (spełniających ``where``) według id."""
        result = self._collection.get(where=where, limit=limit, include=["metadatas"])
        return dict(zip(result["ids"], result["metadatas"], strict=True))

    def ids(self) -> set[str]:
        return set(self._collection.get(include=[])["ids"])

    def records(
        self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> dict[str, tuple[dict[str, Any], str, np.ndarray]]:
        """Pełne fragmenty (metadane, tekst, wektor) według id – do ponownego użycia wektorów i kontroli."""
        if ids is not None and not ids:
            return {}
        out: dict[str, tuple[dict[str, Any], str, np.ndarray]] = {}
        chunks = [list(ids[i : i + self._max_batch]) for i in range(0, len(ids), self._max_batch)] if ids else [None]
        for batch in chunks:
            result = self._collection.get(
                ids=batch, where=where, include=["metadatas", "documents", "embeddings"]
            )
            for i, meta, doc, vector in zip(
                result["ids"], result["metadatas"], result["documents"], result["embeddings"], strict=True
            ):
                out[i] = (meta, doc, np.asarray(vector, dtype=np.float32))
        return out

    def nearest_ids(self, embeddings: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Dla każdego wektora: k najbliższych (id, odległość)."""
        result = self._collection.query(query_embeddings=embeddings, n_results=k, include=["distances"])
        pairs = zip(result["ids"], result["distances"], strict=True)
        return [list(zip(ids, dists, strict=True)) for ids, dists in pairs]

    def query(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        """Najbliższe fragmenty; filtr ``where`` Chroma stosuje przed wyszukiwaniem podobieństwa."""
        result = self._collection.query(
            query_embeddings=[embedding],
            n_results=k,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            Hit(id=i, text=doc, metadata=meta, similarity=1.0 - float(dist))
            for i, doc, meta, dist in zip(
                result["ids"][0],
                result["documents"][0],
                result["metadatas"][0],
                result["distances"][0],
                strict=True,
            )
        ]
