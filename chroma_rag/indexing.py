"""Indeksowanie: pliki → dokumenty → fragmenty z metadanymi → wektory → kolekcja Chromy."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chunking import chunk_document, embedding_text
from .embedding import Embedder
from .errors import UnreadableFile, UserError
from .loading import is_supported, load_document
from .metadata import DOCUMENT_TYPES, detect_publication, detect_title, detect_type, detect_year
from .models import Chunk, Document
from .store import ChunkCollection


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
class IndexReport:
    """Podsumowanie przebiegu: co zaindeksowano, co pominięto i ile trwał każdy etap."""

    indexed: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    pages: int = 0
    seconds: dict[str, float] = field(
        default_factory=lambda: {"wczytywanie": 0.0, "ciecie": 0.0, "embedding": 0.0, "zapis": 0.0}
    )

    @property
    def chunks(self) -> int:
        return sum(self.indexed.values())


class Progress:
    """Powiadomienia o postępie (CLI rysuje z nich pasek; API może je pominąć)."""

    def start_file(self, path: Path, chunks: int) -> None: ...
    def advance(self, chunks: int) -> None: ...


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Obsługiwane pliki z podanych ścieżek (katalogi rekurencyjnie). Błędna ścieżka przerywa
    wszystko, zanim baza zostanie dotknięta."""
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"Ścieżka „{path}” nie istnieje – sprawdź, czy nie ma literówki.")
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and is_supported(p))
            if not found:
                raise UserError(f"W folderze „{path}” nie ma plików PDF, TXT ani MD do zaindeksowania.")
            files.extend(found)
        elif is_supported(path):
            files.append(path)
        else:
            raise UserError(f"Plik „{path}” ma nieobsługiwany typ – obsługiwane są PDF, TXT i MD.")
    return list(dict.fromkeys(files))


def prepare_file(path: Path, doc_type: str | None = None) -> tuple[PreparedFile, float, float]:
    """Wczytuje i tnie plik; zwraca też czasy wczytywania i cięcia."""
    started = time.perf_counter()
    document = load_document(path)
    loaded = time.perf_counter()
    chunks = chunk_document(document)
    if not chunks:
        raise UnreadableFile(f"{path.name}: brak tekstu do zaindeksowania.")
    prepared = describe_chunks(document, chunks, doc_type)
    return prepared, loaded - started, time.perf_counter() - loaded


def describe_chunks(document: Document, chunks: list[Chunk], doc_type: str | None) -> PreparedFile:
    """Id, teksty i metadane fragmentów jednego dokumentu."""
    text = document.text
    title = detect_title(text)
    file_meta: dict[str, Any] = {
        "plik": document.name,
        "sciezka": str(document.path),
        "rok": detect_year(document.path, text),
        "typ": doc_type or detect_type(title, text),
        "tytul": title,
        "dz_u": detect_publication(text),
        "hash": file_hash(document.path),
    }
    ids, metadatas = [], []
    for chunk in chunks:
        metadata = {
            **file_meta,
            "strona": chunk.page_from,
            "strona_od": chunk.page_from,
            "strona_do": chunk.page_to,
            "fragment": chunk.part,
            "rozdzial": chunk.heading,
            **chunk.extra,
        }
        if chunk.art:
            metadata["art"] = chunk.art
        ids.append(chunk_id(document.name, chunk, ids))
        metadatas.append(metadata)
    return PreparedFile(
        path=document.path,
        ids=ids,
        texts=[c.text for c in chunks],
        embed_texts=[embedding_text(c, title) for c in chunks],
        metadatas=metadatas,
        pages=len(document.pages),
    )


def chunk_id(file_name: str, chunk: Chunk, taken: list[str]) -> str:
    """Deterministyczne id: plik + jednostka (+ wersja/akt zmieniany) + część; ponowne indeksowanie
    tego samego pliku nadpisuje fragmenty zamiast je dublować."""
    distinct = "|".join(f"{k}={chunk.extra[k]}" for k in sorted(chunk.extra) if k in ("wersja", "akt_zmieniany"))
    base = f"{file_name}::{chunk.art or 'tekst'}::{distinct}::{chunk.part}"
    candidate, n = base, 1
    while candidate in taken:  # numbering printed twice in a document (e.g. an annex) must not overwrite
        n += 1
        candidate = f"{base}::{n}"
    return candidate


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def index_files(
    files: list[Path],
    collection: ChunkCollection,
    embedder: Embedder,
    doc_type: str | None = None,
    progress: Progress | None = None,
) -> IndexReport:
    """Indeksuje pliki jeden po drugim; nieczytelny plik jest pomijany z powodem, reszta idzie dalej."""
    if doc_type is not None and doc_type not in DOCUMENT_TYPES:
        raise UserError(f"Nieznany typ „{doc_type}”; dozwolone: {', '.join(DOCUMENT_TYPES)}.")
    progress = progress or Progress()
    report = IndexReport()
    for path in files:
        try:
            prepared, load_s, chunk_s = prepare_file(path, doc_type)
        except UnreadableFile as exc:
            report.skipped[str(path)] = str(exc)
            continue
        report.seconds["wczytywanie"] += load_s
        report.seconds["ciecie"] += chunk_s
        progress.start_file(path, len(prepared.ids))
        started = time.perf_counter()
        vectors = embedder.embed_passages(prepared.embed_texts, progress=progress.advance)
        embedded = time.perf_counter()
        replace_file(collection, prepared, vectors)
        report.seconds["embedding"] += embedded - started
        report.seconds["zapis"] += time.perf_counter() - embedded
        report.indexed[str(path)] = len(prepared.ids)
        report.pages += prepared.pages
    return report


def replace_file(collection: ChunkCollection, prepared: PreparedFile, vectors: Any) -> None:
    """Wstawia nowe fragmenty pliku, potem usuwa te, których już nie ma (nowa wersja pliku)."""
    collection.upsert(prepared.ids, vectors, prepared.texts, prepared.metadatas)
    stale = set(collection.metadatas({"plik": prepared.metadatas[0]["plik"]})) - set(prepared.ids)
    if stale:
        collection.delete(sorted(stale))
