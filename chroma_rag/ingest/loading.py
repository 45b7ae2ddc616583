"""Czytanie plików (PDF, DOCX, ODT, RTF, HTML, TXT, MD) do postaci czystego tekstu strona po stronie."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..errors import UnreadableFile, os_reason
from ..models import Document
from .cleaning import has_mojibake, repair_mojibake
from .encoding import decode_text

if TYPE_CHECKING:
    from .ocr import Ocr

SUPPORTED_SUFFIXES = (".pdf", ".docx", ".odt", ".rtf", ".html", ".htm", ".txt", ".md")
# Office's owner files ("~$umowa.docx") and editors' temp copies sit next to documents; they are not documents.
_TEMPORARY_PREFIXES = ("~$", ".~lock.", "~lock.")


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES and not is_temporary(path)


def is_temporary(path: Path) -> bool:
    """Plik blokady Office/LibreOffice albo kopia robocza edytora (``~$umowa.docx``, ``umowa.txt~``)."""
    name = path.name
    return name.startswith(_TEMPORARY_PREFIXES) or name.endswith(("~", "#")) or name.startswith("#")


def load_document(path: Path, ocr: Ocr | None = None) -> Document:
    """Czyta plik (skany w PDF przez ``ocr``, domyślnie Tesseract bez pamięci odczytanych stron); gdy się nie da,
    rzuca ``UnreadableFile`` z powodem po polsku."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnreadableFile(f"{path.name}: nieobsługiwany typ pliku.")
    try:
        if path.stat().st_size == 0:
            raise UnreadableFile(f"{path.name}: plik jest pusty.")
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: nie da się otworzyć pliku ({os_reason(exc)}).") from exc
    if suffix == ".pdf":
        return _load_pdf(path, ocr)
    if suffix == ".docx":
        return Document(path=path, pages=[_read_docx(path)], kind="docx")
    # HTML, ODT and RTF come out as Markdown-like text ("#" headings), cut into sections like a .md file
    if suffix in (".html", ".htm"):
        from .html import read_html

        return Document(path=path, pages=[read_html(path)], kind="md")
    if suffix == ".odt":
        from .odt import read_odt

        return Document(path=path, pages=[read_odt(path)], kind="md")
    if suffix == ".rtf":
        from .rtf import read_rtf

        return Document(path=path, pages=[read_rtf(path)], kind="txt")
    return Document(path=path, pages=[_read_text(path)], kind=suffix[1:])


def load_opened(handle: BinaryIO, path: Path, ocr: Ocr | None = None) -> Document:
    """Czyta dokument ``path`` z pliku już otwartego i sprawdzonego (``handle``), a nie z tego, co akurat leży pod
    ``path``: plik podmieniony w międzyczasie na link (np. do cudzego tokenu) nie zostanie przeczytany. Czytniki
    otwierają plik po nazwie (pypdf, python-docx, zipfile), więc dostają link o tej samej nazwie w prywatnym folderze
    tymczasowym, prowadzący do deskryptora tego procesu (``/proc/PID/fd/N``) – otwarcie go otwiera ten sam i-węzeł.
    Tylko Linux (``/proc``)."""
    with tempfile.TemporaryDirectory(prefix="chroma-rag-plik-") as folder:
        pinned = Path(folder) / path.name
        pinned.symlink_to(f"/proc/{os.getpid()}/fd/{handle.fileno()}")
        document = load_document(pinned, ocr)
    return replace(document, path=path)


def _load_pdf(path: Path, ocr: Ocr | None) -> Document:
    from .pdftext import read_pdf

    pdf = read_pdf(path, ocr)
    pages = pdf.pages
    if has_mojibake("".join(pages)):
        pages = [repair_mojibake(p) for p in pages]
        pdf.footnotes = {k: repair_mojibake(v) for k, v in pdf.footnotes.items()}
    return Document(path=path, pages=pages, kind="pdf", footnotes=pdf.footnotes)


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    text = decode_text(raw, path.name)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise UnreadableFile(f"{path.name}: plik jest pusty.")
    return text


def _read_docx(path: Path) -> str:
    """DOCX jako Markdown: style nagłówków → „#”, akapity i wiersze tabel jako linie."""
    import zipfile

    from docx import Document as DocxDocument
    from docx.opc.exceptions import PackageNotFoundError

    try:
        docx = DocxDocument(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony plik DOCX (niepoprawne archiwum Office Open XML).") from exc
    lines = []
    for paragraph in docx.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        level = _heading_level(paragraph.style.name if paragraph.style is not None else "")
        lines.append(f"{'#' * level} {text}" if level else text)
        lines.append("")
    for table in docx.tables:
        for row in table.rows:
            cells = [c.text.strip() for c in row.cells]
            if any(cells):
                lines.append(" | ".join(cells))
        lines.append("")
    text = "\n".join(lines)
    if not text.strip():
        raise UnreadableFile(f"{path.name}: dokument DOCX nie zawiera tekstu.")
    return text


def _heading_level(style: str) -> int:
    name = style.lower()
    if name == "title" or name == "tytuł":
        return 1
    for prefix in ("heading ", "nagłówek "):
        if name.startswith(prefix) and name[len(prefix) :].strip().isdigit():
            return min(6, int(name[len(prefix) :]))
    return 0
