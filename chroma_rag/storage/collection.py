"""Kolekcja fragmentów jednego modelu (``ChunkCollection``): zapis porcjami ze znacznikiem zmiany i wpisem
w dzienniku zmian (``journal``), odczyty stronicowane i odczyty prosto z Chromy (bez indeksu pochodnego).

Szybkie odczyty z lokalnej migawki i indeksu słów to ``chroma_rag.derived.DerivedIndex`` nad tą kolekcją."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..models import Hit
from . import journal, journal_pages
from .filtered_ranking import DEFAULT_RANKING, FilteredRanking, RankingParams
from .journal import DEFAULT_LIMITS, JournalLimits

VERSION_KEY = "zmiana"  # collection metadata: a new uuid after every write through ChunkCollection
FINDABLE_KEY = "odnajdywalne"  # collection metadata: the change marker at which every chunk was findable


class ChunkCollection(FilteredRanking):
    """Operacje na fragmentach jednej kolekcji, z podziałem na porcje wg limitu klienta. ``derived_dir``: folder
    danych pochodnych kolekcji (dziennik zmian, migawka); ``journal``: zapisy prowadzą w nim dziennik (tryb
    folderu, gdzie zapisy idą po kolei pod blokadą wyłączną)."""

    def __init__(self, collection: Any, max_batch: int, client: Any = None, derived_dir: Path | None = None,
                 journal: bool = False, ranking: RankingParams = DEFAULT_RANKING,
                 journal_limits: JournalLimits = DEFAULT_LIMITS) -> None:
        self._collection = collection
        self._max_batch = max_batch
        self._client = client
        self._derived_dir = derived_dir
        self._journal = journal  # folder mode: writes are serialized by the lock, so the journal is a chain
        self.ranking = ranking
        self.journal_limits = journal_limits

    @property
    def model_id(self) -> str:
        return str(self._collection.metadata["model"])

    @property
    def chroma(self) -> Any:
        """Kolekcja Chromy pod spodem – dla pomiarów, które porównują nasze wyszukiwanie z samą Chromą
        (``bench/scale.py``); produkt czyta i pisze tylko przez metody tej klasy."""
        return self._collection

    @property
    def derived_dir(self) -> Path | None:
        """Folder danych pochodnych kolekcji (``None``: bez nich), np. do zmierzenia ich rozmiaru na dysku."""
        return self._derived_dir

    @property
    def journaled(self) -> bool:
        """Czy zapisy prowadzą dziennik zmian (tryb folderu)."""
        return self._journal and self._derived_dir is not None

    @property
    def dim(self) -> int:
        """Wymiar wektorów zapisany w metadanych kolekcji (0 w kolekcji bez niego)."""
        return int(self._collection.metadata.get("wymiar", 0))

    def count(self) -> int:
        return int(self._collection.count())

    def version(self) -> str:
        """Znacznik zmiany kolekcji, czytany na świeżo (pusty w kolekcji sprzed znaczników). Każdy zapis przez
        ``upsert``/``delete`` ustawia nowy – także cudzy zapis na serwerze, więc dane pochodne (indeks słów,
        migawka) wiedzą, kiedy są nieaktualne."""
        return str(self._fresh_metadata().get(VERSION_KEY, ""))

    def _fresh_metadata(self) -> dict[str, Any]:
        current = (
            self._client.get_collection(self._collection.name, embedding_function=None)
            if self._client else self._collection
        )
        return dict(current.metadata or {})

    def announce_version(self, ids: list[str], removal: bool = False) -> str:
        """Znacznik dla zapisu, który zaraz zmieni (``removal``: usunie) ``ids``; w trybie folderu najpierw wpis
        w dzienniku zmian (``journal.journal``), dzięki któremu czytelnik dociąga tylko zmienione fragmenty."""
        marker = uuid.uuid4().hex
        if self.journaled:
            assert self._derived_dir is not None
            journal.journal(self._derived_dir, self.version(), marker, ids, removal, self.journal_limits.entries_bytes)
        return marker

    def publish_version(self, marker: str) -> None:
        """Nowy znacznik – zawsze po zapisie danych: czytelnik, który zobaczy nowy znacznik, widzi już dane.
        Chroma 1.5.9 zastępuje całe metadane kolekcji, więc przepisujemy model i wymiar."""
        self._collection.modify(metadata={**(self._collection.metadata or {}), VERSION_KEY: marker})

    def checked_findable(self) -> bool:
        """Czy od ostatniej kontroli odnajdywalności (``mark_findable``) nikt nie pisał do kolekcji."""
        metadata = self._fresh_metadata()
        return bool(metadata.get(VERSION_KEY)) and metadata.get(FINDABLE_KEY) == metadata[VERSION_KEY]

    def mark_findable(self) -> None:
        """Zapamiętuje, że przy bieżącym znaczniku zmiany każdy fragment był odnajdywalny (kolejny zapis
        zmienia znacznik, więc kontrola wraca)."""
        self._collection.modify(metadata={**(self._collection.metadata or {}), FINDABLE_KEY: self.version()})

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        # With no snapshot yet (the first indexing of a folder) the first reader builds one from scratch and
        # never reads the pages: they would only cost the writer (~6 % at 1M chunks).
        pages = self.journaled and journal.derived_saved(self._derived_dir)
        for start in range(0, len(ids), self._max_batch):
            end = start + self._max_batch
            batch = list(ids[start:end])
            marker = self.announce_version(batch)
            self._collection.upsert(
                ids=batch,
                embeddings=embeddings[start:end],
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),
            )
            if pages:
                # Read back, not the arguments: upserting an existing id keeps its metadata keys absent from the
                # new metadata. This client has just loaded the HNSW for the upsert, so the get is cheap here,
                # while in a reader catching up it would load the whole HNSW again (~4 s at 1M chunks).
                journal_pages.write(self._derived_dir, marker,
                                    self._collection.get(ids=batch, include=journal_pages.INCLUDE),
                                    self.journal_limits.pages_bytes)
            self.publish_version(marker)

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._max_batch):
            batch = list(ids[start : start + self._max_batch])
            marker = self.announce_version(batch, removal=True)
            self._collection.delete(ids=batch)
            self.publish_version(marker)

    def pages(
        self,
        include: list[str],
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Wyniki ``get`` porcjami po ``max_batch``: Chroma 1.5.9 przy ~100 tys. fragmentów naraz kończy się
        błędem SQLite „too many SQL variables”."""
        if ids is not None:
            for start in range(0, len(ids), self._max_batch):
                yield self._collection.get(ids=list(ids[start : start + self._max_batch]), where=where, include=include)
            return
        offset = 0
        while limit is None or offset < limit:
            size = self._max_batch if limit is None else min(self._max_batch, limit - offset)
            result = self._collection.get(where=where, limit=size, offset=offset, include=include)
            yield result
            offset += len(result["ids"])
            if len(result["ids"]) < size:
                return

    def metadatas(
        self, where: dict[str, Any] | None = None, limit: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Metadane fragmentów (spełniających ``where``) według id."""
        return {
            i: meta
            for result in self.pages(["metadatas"], where=where, limit=limit)
            for i, meta in zip(result["ids"], result["metadatas"], strict=True)
        }

    def records(
        self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> dict[str, tuple[dict[str, Any], str, np.ndarray]]:
        """Pełne fragmenty (metadane, tekst, wektor) według id – do ponownego użycia wektorów i kontroli."""
        if ids is not None and not ids:
            return {}
        out: dict[str, tuple[dict[str, Any], str, np.ndarray]] = {}
        for result in self.pages(["metadatas", "documents", "embeddings"], ids=ids, where=where):
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

    def stored_ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Id prosto z Chromy, bez migawki: dla zapisu (po nim migawka i tak jest nieaktualna) i kontroli
        spójności – o tym, co usunąć, nie decydują dane pochodne."""
        return [i for result in self.pages([], where=where) for i in result["ids"]]

    def hits(self, ids: Sequence[str], query_embedding: np.ndarray | None = None) -> list[Hit]:
        """Fragmenty o podanych id (w tej kolejności) prosto z Chromy; z wektorem pytania – z ich podobieństwem
        do niego. W trybie folderu Chroma 1.5.9 przy każdym ``get`` wczytuje cały indeks HNSW do procesu, więc
        wyszukiwanie bierze je z migawki (``DerivedIndex.hits``), a stąd – tylko gdy jej nie ma."""
        found: dict[str, Hit] = {}
        include = ["documents", "metadatas", *(["embeddings"] if query_embedding is not None else [])]
        for start in range(0, len(ids), self._max_batch):
            result = self._collection.get(ids=list(ids[start : start + self._max_batch]), include=include)
            vectors = result["embeddings"] if query_embedding is not None else [None] * len(result["ids"])
            for i, doc, meta, vector in zip(
                result["ids"], result["documents"], result["metadatas"], vectors, strict=True
            ):
                similarity = float(np.dot(vector, query_embedding)) if vector is not None else 0.0
                found[i] = Hit(id=i, text=doc, metadata=meta, similarity=similarity)
        return [found[i] for i in ids if i in found]
