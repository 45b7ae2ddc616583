"""Czytanie plików (PDF, TXT, MD) do postaci tekstu strona po stronie."""

from __future__ import annotations

from pathlib import Path

from .errors import UnreadableFile
from .models import Document

SUPPORTED_SUFFIXES = (".pdf", ".txt", ".md")


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def load_document(path: Path) -> Document:
    """Czyta plik; gdy się nie da, rzuca ``UnreadableFile`` z powodem po polsku."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return Document(path=path, pages=_read_pdf_pages(path), kind="pdf")
    if suffix in (".txt", ".md"):
        return Document(path=path, pages=[_read_text(path)], kind=suffix[1:])
    raise UnreadableFile(f"{path.name}: nieobsługiwany typ pliku.")


def _read_pdf_pages(path: Path) -> list[str]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    with path.open("rb") as handle:
        head = handle.read(1024)
    if not head.strip():
        raise UnreadableFile(f"{path.name}: plik jest pusty.")
    if b"%PDF-" not in head:  # e.g. an HTML error page saved as .pdf: its text must not get indexed
        raise UnreadableFile(f"{path.name}: to nie jest PDF, mimo rozszerzenia .pdf.")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile(f"{path.name}: PDF jest zaszyfrowany hasłem – zapisz go bez hasła.")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony lub nieczytelny PDF ({exc}).") from exc
    if not any(p.strip() for p in pages):
        raise UnreadableFile(f"{path.name}: PDF nie ma warstwy tekstowej (skan?) – potrzebny OCR.")
    return pages


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:  # binary data decoded as cp1250 would index mojibake
        raise UnreadableFile(f"{path.name}: to plik binarny, nie tekst.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1250", errors="replace")
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise UnreadableFile(f"{path.name}: plik jest pusty.")
    return text
