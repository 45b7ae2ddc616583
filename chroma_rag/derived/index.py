"""Indeks pochodny jednej kolekcji jako jeden obiekt (``DerivedIndex``): migawka wektorów i indeks słów,
oba odtwarzane z Chromy przez ten sam dziennik zmian (``storage.journal``), i odczyty, których potrzebuje
wyszukiwanie – najbliższe fragmenty z filtrem, wybór fragmentów filtra (``RowSet``), wyniki BM25, treść
wskazanych fragmentów.

Jedna ścieżka odczytu z jednym wyjątkiem: gdy migawki nie ma (kolekcja bez znacznika zmiany, zapis niemożliwy,
na serwerze cudzy zapis w trakcie budowy) albo filtr dotyczy klucza spoza jej kolumn (``sciezka``), odczyt idzie
prosto do Chromy (``ChunkCollection``). Dlaczego ta ścieżka zostaje i jak jest testowana: docs/ARCHITEKTURA.md."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from ..models import Hit
from ..storage import journal, journal_pages
from ..storage.collection import ChunkCollection
from ..storage.where import supported
from . import snapshot as snapshots
from .keyword import KeywordHit, KeywordIndex, keyword_text
from .params import DEFAULT_PARAMS, DerivedParams, SnapshotParams
from .rows import RowSet

# Loaded snapshots by folder and parameters: the id → row map is built once per process and collection version.
_SNAPSHOTS: dict[tuple[str, SnapshotParams], snapshots.Snapshot] = {}
# one thread builds (and saves) a snapshot, the others wait for it instead of writing the same files at once
_SNAPSHOTS_LOCK = threading.Lock()


def keyword_folder(work_dir: Path, collection_name: str, lemmatizer_name: str) -> Path:
    """Folder indeksu słów kolekcji w katalogu danych pochodnych bazy."""
    return work_dir / f"slowa-{collection_name}-{lemmatizer_name}"


def forget_loaded() -> None:
    """Zapomina migawki wczytane w tym procesie – następny odczyt bierze je z dysku, jak nowy proces."""
    with _SNAPSHOTS_LOCK:
        _SNAPSHOTS.clear()


class DerivedIndex:
    """Odczyty kolekcji ``collection`` przez jej indeks pochodny; ``keywords`` – jej indeks słów (``None``:
    wyszukiwanie bez nogi słów)."""

    def __init__(self, collection: ChunkCollection, keywords: KeywordIndex | None = None,
                 params: DerivedParams = DEFAULT_PARAMS) -> None:
        self.collection = collection
        self.keywords = keywords
        self.params = params
        self._pins = threading.local()  # the snapshot one search of this thread uses (``pinned``)

    @property
    def has_keywords(self) -> bool:
        """Czy jest noga słów (tryb ``wektor`` jej nie potrzebuje)."""
        return self.keywords is not None

    def version(self) -> str:
        """Znacznik zmiany kolekcji (``ChunkCollection.version``)."""
        return self.collection.version()

    # --- migawka: otwarcie i dociągnięcie zmian ----------------------------------------------------------------

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
        migawki nie da się zapisać albo kolekcja zmieniła się w trakcie budowy (wtedy zapytanie idzie prosto
        do Chromy). W trybie folderu nowa wersja powstaje zwykle z poprzedniej i dziennika zmian (wstawione
        fragmenty z plików treści zapisów, ``journal_pages``; z Chromy tylko tych, których tam nie ma)."""
        root = self.collection.derived_dir
        if root is None:
            return None
        pinned = getattr(self._pins, "snapshot", None)
        if pinned is not None:
            return pinned
        marker = self.collection.version()
        if not marker:
            return None
        key = (str(root), self.params.snapshot)
        found = _SNAPSHOTS.get(key)
        if found is not None and found.marker == marker:
            return found
        with _SNAPSHOTS_LOCK:
            previous = _SNAPSHOTS.get(key)
            if previous is not None and previous.marker == marker:  # built by the thread we waited for
                return previous
            found = snapshots.load(root, marker, self.params.snapshot)
            if found is None:
                try:
                    found = self._next_snapshot(root, marker, previous)
                except (OSError, TypeError, ValueError):
                    return None
                if self.collection.version() != marker:
                    return None
            _SNAPSHOTS[key] = found
            return found

    def _next_snapshot(self, root: Path, marker: str, previous: snapshots.Snapshot | None) -> snapshots.Snapshot:
        dim, params = self.collection.dim, self.params.snapshot
        previous = previous or snapshots.latest(root, marker, params)
        changes = journal.changes_between(root, previous.marker, marker) if previous else None
        if previous is None or changes is None:
            found = snapshots.build(root, marker, dim, self.collection.pages(journal_pages.INCLUDE), params)
            journal.forget_pages(root, marker)
            return found
        # Removed chunks are not fetched, written ones come from the files their writes left beside the journal:
        # in folder mode every get loads the whole HNSW (~4 s at 1M chunks). Chroma only for what is not there.
        written = {i: m for i, m in changes.items() if m is not None}
        pages, missing = journal_pages.read(root, written, dim)
        fetched = self.collection.pages(journal_pages.INCLUDE, ids=missing) if missing else iter(())
        return snapshots.update(previous, root, marker, dim, set(changes), chain(pages, fetched))

    def _covering(self, where: dict[str, Any] | None) -> snapshots.Snapshot | None:
        """Migawka, gdy obsłuży filtr ``where`` (inaczej ``None``: odczyt prosto z Chromy)."""
        found = self.snapshot() if where is None or supported(where) else None
        return found if found is not None and found.covers(where) else None

    # --- odczyty -------------------------------------------------------------------------------------------------

    def ranked(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]]:
        """(id, podobieństwo) najbliższych ``k`` fragmentów spełniających ``where``, jak pełne przeszukanie
        z filtrem – bez pobierania treści (listy fuzji potrzebują tylko id). Z migawki: maska filtra na jej
        kolumnach, iloczyny na pasujących wierszach (przy dużej kolekcji i szerokim filtrze – w najbliższych
        skupiskach, z int8 i dokładnym przeliczeniem najlepszych, zob. ``snapshot.py``); HNSW Chromy nie trafia
        do pamięci procesu (1,5 GiB przy milionie fragmentów)."""
        found = self._covering(where)
        if found is None:
            return self.collection.ranked(embedding, k, where)
        return found.nearest(embedding, found.mask(where), k)

    def rows(self, where: dict[str, Any] | None = None) -> RowSet:
        """Fragmenty spełniające ``where`` (bez pobierania treści), w kolejności id; z migawki jako maska jej
        wierszy (napisy powstają dopiero przy odczycie)."""
        found = self._covering(where)
        if found is None:
            return RowSet.listed(self.collection.stored_ids(where))
        return RowSet(found, found.mask(where))

    def keyword_hits(self, query: str, k: int, rows: RowSet | None) -> list[KeywordHit]:
        """Najlepsze ``k`` fragmentów wg BM25 wśród ``rows`` (``None``: wszystkie)."""
        assert self.keywords is not None, "tryb słowny wymaga indeksu słów"
        return self.keywords.search(query, k, rows)

    def coverage(self, question: str, chunk_ids: Sequence[str]) -> float:
        """Jaka część wagi słów pytania występuje we wskazanych fragmentach (``KeywordIndex.coverage``)."""
        assert self.keywords is not None, "pokrycie słów wymaga indeksu słów"
        return self.keywords.coverage(question, chunk_ids)

    def phrase_scores(self, question: str, chunk_ids: Sequence[str], ignored_text: str,
                      window: int) -> dict[str, float]:
        """Fragmenty spośród ``chunk_ids`` ze zwrotami pytania i udziałem ich wagi (``KeywordIndex.phrase_scores``)."""
        assert self.keywords is not None, "zwroty pytania wymagają indeksu słów"
        return self.keywords.phrase_scores(question, chunk_ids, ignored_text, window)

    def quote_scores(self, question: str, chunk_ids: Sequence[str], ignored_text: str,
                     min_words: int) -> dict[str, float]:
        """Fragmenty spośród ``chunk_ids``, które cytują pytanie, i udział cytatu w jego wadze
        (``KeywordIndex.quote_scores``; słowa funkcyjne są tylko w treści fragmentu, nie w indeksie słów)."""
        assert self.keywords is not None, "cytaty pytania wymagają indeksu słów"
        texts = {hit.id: hit.text for hit in self.hits(chunk_ids)}
        return self.keywords.quote_scores(question, texts, ignored_text, min_words)

    def sorted_similarities(self, embedding: np.ndarray, where: dict[str, Any] | None = None) -> np.ndarray | None:
        """Podobieństwa wektora do fragmentów spełniających ``where``, rosnąco, z migawki bez listy id – do
        udziału fragmentów bliższych niż dany (``share_above``). Do ``pool_rows`` fragmentów wszystkie, powyżej
        równomierna próba tylu wierszy; ``None``, gdy migawka filtru nie obsłuży."""
        found = self._covering(where)
        if found is None:
            return None
        pool_rows, pread_rows = self.params.snapshot.pool_rows, self.params.snapshot.pread_rows
        rows = np.flatnonzero(found.mask(where))
        if len(rows) > pool_rows:
            rows = rows[np.linspace(0, len(rows) - 1, pool_rows).astype(np.int64)]
        out = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), pread_rows):  # by pread: the pages stay out of the RSS
            part = rows[start : start + pread_rows]
            out[start : start + len(part)] = found.vectors_of(part) @ embedding
        return np.sort(out)

    def column(self, key: str, default: Any) -> dict[str, Any]:
        """Id → wartość metadanej ``key`` wszystkich fragmentów (z migawki, bez pobierania metadanych)."""
        found = self.snapshot()
        if found is not None and key in snapshots.COLUMNS:
            return found.column(key, default)
        return {i: meta.get(key, default) for i, meta in self.collection.metadatas().items()}

    def file_titles(self) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu."""
        found = self.snapshot()
        if found is None:
            pairs = {(m.get("plik"), m.get("tytul")) for m in self.collection.metadatas().values()}
        else:
            pairs = found.pairs("plik", "tytul")
        return {str(name): str(title or "") for name, title in sorted(pairs, key=str) if name is not None}

    def hits(self, ids: Sequence[str], query_embedding: np.ndarray | None = None) -> list[Hit]:
        """Fragmenty o podanych id (w tej kolejności); z wektorem pytania – z ich podobieństwem do niego.

        Gdy migawka zna wszystkie ``ids``, treść, metadane i podobieństwa pochodzą z niej: w trybie folderu
        Chroma 1.5.9 przy każdym ``get`` wczytuje cały indeks HNSW do procesu (``storage.records``)."""
        found = self.snapshot()
        rows = found.rows(list(ids)) if found is not None else None
        if found is None or rows is None or (rows < 0).any():
            return self.collection.hits(ids, query_embedding)
        similarities = (np.asarray(found.vectors_of(rows) @ query_embedding).tolist()
                        if query_embedding is not None else [0.0] * len(rows))
        return [Hit(id=i, text=text, metadata=meta, similarity=float(similarity))
                for i, (text, meta), similarity in zip(ids, found.documents(rows), similarities, strict=True)]

    def similarities(self, ids: Sequence[str], embedding: np.ndarray) -> dict[str, float]:
        """Podobieństwo kosinusowe wektora do fragmentów o podanych id (z migawki, bez pobierania treści)."""
        found = self.snapshot()
        if found is None:
            return {hit.id: hit.similarity for hit in self.collection.hits(ids, embedding)}
        rows = found.rows(list(ids))
        known = rows >= 0
        values = np.asarray(found.vectors_of(rows[known]) @ embedding).tolist()
        return dict(zip([i for i, ok in zip(ids, known.tolist(), strict=True) if ok], values, strict=True))

    def query(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        """Najbliższe ``k`` fragmentów spełniających ``where`` (najlepszy pierwszy) z treścią i metadanymi."""
        ranked = self.ranked(embedding, k, where)
        found = {hit.id: hit for hit in self.hits([i for i, _ in ranked])}
        # a chunk deleted by a concurrent writer since the ranking is simply left out
        return [replace(found[i], similarity=similarity) for i, similarity in ranked if i in found]

    # --- indeks słów: dociągnięcie zmian -------------------------------------------------------------------------

    def sync_keywords(self) -> None:
        """Indeks słów zgodny z fragmentami kolekcji (dodane, zastąpione, usunięte). Z dziennika zmian tylko
        dotknięte fragmenty (przy milionie porównanie wersji wszystkich to ~2 s); pełne porównanie, gdy dziennik
        nie sięga znacznika indeksu albo indeksu jeszcze nie ma."""
        keywords = self.keywords
        assert keywords is not None, "synchronizacja wymaga indeksu słów"
        version = self.collection.version()  # read before the chunks: a write after it makes the next check resync
        if version and version == keywords.collection_version and len(keywords):
            return
        texts: Callable[[list[str]], dict[str, str]] = self.keyword_texts
        changes = self._changes_since(keywords.collection_version, version, "hash") if len(keywords) else None
        if changes is not None:
            keywords.sync_changes({i: None if v is None else str(v) for i, v in changes.items()}, texts, version)
        else:
            keywords.sync(self.chunk_versions(), texts, version)

    def chunk_versions(self) -> dict[str, str]:
        """Wersja fragmentu do synchronizacji indeksu słów: skrót pliku, z którego pochodzi (zmienia się
        z plikiem); z migawki, bez pobierania metadanych wszystkich fragmentów."""
        return {i: str(v) for i, v in self.column("hash", "").items()}

    def keyword_texts(self, ids: list[str]) -> dict[str, str]:
        """Id → tekst do indeksu słów dla fragmentów kolekcji."""
        return {hit.id: keyword_text(hit.text, hit.metadata) for hit in self.hits(ids)}

    def _changes_since(self, marker: str, current: str, key: str) -> dict[str, Any] | None:
        """Fragmenty, których dotknęły zapisy od wersji ``marker`` do ``current`` (dziennik zmian), z obecną
        wartością metadanej ``key`` (``""``, gdy fragment jej nie ma; ``None``, gdy fragmentu już nie ma).
        ``None``: bez dziennika (serwer), bez migawki wersji ``current`` albo gdy łańcuch wpisów się urywa –
        wtedy trzeba porównać wszystko."""
        found = self.snapshot() if self.collection.journaled and marker else None
        if found is None or found.marker != current or key not in snapshots.COLUMNS:
            return None
        assert self.collection.derived_dir is not None
        changed = journal.changed_since(self.collection.derived_dir, marker, current)
        if changed is None:
            return None
        ids = sorted(changed)
        return dict(zip(ids, found.values_of(ids, key, ""), strict=True))
