"""Indeksowanie przyrostowe: pliki → odciski (hash) → tylko zmienione pliki pocięte i opisane → wektory
(niezmienione fragmenty z bazy, reszta z modelu) → zapis pliku w całości pod blokadą → rejestr.

Plik liczy się jako zaindeksowany dopiero, gdy ma wpis w rejestrze, a wpis powstaje po zapisaniu wszystkich
jego fragmentów: przerwanie w dowolnej chwili zostawia co najwyżej fragmenty-sieroty, które następny
przebieg przejmuje (ich wektory są użyte ponownie) albo usuwa.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ..embedding.embedder import Embedder
from ..errors import UnreadableFile, UserError
from ..ingest.chunking import CHUNKER_VERSION
from ..storage.collection import ChunkCollection
from ..storage.documents import aliases, owner_of, standing, this_host
from ..storage.locking import DEFAULT_WAIT, read_session, write_session
from ..storage.registry import FileRecord, Registry
from ..storage.store import Store, collection_name
from ..storage.vector_cache import VectorCache
from .discovery import FoundFiles, SourceFile, collect_files, fingerprint, vanished
from .file_writes import drop_file, orphan_ids, write_file
from .preparing import PreparedFile, prepare_file
from .report import IndexReport, Progress, stale_notes, vanished_note
from .vector_reuse import embed_with_reuse


@dataclass
class SyncOptions:
    """Opcje przebiegu ``indeksuj``."""

    doc_type: str | None = None
    prune: bool = False  # --usun-brakujace
    force: bool = False  # --wymus: pruning may empty a folder's part of the index
    wait: float = DEFAULT_WAIT  # --czekaj


def is_up_to_date(record: FileRecord | None, source: SourceFile, doc_type: str | None) -> bool:
    return (
        record is not None
        and record.hash == source.hash
        and record.chunker == CHUNKER_VERSION
        and (doc_type is None or record.forced_type == doc_type)
    )


class _Sync:
    """Jeden przebieg ``indeksuj`` na jednym folderze bazy (krótkie sesje odczytu i zapisu)."""

    def __init__(self, store: Store, embedder: Embedder, options: SyncOptions,
                 on_wait: Callable[[str], None] | None) -> None:
        self.store = store
        self.embedder = embedder
        self.model = embedder.model_id
        self.options = options
        self.on_wait = on_wait
        self.cache = VectorCache(store.work_dir / f"wektory-{collection_name(self.model)}", embedder.dim)

    def _collection(self, create: bool = False) -> ChunkCollection | None:
        if not create and self.model not in self.store.indexed_models():
            return None
        return self.store.chunks(self.model, self.embedder.dim, create=create)

    def known_records(self) -> list[FileRecord]:
        if not self.store.exists():
            return []
        with read_session(self.store, self.options.wait, self.on_wait):
            registry = Registry(self.store.client)
            models = self.store.indexed_models()
            if not registry.exists and any(self.store.chunks(m, dim).count() for m, dim in models.items()):
                # without a registry every chunk would look like a crash leftover and be swept away
                raise UserError(
                    f"Baza „{self.store.path}” pochodzi z wcześniejszej wersji chroma-rag (bez rejestru plików) – "
                    "zbuduj ją od nowa w nowym folderze (--baza) albo po usunięciu starego."
                )
            return registry.records()

    def reusable_vectors(self, source: SourceFile, others: list[FileRecord]) -> dict[str, np.ndarray]:
        """Wektory już zapisanych fragmentów tego pliku (także sierot po przerwanym zapisie) i plików o tej
        samej treści (przeniesionych, skopiowanych), według skrótu tekstu."""
        if not self.store.exists():
            return {}
        with read_session(self.store, self.options.wait, self.on_wait):
            collection = self._collection()
            if collection is None:
                return {}
            found = collection.records(where={"sciezka": source.key})
            found.update(collection.records(ids=[i for r in others for i in r.chunk_ids]))
        return {meta["tekst_hash"]: vector for meta, _, vector in found.values() if "tekst_hash" in meta}

    def write(self, source: SourceFile, prepared: PreparedFile, vectors: np.ndarray,
              moved_from: list[FileRecord]) -> FileRecord | None:
        """Zapisuje plik w całości i zwraca jego wpis; ``None``, gdy inny proces zdążył zaindeksować tę samą
        wersję."""
        with write_session(self.store, self.options.wait, self.on_wait):
            registry = Registry(self.store.client, create=True)
            if is_up_to_date(registry.get(self.model, source.key), source, self.options.doc_type):
                return None
            collection = self._collection(create=True)
            assert collection is not None
            previous = registry.get(self.model, source.key)
            if previous is not None and previous.same_as is None and aliases(registry, previous):
                drop_file(collection, registry, previous)  # the old content stays with its other paths
            first = prepared.metadatas[0]
            record = FileRecord(
                path=source.key, name=source.path.name, size=source.size, mtime=source.mtime, hash=source.hash,
                chunker=CHUNKER_VERSION, model=self.model, indexed_at=datetime.now(UTC).isoformat(timespec="seconds"),
                doc_type=str(first["typ"]), year=int(first["rok"]), forced_type=self.options.doc_type,
                chunk_ids=prepared.ids, host=this_host(),
            )
            write_file(collection, registry, record, prepared, vectors)
            for old in moved_from:
                if not standing(old):
                    drop_file(collection, registry, old)
        return record

    def write_alias(self, source: SourceFile, owner: FileRecord) -> bool:
        """Zapisuje ścieżkę jako kolejną ścieżkę dokumentu ``owner`` (bez fragmentów); ``False``, gdy stan
        zmienił się w międzyczasie (wtedy plik indeksuje się zwykłym trybem)."""
        with write_session(self.store, self.options.wait, self.on_wait):
            registry = Registry(self.store.client, create=True)
            current = registry.get(self.model, owner.path)
            if current is None or current.same_as is not None or current.hash != source.hash:
                return False
            previous = registry.get(self.model, source.key)
            if previous is not None:
                drop_file(self._collection(), registry, previous)
            registry.put(FileRecord(
                path=source.key, name=source.path.name, size=source.size, mtime=source.mtime, hash=source.hash,
                chunker=current.chunker, model=self.model, indexed_at=datetime.now(UTC).isoformat(timespec="seconds"),
                doc_type=current.doc_type, year=current.year, forced_type=self.options.doc_type, same_as=current.path,
                host=this_host(),
            ))
        return True

    def finish(self, found: FoundFiles, report: IndexReport) -> None:
        """Sprzątanie pod koniec: sieroty po przerwanych zapisach i (na życzenie) pliki, które zniknęły."""
        if not self.store.exists():
            return
        with read_session(self.store, self.options.wait, self.on_wait):
            needed = self._cleanup(found, report, apply=False)
        if needed:
            with write_session(self.store, self.options.wait, self.on_wait):
                self._cleanup(found, report, apply=True)

    def _cleanup(self, found: FoundFiles, report: IndexReport, apply: bool) -> bool:
        registry = Registry(self.store.client, create=apply)
        records = registry.records()
        collection = self._collection()
        mine = [r for r in records if r.model == self.model]
        orphans = orphan_ids(collection, mine, certain=apply) if collection else set()
        gone = [r for r in records if self.options.prune and vanished(r, found.folders)]
        if not apply:
            return bool(orphans or gone)
        if orphans and collection:
            collection.delete(sorted(orphans))
            report.orphans_removed = len(orphans)
        models = self.store.indexed_models()
        for record in gone:
            dim = models.get(record.model)
            drop_file(self.store.chunks(record.model, dim) if dim else None, registry, record)
            if record.path not in report.removed:
                report.removed.append(record.path)
        return True


def sync(
    paths: Iterable[Path],
    store: Store,
    embedder: Embedder,
    options: SyncOptions | None = None,
    progress: Progress | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> IndexReport:
    """Doprowadza indeks do stanu plików: niezmienione pomija (po hashu), zmienione zastępuje w całości
    (wektory niezmienionych fragmentów z bazy), przeniesione rozpoznaje po hashu; nieczytelny plik jest
    pomijany z powodem, reszta idzie dalej. Model liczy bez blokady; blokadę bierze tylko na zapis."""
    options = options or SyncOptions()
    progress = progress or Progress()
    found = collect_files(paths, allow_empty=options.prune and options.force)
    report = IndexReport(skipped=dict(found.skipped))
    sources = fingerprint(found.files, report.skipped)
    run = _Sync(store, embedder, options, on_wait)
    records = run.known_records()
    mine = {r.path: r for r in records if r.model == run.model}
    by_hash: dict[str, list[FileRecord]] = defaultdict(list)
    for record in mine.values():
        by_hash[record.hash].append(record)
    ready = []
    for source in sources:
        if is_up_to_date(mine.get(source.key), source, options.doc_type):
            report.unchanged.append(str(source.path))
            continue
        if _write_alias(run, records, by_hash[source.hash], source, report):
            continue
        progress.reading(source.path)
        prepared = _prepare(source, options.doc_type, report)
        if prepared is not None:
            ready.append((source, prepared))
    progress.start(len(ready), sum(len(prepared.ids) for _, prepared in ready))
    for source, prepared in ready:
        if _write_alias(run, records, by_hash[source.hash], source, report):  # same content earlier in this run
            progress.advance(len(prepared.ids))
            continue
        same_content = [r for r in by_hash[source.hash] if r.path != source.key]
        written = _index_one(run, source, prepared, same_content, report, progress)
        if written is not None:  # a second path with this content later in the same run becomes its alias
            by_hash[source.hash].append(written)
            records.append(written)
    run.finish(found, report)
    run.cache.clean()
    if not options.prune:
        report.notes.extend(vanished_note(records, run.model, found.folders, report))
    report.notes.extend(stale_notes(records, run.model, {s.key for s in sources}))
    return report


def _write_alias(
    run: _Sync, records: list[FileRecord], same_content: list[FileRecord], source: SourceFile, report: IndexReport
) -> bool:
    """Treść, która już stoi pod inną ścieżką: ta ścieżka zostaje zapisana jako druga ścieżka dokumentu."""
    owner = _standing_owner(records, same_content, source.key)
    if owner is None or not run.write_alias(source, owner):
        return False
    report.same_document[str(source.path)] = owner.path
    return True


def _standing_owner(records: list[FileRecord], same_content: list[FileRecord], key: str) -> FileRecord | None:
    """Dokument o tej samej treści, który nadal stoi pod inną ścieżką (wtedy nowa ścieżka to jego alias)."""
    for record in same_content:
        if record.path != key and standing(record):
            owner = owner_of(records, record)
            if owner is not None and owner.path != key:
                return owner
    return None


def _prepare(source: SourceFile, doc_type: str | None, report: IndexReport) -> PreparedFile | None:
    """Plik wczytany i pocięty; nieczytelny trafia do pominiętych z powodem."""
    try:
        prepared, load_s, chunk_s = prepare_file(source, doc_type)
    except UnreadableFile as exc:
        report.skipped[str(source.path)] = str(exc)
        return None
    except Exception as exc:  # one odd file (a reader bug, a missing codec) must not stop the whole run
        reason = f"nie da się odczytać (błąd czytnika {type(exc).__name__})"
        report.skipped[str(source.path)] = f"{source.path.name}: {reason}."
        return None
    report.seconds["wczytywanie"] += load_s
    report.seconds["ciecie"] += chunk_s
    return prepared


def _index_one(run: _Sync, source: SourceFile, prepared: PreparedFile, same_content: list[FileRecord],
               report: IndexReport, progress: Progress) -> FileRecord | None:
    progress.start_file(source.path, len(prepared.ids))
    started = time.perf_counter()
    reusable = run.reusable_vectors(source, same_content)
    vectors, reused = embed_with_reuse(prepared, reusable, run.embedder, progress, run.cache)
    embedded = time.perf_counter()
    written = run.write(source, prepared, vectors, same_content)
    report.seconds["embedding"] += embedded - started
    report.seconds["zapis"] += time.perf_counter() - embedded
    progress.finish_file(source.path)
    if not written:
        report.unchanged.append(str(source.path))
        return None
    report.indexed[str(source.path)] = len(prepared.ids)
    report.reused += reused
    report.embedded += len(prepared.ids) - reused
    report.pages += prepared.pages
    for old in same_content:
        if not standing(old):
            report.moved[old.path] = str(source.path)
    return written
