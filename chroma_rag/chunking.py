"""Cięcie dokumentu na fragmenty: artykuły/paragrafy aktów prawnych, akapity zwykłych tekstów."""

from __future__ import annotations

import bisect
import re

from .models import Chunk, Document

# Bump whenever chunking (or chunk metadata) changes: files indexed with another version get re-cut.
CHUNKER_VERSION = "1"
UNIT_MAX_CHARS = 1200
UNIT_OVERLAP = 200
TEXT_CHUNK_CHARS = 800
TEXT_OVERLAP = 150

_ARTICLE = re.compile(r"(?m)^[ \t]*Art\.[ \t]*(\d+[a-z]*)\.")
_PARAGRAPH = re.compile(r"(?m)^[ \t]*§[ \t]*(\d+[a-z]*)\.")
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+|\n+")


def chunk_document(doc: Document) -> list[Chunk]:
    """Fragmenty dokumentu; jednostki redakcyjne (Art./§), gdy tekst je ma, inaczej akapity."""
    text, page_starts = _join_pages(doc.pages)
    starts = [(m.start(), m.group(1)) for m in _ARTICLE.finditer(text)]
    prefix = ""
    if not starts:
        starts = [(m.start(), m.group(1)) for m in _PARAGRAPH.finditer(text)]
        prefix = "§ "
    if not starts:
        return _chunk_plain(text, page_starts)
    chunks: list[Chunk] = []
    for i, (start, number) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        for part, (offset, piece) in enumerate(split_with_overlap(text[start:end], UNIT_MAX_CHARS, UNIT_OVERLAP)):
            chunks.append(
                Chunk(
                    text=piece,
                    art=prefix + number,
                    page_from=_page_at(page_starts, start + offset),
                    page_to=_page_at(page_starts, start + offset + len(piece) - 1),
                    part=part + 1,
                )
            )
    return chunks


def _chunk_plain(text: str, page_starts: list[int]) -> list[Chunk]:
    return [
        Chunk(
            text=piece,
            art=None,
            page_from=_page_at(page_starts, offset),
            page_to=_page_at(page_starts, offset + len(piece) - 1),
            part=part + 1,
        )
        for part, (offset, piece) in enumerate(split_with_overlap(text, TEXT_CHUNK_CHARS, TEXT_OVERLAP))
    ]


def split_with_overlap(text: str, max_chars: int, overlap: int) -> list[tuple[int, str]]:
    """Dzieli tekst na kawałki ≤ ``max_chars`` na granicach zdań, każdy następny zaczyna się ~``overlap``
    znaków przed końcem poprzedniego. Zwraca (przesunięcie w ``text``, kawałek)."""
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= max_chars:
        return [(text.find(stripped), stripped)]
    cuts = sorted({m.end() for m in _SENTENCE_END.finditer(text)} | {len(text)})
    pieces: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        limit = start + max_chars
        end = max((c for c in cuts if start < c <= limit), default=min(limit, len(text)))
        if end <= start + overlap:  # no sentence boundary in reach: hard cut
            end = min(limit, len(text))
        piece = text[start:end].strip()
        if piece:
            pieces.append((start + text[start:end].find(piece), piece))
        if end >= len(text):
            break
        back = end - overlap
        start = min((c for c in cuts if back <= c < end), default=back)
    return pieces


def _join_pages(pages: list[str]) -> tuple[str, list[int]]:
    starts, parts, pos = [], [], 0
    for page in pages:
        starts.append(pos)
        parts.append(page)
        pos += len(page) + 1
    return "\n".join(parts), starts


def _page_at(page_starts: list[int], offset: int) -> int:
    return max(1, bisect.bisect_right(page_starts, offset))


def embedding_text(chunk: Chunk, title: str) -> str:
    """Tekst do embeddingu: krótki nagłówek kontekstu (akt, jednostka) + treść fragmentu."""
    unit = f"Art. {chunk.art}" if chunk.art and not chunk.art.startswith("§") else chunk.art or ""
    header = " – ".join(part for part in (title, chunk.heading, unit) if part)
    return f"{header}\n{chunk.text}" if header else chunk.text
