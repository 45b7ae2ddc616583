"""Indeksowanie przyrostowe: pliki → odciski (hash) → tylko zmienione pliki pocięte i opisane → wektory
(niezmienione fragmenty z bazy, reszta z modelu) → zapis pliku w całości pod blokadą → rejestr.

Plik liczy się jako zaindeksowany dopiero, gdy ma wpis w rejestrze, a wpis powstaje po zapisaniu wszystkich
jego fragmentów: przerwanie w dowolnej chwili zostawia co najwyżej fragmenty-sieroty, które następny
przebieg przejmuje (ich wektory są użyte ponownie) albo usuwa.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .chunking import CHUNKER_VERSION, chunk_document, embedding_text
from .collection import ChunkCollection
from .documents import aliases, owner_of, path_tag, rehome, standing, this_host
from .embedding import Embedder
from .errors import UnreadableFile, UserError, os_reason
from .loading import is_supported, is_temporary, load_document
from .locking import DEFAULT_WAIT, read_session, write_session
from .metadata import detect_publication, detect_title, detect_type, detect_year
from .models import Chunk, Document
from .plural import FILE, count
from .registry import FileRecord, Registry
from .store import Store, collection_name
from .validation import normalize_type
from .vector_cache import VectorCache

TEXT_SUFFIXES = (".txt", ".md")
CACHE_BATCH = 16  # vectors per model call; an interruption loses at most one such batch
# A text file this big is a log or a dump, not a document: embedding it would take hours on a laptop.
MAX_TEXT_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    """Plik na dysku z odciskiem; ``key`` (ścieżka bezwzględna bez linków) identyfikuje go w rejestrze."""

    path: Path
    key: str
    size: int
    mtime: float
    hash: str


@dataclass
class FoundFiles:
    """Wynik przejścia po ścieżkach: pliki do indeksowania i pominięte (z powodem)."""

    files: list[Path]
    skipped: dict[str, str]
    folders: list[Path]


@dataclass
class PreparedFile:
    """Plik pocięty i opisany, gotowy do embeddingu."""

    path: Path
    ids: list[str]
    texts: list[str]
    embed_texts: list[str]
    metadatas: list[dict[str, Any]]
    pages: int


@dataclass
class SyncOptions:
    """Opcje przebiegu ``indeksuj``."""

    doc_type: str | None = None
    prune: bool = False  # --usun-brakujace
    force: bool = False  # --wymus: pruning may empty a folder's part of the index
    wait: float = DEFAULT_WAIT  # --czekaj


@dataclass
class IndexReport:
    """Podsumowanie przebiegu: co zaindeksowano, co bez zmian, co pominięto, co usunięto, ile trwało."""

    indexed: dict[str, int] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)
    same_document: dict[str, str] = field(default_factory=dict)  # new path → path already holding its chunks
    notes: list[str] = field(default_factory=list)
    embedded: int = 0
    reused: int = 0
    orphans_removed: int = 0
    pages: int = 0
    seconds: dict[str, float] = field(
        default_factory=lambda: {"wczytywanie": 0.0, "ciecie": 0.0, "embedding": 0.0, "zapis": 0.0}
    )

    @property
    def chunks(self) -> int:
        return sum(self.indexed.values())


class Progress:
    """Powiadomienia o postępie (CLI rysuje z nich pasek; API może je pominąć). Kolejność: ``reading`` dla każdego
    zmienionego pliku, ``start`` z sumą plików i fragmentów do zapisania, potem dla każdego pliku ``start_file``,
    ``advance`` (fragmenty gotowe, także wzięte z bazy) i ``finish_file``."""

    def reading(self, path: Path) -> None: ...
    def start(self, files: int, chunks: int) -> None: ...
    def start_file(self, path: Path, chunks: int) -> None: ...
    def advance(self, chunks: int) -> None: ...
    def finish_file(self, path: Path) -> None: ...


def collect_files(paths: Iterable[Path], allow_empty: bool = False) -> FoundFiles:
    """Obsługiwane pliki z podanych ścieżek (katalogi rekurencyjnie, bez ukrytych, linki bez pętli, każdy
    plik raz). Błędna ścieżka przerywa wszystko, zanim baza zostanie dotknięta."""
    found: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    folders: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"Ścieżka „{path}” nie istnieje – sprawdź, czy nie ma literówki.")
        if path.is_dir():
            folders.append(path)
            before = (len(found), len(skipped))
            for file in _walk(path, skipped):
                key = _key(file)
                found.setdefault(key, Path(key) if file.is_symlink() else file)  # a link is named as its target
            if (len(found), len(skipped)) == before and not allow_empty:
                raise UserError(f"W folderze „{path}” nie ma plików PDF, DOCX, TXT ani MD do zaindeksowania.")
        elif is_temporary(path):  # an Office lock file given by a glob (~$umowa.docx): not a document
            continue
        elif is_supported(path):
            found.setdefault(_key(path), path)
        else:
            raise UserError(f"Plik „{path}” ma nieobsługiwany typ – obsługiwane są PDF, DOCX, TXT i MD.")
    return FoundFiles(files=list(found.values()), skipped=skipped, folders=folders)  # in the order given


def _walk(root: Path, skipped: dict[str, str]) -> Iterator[Path]:
    """Pliki pod ``root``; katalog odwiedzony raz (po urządzeniu i i-węźle), więc pętla linków się kończy."""
    visited: set[tuple[int, int]] = set()
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            stat = folder.stat()
            if (stat.st_dev, stat.st_ino) in visited:
                continue
            visited.add((stat.st_dev, stat.st_ino))
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped[str(folder)] = f"nie da się odczytać folderu ({os_reason(exc)})"
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):  # .git, .DS_Store, editors' lock and temp files
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    subfolders.append(path)
                elif is_supported(path):
                    if entry.is_file():
                        yield path
                    elif entry.is_symlink():
                        skipped[str(path)] = "link wskazuje na nieistniejący plik albo na samego siebie"
            except OSError as exc:
                skipped[str(path)] = f"nie da się odczytać ({os_reason(exc)})"
        pending.extend(reversed(subfolders))  # popped from the end: subfolders in name order


def _key(path: Path) -> str:
    return str(path.resolve())


def fingerprint(files: list[Path], skipped: dict[str, str]) -> list[SourceFile]:
    """Rozmiar, czas modyfikacji i SHA-256 plików; plik nieczytelny albo za duży trafia do pominiętych."""
    sources = []
    for path in files:
        try:
            stat = path.stat()
            if path.suffix.lower() in TEXT_SUFFIXES and stat.st_size > MAX_TEXT_BYTES:
                skipped[str(path)] = (
                    f"plik tekstowy ma {stat.st_size / 2**20:.0f} MB, limit to {MAX_TEXT_BYTES // 2**20} MB – "
                    "podziel go na mniejsze części"
                )
                continue
            sources.append(SourceFile(path, _key(path), stat.st_size, stat.st_mtime, file_hash(path)))
        except OSError as exc:
            skipped[str(path)] = f"nie da się odczytać pliku ({os_reason(exc)})"
    return sources


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def prepare_file(source: SourceFile, doc_type: str | None = None) -> tuple[PreparedFile, float, float]:
    """Wczytuje i tnie plik; zwraca też czasy wczytywania i cięcia."""
    started = time.perf_counter()
    document = load_document(source.path)
    loaded = time.perf_counter()
    chunks = [c for c in chunk_document(document) if c.text.strip()]
    if not chunks:
        raise UnreadableFile(f"{source.path.name}: brak tekstu do zaindeksowania.")
    prepared = describe_chunks(document, chunks, doc_type, source)
    return prepared, loaded - started, time.perf_counter() - loaded


def describe_chunks(document: Document, chunks: list[Chunk], doc_type: str | None, source: SourceFile) -> PreparedFile:
    """Id, teksty i metadane fragmentów jednego dokumentu."""
    text = document.text
    title = detect_title(text)
    file_meta: dict[str, Any] = {
        "plik": document.name,
        "sciezka": source.key,
        "rok": detect_year(document.path, text),
        "typ": doc_type or detect_type(title, text),
        "tytul": title,
        "dz_u": detect_publication(text),
        "hash": source.hash,
    }
    embed_texts = [embedding_text(c, title) for c in chunks]
    ids: list[str] = []
    taken: set[str] = set()
    metadatas = []
    for chunk, embedded, parts in zip(chunks, embed_texts, part_counts(chunks), strict=True):
        metadata = {
            **file_meta,
            "strona": chunk.page_from,
            "strona_od": chunk.page_from,
            "strona_do": chunk.page_to,
            "fragment": chunk.part,
            "czesci": parts,
            "rozdzial": chunk.heading,
            "tekst_hash": text_hash(embedded),
            **chunk.extra,
        }
        if chunk.art:
            metadata["art"] = chunk.art
        ids.append(chunk_id(source.key, document.name, chunk, taken))
        taken.add(ids[-1])
        metadatas.append(metadata)
    return PreparedFile(
        path=document.path,
        ids=ids,
        texts=[c.text for c in chunks],
        embed_texts=embed_texts,
        metadatas=metadatas,
        pages=len(document.pages),
    )


def part_counts(chunks: list[Chunk]) -> list[int]:
    """Na ile części pocięto jednostkę każdego fragmentu (części jednej jednostki idą po kolei: 1, 2, 3)."""
    counts = [chunk.part for chunk in chunks]
    for i in range(len(chunks) - 2, -1, -1):
        if chunks[i + 1].part == chunks[i].part + 1:
            counts[i] = counts[i + 1]
    return counts


# Metadata that tells apart units printed with the same number in one file (versions, quoted articles, annex).
DISTINCT_UNIT_KEYS = ("wersja", "akt_zmieniany", "zalacznik")


def chunk_id(key: str, file_name: str, chunk: Chunk, taken: set[str]) -> str:
    """Deterministyczne id: plik (ze skrótem ścieżki – pliki o tej samej nazwie w różnych folderach się nie
    nadpisują) + jednostka (+ wersja/akt zmieniany) + część; ponowne indeksowanie nadpisuje, nie dubluje."""
    distinct = "|".join(f"{k}={chunk.extra[k]}" for k in sorted(chunk.extra) if k in DISTINCT_UNIT_KEYS)
    base = f"{path_tag(key)}:{file_name}::{chunk.art or 'tekst'}::{distinct}::{chunk.part}"
    candidate, n = base, 1
    while candidate in taken:  # numbering printed twice in a document (e.g. an annex) must not overwrite
        n += 1
        candidate = f"{base}::{n}"
    return candidate


def embed_with_reuse(
    prepared: PreparedFile,
    reusable: dict[str, np.ndarray],
    embedder: Embedder,
    progress: Progress,
    cache: VectorCache | None = None,
) -> tuple[np.ndarray, int]:
    """Wektory fragmentów: dla tekstu identycznego jak już zaindeksowany – ten z bazy albo z pamięci wektorów
    przerwanego przebiegu (``cache``), reszta z modelu porcjami, każda porcja od razu do ``cache``.
    Zwraca też liczbę użytych ponownie."""
    hashes = [m["tekst_hash"] for m in prepared.metadatas]
    if cache is not None:
        reusable = {**cache.load(set(hashes) - set(reusable)), **reusable}
    vectors = np.empty((len(hashes), embedder.dim), dtype=np.float32)
    missing = []
    for i, digest in enumerate(hashes):
        if digest in reusable:
            vectors[i] = reusable[digest]
        else:
            missing.append(i)
    progress.advance(len(hashes) - len(missing))
    for start in range(0, len(missing), CACHE_BATCH):
        batch = missing[start : start + CACHE_BATCH]
        vectors[batch] = embedder.embed_passages([prepared.embed_texts[i] for i in batch], progress=progress.advance)
        if cache is not None:
            cache.append([hashes[i] for i in batch], vectors[batch])
    return vectors, len(hashes) - len(missing)


def write_file(collection: ChunkCollection, registry: Registry, record: FileRecord, prepared: PreparedFile,
               vectors: np.ndarray) -> None:
    """Jedyne miejsce, w którym fragmenty pliku są wstawiane/zastępowane (tu podpina się każdy indeks
    pochodny): najpierw wszystkie nowe fragmenty, potem usunięcie nieaktualnych, na końcu wpis rejestru."""
    collection.upsert(prepared.ids, vectors, prepared.texts, prepared.metadatas)
    previous = registry.get(record.model, record.path)
    stale = set(collection.stored_ids({"sciezka": record.path})) | set(previous.chunk_ids if previous else [])
    stale -= set(prepared.ids)
    if stale:
        collection.delete(sorted(stale))
    registry.put(record)


def drop_file(collection: ChunkCollection | None, registry: Registry, record: FileRecord) -> int:
    """Jedyne miejsce, w którym plik znika z indeksu: najpierw wpis rejestru (plik przestaje się liczyć),
    potem jego fragmenty. Gdy ten sam dokument ma inne ścieżki, fragmenty przechodzą na jedną z nich
    (``documents.rehome``) i nic nie jest usuwane. Zwraca liczbę usuniętych fragmentów."""
    record = registry.get(record.model, record.path) or record  # an earlier step may have changed it
    heirs = aliases(registry, record) if record.same_as is None else []
    if heirs and collection is not None:
        rehome(collection, registry, record, heirs[0])
        return 0
    registry.delete([record])
    if collection is None:
        return 0
    ids = set(record.chunk_ids) | set(collection.stored_ids({"sciezka": record.path}))
    collection.delete(sorted(ids))
    return len(ids)


def orphan_ids(collection: ChunkCollection, records: list[FileRecord]) -> set[str]:
    """Fragmenty, których nie obejmuje żaden wpis rejestru (przerwany zapis albo usunięcie)."""
    owned = {i for record in records for i in record.chunk_ids}
    return set(collection.stored_ids()) - owned


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
        orphans = orphan_ids(collection, [r for r in records if r.model == self.model]) if collection else set()
        gone = [r for r in records if self.options.prune and _vanished(r, found.folders)]
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


def _vanished(record: FileRecord, folders: list[Path]) -> bool:
    """Plik z rejestru leżał w jednym z podanych folderów, a teraz go tam nie ma."""
    path = Path(record.path)
    return any(path.is_relative_to(folder.resolve()) for folder in folders) and not path.exists()


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
    if options.doc_type is not None:
        options = replace(options, doc_type=normalize_type(options.doc_type))
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
        report.notes.extend(_vanished_note(records, run.model, found.folders, report))
    report.notes.extend(_stale_notes(records, run.model, {s.key for s in sources}))
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


def _stale_notes(records: list[FileRecord], model: str, this_run: set[str]) -> list[str]:
    """Co trzeba zaindeksować ponownie po zmianie wersji cięcia albo modelu (poza plikami tego przebiegu)."""
    notes = []
    old_cut = sorted(r.path for r in records if r.model == model and r.chunker != CHUNKER_VERSION
                     and r.path not in this_run)
    if old_cut:
        notes.append(
            f"{count(len(old_cut), FILE)} pocięto starszą wersją cięcia (obecna: {CHUNKER_VERSION}) – zaindeksuj je "
            f"ponownie: chroma-rag indeksuj {' '.join(_quoted(old_cut[:5]))}{' …' if len(old_cut) > 5 else ''}"
        )
    with_model = {r.path for r in records if r.model == model}
    other_only = sorted({r.path for r in records if r.model != model} - with_model - this_run)
    if other_only:
        others = ", ".join(sorted({r.model for r in records if r.model != model}))
        notes.append(
            f"{count(len(other_only), FILE)} zaindeksowano tylko modelem {others}, nie modelem {model} – żeby "
            f"wyszukiwać w nich tym modelem, zaindeksuj je nim: {' '.join(_quoted(other_only[:5]))}"
            f"{' …' if len(other_only) > 5 else ''}"
        )
    return notes


def _vanished_note(records: list[FileRecord], model: str, folders: list[Path], report: IndexReport) -> list[str]:
    """Pliki z indeksu, których nie ma już w podanych folderach – bez ``--usun-brakujace`` zostają w wynikach."""
    gone = sorted({r.path for r in records if r.model == model and _vanished(r, folders)} - set(report.moved))
    if not gone:
        return []
    return [
        f"{len(gone)} zaindeksowanych plików nie ma już w podanych folderach: {', '.join(_quoted(gone[:5]))}"
        f"{' …' if len(gone) > 5 else ''} – nadal są w wynikach; usuń je z indeksu: chroma-rag indeksuj "
        f"{' '.join(_quoted([str(f) for f in folders]))} --usun-brakujace"
    ]


def _quoted(paths: list[str]) -> list[str]:
    return [f'"{p}"' if " " in p else p for p in paths]
