"""Rejestr zaindeksowanych plików, trzymany w samej bazie (osobna mała kolekcja Chromy).

Rejestr podróżuje razem z folderem bazy i działa tak samo z serwerem Chromy. Plik jest zaindeksowany
dopiero wtedy, gdy ma wpis w rejestrze – wpis powstaje po zapisaniu wszystkich fragmentów pliku, więc
fragmenty bez wpisu (przerwany zapis) są sierotami do usunięcia.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from chromadb.errors import NotFoundError

from .collection import VERSION_KEY

REGISTRY_COLLECTION = "rejestr-plikow"
SAME_AS_KEY = "ta_sama_tresc"  # metadata: FileRecord.same_as ("" when none), readable without the record's JSON
_DUMMY_VECTOR = [1.0]  # Chroma needs a vector per record; the registry is only ever read by id/where


@dataclass
class FileRecord:
    """Wpis rejestru: jeden plik zaindeksowany jednym modelem."""

    path: str  # absolute path: the key of the file
    name: str
    size: int
    mtime: float
    hash: str
    chunker: str
    model: str
    indexed_at: str
    doc_type: str
    year: int
    forced_type: str | None = None
    chunk_ids: list[str] = field(default_factory=list)
    same_as: str | None = None  # the same content is indexed under this path (documents.py): no own chunks
    host: str = ""  # computer that indexed this path: only there does a missing file mean it is gone

    @property
    def record_id(self) -> str:
        return record_id(self.model, self.path)


def record_id(model: str, path: str) -> str:
    return hashlib.sha1(f"{model}\n{path}".encode()).hexdigest()


class Registry:
    """Wpisy rejestru w kolekcji ``rejestr-plikow`` podanego klienta Chromy."""

    def __init__(self, client: Any, create: bool = False) -> None:
        self._client = client
        self._collection = None
        if create:
            self._collection = client.get_or_create_collection(
                REGISTRY_COLLECTION, embedding_function=None, metadata={"opis": "rejestr plików chroma-rag"}
            )
        elif REGISTRY_COLLECTION in {c.name for c in client.list_collections()}:
            self._collection = client.get_collection(REGISTRY_COLLECTION, embedding_function=None)

    @property
    def exists(self) -> bool:
        return self._collection is not None

    def records(self, model: str | None = None) -> list[FileRecord]:
        if self._collection is None:
            return []
        result = self._collection.get(where={"model": model} if model else None, include=["documents"])
        return sorted((FileRecord(**json.loads(doc)) for doc in result["documents"]), key=lambda r: r.path)

    def names(self) -> tuple[list[tuple[str, str]], dict[str, str]]:
        """Pary (nazwa, ścieżka) wpisów (według ścieżki) i druga ścieżka dokumentu → ścieżka z jego fragmentami –
        z samych metadanych, bez list id fragmentów (1000 plików z milionem fragmentów to przez HTTP ~25 MB
        na każde wyszukiwanie z filtrem pliku na serwerze Chromy). Wpisy zapisane przed ``SAME_AS_KEY`` – w całości."""
        if self._collection is None:
            return [], {}
        found = self._collection.get(include=["metadatas"])
        pairs, holders, older = [], {}, []
        for entry, meta in zip(found["ids"], found["metadatas"], strict=True):
            pairs.append((str(meta["plik"]), str(meta["sciezka"])))
            if SAME_AS_KEY not in meta:
                older.append(entry)
            elif meta[SAME_AS_KEY]:
                holders[str(meta["sciezka"])] = str(meta[SAME_AS_KEY])
        if older:
            for document in self._collection.get(ids=older, include=["documents"])["documents"]:
                record = FileRecord(**json.loads(document))
                if record.same_as:
                    holders[record.path] = record.same_as
        return sorted(pairs, key=lambda pair: pair[1]), holders

    def get(self, model: str, path: str) -> FileRecord | None:
        if self._collection is None:
            return None
        result = self._collection.get(ids=[record_id(model, path)], include=["documents"])
        return FileRecord(**json.loads(result["documents"][0])) if result["ids"] else None

    def put(self, record: FileRecord) -> None:
        assert self._collection is not None, "Registry opened without create=True"
        self._collection.upsert(
            ids=[record.record_id],
            embeddings=[_DUMMY_VECTOR],
            documents=[json.dumps(asdict(record), ensure_ascii=False)],
            metadatas=[{"model": record.model, "sciezka": record.path, "plik": record.name, "hash": record.hash,
                        SAME_AS_KEY: record.same_as or ""}],
        )
        self._mark_changed()

    def delete(self, records: list[FileRecord]) -> None:
        if self._collection is not None and records:
            self._collection.delete(ids=[r.record_id for r in records])
            self._mark_changed()

    def _mark_changed(self) -> None:
        """Nowy znacznik zmiany rejestru (``version``) – po zapisie wpisów, jak znacznik kolekcji fragmentów.
        Chroma 1.5.9 zastępuje całe metadane kolekcji, więc przepisujemy pozostałe."""
        assert self._collection is not None
        self._collection.modify(metadata={**(self._collection.metadata or {}), VERSION_KEY: uuid.uuid4().hex})

    @staticmethod
    def version(client: Any) -> str:
        """Znacznik ostatniej zmiany rejestru (jedno lekkie zapytanie); pusty – rejestru brak albo zapisany przed
        znacznikiem, więc nie wiadomo, czy się zmienił."""
        try:
            collection = client.get_collection(REGISTRY_COLLECTION, embedding_function=None)
        except NotFoundError:
            return ""
        return str((collection.metadata or {}).get(VERSION_KEY, ""))
