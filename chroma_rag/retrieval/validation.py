"""Wartości podane przez użytkownika (filtry, tryb, liczby) sprawdzane i sprowadzane do postaci z bazy,
zanim trafią do wyszukiwania – w API, więc tak samo dla CLI i serwera HTTP. Zła wartość to błąd wywołania
(kod 2) z listą dozwolonych, a nie pusty wynik, który wygląda jak „nie ma tego w dokumentach”."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from ..filters import SearchFilters, fold
from ..ingest.metadata import DOCUMENT_TYPES
from ..models import paths_named
from .references import resolve_act
from .search import MODES, check_known_files

MIN_YEAR, MAX_YEAR = 1000, 9999


def choice(value: str, allowed: Sequence[str], option: str, what: str) -> str:
    """Wartość z ``allowed`` pasująca bez względu na wielkość liter i polskie znaki; inaczej błąd wywołania
    (``option`` – opcja CLI, ``what`` – ta sama rzecz słowami strony i MCP: „tryb wyszukiwania”)."""
    folded = fold(value)
    for candidate in allowed:
        if fold(candidate) == folded:
            return candidate
    close = difflib.get_close_matches(folded, list(allowed), n=1, cutoff=0.6)
    rest = f"; dozwolone: {', '.join(allowed)}.{f' Może chodziło o: {close[0]}?' if close else ''}"
    raise UsageError(f"Nieznana wartość {option} „{value}”{rest}", web=f"Nieznany {what} „{value}”{rest}")


def normalize_mode(mode: str) -> str:
    return choice(mode, MODES, "--tryb", "tryb wyszukiwania")


def normalize_type(doc_type: str) -> str:
    return choice(doc_type, DOCUMENT_TYPES, "--typ", "rodzaj dokumentu")


def check_count(k: int, option: str = "-k/--ile") -> None:
    if k < 1:
        raise UsageError(f"Liczba wyników ({option}) musi być dodatnia, a podano {k}.",
                         web=f"Liczba wyników musi być dodatnia, a podano {k}.")


def check_threshold(threshold: float | None) -> None:
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise UsageError(f"Próg (--prog) to podobieństwo od 0 do 1 (0 wyłącza próg), a podano {threshold:g}.",
                         web=f"Próg to podobieństwo od 0 do 1 (0 wyłącza próg), a podano {threshold:g}.")


def checked_search(
    k: int, mode: str, threshold: float | None, filters: SearchFilters | None
) -> tuple[str, SearchFilters | None]:
    """Parametry jednego wyszukiwania sprawdzone; zwraca tryb i filtry w postaci z bazy."""
    check_count(k)
    check_threshold(threshold)
    return normalize_mode(mode), normalize_filters(filters)


def normalize_filters(filters: SearchFilters | None) -> SearchFilters | None:
    """Typy w postaci z bazy, lata sprawdzone (zakres i zgodność ``--rok`` z ``--od-roku``/``--do-roku``)."""
    if filters is None:
        return None
    for option, year in (("--rok", filters.year), ("--od-roku", filters.year_from), ("--do-roku", filters.year_to)):
        if year is not None and not MIN_YEAR <= year <= MAX_YEAR:
            raise UsageError(f"Rok ({option}) musi być liczbą od {MIN_YEAR} do {MAX_YEAR}, a podano {year}.",
                             web=f"Rok musi być liczbą od {MIN_YEAR} do {MAX_YEAR}, a podano {year}.")
    low, high = filters.year_from, filters.year_to
    if low is not None and high is not None and low > high:
        raise UsageError(f"--od-roku {low} jest późniejszy niż --do-roku {high} – zamień je miejscami.",
                         web=f"Rok początkowy {low} jest późniejszy niż końcowy {high} – zamień je miejscami.")
    year = filters.year
    if year is not None and ((low is not None and year < low) or (high is not None and year > high)):
        bounds = " ".join(f"{o} {v}" for o, v in (("--od-roku", low), ("--do-roku", high)) if v is not None)
        span = f"{low if low is not None else '…'}–{high if high is not None else '…'}"
        raise UsageError(f"--rok {year} wyklucza się z {bounds} – podaj albo rok, albo zgodny zakres lat.",
                         web=f"Rok {year} wychodzi poza zakres lat {span} – podaj albo rok, albo zgodny zakres.")
    types = list(dict.fromkeys(normalize_type(t) for t in filters.types))
    return replace(filters, types=types)


def resolve_files(
    filters: SearchFilters, indexed: Iterable[tuple[str, str]], holders: dict[str, str] | None = None
) -> SearchFilters:
    """``--plik`` jako nazwy (i ścieżki) z indeksu: dokładna nazwa, ścieżka podana przy indeksowaniu, nazwa
    z folderem jak w cytacie („it/regulamin.md”), nazwa w innej wielkości liter albo bez rozszerzenia,
    jednoznaczny początek nazwy. Wieloznaczny – błąd z listą kandydatów; nieznany – błąd z najbliższymi nazwami.
    ``indexed``: pary (nazwa, ścieżka) z rejestru; ``holders``: druga ścieżka dokumentu → ścieżka, pod którą są
    jego fragmenty (``documents.py``)."""
    holders = holders or {}
    pairs = list(indexed)
    names = sorted({name for name, _ in pairs})
    paths = {path for _, path in pairs}
    found_names: list[str] = []
    found_paths: list[str] = []
    for requested in filters.files:
        path = None if requested in names else indexed_path(requested, paths)
        if path is not None:
            found_paths.append(holders.get(path, path))
            continue
        name = requested if requested in names else resolve_name(requested, names)
        if any(n == name and p not in holders for n, p in pairs):
            found_names.append(name)
        found_paths.extend(holders[p] for n, p in pairs if n == name and p in holders)
    return replace(filters, files=list(dict.fromkeys(found_names)), paths=list(dict.fromkeys(found_paths)))


def indexed_path(requested: str, paths: set[str]) -> str | None:
    """Ścieżka zaindeksowanego pliku, którą wskazuje ``requested``: ścieżka (też względna albo z ~) albo nazwa
    z folderem, jak w cytacie („it/regulamin.md”), gdy pasuje do jednego pliku; ``None`` – rozstrzyga nazwa."""
    for path in (requested, _as_key(requested)):  # as written first: a link's own path, not its target's
        if path in paths:
            return path
    by_folder = paths_named(requested, paths) if re.search(r"[\\/]", requested) else []
    return by_folder[0] if len(by_folder) == 1 else None


def _as_key(requested: str) -> str:
    try:
        return str(Path(requested).expanduser().resolve())
    except (OSError, RuntimeError):
        return requested


_CANDIDATES_SHOWN = 10  # names listed when a prefix fits more files: the rest are in ``lista``


def resolve_name(requested: str, names: list[str]) -> str:
    """Nazwa pliku z indeksu dla tego, co wpisał użytkownik: dokładna, bez rozszerzenia, inną wielkością liter
    albo jednoznaczny początek; wieloznaczna lub nieznana – błąd z kandydatami."""
    folded = fold(requested)
    same = [n for n in names if folded in _spellings(n)]
    candidates = same or [n for n in names if fold(n).startswith(folded)]
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > _CANDIDATES_SHOWN:  # a library's common prefix ("prawo", "o-") would fill the screen
        shown = f"{', '.join(candidates[:_CANDIDATES_SHOWN])} i {len(candidates) - _CANDIDATES_SHOWN} innych"
        said = f"Nazwa „{requested}” pasuje do {len(candidates)} plików, m.in.: {shown} – podaj dłuższy początek nazwy"
        raise UsageError(f"{said} albo pełną nazwę; wszystkie pliki pokazuje: chroma-rag lista.",
                         web=f"{said} albo wybierz plik z listy filtrów.",
                         mcp=f"{said} albo pełną nazwę; wszystkie pliki podaje narzędzie lista_plikow.")
    if candidates:
        raise UsageError(
            f"Nazwa „{requested}” pasuje do kilku plików: {', '.join(candidates)} – podaj pełną nazwę jednego z nich."
        )
    check_known_files(names, [requested])  # raises: unknown, with the closest names
    raise AssertionError("unreachable")


_PUBLICATION_SUFFIX = re.compile(r"-DU-\d{4}-\d+(?=\.[^.]*$|$)", re.IGNORECASE)


def _spellings(name: str) -> set[str]:
    """Zapisy nazwy pliku, które wskazują go jednoznacznie: pełna, bez rozszerzenia i bez przyrostka
    Dziennika Ustaw („prawa-pacjenta.pdf”, „prawa-pacjenta” dla „prawa-pacjenta-DU-2009-417.pdf”)."""
    short = _PUBLICATION_SUFFIX.sub("", name)
    return {fold(n) for n in (name, Path(name).stem, short, Path(short).stem)}


def resolve_acts(filters: SearchFilters, titles: dict[str, str]) -> SearchFilters:
    """``--akt`` (nazwa albo skrót aktu: „kpc”, „k.p.c.”, „ustawa o własności lokali”) jako pliki tych aktów,
    dołożone do ``--plik``; akt spoza indeksu to błąd z jednym zdaniem."""
    acts = [act for act in filters.acts if act.strip()]  # an empty value limits nothing, as in the page's address
    if not acts:
        return replace(filters, acts=[])
    files = [f for act in acts for f in resolve_act(act, titles)]
    return replace(filters, files=list(dict.fromkeys([*filters.files, *files])), acts=[])
