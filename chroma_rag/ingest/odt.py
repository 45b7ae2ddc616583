"""Dokument OpenDocument (``.odt``) jako tekst w stylu Markdown: nagłówki „#” z ich poziomem, akapity, punkty list,
tabele wiersz po wierszu z komórkami „ | ” (jak DOCX). ODT to archiwum ZIP z ``content.xml`` – wystarcza
biblioteka standardowa; przypisy, komentarze, spis treści i usunięte (śledzone) zmiany są pomijane."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from ..errors import UnreadableFile
from .html import STATUTE_HEADING, UNIT_NUMBER_END

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
_MIMETYPE = "application/vnd.oasis.opendocument.text"
# content.xml of a long statute is a few MB; hundreds would be a zip bomb, not a document.
MAX_CONTENT_BYTES = 200 * 1024 * 1024
_TITLE_STYLES = {"title", "tytuł"}
# Not part of the running text: notes (their citation marks too), comments, generated indexes, deleted changes.
_SKIPPED = {
    f"{{{_TEXT}}}note", f"{{{_OFFICE}}}annotation", f"{{{_OFFICE}}}annotation-end", f"{{{_TEXT}}}tracked-changes",
    f"{{{_TEXT}}}table-of-content", f"{{{_TEXT}}}alphabetical-index", f"{{{_TEXT}}}illustration-index",
    f"{{{_TEXT}}}table-index", f"{{{_TEXT}}}object-index", f"{{{_TEXT}}}user-index", f"{{{_TEXT}}}bibliography",
    f"{{{_TEXT}}}sequence-decls", f"{{{_TEXT}}}variable-decls", f"{{{_TEXT}}}user-field-decls",
    f"{{{_SVG}}}title", f"{{{_SVG}}}desc",  # an image's alternative text
}
_ROW_GROUPS = {
    f"{{{_TABLE}}}table-header-rows", f"{{{_TABLE}}}table-rows", f"{{{_TABLE}}}table-row-group",
}
_SPACES = re.compile(r"[ \t\u00a0]+")


def read_odt(path: Path) -> str:
    """Tekst dokumentu ODT; archiwum uszkodzone, bez ``content.xml`` albo bez tekstu – ``UnreadableFile``."""
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                info = archive.getinfo("content.xml")
            except KeyError as exc:
                raise UnreadableFile(
                    f"{path.name}: uszkodzony plik ODT (w archiwum nie ma treści dokumentu – content.xml)."
                ) from exc
            if info.file_size > MAX_CONTENT_BYTES:
                raise UnreadableFile(
                    f"{path.name}: treść dokumentu ODT ma po rozpakowaniu {info.file_size / 2**20:.0f} MB, "
                    f"limit to {MAX_CONTENT_BYTES // 2**20} MB."
                )
            mimetype = _member(archive, "mimetype")
            content = archive.read(info)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony plik ODT (to nie jest poprawne archiwum OpenDocument).") from exc
    if mimetype is not None and not mimetype.strip().startswith(_MIMETYPE):  # also -template, -web, -master
        raise UnreadableFile(f"{path.name}: to nie jest dokument tekstowy OpenDocument ({mimetype.strip()[:80]}).")
    try:
        root = ElementTree.fromstring(content)
    except ElementTree.ParseError as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony plik ODT (treść dokumentu nie jest poprawnym XML).") from exc
    body = root.find(f"{{{_OFFICE}}}body/{{{_OFFICE}}}text")
    lines: list[str] = []
    if body is not None:
        _Reader(*_styles(root), lines).blocks(body)
    text = "\n".join(lines).strip()
    if not text:
        raise UnreadableFile(f"{path.name}: dokument ODT nie zawiera tekstu.")
    return text + "\n"


def _member(archive: zipfile.ZipFile, name: str) -> str | None:
    try:
        return archive.read(name).decode("ascii", "replace")
    except KeyError:
        return None


def _heading_level(name: str) -> int:
    """Poziom nagłówka ze stylu akapitu: „Title”/„Tytuł” – 1, „Heading_20_2”/„Nagłówek 2” – 2; inaczej 0."""
    name = name.replace("_20_", " ").strip().lower()
    if name in _TITLE_STYLES:
        return 1
    for prefix in ("heading ", "nagłówek "):
        if name.startswith(prefix) and name[len(prefix):].strip().isdigit():
            return min(6, max(1, int(name[len(prefix):])))
    return 0


def _styles(root: ElementTree.Element) -> tuple[dict[str, int], set[str]]:
    """Style akapitów będących nagłówkami (nazwa → poziom; automatyczne ``P1`` po stylu, na którym są oparte) i
    automatyczne style tekstu w indeksie górnym (``style:text-position="super"`` albo dodatnie przesunięcie)."""
    levels: dict[str, int] = {}
    superscripts: set[str] = set()
    styles = root.find(f"{{{_OFFICE}}}automatic-styles")
    for style in styles if styles is not None else ():
        name = style.get(f"{{{_STYLE}}}name") or ""
        level = _heading_level(style.get(f"{{{_STYLE}}}parent-style-name") or "")
        if level:
            levels[name] = level
        properties = style.find(f"{{{_STYLE}}}text-properties")
        position = (properties.get(f"{{{_STYLE}}}text-position") or "") if properties is not None else ""
        if position.startswith("super") or re.match(r"[1-9]\d*(?:\.\d+)?%", position):
            superscripts.add(name)
    return levels, superscripts


class _Reader:
    def __init__(self, heading_styles: dict[str, int], superscripts: set[str], lines: list[str]) -> None:
        self.heading_styles = heading_styles
        self.superscripts = superscripts
        self.lines = lines

    def blocks(self, parent: ElementTree.Element, depth: int = 0) -> None:
        for element in parent:
            tag = element.tag
            if tag in _SKIPPED:
                continue
            if tag == f"{{{_TEXT}}}h":
                text = _one_line(self.inline(element))
                level = min(6, max(1, int(element.get(f"{{{_TEXT}}}outline-level") or 1)))
                if text:  # "Art. 5." or "Rozdział 2" styled as a heading stays a plain line, as in HTML
                    self.lines += [text if STATUTE_HEADING.match(text) else f"{'#' * level} {text}", ""]
            elif tag == f"{{{_TEXT}}}p":
                text = self.paragraph(element)
                style = element.get(f"{{{_TEXT}}}style-name") or ""
                level = self.heading_styles.get(style) or _heading_level(style)
                if text and level and not STATUTE_HEADING.match(text):
                    self.lines += [f"{'#' * level} {_one_line(text)}", ""]
                elif text:
                    self.lines += [text, ""]
            elif tag == f"{{{_TEXT}}}list":
                self.list(element, depth)
                self.lines.append("")
            elif tag == f"{{{_TABLE}}}table":
                self.table(element)
                self.lines.append("")
            else:  # sections, frames, text boxes, soft page breaks: whatever text they hold, in order
                self.blocks(element, depth)

    def list(self, element: ElementTree.Element, depth: int) -> None:
        for item in element:
            if item.tag not in (f"{{{_TEXT}}}list-item", f"{{{_TEXT}}}list-header"):
                continue
            for child in item:
                if child.tag == f"{{{_TEXT}}}list":
                    self.list(child, depth + 1)
                elif child.tag == f"{{{_TEXT}}}h":  # a numbered heading sits in a list and stays a heading
                    self.blocks([child], depth)
                elif child.tag == f"{{{_TEXT}}}p":
                    text = _one_line(self.inline(child))
                    if text:
                        self.lines.append(f"{'  ' * depth}- {text}")
                else:
                    self.blocks(child, depth)

    def table(self, element: ElementTree.Element) -> None:
        for row in _rows(element):
            cells = []
            for cell in row:
                if cell.tag != f"{{{_TABLE}}}table-cell":  # a covered cell is the merged one's, already written
                    continue
                text = " ".join(
                    _one_line(self.inline(p)) for p in cell.iter() if p.tag in (f"{{{_TEXT}}}p", f"{{{_TEXT}}}h")
                )
                cells.append(text.strip())
            while cells and not cells[-1]:  # repeated empty cells to the sheet's edge
                cells.pop()
            if any(cells):
                self.lines.append(" | ".join(cells))

    def paragraph(self, element: ElementTree.Element) -> str:
        return "\n".join(_SPACES.sub(" ", line).strip() for line in self.inline(element).split("\n")).strip()

    def inline(self, element: ElementTree.Element) -> str:
        """Tekst akapitu: ``text:s`` to spacje, ``text:tab`` tabulator, ``text:line-break`` nowa linia."""
        parts = [element.text or ""]
        for child in element:
            tag = child.tag
            if tag in _SKIPPED:
                pass
            elif tag == f"{{{_TEXT}}}s":
                parts.append(" " * int(child.get(f"{{{_TEXT}}}c") or 1))
            elif tag == f"{{{_TEXT}}}tab":
                parts.append("\t")
            elif tag == f"{{{_TEXT}}}line-break":
                parts.append("\n")
            elif tag == f"{{{_TEXT}}}span" and child.get(f"{{{_TEXT}}}style-name") in self.superscripts:
                text = _one_line(self.inline(child))
                # "Art. 50<sup>1</sup>." is art. 50^1, as the statute parser writes superscripts
                unit = text.isalnum() and UNIT_NUMBER_END.search("".join(parts).rstrip())
                parts.append(f"^{text}" if unit else text)
            else:
                parts.append(self.inline(child))
            parts.append(child.tail or "")
        return "".join(parts)


def _rows(table: ElementTree.Element) -> list[ElementTree.Element]:
    """Wiersze tej tabeli (także w grupach nagłówka), bez wierszy tabel zagnieżdżonych w jej komórkach."""
    rows = []
    for child in table:
        if child.tag == f"{{{_TABLE}}}table-row":
            rows.append(child)
        elif child.tag in _ROW_GROUPS:
            rows += _rows(child)
    return rows


def _one_line(text: str) -> str:
    return " ".join(text.split())
