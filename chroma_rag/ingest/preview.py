"""Podgląd cięcia pliku bez embeddingu i bez bazy: te same fragmenty i metadane, które trafiłyby do indeksu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from .chunking import chunk_document
from .loading import is_supported, load_document
from .metadata import detect_publication, detect_title, detect_type, detect_year


def preview(path: Path | str) -> list[dict[str, Any]]:
    """Fragmenty pliku jako słowniki: ``art``, ``strona``, metadane jak w indeksie i ``tekst`` na końcu."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"Nie ma pliku {path}.")
    if not is_supported(path):
        raise UserError(f"{path.name}: nieobsługiwany typ pliku (obsługiwane: PDF, DOCX, ODT, RTF, HTML, TXT, MD).")
    document = load_document(path)
    text = document.text
    title = detect_title(text)
    file_meta = {
        "plik": document.name,
        "tytul": title,
        "typ": detect_type(title, text),
        "rok": detect_year(path, text),
        "dz_u": detect_publication(text),
    }
    return [
        {
            "art": chunk.art,
            "strona": chunk.page_from,
            "strona_do": chunk.page_to,
            "fragment": chunk.part,
            "rozdzial": chunk.heading,
            **file_meta,
            **chunk.extra,
            "tekst": chunk.text,
        }
        for chunk in chunk_document(document)
    ]
