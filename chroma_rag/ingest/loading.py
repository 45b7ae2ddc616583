"""Czytanie plików (PDF, DOCX, ODT, RTF, HTML, TXT, MD) do postaci czystego tekstu strona po stronie."""

from __future__ import annotations

import codecs
from pathlib import Path

from ..errors import UnreadableFile, os_reason
from ..models import Document
from .cleaning import has_mojibake, repair_mojibake

SUPPORTED_SUFFIXES = (".pdf", ".docx", ".odt", ".rtf", ".html", ".htm", ".txt", ".md")
_CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32))
_MAX_CONTROL_SHARE = 0.01
_POLISH_LETTERS = "ąćęłńóśźżĄĆĘŁŃÓŚŹŻ"
# Office's owner files ("~$umowa.docx") and editors' temp copies sit next to documents; they are not documents.
_TEMPORARY_PREFIXES = ("~$", ".~lock.", "~lock.")


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES and not is_temporary(path)


def is_temporary(path: Path) -> bool:
    """Plik blokady Office/LibreOffice albo kopia robocza edytora (``~$umowa.docx``, ``umowa.txt~``)."""
    name = path.name
    return name.startswith(_TEMPORARY_PREFIXES) or name.endswith(("~", "#")) or name.startswith("#")


def load_document(path: Path) -> Document:
    """Czyta plik; gdy się nie da, rzuca ``UnreadableFile`` z powodem po polsku."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnreadableFile(f"{path.name}: nieobsługiwany typ pliku.")
    try:
        if path.stat().st_size == 0:
            raise UnreadableFile(f"{path.name}: plik jest pusty.")
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: nie da się otworzyć pliku ({os_reason(exc)}).") from exc
    if suffix == ".pdf":
        return _load_pdf(path)
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


def _load_pdf(path: Path) -> Document:
    from .pdftext import read_pdf

    pdf = read_pdf(path)
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


def decode_text(raw: bytes, name: str, kind: tuple[str, str] = ("tekstowy", "tekstowego")) -> str:
    """Bajty pliku tekstowego jako tekst: UTF-16 z BOM, UTF-8 (z BOM i bez), cp1250/ISO-8859-2 po polskich
    literach, inaczej detektor kodowania; plik binarny – ``UnreadableFile``. ``kind`` nazywa plik w komunikacie
    (mianownik, dopełniacz)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Notepad's "Unicode": NUL bytes, yet text
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"{name}: uszkodzony plik {kind[0]} UTF-16.") from exc
    sample = raw[:65536]
    if b"\x00" in sample or sum(sample.count(b) for b in _CONTROL_BYTES) > _MAX_CONTROL_SHARE * len(sample):
        raise UnreadableFile(f"{name}: to plik binarny, nie tekst.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    polish = _polish_single_byte(raw)
    if polish is not None:
        return polish
    from charset_normalizer import from_bytes

    best = from_bytes(raw, cp_isolation=["cp1250", "iso8859_2", "utf_8", "cp1252"]).best()
    if best is None:
        raise UnreadableFile(f"{name}: nie da się rozpoznać kodowania znaków pliku {kind[1]}.")
    return str(best)


def _polish_single_byte(raw: bytes) -> str | None:
    """Tekst w cp1250 albo ISO-8859-2 rozpoznany po polskich literach: te kodowania różnią się właśnie na ą, ś,
    ź (i wielkich), więc właściwe daje ich więcej, a błędne – „±”, „¶”, znaki sterujące. Krótkiego tekstu
    statystyka ogólnego detektora nie rozstrzyga („Zał±cznik”). ``None``, gdy nie ma polskich liter."""
    scores = {}
    for encoding in ("cp1250", "iso8859_2"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        scores[encoding] = (sum(text.count(c) for c in _POLISH_LETTERS), text)
    if not scores:
        return None
    best, text = max(scores.values(), key=lambda pair: pair[0])
    return text if best else None


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
