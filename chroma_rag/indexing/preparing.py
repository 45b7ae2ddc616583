"""Przygotowanie pliku do embeddingu: wczytanie, pocięcie i opis fragmentów (id, teksty, metadane).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile, os_reason
from ..ingest.acts import cited_short_name
from ..ingest.chunking import chunk_document, embedding_text
from ..ingest.loading import load_opened
from ..ingest.metadata import detect_publication, detect_title, detect_type, detect_year
from ..ingest.ocr import Ocr
from ..models import Chunk, Document
from ..storage.documents import path_tag
from .discovery import SourceFile, open_unlinked


@dataclass
class PreparedFile:
    """Plik pocięty i opisany, gotowy do embeddingu."""

    path: Path
    ids: list[str]
    texts: list[str]
    embed_texts: list[str]
    metadatas: list[dict[str, Any]]
    pages: int


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def prepare_file(source: SourceFile, doc_type: str | None = None,
                 ocr: Ocr | None = None) -> tuple[PreparedFile, float, float]:
    """Wczytuje (skany przez ``ocr``) i tnie plik; zwraca też czasy wczytywania i cięcia. Plik jest otwierany tak
    jak przy liczeniu odcisku (``open_unlinked``): ten, który od tamtej chwili stał się linkiem, nie jest czytany."""
    started = time.perf_counter()
    try:
        handle = open_unlinked(source.path)
    except OSError as exc:
        raise UnreadableFile(f"{source.path.name}: nie da się otworzyć pliku ({os_reason(exc)}).") from exc
    if handle is None:
        raise UnreadableFile(f"{source.path.name}: plik stał się linkiem w trakcie indeksowania – pominięty, jak "
                             "link poza folder.")
    with handle:
        document = load_opened(handle, source.path, ocr)
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
    short = cited_short_name(title)
    if short:  # the act's customary abbreviation, shown beside its units ("art. 505 k.p.c.")
        file_meta["skrot"] = short
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
