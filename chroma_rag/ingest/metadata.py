"""Metadane dokumentu wykrywane z treści: tytuł aktu, rodzaj, rok i publikator (Dz.U.)."""

from __future__ import annotations

import re
from pathlib import Path

from .acts import act_name

DOCUMENT_TYPES = ("ustawa", "kodeks", "rozporzadzenie", "konstytucja", "nowelizacja", "umowa", "regulamin", "dokument")
UNKNOWN_YEAR = 0  # neither the name nor the text gives one: filters by year leave such a document out
TITLE_MAX_CHARS = 300

_DU_NAME = re.compile(r"-DU-(\d{4})-", re.IGNORECASE)
_DU_TEXT = re.compile(r"Dz\.\s?U\.\s*(?:z\s*)?(\d{4})")
_YEAR_IN_DATE = re.compile(r"z\s+dnia\s+\d{1,2}\s+\w+\s+(\d{4})\s*r\.")
_ACT_KIND = re.compile(r"^(USTAWA|ROZPORZĄDZENIE\b.*|KONSTYTUCJA\b.*|OBWIESZCZENIE\b.*|KODEKS\b.*)$")
_TITLE_STOP = re.compile(
    r"^(Art\.|§|\d+\.|Na podstawie|Rozdział|ROZDZIAŁ|KSIĘGA|Księga|Tytuł|TYTUŁ|DZIAŁ|Dział|CZĘŚĆ"
    r"|W trosce|Preambuła)"
)
_MD_HEADING = re.compile(r"^#{1,6}\s+")
_MARKERS = re.compile(
    "\ue000[^\ue001]*\ue001|(?<=[^\\W\\d])\\d{1,2}\\)?(?=\\s|$)|\\d{1,2}\\)(?=[IVX]+\\))|[IVX]+\\)$"
)
_PUB_KANCELARIA = re.compile(r"Dz\.\s?U\.\s*(\d{4})\s*(?:Nr\s*(\d+)\s*)?poz\.\s*(\d+)")
_PUB_PRINT = re.compile(r"Dziennik Ustaw\s+Nr\s+(\d+)\s*[–—-]\s*\d+\s*[–—-]\s*Poz\.\s*(\d+)")
_PUB_NEW_PRINT = re.compile(
    r"DZIENNIK USTAW.{0,80}?Warszawa, dnia \d{1,2} \w+ (\d{4}) r\.\s*Poz\.\s*(\d+)", re.S
)


def detect_year(path: Path, text: str) -> int:
    """Rok z nazwy ``-DU-RRRR-``, inaczej z samego aktu: jego publikator (ten sam co ``dz_u``), data w tytule,
    pierwsze „Dz. U. RRRR” (to bywa akt cytowany, więc na końcu); inaczej 0 – rok nieznany. Nigdy z daty pliku:
    skopiowany regulamin nie jest z tego roku, w którym go skopiowano."""
    match = _DU_NAME.search(path.name)
    if match:
        return int(match.group(1))
    publication = re.match(r"Dz\.U\. (\d{4})", detect_publication(text))
    if publication:
        return int(publication.group(1))
    head = text[:3000]
    for pattern, source in ((_YEAR_IN_DATE, detect_title(text)), (_YEAR_IN_DATE, head), (_DU_TEXT, head)):
        match = pattern.search(source)
        if match:
            return int(match.group(1))
    return UNKNOWN_YEAR


def detect_title(text: str) -> str:
    """Tytuł aktu („USTAWA z dnia … o …”, „ROZPORZĄDZENIE … w sprawie …”) albo pierwsza niepusta linia (nagłówek
    Markdown bez znaków „#”)."""
    lines = [ln.strip() for ln in text[:5000].splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if _ACT_KIND.match(_clean(line)):
            parts = [line]
            for nxt in lines[i + 1 : i + 8]:
                if _TITLE_STOP.match(nxt) or len(" ".join(parts)) > TITLE_MAX_CHARS:
                    break
                parts.append(nxt)
            return _clean(" ".join(parts))[:TITLE_MAX_CHARS]
    # a Markdown heading ("# Regulamin") is the title without its marks
    return _clean(_MD_HEADING.sub("", lines[0]))[:TITLE_MAX_CHARS] if lines else ""


def _clean(text: str) -> str:
    return " ".join(_MARKERS.sub("", text).split())


def detect_type(title: str, text: str) -> str:
    """Rodzaj dokumentu z tytułu i początku tekstu (nigdy z nazwy pliku)."""
    head = f"{title}\n{text[:3000]}".lower()
    low_title = title.lower()
    if "konstytucja" in low_title or re.search(r"^\s*konstytucja\b", text[:3000], re.I | re.M):
        return "konstytucja"
    name = act_name(title).lower()
    # an act named "o zmianie …" amends others; "o ochronie praw lokatorów … i o zmianie Kodeksu cywilnego" is
    # an act of its own that also amends one
    if name.startswith("o zmianie") or (not name and re.search(r"\bo zmianie\b", low_title)):
        return "nowelizacja"
    # the act's own name says it is a code; "… i o zmianie Kodeksu cywilnego" only amends one
    if name.startswith("kodeks") or (not name and "kodeks" in low_title):
        return "kodeks"
    if low_title.startswith("rozporządzenie") or "rozporządzenie" in head[:600]:
        return "rozporzadzenie"
    if "ustawa" in low_title or re.search(r"^\s*ustawa\b", text[:3000], re.I | re.M):
        return "ustawa"
    for kind in ("umowa", "regulamin"):  # a user document named by its own title ("Umowa najmu lokalu")
        if low_title.startswith(kind):
            return kind
    return "dokument"


def detect_publication(text: str) -> str:
    """Publikator aktu, np. „Dz.U. 2009 Nr 52 poz. 417”; pusty napis, gdy tekst go nie podaje."""
    head = text[:4000]
    match = _PUB_KANCELARIA.search(head[:400])
    if match:
        year, number, position = match.groups()
        return f"Dz.U. {year} Nr {number} poz. {position}" if number else f"Dz.U. {year} poz. {position}"
    year = _YEAR_IN_DATE.search(head)
    match = _PUB_PRINT.search(head)
    if match and year:
        return f"Dz.U. {year.group(1)} Nr {match.group(1)} poz. {match.group(2)}"
    match = _PUB_NEW_PRINT.search(head)
    if match:
        return f"Dz.U. {match.group(1)} poz. {match.group(2)}"
    return ""
