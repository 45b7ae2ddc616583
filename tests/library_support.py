"""Mała biblioteka prawdziwych aktów dla testów list plików (``lista``, ``/api/pliki``, MCP, wybór plików na
stronie, lista dokumentów w prośbie o plan): Kodeks wykroczeń (PDF), ustawa o własności lokali i początek
Kodeksu postępowania cywilnego (pliki tekstowe biblioteki z ../shared/dane/biblioteka – KPC ucięty po art. 19,
bo cały to ~2300 fragmentów) oraz przykładowe dokumenty z dane/ (regulamin, ustawa). Budowana raz na sesję,
wspólna dla modułów testów."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES, USTAWY

BIBLIOTEKA = REPO.parent / "shared" / "dane" / "biblioteka"
PETTY_OFFENCES = "kodeks-wykroczen-DU-1971-114.pdf"
CIVIL_PROCEDURE = "kodeks-postepowania-cywilnego-DU-1964-296.txt"
FLATS = "o-wlasnosci-lokali-DU-1994-388.txt"
RULES = "regulamin-pracy-zielony-las.md"
TREES = "ustawa-o-ochronie-drzew-miejskich.txt"
CIVIL_PROCEDURE_ARTICLES = 19  # its first articles: title, Dz.U. line and art. 1–19

_built: dict[str, Path] = {}


def library_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder bazy biblioteki (zbudowany przy pierwszym wywołaniu w sesji)."""
    if "db" in _built:
        return _built["db"]
    from chroma_rag import Index

    for source in (USTAWY / PETTY_OFFENCES, BIBLIOTEKA / CIVIL_PROCEDURE, BIBLIOTEKA / FLATS):
        if not source.is_file():
            pytest.fail(f"Brak pliku biblioteki {source}")
    root = tmp_path_factory.mktemp("biblioteka")
    docs = root / "dokumenty"
    docs.mkdir()
    shutil.copy(USTAWY / PETTY_OFFENCES, docs)
    shutil.copy(BIBLIOTEKA / FLATS, docs)
    lines = (BIBLIOTEKA / CIVIL_PROCEDURE).read_text(encoding="utf-8").splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith(f"Art. {CIVIL_PROCEDURE_ARTICLES + 1}."))
    (docs / CIVIL_PROCEDURE).write_text("\n".join(lines[:end]) + "\n", encoding="utf-8")
    for name in (RULES, TREES):
        shutil.copy(SAMPLES / name, docs)
    Index(root / "db").add([docs])
    _built["db"] = root / "db"
    return root / "db"
