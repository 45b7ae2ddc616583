"""Strona HTML (akt zapisany z ISAP/ELI, strona intranetu) jako tekst w stylu Markdown: sama treść główna bez menu,
nagłówka i stopki strony, skryptów i stylów; nagłówki jako „#”, żeby cięcie na sekcje mogło z nich korzystać.

Parsuje lxml (i tak potrzebne python-docx); treść główna to ``<main>``/``<article>``, gdy strona je ma, inaczej
``<body>`` bez części, które nigdy nie są treścią (``nav``, ``footer``, ``aside``, role ARIA, bloki o klasie „menu”,
„sidebar”, „stopka”…, listy samych linków). Biblioteki do „treści głównej” gubią tu to, co w akcie najważniejsze:
trafilatura opuszcza nagłówki „Art. N.” przy ``<div>`` na artykuł i małe tabele, jusText krótkie artykuły,
readability zostawia stopkę. Struktura aktu (Art./§) jest potem wykrywana na zwykłych liniach, jak w pliku TXT.
Kodowanie – z samego dokumentu (BOM, ``<meta charset>``, ``http-equiv``), inaczej rozpoznane jak w pliku tekstowym."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile

# A saved page this big is an export or a dump, not one document.
MAX_HTML_BYTES = 50 * 1024 * 1024
_SNIFF_BYTES = 4096
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# What browsers do (WHATWG Encoding): a page labelled Latin-1 or ASCII is read as windows-1252.
_LABEL_ALIASES = {"latin_1": "cp1252", "iso8859_1": "cp1252", "ascii": "cp1252"}
# Never the main text: code, styles, embedded objects, form controls, navigation and page chrome. <header> only
# outside the article (inside it holds the title); <form> stays (ASP.NET pages wrap the whole page in one).
_BOILERPLATE = (
    "//script | //style | //noscript | //template | //nav | //footer | //aside | //iframe | //svg | //canvas"
    " | //object | //embed | //button | //select | //input | //textarea | //*[@hidden] | //*[@aria-hidden='true']"
    " | //*[@role='navigation' or @role='contentinfo' or @role='banner' or @role='search' or @role='complementary']"
    " | //header[not(ancestor::article or ancestor::main or ancestor::section)]"
)
# class/id words of menus and page chrome (Polish sites too: "stopka", "menu-gorne")
_CHROME_WORDS = {
    "menu", "nav", "navbar", "navigation", "sidebar", "footer", "breadcrumb", "breadcrumbs", "cookie", "cookies",
    "cookiebar", "skiplink", "skiplinks", "share", "social", "toolbar", "pagination", "topbar", "stopka", "okruszki",
}
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_LINK_LISTS = ("ul", "ol", "div", "table", "section", "dl", "p")
_MIN_LINKS = 3
_MAX_LINK_SHARE = 0.7
_MAX_CHROME_SHARE = 0.5
_BLOCKS = {
    "p", "div", "section", "article", "main", "blockquote", "address", "figure", "figcaption", "center", "dl", "dt",
    "dd", "body", "html", "form", "fieldset", "legend", "details", "summary", "hgroup", "header", "caption",
}
# A table cell holding a heading or another table lays out a page; paragraphs in cells are normal (Word, Writer).
_LAYOUT_TAGS = ("table", "h1", "h2", "h3", "h4")
_LAYOUT_CELL_CHARS = 2000
# A page saved from Word ("Strona sieci Web") marks its title as <p class=MsoTitle>, not <h1>.
_WORD_TITLE = "MsoTitle"
_TITLE_XPATH = f".//h1 | .//p[contains(@class, '{_WORD_TITLE}')]"
# What editors write into <title> when the document has none (LibreOffice's XHTML export, Word, browsers).
_PLACEHOLDER_TITLES = {"- no title specified", "untitled", "untitled document", "bez tytułu", "dokument1"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Headings that open an act's unit or division, or name the act's kind, stay plain lines as in a text file, so
# the statute parser and the title detection see them ("### Art. 5." on ELI pages would otherwise hide it).
STATUTE_HEADING = re.compile(
    r"^(?:Art\.|§|Rozdział|ROZDZIAŁ|Oddział|ODDZIAŁ|Dział|DZIAŁ|Tytuł|TYTUŁ|Księga|KSIĘGA|Część|CZĘŚĆ)(?:\s|$)"
    r"|^(?:USTAWA|ROZPORZĄDZENIE|KONSTYTUCJA|OBWIESZCZENIE|KODEKS)\b"
)
UNIT_NUMBER_END = re.compile(r"\d[a-z]{0,4}$")
_FOOTNOTE_MARK = re.compile(r"\d{1,3}\)|\*{1,3}")
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")


def read_html(path: Path) -> str:
    """Treść główna strony HTML jako tekst z nagłówkami „#”; tytuł na początku: ``<h1>``, którym treść się
    zaczyna, inaczej ``<title>``. Strona ucięta, bez treści albo nie-HTML – ``UnreadableFile`` z powodem po polsku."""
    raw = path.read_bytes()
    if len(raw) > MAX_HTML_BYTES:
        raise UnreadableFile(
            f"{path.name}: plik HTML ma {len(raw) / 2**20:.0f} MB, limit to {MAX_HTML_BYTES // 2**20} MB – "
            "zapisz samą treść aktu albo podziel ją na części."
        )
    markup = _XML_DECLARATION.sub("", decode_html(raw, path.name), count=1)
    if _truncated(markup):
        raise UnreadableFile(f"{path.name}: plik HTML jest ucięty (brak zakończenia strony) – zapisz stronę ponownie.")
    tree = _parse(markup, path.name)
    main = _main_part(tree)
    heading = _first_heading(main)
    lines = _Writer().render(main)
    if not lines:
        raise UnreadableFile(f"{path.name}: strona HTML nie zawiera treści głównej (same menu, skrypty albo style).")
    first = lines[0].lstrip("#").strip()
    if not heading or heading != first:
        # the page's <title> names it when the text does not open with its own <h1>; an <h1> further down is
        # a section, and without a <title> the first line is the title (as in a text file)
        title = tree.find(".//title")
        title_text = _one_line(title.text_content()) if title is not None else ""
        if title_text and title_text != first and title_text.lower() not in _PLACEHOLDER_TITLES:
            lines = [f"# {title_text}", "", *lines]
    return "\n".join(lines) + "\n"


def decode_html(raw: bytes, name: str) -> str:
    """Tekst strony w kodowaniu, które podaje ona sama (BOM, ``<meta charset>``, ``http-equiv``, deklaracja XML);
    bez deklaracji albo gdy deklaracja nie pasuje do bajtów – jak plik tekstowy (UTF-8, cp1250, ISO-8859-2…)."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):
            try:
                return raw.decode("utf-8-sig" if encoding == "utf-8" else encoding)
            except UnicodeDecodeError as exc:
                raise UnreadableFile(f"{name}: plik HTML ma uszkodzone znaki ({encoding.upper()}).") from exc
    head = raw[:_SNIFF_BYTES]
    declared = _XML_ENCODING.search(head) or _META_CHARSET.search(head)
    if declared:
        encoding = _codec(declared.group(1).decode("ascii", "replace"))
        if encoding and "16" not in encoding and b"\x00" not in head:  # "utf-16" declared in an 8-bit file is a lie
            if encoding != "utf-8" and not raw.isascii():
                # a page re-saved as UTF-8 that still says cp1250: valid multi-byte UTF-8 is no accident
                try:
                    return raw.decode("utf-8")
                except UnicodeDecodeError:
                    pass
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                pass  # misdeclared (a cp1250 page saying utf-8): the bytes decide
    from .encoding import decode_text

    return decode_text(raw, name, kind=("HTML", "HTML"))


def _codec(label: str) -> str | None:
    try:
        name = codecs.lookup(label.strip().lower()).name
    except LookupError:
        return None
    return _LABEL_ALIASES.get(name.replace("-", "_"), name)


def _truncated(markup: str) -> bool:
    """Strona zaczęta (``<html>``/``<body>``), a niezakończona: bez ``</body>`` i ``</html>`` i urwana w pół
    znacznika albo tekstu. Strona bez znaczników zamykających, ale kończąca się znacznikiem, jest poprawna."""
    lowered = markup.lower()
    started = "<html" in lowered or "<body" in lowered
    closed = "</html" in lowered or "</body" in lowered
    return started and not closed and not markup.rstrip().endswith(">")


def _parse(markup: str, name: str) -> Any:
    import lxml.etree
    import lxml.html

    if not markup.strip():
        raise UnreadableFile(f"{name}: plik HTML jest pusty.")
    try:
        return lxml.html.document_fromstring(markup)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise UnreadableFile(f"{name}: to nie jest strona HTML (nie da się jej odczytać).") from exc


def _first_heading(main: Any) -> str:
    """Tekst pierwszego ``<h1>`` (albo akapitu stylu Word „Tytuł”) treści głównej; pusty, gdy go nie ma."""
    for element in main.xpath(_TITLE_XPATH):
        text = _inline_text(element)
        if text:
            return text
    return ""


def _main_part(tree: Any) -> Any:
    """Treść główna: bez części strony, które nigdy nią nie są; ``<main>`` (albo jedyne ``<article>``), gdy jest."""
    for element in tree.xpath(_BOILERPLATE):
        _drop(element)
    page = _text_length(tree)
    for element in list(tree.iter()):
        if not isinstance(element.tag, str) or element.tag in ("html", "body", "main", "article"):
            continue
        words = set(_WORD_SPLIT.split(f"{element.get('class', '')} {element.get('id', '')}".lower()))
        # a menu is never most of the page: <div class="content with-sidebar"> holding the act stays
        chrome = bool(words & _CHROME_WORDS) and _text_length(element) <= _MAX_CHROME_SHARE * page
        if chrome or (element.tag in _LINK_LISTS and _mostly_links(element)):
            _drop(element)
    mains = tree.xpath("//main | //*[@role='main']")
    if mains:
        return mains[0]
    articles = tree.xpath("//article[not(ancestor::article)]")
    if len(articles) == 1:
        return articles[0]
    body = tree.find("body")
    return body if body is not None else tree


def _drop(element: Any) -> None:
    if element.getparent() is not None:
        element.drop_tree()


def _text_length(element: Any) -> int:
    return len("".join(element.text_content().split()))


def _mostly_links(element: Any) -> bool:
    """Lista linków (menu, spis stron): co najmniej kilka linków i prawie cały tekst w nich."""
    links = element.findall(".//a")
    if len(links) < _MIN_LINKS:
        return False
    total = _text_length(element)
    linked = sum(_text_length(link) for link in links)
    return total > 0 and linked >= _MAX_LINK_SHARE * total


class _Writer:
    """Drzewo HTML jako linie: bloki rozdzielone pustą linią, ``<br>`` nowa linia, nagłówki „#”, punkty list,
    wiersze tabel z komórkami „ | ” (tabela układu strony – komórki z akapitami – jak zwykłe bloki)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.inline: list[str] = []

    def render(self, root: Any) -> list[str]:
        self.block(root)
        self.flush()
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        return self.lines

    def flush(self) -> None:
        text = "".join(self.inline)
        self.inline = []
        lines = [line for line in (_SPACES.sub(" ", part).strip() for part in text.split("\n")) if line]
        if lines:
            self.lines += [*lines, ""]

    def block(self, element: Any) -> None:
        self.flush()
        self.children(element)
        self.flush()

    def children(self, element: Any) -> None:
        """Tekst z dziećmi; koniec linii w źródle to spacja – nową linię daje tylko ``<br>``."""
        self.inline.append(_flat(element.text))
        for child in element:
            self.node(child)
            self.inline.append(_flat(child.tail))

    def node(self, element: Any) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        if not tag:  # a comment or a processing instruction
            return
        if tag in _HEADINGS or (tag == "p" and _WORD_TITLE in (element.get("class") or "")):
            self.flush()
            text = _inline_text(element)
            if text:
                plain = STATUTE_HEADING.match(text)
                self.lines += [text if plain else f"{'#' * _HEADINGS.get(tag, 1)} {text}", ""]
        elif tag == "br":
            self.inline.append("\n")
        elif tag in ("ul", "ol"):
            self.flush()
            self.list(element, 0)
            self.lines.append("")
        elif tag == "table":
            self.table(element)
        elif tag == "pre":
            self.flush()
            text = element.text_content().strip("\n")
            if text.strip():
                self.lines += [line.rstrip() for line in text.split("\n")] + [""]
        elif tag == "sup":
            text = _one_line(element.text_content())
            before = "".join(self.inline[-3:]).rstrip()
            # "Art. 23<sup>1</sup>." is art. 23^1, as the statute parser writes superscripts; "ustawy<sup>2)</sup>"
            # is a footnote mark, left out like the PDF's
            if text.isalnum() and UNIT_NUMBER_END.search(before):
                self.inline.append(f"^{text}")
            elif not _FOOTNOTE_MARK.fullmatch(text):
                self.inline.append(text)
        elif tag in _BLOCKS or tag == "li":
            self.block(element)
        elif tag == "hr":
            self.flush()
        else:  # inline: span, a, b, i, em, strong, font, abbr…
            self.children(element)

    def list(self, element: Any, depth: int) -> None:
        ordered = element.tag == "ol"
        number = _int(element.get("start"), 1) - 1
        for item in element:
            if not isinstance(item.tag, str) or item.tag != "li":
                continue
            number = _int(item.get("value"), number + 1)
            sub = _Writer()
            sub.inline.append(_flat(item.text))
            nested = []
            for child in item:
                if child.tag in ("ul", "ol"):
                    nested.append(child)
                else:
                    sub.node(child)
                sub.inline.append(_flat(child.tail))
            sub.flush()
            text = " ".join(line for line in sub.lines if line)
            if text:
                self.lines.append(f"{'  ' * depth}{f'{number}.' if ordered else '-'} {text}")
            for child in nested:
                self.list(child, depth + 1)

    def table(self, element: Any) -> None:
        self.flush()
        rows = [row for row in element.iter("tr") if _closest_table(row) is element]
        layout = any(
            any(cell.find(f".//{tag}") is not None for tag in _LAYOUT_TAGS) or _text_length(cell) > _LAYOUT_CELL_CHARS
            for row in rows for cell in row if isinstance(cell.tag, str)
        )
        for row in rows:
            if layout:  # a page laid out in a table: its cells are blocks of text
                for cell in row:
                    if isinstance(cell.tag, str):
                        self.block(cell)
                continue
            cells = [_inline_text(cell) for cell in row if cell.tag in ("td", "th")]
            if any(cells):
                self.lines.append(" | ".join(cells))
        if not layout:
            self.lines.append("")


def _inline_text(element: Any) -> str:
    """Tekst elementu w jednej linii, z indeksami górnymi jak w treści („Art. 23^1.”)."""
    writer = _Writer()
    writer.children(element)
    writer.flush()  # paragraphs inside a cell or a heading run on in one line
    return _one_line(" ".join(writer.lines))


def _closest_table(row: Any) -> Any:
    parent = row.getparent()
    while parent is not None and parent.tag != "table":
        parent = parent.getparent()
    return parent


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _flat(text: str | None) -> str:
    return text.replace("\r", " ").replace("\n", " ") if text else ""


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()
