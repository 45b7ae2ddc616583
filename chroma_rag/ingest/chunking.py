"""Cięcie dokumentu na fragmenty: jednostki aktów prawnych (Art./§) z kontekstem, sekcje nagłówków
Markdown/DOCX i akapity zwykłych tekstów."""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from ..models import Chunk, Document
from .cleaning import Vocabulary, clean_text, reflow
from .pdftext import FN_CLOSE, FN_OPEN, MASTHEAD
from .statute import Unit, inline_versions, parse_units

# Bump whenever chunking (or chunk metadata) changes: files indexed with another version get re-cut.
CHUNKER_VERSION = "9"
UNIT_MAX_CHARS = 1200
UNIT_OVERLAP = 200
TEXT_CHUNK_CHARS = 800
TEXT_OVERLAP = 150
FOOTNOTES_MAX_CHARS = 1500
PREAMBLE_MIN_CHARS = 300

_SENTENCE_END = re.compile(r"(?<=[.;:])\s+|\n+")
_ENUMERATOR = re.compile(r"(?:§\s*\d+[a-z]?|\d+[a-z]?|Art\.\s*\S+|[a-z]\))\.?")
_MARKER = re.compile(f"{FN_OPEN}([^{FN_CLOSE}]*){FN_CLOSE}")
_PLAIN_MARKER_AFTER_REPEAL = re.compile(r"(\((?:uchylon|pominięt|skreślon)\w*\)\.?)[ \t]?(\d{1,3})\)")
_PLAIN_MARKER_AFTER_HEADER = re.compile(
    r"(?m)^(\s*[\[<]?\s*(?:Art\.|§)\s?\d+(?:\^\d+)?[a-z]{0,4}\.)(\d{1,3})\)"
)
_ZM_MARKER = re.compile(r"(?<=zm\.)[ \t]?(\d{1,3})\)")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<=[^\W\d_]) +(?=[.,;:](?:\s|$))")
_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def chunk_document(doc: Document) -> list[Chunk]:
    """Fragmenty dokumentu; jednostki redakcyjne (Art./§), gdy tekst je ma, inaczej sekcje i akapity."""
    text, page_starts = _join_pages(doc.pages)
    units = parse_units(text, title=text[:2000], flattened_superscripts=doc.kind == "pdf")
    if any(u.art for u in units):
        return _chunk_units(doc, text, page_starts, units)
    if doc.kind in ("md", "docx"):
        return _chunk_sections(text)
    return _chunk_plain(text, page_starts, heading="")


def embedding_text(chunk: Chunk, title: str) -> str:
    """Tekst do embeddingu: krótki nagłówek kontekstu (akt, rozdział, jednostka) + treść fragmentu."""
    lines = []
    if title:
        lines.append(title[:160])
    if chunk.extra.get("akt_zmieniany") and chunk.art:
        lines.append(f"Zmiana art. {chunk.art} ustawy – {chunk.extra['akt_zmieniany']}")
    if chunk.heading:
        lines.append(chunk.heading[:200])
    if chunk.art and not chunk.text.lstrip("[<").startswith(("Art.", "§")):
        lines.append(chunk.art if chunk.art.startswith("§") else f"Art. {chunk.art}")
    lines.append(chunk.text)
    return "\n".join(lines)


def _chunk_units(doc: Document, text: str, page_starts: list[int], units: list[Unit]) -> list[Chunk]:
    vocab = Vocabulary(reflow(text))  # reflowed, so words broken at a line end pair up as in chunks
    chunks: list[Chunk] = []
    first = min(u.start for u in units)
    preamble = "\n".join(ln for ln in text[:first].split("\n") if not MASTHEAD.match(ln.strip()))
    if len(preamble.strip()) >= PREAMBLE_MIN_CHARS:
        chunks.extend(
            _chunk_plain(
                clean_text(_drop_markers(preamble), vocab),
                [0],
                heading="Wstęp",
                pages=(1, _page_at(page_starts, first)),
            )
        )
    for unit in units:
        raw = unit.text if unit.text is not None else text[unit.start : unit.end]
        raw = _PLAIN_MARKER_AFTER_HEADER.sub(
            lambda m: f"{m.group(1)}{FN_OPEN}{m.group(2)}{FN_CLOSE}", raw.lstrip()
        )
        raw = _PLAIN_MARKER_AFTER_REPEAL.sub(lambda m: f"{m.group(1)}{FN_OPEN}{m.group(2)}{FN_CLOSE}", raw)
        raw = _ZM_MARKER.sub(lambda m: f"{FN_OPEN}{m.group(1)}{FN_CLOSE}", raw)
        markers = list(dict.fromkeys([*unit.footnotes, *_MARKER.findall(raw)]))
        body = clean_text(_drop_markers(raw), vocab)
        if unit.extra.get("wersja"):
            body = _strip_version_brackets(body)
        body = _SPACE_BEFORE_PUNCT.sub("", body)
        if not body:
            continue
        extra = dict(unit.extra)
        notes = [f"{m}) {doc.footnotes[m]}" for m in markers if m in doc.footnotes]
        if notes:
            extra["przypisy"] = " | ".join(notes)[:FOOTNOTES_MAX_CHARS]
        page_from = _page_at(page_starts, unit.start)
        page_to = _page_at(page_starts, max(unit.start, unit.end - 1))
        if unit.art is None:
            chunks.extend(
                _chunk_plain(body, [0], heading=unit.heading, pages=(page_from, page_to), extra=extra)
            )
            continue
        versions = None if unit.extra.get("wersja") else inline_versions(body)
        if versions is None:
            chunks.extend(_unit_chunks(unit, body, (page_from, page_to), extra))
            continue
        for version, text_of_version in zip(("obecna", "przyszla"), versions, strict=True):
            future = version == "przyszla" and unit.future_heading
            worded = replace(unit, heading=unit.future_heading) if future else unit
            chunks.extend(_unit_chunks(worded, text_of_version, (page_from, page_to), {**extra, "wersja": version}))
    return chunks


def _unit_chunks(unit: Unit, body: str, pages: tuple[int, int], extra: dict) -> list[Chunk]:
    """Jednostka jako fragmenty ≤ ``UNIT_MAX_CHARS`` z zakładką; strony rozłożone proporcjonalnie."""
    page_from, page_to = pages
    span = page_to - page_from
    chunks = []
    pieces = split_with_overlap(body, UNIT_MAX_CHARS, UNIT_OVERLAP)
    for part, (offset, piece) in enumerate(pieces, start=1):
        chunks.append(
            Chunk(
                text=piece,
                art=unit.art,
                page_from=page_from + int(span * offset / len(body)),
                page_to=page_from + int(span * (offset + len(piece)) / len(body) + 0.999) if span else page_to,
                part=part,
                heading=unit.heading,
                extra=dict(extra),
            )
        )
    return chunks


def _drop_markers(text: str) -> str:
    return _MARKER.sub("", text)


def _strip_version_brackets(text: str) -> str:
    return re.sub(r"[\]>]\s*$", "", re.sub(r"^\s*[\[<]\s*", "", text)).strip()


def _chunk_sections(text: str) -> list[Chunk]:
    """Markdown (i DOCX zapisany jako Markdown): każda sekcja osobno, ścieżka nagłówków w ``heading``."""
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []

    def flush() -> None:
        section = reflow("\n".join(body))
        if section.strip():
            chunks.extend(_chunk_plain(section, [0], heading=" › ".join(t for _, t in path)))
        body.clear()

    for line in text.split("\n"):
        match = _MD_HEADING.match(line)
        if match:
            flush()
            level = len(match.group(1))
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, match.group(2).strip())]
        else:
            body.append(line)
    flush()
    return chunks


def _chunk_plain(
    text: str,
    page_starts: list[int],
    heading: str,
    pages: tuple[int, int] | None = None,
    extra: dict | None = None,
) -> list[Chunk]:
    chunks = []
    for part, (offset, piece) in enumerate(split_with_overlap(text, TEXT_CHUNK_CHARS, TEXT_OVERLAP), start=1):
        first = pages[0] if pages else _page_at(page_starts, offset)
        last = pages[1] if pages else _page_at(page_starts, offset + len(piece) - 1)
        chunks.append(
            Chunk(
                text=piece,
                art=None,
                page_from=first,
                page_to=last,
                part=part,
                heading=heading,
                extra={"uchylony": False, **(extra or {})},
            )
        )
    return chunks


def split_with_overlap(text: str, max_chars: int, overlap: int) -> list[tuple[int, str]]:
    """Dzieli tekst na kawałki ≤ ``max_chars`` na granicach zdań, każdy następny zaczyna się ~``overlap``
    znaków przed końcem poprzedniego. Zwraca (przesunięcie w ``text``, kawałek)."""
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= max_chars:
        return [(text.find(stripped), stripped)]
    cuts = [m.end() for m in _SENTENCE_END.finditer(text) if not _after_enumerator(text, m.start())]
    cuts.append(len(text))
    pieces: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        limit = start + max_chars
        i = bisect.bisect_right(cuts, limit) - 1
        end = cuts[i] if i >= 0 and cuts[i] > start + overlap else min(limit, len(text))
        piece = text[start:end].strip()
        if piece:
            pieces.append((start + text[start:end].find(piece), piece))
        if end >= len(text):
            break
        start = _overlap_start(text, cuts, start, end, overlap)
    return pieces


def _after_enumerator(text: str, pos: int) -> bool:
    """Nie tniemy tuż po „§ 4.”, „6.” ani „Art. 5.” – to początek jednostki, nie koniec zdania."""
    line_start = text.rfind("\n", 0, pos) + 1
    return bool(_ENUMERATOR.fullmatch(text[line_start : pos + 1].strip()))


def _overlap_start(text: str, cuts: list[int], start: int, end: int, overlap: int) -> int:
    """Początek następnego kawałka: granica zdania najbliższa ``end - overlap`` (zakładka ~``overlap``)."""
    target = end - overlap
    lo, hi = bisect.bisect_left(cuts, end - 2 * overlap), bisect.bisect_right(cuts, end - overlap // 3)
    window = [c for c in cuts[lo:hi] if c > start]
    if window:
        return min(window, key=lambda c: abs(c - target))
    space = text.find(" ", max(target, start + 1), end)
    return space + 1 if space >= 0 else max(target, start + 1)


def _join_pages(pages: list[str]) -> tuple[str, list[int]]:
    starts, pos = [], 0
    for page in pages:
        starts.append(pos)
        pos += len(page) + 1
    return "\n".join(pages), starts


def _page_at(page_starts: list[int], offset: int) -> int:
    return max(1, bisect.bisect_right(page_starts, offset))

