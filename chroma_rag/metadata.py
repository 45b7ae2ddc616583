"""Metadane dokumentu: tytuł, rok Dziennika Ustaw i rodzaj aktu – wykrywane z nazwy pliku i treści."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

DOCUMENT_TYPES = ("ustawa", "kodeks", "rozporzadzenie", "konstytucja", "nowelizacja", "dokument")

_DU_NAME = re.compile(r"-DU-(\d{4})-", re.IGNORECASE)
_DU_TEXT = re.compile(r"Dz\.\s?U\.\s*(?:z\s*)?(\d{4})")
_YEAR_IN_DATE = re.compile(r"z dnia \d{1,2} \w+ (\d{4}) r\.")


def detect_year(path: Path, text: str) -> int:
    """Rok z nazwy ``-DU-RRRR-``, inaczej z tekstu (Dz.U./„z dnia”), inaczej rok modyfikacji pliku."""
    for pattern, source in ((_DU_NAME, path.name), (_DU_TEXT, text[:3000]), (_YEAR_IN_DATE, text[:3000])):
        match = pattern.search(source)
        if match:
            return int(match.group(1))
    return datetime.fromtimestamp(path.stat().st_mtime).year


def detect_title(text: str) -> str:
    """Tytuł aktu: „USTAWA z dnia … o …” albo pierwsza niepusta linia."""
    lines = [ln.strip() for ln in text[:4000].splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if re.fullmatch(r"(USTAWA|ROZPORZĄDZENIE.*|KODEKS.*|KONSTYTUCJA.*)", line):
            return " ".join(lines[i : i + 3])[:300]
    return lines[0][:300] if lines else ""


def detect_type(title: str, text: str) -> str:
    """Rodzaj dokumentu wg tytułu; nowelizacja, gdy ustawa „o zmianie”."""
    head = f"{title}\n{text[:3000]}".lower()
    if "konstytucja" in head:
        return "konstytucja"
    if "kodeks" in title.lower() or re.search(r"^\s*kodeks\b", text[:3000], re.IGNORECASE | re.MULTILINE):
        return "kodeks"
    if "rozporządzenie" in head:
        return "rozporzadzenie"
    if re.search(r"ustawa\s+z dnia[^\n]*\n?[^\n]*o zmianie", head):
        return "nowelizacja"
    if "ustawa" in head:
        return "ustawa"
    return "dokument"


_PUBLICATION = re.compile(r"Dz\.\s?U\.\s*(?:z\s*)?\d{4}\s*(?:r\.\s*)?(?:Nr\s*\d+\s*)?,?\s*poz\.\s*\d+")


def detect_publication(text: str) -> str:
    """Oznaczenie publikacji („Dz.U. 2009 Nr 52 poz. 417”) z początku tekstu; pusty napis, gdy brak."""
    match = _PUBLICATION.search(text[:3000])
    return " ".join(match.group(0).split()) if match else ""
