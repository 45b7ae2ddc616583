"""``sprawdz``: zgodność rejestru z kolekcjami i odnajdywalność każdego fragmentu po własnym wektorze."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..ingest.chunking import CHUNKER_VERSION
from ..plural import ORPHAN, UNFINDABLE, count
from ..storage.collection import ChunkCollection
from ..storage.documents import owner_of
from ..storage.locking import DEFAULT_WAIT, read_session, write_session
from ..storage.registry import FileRecord, Registry
from ..storage.store import Store
from .file_writes import drop_file, orphan_ids

_QUERY_BATCH = 64
_NEIGHBOURS = 5
_SAME_DISTANCE = 1e-4  # identical texts have identical vectors: any of them may come first
_RECHECK_SECONDS = 1.0
# HNSW is approximate: a query by a chunk's own vector can miss it (chroma-core/chroma#3113, and once in CI on
# a 206-chunk `chroma run` collection). A wide list (hnswlib searches with ef = max(ef_search, k)) finds
# such a chunk; a chunk that really fell out of the index is absent from any list.
_RECHECK_NEIGHBOURS = 200
_REBUILD_ATTEMPTS = 3


@dataclass
class ConsistencyReport:
    """Wynik kontroli; ``ok`` znaczy: każdy plik w całości, bez sierot, każdy fragment odnajdywalny."""

    files: int = 0
    chunks: int = 0
    orphans: list[str] = field(default_factory=list)
    incomplete: dict[str, int] = field(default_factory=dict)  # file → number of missing chunks
    unfindable: list[str] = field(default_factory=list)
    missing_on_disk: list[str] = field(default_factory=list)
    old_chunker: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.orphans or self.incomplete or self.unfindable)


def check(store: Store, repair: bool = False, wait: float = DEFAULT_WAIT) -> ConsistencyReport:
    """Sprawdza bazę (pod blokadą współdzieloną); z ``repair`` naprawia pod wyłączną i sprawdza ponownie."""
    store.require_existing()
    with read_session(store, wait):
        report = _inspect(store)
    if repair and not report.ok:
        with write_session(store, wait, command="sprawdz --napraw"):
            repaired = _repair(store, _inspect(store))
        with read_session(store, wait):
            report = _inspect(store)
        report.repaired = repaired
    return report


def _collections(store: Store) -> dict[str, ChunkCollection]:
    return {model: store.chunks(model, dim) for model, dim in store.indexed_models().items()}


def _inspect(store: Store) -> ConsistencyReport:
    records = Registry(store.client).records()
    collections = _collections(store)
    report = ConsistencyReport(files=len({r.path for r in records}))
    for record in records:
        if not Path(record.path).exists():
            report.missing_on_disk.append(record.path)
        if record.chunker != CHUNKER_VERSION:
            report.old_chunker.append(record.path)
    for model, collection in collections.items():
        mine = [r for r in records if r.model == model]
        present = set(collection.stored_ids())
        report.chunks += len(present)
        report.orphans.extend(sorted(orphan_ids(collection, mine)))
        for record in mine:
            missing = len(set(record.chunk_ids) - present)
            if missing:
                report.incomplete[record.path] = missing
        report.unfindable.extend(unfindable(collection))
    for record in records:
        if record.model not in collections:
            report.incomplete[record.path] = len(record.chunk_ids)
        elif owner_of(records, record) is None:  # another path of a document whose chunks are gone
            report.incomplete[record.path] = 1
    report.missing_on_disk = sorted(set(report.missing_on_disk))
    report.old_chunker = sorted(set(report.old_chunker))
    return report


def unfindable(collection: ChunkCollection) -> list[str]:
    """Fragmenty, których zapytanie własnym wektorem nie zwraca na pierwszym miejscu (np. zgubione z HNSW).
    Zgłoszone są sprawdzane drugi raz, po chwili i z szeroką listą sąsiadów: na serwerze `chroma run`
    zapytanie raz pominęło fragment, który chwilę później był na miejscu (zapewne przenoszenie świeżych
    zapisów do indeksu w tle), a przybliżony HNSW potrafi pominąć fragment przy krótkiej liście –
    fragment naprawdę zgubiony brakuje za każdym razem i w każdej liście."""
    ids = sorted(collection.stored_ids())
    suspects = _missed(collection, ids, _NEIGHBOURS, len(ids))
    if suspects:
        time.sleep(_RECHECK_SECONDS)
        suspects = _missed(collection, suspects, _RECHECK_NEIGHBOURS, len(ids))
    return suspects


def _missed(collection: ChunkCollection, ids: list[str], list_size: int, total: int) -> list[str]:
    k = min(list_size, total)
    lost = []
    for start in range(0, len(ids), _QUERY_BATCH):
        batch = ids[start : start + _QUERY_BATCH]
        chunks = collection.records(ids=batch)  # by batches: at 1M chunks all vectors are 1.5 GB
        vectors = np.stack([chunks[i][2] for i in batch])
        for own, neighbours in zip(batch, collection.nearest_ids(vectors, k), strict=True):
            best = neighbours[0][1] if neighbours else 0.0
            tied = {i for i, d in neighbours if d <= best + _SAME_DISTANCE}
            # k identical vectors (e.g. "Art. 55-60. (pominięte)" expanded into six units) fill the whole
            # neighbour list, so which of them comes back is arbitrary: that is not a lost chunk
            if own not in tied and len(tied) < len(neighbours):
                lost.append(own)
    return lost


def ensure_findable(store: Store, model: str, dim: int) -> int:
    """Po zapisach (pod blokadą wyłączną): gdy HNSW zgubił fragmenty, kolekcja jest budowana od nowa
    (``Store.rebuild_chunks``). Zwraca liczbę zgubionych; kolekcja bez zapisu od ostatniej kontroli nie jest
    sprawdzana drugi raz."""
    if store.chunks(model, dim).checked_findable():
        return 0
    return rebuild_if_lost(store, model, dim)


def rebuild_if_lost(store: Store, model: str, dim: int) -> int:
    """Kontrola odnajdywalności całej kolekcji i przebudowa, gdy coś zginęło (pod blokadą wyłączną); zwraca
    liczbę zgubionych. Świeży graf HNSW też bywa niepełny (na danych testu #7758 raz na ~10 budowań jeden
    fragment), a kolejne budowanie losuje poziomy grafu od nowa – stąd kilka prób."""
    collection = store.chunks(model, dim)
    lost = unfindable(collection)
    missing = lost
    for _ in range(_REBUILD_ATTEMPTS):
        if not missing:
            break
        collection = store.rebuild_chunks(model, dim)
        missing = unfindable(collection)
    if not missing:
        collection.mark_findable()
    return len(lost)


def _repair(store: Store, report: ConsistencyReport) -> list[str]:
    """Usuwa sieroty, wycofuje niepełne pliki (do ponownego zaindeksowania), buduje od nowa kolekcję, która
    zgubiła fragmenty z HNSW. Zwraca opis tego, co zrobiono."""
    done = []
    registry = Registry(store.client, create=True)
    records = registry.records()
    for model, dim in store.indexed_models().items():
        collection = store.chunks(model, dim)
        orphans = orphan_ids(collection, [r for r in records if r.model == model])
        if orphans:
            collection.delete(sorted(orphans))
            done.append(f"usunięto {count(len(orphans), ORPHAN)} ({model})")
        if report.unfindable or orphans:  # deleting orphans may lose other chunks from the HNSW, so look again
            lost = rebuild_if_lost(store, model, dim)
            if lost:
                done.append(f"kolekcja miała {count(lost, UNFINDABLE)} – zbudowano ją od nowa ({model})")
    incomplete: list[FileRecord] = [r for r in records if r.path in report.incomplete]
    collections = _collections(store)
    for record in incomplete:
        drop_file(collections.get(record.model), registry, record)
        done.append(f"wycofano niepełny plik {record.path} – zaindeksuj go ponownie")
    return done
