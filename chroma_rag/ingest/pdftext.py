"""Tekst PDF w jednym przebiegu pypdf: linie z rozmiarem czcionki i położeniem, z których wynikają
indeksy górne numerów artykułów, nagłówki/stopki stron, przypisy, notki na marginesie i kolejność kolumn."""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UnreadableFile
from .ocr import Ocr, ocr_lines

# Footnote markers removed from the running text are kept in place as FN_OPEN + marker + FN_CLOSE,
# so chunking can attach the footnote to the unit that cites it.
FN_OPEN, FN_CLOSE = "\ue000", "\ue001"
SUPERSCRIPT = "^"

_MARKER = re.compile(r"\s*(\d{1,3}|[IVX]{1,5})\)\s*")
_DIGITS = re.compile(r"\d{1,2}")
# a unit number, in its header ("Art. 22") or in a reference in the text ("art. 556 § 2")
_UNIT_BEFORE_SUP = re.compile(r"(?:[Aa]rt\.|§)\s?(\d{1,4})[a-z]{0,2}$")
# The first page keeps the masthead naming the publication ("Dziennik Ustaw Nr 252 — 17424 — Poz. 1697"),
# metadata reads the Dz.U. reference from it; chunking leaves it out of the units.
MASTHEAD = re.compile(
    r"^(Dziennik Ustaw\b.*Poz\.\s*\d+|DZIENNIK USTAW|RZECZYPOSPOLITEJ POLSKIEJ"
    r"|Warszawa, dnia .* r\.|Poz\.\s*\d+)$"
)
_HEADER_PATTERNS = [
    re.compile(p)
    for p in (
        r"^©\s*Kancelaria Sejmu\b.*$",
        r"^\d{4}-\d{2}-\d{2}$",
        r"^Dziennik Ustaw\b.{0,40}[–—-]\s*\d+\s*[–—-]\s*Poz\.\s*\d+$",
        r"^Dziennik Ustaw\s*[–—-]\s*\d+\s*[–—-]\s*Poz\.\s*\d+$",
        r"^\d{1,5}$",
        r"^Poz\.\s*\d+$",
        r"^DZIENNIK USTAW$",
        r"^RZECZYPOSPOLITEJ POLSKIEJ$",
        r"^Warszawa, dnia \d{1,2} \w+ \d{4} r\.$",
        r"^s\.\s*\d+\s*/\s*\d+$",
    )
]


@dataclass
class Line:
    text: str
    x: float
    y: float
    size: float


@dataclass
class PdfText:
    """Czysty tekst stron (bez nagłówków, stopek, przypisów i notek na marginesie) + treść przypisów."""

    pages: list[str]
    footnotes: dict[str, str] = field(default_factory=dict)


@dataclass
class _Page:
    lines: list[Line]
    width: float
    height: float
    sups: list[tuple[str, str]]  # (printed base number, raised digits) of unit numbers
    ocr: bool = False  # lines read by OCR: text only, no font sizes or positions to lay out by


# pypdf's own messages are English and name stream internals; what a user can act on is the repair
REPAIR_HINT = "otwórz go i zapisz ponownie jako PDF (np. „Drukuj do PDF”)"


def read_pdf(path: Path, ocr: Ocr | None = None) -> PdfText:
    """Czyta PDF, strony bez warstwy tekstowej przez OCR (``ocr``; domyślnie Tesseract bez pamięci odczytanych
    stron); rzuca ``UnreadableFile`` z powodem po polsku, gdy się nie da."""
    reader = _open(path)
    try:
        pages = [_read_page(page) for page in reader.pages]
    except Exception as exc:  # pypdf raises many unrelated types on broken streams
        raise UnreadableFile(f"{path.name}: uszkodzony PDF, nie da się odczytać treści – {REPAIR_HINT}.") from exc
    ocr = ocr or Ocr()
    scanned = ocr.scanned_pages(path, [sum(len("".join(ln.text.split())) for ln in page.lines) for page in pages])
    for index, text in ocr.read(path, scanned).items():
        pages[index] = _Page([Line(line, 0.0, 0.0, 0.0) for line in ocr_lines(text)], pages[index].width,
                             pages[index].height, [], ocr=True)
    if not any(line.text.strip() for page in pages for line in page.lines):
        if scanned:
            raise UnreadableFile(f"{path.name}: OCR nie rozpoznał tekstu na żadnej stronie skanu (puste strony albo "
                                 "nieczytelny obraz).")
        raise UnreadableFile(f"{path.name}: PDF ma tylko puste strony (bez warstwy tekstowej i bez obrazów).")
    return _clean(pages)


def _open(path: Path):
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    with path.open("rb") as handle:
        head = handle.read(1024)
    if not head.strip():
        raise UnreadableFile(f"{path.name}: plik jest pusty.")
    if b"%PDF" not in head:
        if re.search(rb"<(!doctype html|html|head|body)", head, re.IGNORECASE):
            raise UnreadableFile(f"{path.name}: to nie jest PDF, tylko strona HTML zapisana z rozszerzeniem .pdf.")
        raise UnreadableFile(f"{path.name}: to nie jest PDF, mimo rozszerzenia .pdf (brak nagłówka %PDF).")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile(f"{path.name}: PDF jest zaszyfrowany hasłem – zapisz go bez hasła.")
        len(reader.pages)
    except UnreadableFile:
        raise
    except DependencyError as exc:
        raise UnreadableFile(
            f"{path.name}: PDF jest zaszyfrowany i nie da się go otworzyć bez hasła."
        ) from exc
    except (PdfReadError, OSError, ValueError, KeyError, TypeError) as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony lub nieczytelny PDF – {REPAIR_HINT}.") from exc
    return reader


def _read_page(page) -> _Page:
    from pypdf.generic import ArrayObject

    lines: list[Line] = []
    pieces: list[tuple[str, float, float, float]] = []  # text, x, y, size of the current line
    sups: list[tuple[str, str]] = []
    state = {"tf": 1.0, "size": 0.0, "y": 0.0, "tail": ""}

    def close_line() -> None:
        if pieces:
            lines.append(_make_line(pieces))
            pieces.clear()

    def on_text(text: str, cm, tm, _font, font_size) -> None:
        if not text:
            return
        size = abs(font_size * (tm[3] * cm[3] or tm[0] * cm[0]))
        x, y = tm[4] * cm[0] + cm[4], tm[5] * cm[3] + cm[5]
        for i, part in enumerate(text.split("\n")):
            if i:
                close_line()
            if part:
                pieces.append((part, x, y, size))

    def on_operator(op: bytes, args, cm, tm) -> None:
        # pypdf glues a raised digit into the running text ("Art. 221."); the raw operators still show it
        if op == b"Tf" and len(args) >= 2:
            with contextlib.suppress(TypeError, ValueError):
                state["tf"] = float(args[1])
            return
        if op not in (b"Tj", b"TJ") or not args:
            return
        items = args[0] if isinstance(args[0], ArrayObject) else [args[0]]
        shown = "".join(_plain(item) for item in items)
        if not shown.strip():
            return
        size = abs(state["tf"] * (tm[3] * cm[3] or tm[0] * cm[0]))
        y = tm[5] * cm[3] + cm[5]
        base = _UNIT_BEFORE_SUP.search(state["tail"])
        if base and _DIGITS.fullmatch(shown.strip()) and size < 0.8 * state["size"] and y > state["y"] + 1:
            sups.append((base.group(1), shown.strip()))
            state["tail"] = ""
            return
        state["size"], state["y"] = size, y
        state["tail"] = (state["tail"] + shown)[-24:]

    page.extract_text(visitor_text=on_text, visitor_operand_before=on_operator)
    close_line()
    box = page.mediabox
    return _Page(lines=lines, width=float(box.width), height=float(box.height), sups=sups)


def _plain(item) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, bytes):
        return item.decode("latin-1") if all(32 <= b < 127 for b in item) else "\ufffd"
    return ""


def _make_line(pieces: list[tuple[str, float, float, float]]) -> Line:
    solid = [p for p in pieces if p[0].strip()] or pieces
    main_size = max(solid, key=lambda p: len(p[0].strip()))[3]
    base_y = min(p[2] for p in solid if p[3] >= 0.9 * main_size)
    text = ""
    for part, _x, y, size in pieces:
        # a small raised "7)" glued to a word is a footnote reference, not text
        if size < 0.8 * main_size and y > base_y + 1 and _MARKER.fullmatch(part):
            text = text.rstrip() + FN_OPEN + part.strip().rstrip(")") + FN_CLOSE
            if part.endswith(" "):
                text += " "
            continue
        text += part
    return Line(text=text, x=solid[0][1], y=base_y, size=main_size)


def _clean(pages: list[_Page]) -> PdfText:
    body_size = _body_size(pages)
    footnotes: dict[str, str] = {}
    out: list[str] = []
    for number, page in enumerate(pages):
        lines = [ln for ln in page.lines if ln.text.strip() and not _is_header(ln.text.strip())]
        if not page.ocr:  # OCR gives lines in reading order, without the sizes these steps go by
            lines = [ln for ln in lines if not _is_margin_note(ln, page.width, body_size)]
            lines = _reading_order(lines, body_size)
        if number == 0:
            lines = [ln for ln in page.lines if MASTHEAD.match(ln.text.strip())] + lines
        if not page.ocr:
            lines, notes = _split_footnotes(lines, body_size)
            footnotes.update(notes)
        out.append(_apply_superscripts("\n".join(ln.text.rstrip() for ln in lines), page.sups))
    return PdfText(pages=out, footnotes=footnotes)


def _body_size(pages: list[_Page]) -> float:
    sizes: Counter[float] = Counter()
    for page in (p for p in pages if not p.ocr):
        for line in page.lines:
            sizes[round(line.size, 1)] += len(line.text.strip())
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _is_header(text: str) -> bool:
    return any(p.match(text) for p in _HEADER_PATTERNS)


def _is_margin_note(line: Line, width: float, body_size: float) -> bool:
    # editor's notes printed beside the text block ("Nowe brzmienie art. … wejdzie w życie …")
    return line.x > 0.78 * width and line.size < 0.95 * body_size


def _reading_order(lines: list[Line], body_size: float) -> list[Line]:
    """pypdf podaje kolumny w kolejności czytania, ale blok tytułu bywa na końcu strumienia strony:
    linie położone wyżej niż pierwsza linia strony przenosimy na początek."""
    if not lines:
        return lines
    top = lines[0].y + body_size
    above = [ln for ln in lines[1:] if ln.y > top]
    if not above:
        return lines
    return above + [ln for ln in lines if ln.y <= top or ln is lines[0]]


def _split_footnotes(lines: list[Line], body_size: float) -> tuple[list[Line], dict[str, str]]:
    """Przypisy to zwarty blok małych linii na dole strony zaczynający się od „N)”."""
    small = [ln.size < 0.9 * body_size for ln in lines]
    start = len(lines)
    while start > 0 and small[start - 1]:
        start -= 1
    while start < len(lines) and not _MARKER.match(_unmark(lines[start].text)) and small[start]:
        start += 1
    if start >= len(lines):
        return lines, {}
    notes: dict[str, str] = {}
    current = None
    for line in lines[start:]:
        text = _unmark(line.text).strip()
        marker = re.match(r"(\d{1,3}|[IVX]{1,5})\)\s*", text)
        if marker:
            current = marker.group(1)
            notes[current] = text[marker.end() :]
        elif current:
            notes[current] = _join_wrapped(notes[current], text)
    return lines[:start], notes


def _unmark(text: str) -> str:
    return text.replace(FN_OPEN, "").replace(FN_CLOSE, ")")


def _join_wrapped(left: str, right: str) -> str:
    if left.endswith("-") and right[:1].islower():
        return left[:-1] + right
    return f"{left} {right}"


def _apply_superscripts(text: str, sups: list[tuple[str, str]]) -> str:
    """„Art. 221.” i „art. 5561 § 2” z podniesioną jedynką w PDF → „Art. 22^1.”, „art. 556^1 § 2”; kolejne
    zapisy strony po kolei."""
    pos = 0
    for base, sup in sups:
        pattern = re.compile(rf"((?:[Aa]rt\.|§)\s?){base}{sup}(?=[a-z]{{0,2}}(?:[^\w^]|$))")
        match = pattern.search(text, pos)
        if not match:
            continue
        replacement = f"{match.group(1)}{base}{SUPERSCRIPT}{sup}"
        text = text[: match.start()] + replacement + text[match.end() :]
        pos = match.start() + len(replacement)
    return text
