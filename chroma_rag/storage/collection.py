"""Kolekcja fragmentów jednego modelu (``ChunkCollection``): zapis porcjami ze znacznikiem zmiany,
odczyty stronicowane i lokalna migawka do wyszukiwania z filtrem."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from ..models import Hit
from . import journal_pages
from . import snapshot as snapshots
from .filtered_ranking import FilteredRanking
from .where import supported

VERSION_KEY = "zmiana"  # collection metadata: a new uuid after every write through ChunkCollection
FINDABLE_KEY = "odnajdywalne"  # collection metadata: the change marker at which every chunk was findable

# Loaded snapshots by folder: the id → row map is built once per process and collection version.
_SNAPSHOTS: dict[str, snapshots.Snapshot] = {}
# one thread builds (and saves) a snapshot, the others wait for it instead of writing the same files at once
_SNAPSHOTS_LOCK = threading.Lock()


class ChunkCollection(FilteredRanking):
    """Operacje na fragmentach jednej kolekcji, z podziałem na porcje wg limitu klienta; z ``snapshot_dir``
    wyszukiwanie z filtrem korzysta z lokalnej migawki (``snapshot.py``)."""

    def __init__(self, collection: Any, max_batch: int, client: Any = None, snapshot_dir: Path | None = None,
                 journal: bool = False) -> None:
        self._collection = collection
        self._max_batch = max_batch
        self._client = client
        self._snapshot_dir = snapshot_dir
        self._journal = journal  # folder mode: writes are serialized by the lock, so the journal is a chain
        self._pins = threading.local()  # the snapshot one search of this thread uses (``pinned``)

    @property
    def model_id(self) -> str:
        return str(self._collection.metadata["model"])

    @property
    def chroma(self) -> Any:
        """Kolekcja Chromy pod spodem – dla pomiarów, które porównują nasze wyszukiwanie z samą Chromą
        (``bench/scale.py``); produkt czyta i pisze tylko przez metody tej klasy."""
        return self._collection

    @property
    def snapshot_dir(self) -> Path | None:
        """Folder migawki (``None`` bez migawki), np. do zmierzenia jej rozmiaru na dysku."""
        return self._snapshot_dir

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
        w dzienniku zmian migawki (``snapshot.journal``), dzięki któremu czytelnik dociąga tylko zmienione
        fragmenty."""
        marker = uuid.uuid4().hex
        if self._journal and self._snapshot_dir is not None:
            snapshots.journal(self._snapshot_dir, self.version(), marker, ids, removal)
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
        pages = self._journal and self._snapshot_dir is not None and snapshots.saved(self._snapshot_dir)
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
                journal_pages.write(self._snapshot_dir, marker,
                                    self._collection.get(ids=batch, include=journal_pages.INCLUDE))
            self.publish_version(marker)

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._max_batch):
            batch = list(ids[start : start + self._max_batch])
            marker = self.announce_version(batch, removal=True)
            self._collection.delete(ids=batch)
            self.publish_version(marker)

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Jedno wyszukiwanie widzi jedną wersję kolekcji: migawka ustalona na jego początku, bez ponownego
        czytania znacznika zmiany (każdy odczyt to zapytanie do Chromy, ~1 ms, a wyszukiwanie sięga po migawkę
        kilka razy). W wątku, który już ustalił migawkę, nic nie zmienia."""
        if getattr(self._pins, "snapshot", None) is not None:
            yield
            return
        self._pins.snapshot = self.snapshot()
        try:
            yield
        finally:
            self._pins.snapshot = None

    def snapshot(self) -> snapshots.Snapshot | None:
        """Migawka bieżącej wersji kolekcji: z pamięci, z dysku albo zbudowana od nowa (przy 100 tys.
        fragmentów kilkanaście sekund, raz na zmianę kolekcji). ``None``, gdy kolekcja nie ma znacznika,
        migawki nie da się zapisać albo kolekcja zmieniła się w trakcie budowy (wtedy zapytanie idzie starą
        ścieżką przez Chromę). W trybie folderu nowa wersja powstaje zwykle z poprzedniej i dziennika zmian
        (wstawione fragmenty z plików treści zapisów, ``journal_pages``; z Chromy tylko tych, których tam nie ma)."""
        if self._snapshot_dir is None:
            return None
        pinned = getattr(self._pins, "snapshot", None)
        if pinned is not None:
            return pinned
        marker = self.version()
        if not marker:
            return None
        key = str(self._snapshot_dir)
        found = _SNAPSHOTS.get(key)
        if found is not None and found.marker == marker:
            return found
        with _SNAPSHOTS_LOCK:
            previous = _SNAPSHOTS.get(key)
            if previous is not None and previous.marker == marker:  # built by the thread we waited for
                return previous
            found = snapshots.load(self._snapshot_dir, marker)
            if found is None:
                try:
                    found = self._next_snapshot(marker, previous)
                except (OSError, TypeError, ValueError):
                    return None
                if self.version() != marker:
                    return None
            _SNAPSHOTS[key] = found
            return found

    def _next_snapshot(self, marker: str, previous: snapshots.Snapshot | None) -> snapshots.Snapshot:
        assert self._snapshot_dir is not None
        dim = int(self._collection.metadata.get("wymiar", 0))
        previous = previous or snapshots.latest(self._snapshot_dir, marker)
        changes = snapshots.changes_between(self._snapshot_dir, previous.marker, marker) if previous else None
        if previous is None or changes is None:
            found = snapshots.build(self._snapshot_dir, marker, dim, self._get(journal_pages.INCLUDE))
            snapshots.forget_pages(self._snapshot_dir, marker)
            return found
        # Removed chunks are not fetched, written ones come from the files their writes left beside the journal:
        # in folder mode every get loads the whole HNSW (~4 s at 1M chunks). Chroma only for what is not there.
        written = {i: m for i, m in changes.items() if m is not None}
        pages, missing = journal_pages.read(self._snapshot_dir, written, dim)
        fetched = self._get(journal_pages.INCLUDE, ids=missing) if missing else iter(())
        return snapshots.update(previous, self._snapshot_dir, marker, dim, set(changes), chain(pages, fetched))

    def column(self, key: str, default: Any) -> dict[str, Any]:
        """Id → wartość metadanej ``key`` wszystkich fragmentów (z migawki, bez pobierania metadanych)."""
        found = self.snapshot()
        if found is not None and key in snapshots.COLUMNS:
            return found.column(key, default)
        return {i: meta.get(key, default) for i, meta in self.metadatas().items()}

    def changes_since(self, marker: str, current: str, key: str) -> dict[str, Any] | None:
        """Fragmenty, których dotknęły zapisy od wersji ``marker`` do ``current`` (dziennik zmian migawki), z obecną
        wartością metadanej ``key`` (``""``, gdy fragment jej nie ma; ``None``, gdy fragmentu już nie ma). ``None``:
        bez dziennika (serwer), bez migawki wersji ``current`` albo gdy łańcuch wpisów się urywa – wtedy trzeba
        porównać wszystko."""
        found = self.snapshot() if self._journal and marker else None
        if found is None or found.marker != current or key not in snapshots.COLUMNS:
            return None
        assert self._snapshot_dir is not None
        changed = snapshots.changed_since(self._snapshot_dir, marker, current)
        if changed is None:
            return None
        ids = sorted(changed)
        return dict(zip(ids, found.values_of(ids, key, ""), strict=True))

    def file_titles(self) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu."""
        found = self.snapshot()
        if found is None:
            pairs = {(m.get("plik"), m.get("tytul")) for m in self.metadatas().values()}
        else:
            pairs = found.pairs("plik", "tytul")
        return {str(name): str(title or "") for name, title in sorted(pairs, key=str) if name is not None}

    def _get(
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
            for result in self._get(["metadatas"], where=where, limit=limit)
            for i, meta in zip(result["ids"], result["metadatas"], strict=True)
        }

    def records(
        self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> dict[str, tuple[dict[str, Any], str, np.ndarray]]:
        """Pełne fragmenty (metadane, tekst, wektor) według id – do ponownego użycia wektorów i kontroli."""
        if ids is not None and not ids:
            return {}
        out: dict[str, tuple[dict[str, Any], str, np.ndarray]] = {}
        for result in self._get(["metadatas", "documents", "embeddings"], ids=ids, where=where):
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

    def ids(self, where: dict[str, Any] | None = None) -> Sequence[str]:
        """Id fragmentów spełniających ``where`` (bez pobierania treści), w kolejności id; z migawki jako
        ``snapshot.RowSelection`` (napisy powstają dopiero przy odczycie)."""
        found = self.snapshot() if where is None or supported(where) else None
        if found is not None and found.covers(where):
            return snapshots.RowSelection(found, found.mask(where))
        return self.stored_ids(where)

    def sorted_similarities(self, embedding: np.ndarray, sample_rows: int,
                            where: dict[str, Any] | None = None) -> np.ndarray | None:
        """Podobieństwa wektora do fragmentów spełniających ``where``, rosnąco, z migawki bez listy id – do
        udziału fragmentów bliższych niż dany (``share_above``). Do ``sample_rows`` fragmentów wszystkie, powyżej
        równomierna próba tylu wierszy (``FusionSettings.pool_rows``); ``None``, gdy migawka filtru nie obsłuży."""
        found = self.snapshot() if where is None or supported(where) else None
        if found is None or not found.covers(where):
            return None
        rows = np.flatnonzero(found.mask(where))
        if len(rows) > sample_rows:
            rows = rows[np.linspace(0, len(rows) - 1, sample_rows).astype(np.int64)]
        out = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), snapshots.PREAD_ROWS):  # by pread: the pages stay out of the RSS
            part = rows[start : start + snapshots.PREAD_ROWS]
            out[start : start + len(part)] = found.vectors_of(part) @ embedding
        return np.sort(out)

    def stored_ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Id prosto z Chromy, bez migawki: dla zapisu (po nim migawka i tak jest nieaktualna) i kontroli
        spójności – o tym, co usunąć, nie decydują dane pochodne."""
        return [i for result in self._get([], where=where) for i in result["ids"]]

    def hits(self, ids: Sequence[str], query_embedding: np.ndarray | None = None) -> list[Hit]:
        """Fragmenty o podanych id (w tej kolejności); z wektorem pytania – z ich podobieństwem do niego.

        Gdy migawka zna wszystkie ``ids``, treść, metadane i podobieństwa pochodzą z niej: w trybie folderu
        Chroma 1.5.9 przy każdym ``get`` wczytuje cały indeks HNSW do procesu (``snapshot_records``)."""
        from_snapshot = self._snapshot_hits(ids, query_embedding)
        if from_snapshot is not None:
            return from_snapshot
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

    def _snapshot_hits(self, ids: Sequence[str], embedding: np.ndarray | None) -> list[Hit] | None:
        """Wyniki z migawki, gdy zna wszystkie ``ids`` (inaczej ``None``: trzeba pytać Chromę)."""
        found = self.snapshot()
        if found is None:
            return None
        rows = found.rows(list(ids))
        if (rows < 0).any():
            return None
        similarities = (np.asarray(found.vectors_of(rows) @ embedding).tolist() if embedding is not None
                        else [0.0] * len(rows))
        return [Hit(id=i, text=text, metadata=meta, similarity=float(similarity))
                for i, (text, meta), similarity in zip(ids, found.documents(rows), similarities, strict=True)]

    def similarities(self, ids: Sequence[str], embedding: np.ndarray) -> dict[str, float]:
        """Podobieństwo kosinusowe wektora do fragmentów o podanych id (z migawki, bez pobierania treści)."""
        found = self.snapshot()
        if found is None:
            return {hit.id: hit.similarity for hit in self.hits(ids, embedding)}
        rows = found.rows(list(ids))
        known = rows >= 0
        values = np.asarray(found.vectors_of(rows[known]) @ embedding).tolist()
        return dict(zip([i for i, ok in zip(ids, known.tolist(), strict=True) if ok], values, strict=True))

    def query(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        """Najbliższe ``k`` fragmentów spełniających ``where`` (najlepszy pierwszy) z treścią i metadanymi."""
        return self._hits(self.ranked(embedding, k, where))

    def _hits(self, ranked: list[tuple[str, float]]) -> list[Hit]:
        found = {hit.id: hit for hit in self.hits([i for i, _ in ranked])}
        # a chunk deleted by a concurrent writer since the ranking is simply left out
        return [replace(found[i], similarity=similarity) for i, similarity in ranked if i in found]
