"""Indeksowanie przyrostowe: pliki → odciski (hash) → tylko zmienione pliki pocięte i opisane → wektory
(niezmienione fragmenty z bazy, reszta z modelu) → zapis pliku w całości pod blokadą → rejestr.

Plik liczy się jako zaindeksowany dopiero, gdy ma wpis w rejestrze, a wpis powstaje po zapisaniu wszystkich
jego fragmentów: przerwanie w dowolnej chwili zostawia co najwyżej fragmenty-sieroty, które następny
przebieg przejmuje (ich wektory są użyte ponownie) albo usuwa.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..embedding.embedder import Embedder
from ..errors import UnreadableFile, UserError
from ..ingest.chunking import CHUNKER_VERSION
from ..ingest.ocr import Ocr, OcrEngine, PageCache
from ..plural import FRAGMENT, count
from ..storage.collection import ChunkCollection
from ..storage.documents import aliases, owner_of, standing, this_host
from ..storage.locking import DEFAULT_WAIT, read_session, write_session
from ..storage.registry import FileRecord, Registry
from ..storage.store import Store, collection_name
from ..storage.vector_cache import VectorCache
from .consistency import ensure_findable
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
    # After writes, a collection up to this size is checked for chunks Chroma's HNSW lost (chroma#7758): ~0.3 ms
    # a chunk (8,693 e5 chunks: 1.4 s reading the vectors, 1.3 s querying), so up to ~15 s; a larger one is
    # left to `sprawdz --napraw` (the product's search reads its own snapshot, not the HNSW).
    check_findable_up_to: int = 50_000
    ocr: OcrEngine = field(default_factory=OcrEngine)  # scanned PDF pages


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
        # OCR text does not depend on the model: every model's run (and a run resumed after Ctrl-C) reads it here
        self.ocr_cache = PageCache(store.work_dir / "ocr")

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

    def keep_findable(self, report: IndexReport) -> None:
        """Po zapisach – tego przebiegu albo przerwanego wcześniej – każdy fragment ma być odnajdywalny także
        zapytaniem do samej Chromy (``sprawdz``); zgubione z HNSW naprawia przebudowa kolekcji."""
        if self.model not in self.store.indexed_models():
            return
        with read_session(self.store, self.options.wait, self.on_wait):
            collection = self._collection()
            if collection.checked_findable() or collection.count() > self.options.check_findable_up_to:
                return
        with write_session(self.store, self.options.wait, self.on_wait):
            lost = ensure_findable(self.store, self.model, self.embedder.dim)
        if lost:
            report.notes.append(
                f"Chroma zgubiła z indeksu wektorów {count(lost, FRAGMENT)} (jej błąd chroma-core/chroma#7758): "
                "kolekcję zbudowano od nowa, nic nie przepadło."
            )

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
    pomijany z powodem, reszta idzie dalej. Model liczy bez blokady; blokadę bierze tylko na zapis.

    Model jest jedynym wąskim gardłem: kolejne pliki wczytuje i tnie wątek w tle, a zapis pliku do bazy (i odczyt
    wektorów do ponownego użycia następnego) idzie w drugim wątku, gdy model liczy już następny plik
    (``_Pipeline``). Kolejność zapisów i ich postać – jak przy zapisie po kolei."""
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
    todo = []
    for source in sources:
        if is_up_to_date(mine.get(source.key), source, options.doc_type):
            report.unchanged.append(str(source.path))
            continue
        if _write_alias(run, records, by_hash[source.hash], source, report):
            continue
        todo.append(source)
    _Pipeline(run, records, by_hash, report, progress).index(todo)
    run.finish(found, report)
    run.keep_findable(report)
    run.cache.clean()
    if not options.prune:
        report.notes.extend(vanished_note(records, run.model, found.folders, report))
    report.notes.extend(stale_notes(records, run.model, {s.key for s in sources}))
    return report


@dataclass
class _Ready:
    """Wynik przygotowania jednego pliku: pocięty plik albo powód pominięcia."""

    source: SourceFile
    prepared: PreparedFile | None
    skip_reason: str | None = None
    load_s: float = 0.0
    chunk_s: float = 0.0


class _Preparing:
    """Pliki wczytywane i cięte po kolei w wątku w tle (z wyprzedzeniem, w kolejności ``sources``), podczas gdy
    model liczy wektory wcześniejszych. Wątek nie dotyka bazy ani postępu; wyniki odbiera wątek główny."""

    def __init__(self, sources: list[SourceFile], doc_type: str | None, ocr: OcrEngine, ocr_cache: PageCache) -> None:
        self.sources = sources
        self._results: list[_Ready | BaseException] = []
        self._pages: list[tuple[Path, int, int, bool]] = []  # scan pages read, not yet reported
        self._ready = threading.Condition()
        self._stop = threading.Event()
        ocr_run = Ocr(ocr, ocr_cache, self._page_read)
        self._thread = threading.Thread(target=self._run, args=(doc_type, ocr_run), name="chroma-rag-wczytywanie",
                                        daemon=True)
        self._thread.start()

    def _run(self, doc_type: str | None, ocr: Ocr) -> None:
        for source in self.sources:
            if self._stop.is_set():
                return
            try:
                result: _Ready | BaseException = _prepare(source, doc_type, ocr)
            except BaseException as exc:  # handed to the main thread, raised there
                result = exc
            with self._ready:
                self._results.append(result)
                self._ready.notify_all()
            if isinstance(result, BaseException):
                return

    def _page_read(self, path: Path, done: int, pages: int, cached: bool) -> None:
        with self._ready:
            self._pages.append((path, done, pages, cached))
            self._ready.notify_all()

    def pages_read(self) -> list[tuple[Path, int, int, bool]]:
        """Strony skanów odczytane od ostatniego pytania (dla ``Progress.ocr_page`` w wątku głównym)."""
        with self._ready:
            pages, self._pages = self._pages, []
        return pages

    def done(self) -> int:
        """Ile plików jest już przygotowanych."""
        return len(self._results)

    def peek(self, position: int) -> _Ready | None:
        """Plik nr ``position``, o ile już gotowy (bez czekania)."""
        found = self._results[position] if position < len(self._results) else None
        return found if isinstance(found, _Ready) else None

    def get(self, position: int, progress: Progress) -> _Ready:
        """Plik nr ``position``; czeka, aż wątek go przygotuje, zgłaszając w tym czasie odczytane strony skanów
        (błąd wątku wychodzi tutaj)."""
        while True:
            with self._ready:
                while position >= len(self._results) and not self._pages:
                    self._ready.wait()
                found = self._results[position] if position < len(self._results) else None
            _report_pages(self, progress)
            if found is not None:
                break
        if isinstance(found, BaseException):
            raise found
        return found

    def stop(self) -> None:
        self._stop.set()


class _Storage:
    """Jedyny wątek, który w trakcie przebiegu otwiera sesje bazy (klient Chromy i blokada nie są dzielone między
    wątki): zlecenia wykonuje po kolei, więc zapis pliku idzie przed następnym, a model w tym czasie liczy dalej."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[[], object]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="chroma-rag-zapis", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], object]) -> Future:
        future: Future = Future()
        self._jobs.put((future, job))
        return future

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            future, job = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # raised in the main thread by Future.result
                future.set_exception(exc)

    def close(self) -> None:
        """Kończy wątek po zleceniach już przyjętych (anulowane pomija) i czeka na to."""
        self._jobs.put(None)
        self._thread.join()


@dataclass
class _Written:
    """Zapis pliku zlecony wątkowi bazy."""

    source: SourceFile
    prepared: PreparedFile
    same_content: list[FileRecord]
    reused: int
    future: Future


# Below this many bytes to index every file is prepared before the first one embeds (well under a second): the
# totals are exact from the start. Above it the model starts on the first file at once and the totals follow.
PREPARE_AHEAD_BYTES = 1_000_000


class _Pipeline:
    """Pliki do zaindeksowania: przygotowanie w tle → wektory (model, wątek główny) → zapis w tle, po kolei.

    W każdej chwili co najwyżej jeden zapis czeka albo trwa; przerwanie (Ctrl-C, błąd) czeka na jego koniec, więc
    jak przy zapisie po kolei w bazie są w całości wszystkie pliki, których wektory policzono, poza bieżącym.
    Plik o treści (hash) pliku już zapisanego albo czekającego na zapis w tym przebiegu idzie po zakończeniu
    zapisów: staje się drugą ścieżką tamtego dokumentu albo bierze jego wektory."""

    def __init__(self, run: _Sync, records: list[FileRecord], by_hash: dict[str, list[FileRecord]],
                 report: IndexReport, progress: Progress) -> None:
        self.run = run
        self.records = records
        self.by_hash = by_hash
        self.report = report
        self.progress = progress
        self.seconds = report.seconds
        self.received = 0  # prepared files taken over by the main thread (in order)
        self.announced = False
        self.pending: _Written | None = None
        self.prefetched: dict[str, Future] = {}  # source key → reusable vectors read ahead
        self.preparing: _Preparing | None = None

    def index(self, todo: list[SourceFile]) -> None:
        if not todo:
            self.progress.start(0, 0)
            return
        self.preparing = _Preparing(todo, self.run.options.doc_type, self.run.options.ocr, self.run.ocr_cache)
        storage = _Storage()
        try:
            if sum(source.size for source in todo) <= PREPARE_AHEAD_BYTES:
                self._receive(len(todo) - 1)  # a short run: totals exact before the first file, as they always were
            for position in range(len(todo)):
                self._one(storage, position)
            self._finish_pending()
        except BaseException:
            self.preparing.stop()
            for future in self.prefetched.values():
                future.cancel()
            raise
        finally:
            # the write already queued goes in whole (its vectors are computed), as it would without the thread;
            # nothing else touches the database after this returns (a second Ctrl-C stops waiting: as a kill)
            storage.close()

    def _one(self, storage: _Storage, position: int) -> None:
        assert self.preparing is not None
        ready = self._receive(position)
        source, prepared = ready.source, ready.prepared
        if prepared is None:
            return
        prefetched = self.prefetched.pop(source.key, None)
        if self._depends(source):  # same content as a file written (or being written) in this run
            self._finish_pending()
            if prefetched is not None:  # read before that write: read again below
                concurrent.futures.wait([prefetched])
                prefetched = None
            if _write_alias(self.run, self.records, self.by_hash[source.hash], source, self.report):
                self.progress.reuse(len(prepared.ids))
                return
        same_content = [r for r in self.by_hash[source.hash] if r.path != source.key]
        if prefetched is None:
            prefetched = storage.submit(lambda: self.run.reusable_vectors(source, same_content))
        reusable = self._wait(prefetched)
        self.progress.start_file(source.path, len(prepared.ids))
        started = time.perf_counter()
        vectors, reused = embed_with_reuse(prepared, reusable, self.run.embedder, _Announcing(self), self.run.cache)
        self.seconds["embedding"] += time.perf_counter() - started
        self._finish_pending()
        self._prefetch(storage, position + 1, source)
        self.pending = _Written(source, prepared, same_content, reused,
                                storage.submit(lambda: self._write(source, prepared, vectors, same_content)))
        self.announce()
        self.progress.finish_file(source.path)

    def _receive(self, position: int) -> _Ready:
        """Pliki przygotowane do nr ``position`` włącznie, odebrane po kolei (nieczytelny trafia do pominiętych
        z powodem, jak przy wczytywaniu po kolei); zwraca plik nr ``position``."""
        assert self.preparing is not None
        while self.received <= position:
            path = self.preparing.sources[self.received].path
            ready = self.preparing.peek(self.received)
            if ready is None or not self.announced:
                self.progress.reading(path)
            _report_pages(self.preparing, self.progress)
            if ready is None:
                started = time.perf_counter()
                ready = self.preparing.get(self.received, self.progress)
                _add(self.seconds, "czekanie na wczytanie", time.perf_counter() - started)
            self.seconds["wczytywanie"] += ready.load_s
            self.seconds["ciecie"] += ready.chunk_s
            if ready.prepared is None:
                self.report.skipped[str(ready.source.path)] = str(ready.skip_reason)
            self.received += 1
            self.announce()
        found = self.preparing.peek(position)
        assert found is not None
        return found

    def announce(self) -> None:
        """``start`` z liczbą plików i fragmentów, gdy wszystkie pliki są już przygotowane (zwykle w pierwszych
        sekundach przebiegu, w trakcie liczenia pierwszego pliku)."""
        preparing = self.preparing
        if self.announced or preparing is None or preparing.done() < len(preparing.sources):
            return
        results = [preparing.peek(i) for i in range(len(preparing.sources))]
        if any(r is None for r in results):  # the thread failed: the error comes out of ``get``
            return
        self.announced = True
        usable = [r.prepared for r in results if r is not None and r.prepared is not None]
        self.progress.start(len(usable), sum(len(p.ids) for p in usable))

    def _depends(self, source: SourceFile) -> bool:
        pending = self.pending is not None and self.pending.source.hash == source.hash
        return pending or any(r.path != source.key for r in self.by_hash[source.hash])

    def _prefetch(self, storage: _Storage, position: int, current: SourceFile) -> None:
        """Wektory do ponownego użycia następnego pliku, czytane przed zapisem bieżącego (gdy następny jest już
        przygotowany i nie zależy od zapisów tego przebiegu)."""
        assert self.preparing is not None
        if position >= len(self.preparing.sources):
            return
        ready = self.preparing.peek(position)
        if ready is None or ready.prepared is None or ready.source.hash == current.hash or self._depends(ready.source):
            return
        source = ready.source
        self.prefetched[source.key] = storage.submit(lambda: self.run.reusable_vectors(source, []))

    def _write(self, source: SourceFile, prepared: PreparedFile, vectors: np.ndarray,
               same_content: list[FileRecord]) -> FileRecord | None:
        started = time.perf_counter()
        try:
            return self.run.write(source, prepared, vectors, same_content)
        finally:
            self.seconds["zapis"] += time.perf_counter() - started

    def _wait(self, future: Future) -> Any:
        if not future.done():
            started = time.perf_counter()
            try:
                return future.result()
            finally:
                _add(self.seconds, "czekanie na zapis", time.perf_counter() - started)
        return future.result()

    def _finish_pending(self) -> None:
        """Czeka na zapis poprzedniego pliku i wpisuje go do raportu (błąd zapisu wychodzi tutaj)."""
        pending = self.pending
        if pending is None:
            return
        written = self._wait(pending.future)
        self.pending = None
        source, prepared = pending.source, pending.prepared
        if not written:  # another process indexed the same version meanwhile
            self.report.unchanged.append(str(source.path))
            return
        self.report.indexed[str(source.path)] = len(prepared.ids)
        self.report.reused += pending.reused
        self.report.embedded += len(prepared.ids) - pending.reused
        self.report.pages += prepared.pages
        for old in pending.same_content:
            if not standing(old):
                self.report.moved[old.path] = str(source.path)
        # a second path with this content later in the same run becomes its alias
        self.by_hash[source.hash].append(written)
        self.records.append(written)


def _add(seconds: dict[str, float], stage: str, spent: float) -> None:
    seconds[stage] = seconds.get(stage, 0.0) + spent


class _Announcing(Progress):
    """Postęp jednego pliku: przekazuje ``advance`` dalej, a przy okazji ogłasza sumy, gdy przygotowanie się skończy."""

    def __init__(self, pipeline: _Pipeline) -> None:
        self.pipeline = pipeline

    def advance(self, chunks: int) -> None:
        self.pipeline.announce()
        self.pipeline.progress.advance(chunks)

    def reuse(self, chunks: int) -> None:
        self.pipeline.announce()
        self.pipeline.progress.reuse(chunks)


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


def _report_pages(preparing: _Preparing, progress: Progress) -> None:
    for path, done, pages, cached in preparing.pages_read():
        progress.ocr_page(path, done, pages, cached)


def _prepare(source: SourceFile, doc_type: str | None, ocr: Ocr) -> _Ready:
    """Plik wczytany i pocięty; nieczytelny – z powodem pominięcia."""
    try:
        prepared, load_s, chunk_s = prepare_file(source, doc_type, ocr)
    except UnreadableFile as exc:
        return _Ready(source, None, str(exc))
    except Exception as exc:  # one odd file (a reader bug, a missing codec) must not stop the whole run
        reason = f"nie da się odczytać (błąd czytnika {type(exc).__name__})"
        return _Ready(source, None, f"{source.path.name}: {reason}.")
    return _Ready(source, prepared, None, load_s, chunk_s)
