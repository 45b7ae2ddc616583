"""Filtry wyszukiwania i ich tłumaczenie na składnię ``where`` Chromy (stosowaną przed podobieństwem)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from .errors import FiltersMatchNothing

_SUPERSCRIPT_CHARS = "⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"
_SUPERSCRIPTS = str.maketrans(_SUPERSCRIPT_CHARS, "0123456789abcdefghijklmnoprstuvwxyz")
# a unit's superscript as people type it, right after its number: "385^1", "385¹", "385[1]", "385(1)" (pasted from
# a web page), "385 ind. 1" (written out), "18^3d", "18³ᵈ" (the letters have no q)
SUPERSCRIPT_PATTERN = (r"\(\d+[a-z]?\)|\s*(?:(?:\^|ind\.?|indeks)\s*\d+[a-z]?|\[\d+[a-z]?\]|["
                       + _SUPERSCRIPT_CHARS[:10] + "]+[" + _SUPERSCRIPT_CHARS[10:] + "]?)")
# "22 1", "449 1 kc": a superscript pasted from a PDF as a space and its digits – in a unit filter always (it holds
# one number), in a question only right before an act or a qualifier (references._PASTED_SUPERSCRIPT)
PASTED_SUPERSCRIPT = r"\d{1,2}[a-z]?"
_FOLD = str.maketrans("łŁ", "lL")
# The CLI's sentence (szukaj, pytaj) when the filters themselves match no chunk; the page and MCP say it their
# own way (FiltersMatchNothing.message).
FILTERS_MATCH_NOTHING = FiltersMatchNothing().message("cli")


@dataclass
class SearchFilters:
    """Ograniczenia podane przez użytkownika; puste pola nic nie ograniczają."""

    files: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    year: int | None = None
    year_from: int | None = None
    year_to: int | None = None
    articles: list[str] = field(default_factory=list)
    include_repealed: bool = False
    paths: list[str] = field(default_factory=list)  # full paths (the registry key), e.g. one of two same names
    acts: list[str] = field(default_factory=list)  # acts by name or abbreviation ("kpc"), resolved to ``files``

    def where_conditions(self) -> list[dict[str, Any]]:
        conditions: list[dict[str, Any]] = []
        by_file = [_one_of(key, values) for key, values in (("plik", self.files), ("sciezka", self.paths)) if values]
        if by_file:  # a name or a path: either selects the file
            conditions.append(by_file[0] if len(by_file) == 1 else {"$or": by_file})
        if self.types:
            conditions.append(_one_of("typ", self.types))
        if self.year is not None:
            conditions.append({"rok": self.year})
        if self.year_from is not None:
            conditions.append({"rok": {"$gte": self.year_from}})
        if self.year_to is not None:
            conditions.append({"rok": {"$lte": self.year_to}})
        if self.articles:
            conditions.append(_one_of("art", [v for a in self.articles for v in _article_variants(a)]))
        return conditions


def fold(text: str) -> str:
    """Postać do porównań tego, co wpisał użytkownik: małe litery bez polskich znaków (``Rozporządzenie`` →
    ``rozporzadzenie``)."""
    decomposed = unicodedata.normalize("NFKD", text.strip().translate(_FOLD).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def build_where(filters: SearchFilters) -> dict[str, Any] | None:
    """Jeden obiekt ``where``: Chroma przyjmuje jeden klucz najwyższego poziomu, więc kilka warunków
    łączymy w ``$and``. Uchylone jednostki są wykluczane, o ile użytkownik nie poprosi inaczej."""
    conditions = filters.where_conditions()
    if not filters.include_repealed:
        conditions.append({"uchylony": {"$ne": True}})
    if not conditions:
        return None
    if len(conditions) == 1:
        return conditions[0]
    return {"$and": conditions}


def _one_of(key: str, values: list[Any]) -> dict[str, Any]:
    unique = list(dict.fromkeys(values))
    return {key: unique[0]} if len(unique) == 1 else {key: {"$in": unique}}


def _article_variants(raw: str) -> list[str]:
    """``--art 6`` ma trafić i w „Art. 6”, i w „§ 6” rozporządzenia; ``§ 6`` – tylko w paragraf, ``art. 6`` –
    tylko w artykuł."""
    unit = normalize_article(raw)
    if unit.startswith("§"):
        return [unit]
    if re.match(r"\s*(art\.?|artykuł)", raw, re.IGNORECASE):
        return [unit]
    return [unit, f"§ {unit}"]


# "§ 1", "ust. 2", "pkt 3", "lit. a", "zd. 2" after the unit's number, in any sequence
_SUBDIVISIONS = r"(?:\s*(?:§|ust\.?|pkt|lit\.?|zd\.?|zdanie)\s*[0-9a-z^]+\.?\)?)*"

# a unit's number, its superscript in any written form and the subdivisions a lawyer cites after it
_UNIT_NUMBER = re.compile(r"(\d+[a-z]*)(" + SUPERSCRIPT_PATTERN + r"|\s+" + PASTED_SUPERSCRIPT + r")?" + _SUBDIVISIONS)


def normalize_article(raw: str) -> str:
    """Numer jednostki w postaci zapisanej w bazie: ``385^1`` z ``385¹``/``385[1]``/``385 ind. 1``/``art. 385^1``
    i z indeksu wklejonego z PDF-u spacją (``385 1``),
    ``§ 6`` z ``§6``/``par. 6``; litery małe (``178A`` → ``178a``). Część jednostki, jak ją cytuje prawnik
    (``art. 148 § 1``, ``art. 24 ust. 1 pkt 2``), to cała jednostka: w bazie jest jeden numer na artykuł."""
    text = raw.strip().lower()
    is_paragraph = text.startswith(("§", "par"))
    text = re.sub(r"^(artykuł|art\.?|§|paragraf|par\.?)\s*", "", text).strip().rstrip(".")
    match = _UNIT_NUMBER.fullmatch(text)
    if not match:
        return raw.strip()
    number, written = match.groups()
    # "(1)", "^ 1", "ind. 1", "[1]", "¹ᵈ" → "1", "1d"
    superscript = re.sub(r"[\s()\[\]^]|ind(?:eks|\.)?", "", written).translate(_SUPERSCRIPTS) if written else ""
    unit = f"{number}^{superscript}" if superscript else number
    return f"§ {unit}" if is_paragraph else unit


def article_key(article: str) -> str:
    """Klucz do porównywania numerów: bez spacji i znaku ``§`` (``"§ 6"`` == ``"6"``)."""
    return normalize_article(article).replace("§", "").replace(" ", "")
