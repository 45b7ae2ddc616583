"""Dokument RTF jako tekst (striprtf): akapity jako linie, wiersze tabel z komórkami „ | ”. Nagłówków RTF (style)
nie rozróżnia – struktura aktu (Art./§) i tak jest wykrywana z samego tekstu, jak w pliku TXT."""

from __future__ import annotations

import codecs
import contextlib
import re
from pathlib import Path

from ..errors import UnreadableFile

_CODEPAGE = re.compile(rb"\\ansicpg(\d{3,5})")
_ESCAPED = re.compile(rb"\\[\\{}]")  # \\, \{ and \} are text, not groups
# Superscript runs – a group ({\super 1}, Writer's {\loch{\*\updnprop8000}\up9\loch 1}) or Word's inline
# \super 1\nosupersub – get \x1e…\x1f around their text, so that "Art. 50" + superscript "1" becomes art. 50^1
# (striprtf drops formatting, which would make it art. 501).
_CONTROL_WORDS = r"(?:\\[a-z]+-?\d*[ ]?|\{\\\*[^{}]*\}|\s)*?"
_SUPER_GROUP = re.compile(
    r"\{(" + _CONTROL_WORDS + r")\\(?:super|up[1-9]\d*)(?![a-z])[ ]?(" + _CONTROL_WORDS + r")([A-Za-z0-9]{1,4})\}"
)
_SUPER_INLINE = re.compile(r"\\super(?![a-z])[ ]?([A-Za-z0-9]{1,4})\\nosupersub(?![a-z])[ ]?")
_MARKED_UNIT = re.compile("(?<=\\d)([a-z]{0,4})\x1e([A-Za-z0-9]{1,4})\x1f")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def read_rtf(path: Path) -> str:
    """Tekst pliku RTF w stronie kodowej, którą podaje sam plik (``\\ansicpg1250``; bez niej cp1252, jak Word)."""
    raw = path.read_bytes()
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise UnreadableFile(f"{path.name}: to nie jest plik RTF (brak nagłówka „{{\\rtf”).")
    plain = _ESCAPED.sub(b"", raw)
    if not raw.rstrip().endswith(b"}") or plain.count(b"{") != plain.count(b"}"):
        raise UnreadableFile(f"{path.name}: plik RTF jest ucięty (nawiasy grup się nie domykają) – zapisz go ponownie.")
    found = _CODEPAGE.search(raw[:4096])
    encoding = "cp1252"
    if found:
        with contextlib.suppress(LookupError):
            encoding = codecs.lookup(f"cp{int(found.group(1))}").name
    from striprtf.striprtf import rtf_to_text

    try:
        source = _SUPER_GROUP.sub(r"{\1\2\\'1e\3\\'1f}", raw.decode("latin-1"))
        source = _SUPER_INLINE.sub(r"\\'1e\1\\'1f", source)
        text = _MARKED_UNIT.sub(r"\1^\2", rtf_to_text(source, encoding=encoding, errors="replace"))
    except (ValueError, IndexError, RecursionError) as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony plik RTF (nie da się odczytać jego treści).") from exc
    lines = []
    text = _CONTROL.sub("", text).replace("\uf0b7", "-")  # Word's and Writer's bullet from the Symbol font
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.rstrip().endswith("|"):  # a table row: "komórka|komórka|"
            line = " | ".join(cell.strip() for cell in line.rstrip().rstrip("|").split("|"))
        lines.append(" ".join(line.split()))  # list markers come as " \t1.\t"
    text = "\n".join(lines).strip()
    if not text:
        raise UnreadableFile(f"{path.name}: dokument RTF nie zawiera tekstu.")
    return text + "\n"
