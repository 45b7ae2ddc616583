"""Wyszukiwanie w kilku bazach naraz: ``GET /api/szukaj?q=…&bazy=spory&bazy=umowy`` na serwerze z ``--bazy``.

Tylko na życzenie – bez ``bazy`` wyszukiwanie nie wychodzi poza bazę z adresu (``/b/NAZWA/api/szukaj``) – i tylko
w bazach, które ten, kto pyta, może czytać (o innej słyszy to samo co o nieistniejącej). Każda baza szuka u siebie
tym samym pytaniem i filtrami; listy łączy ich własny ranking, a każde trafienie mówi, z której bazy jest."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api import Index
from ..errors import UserError
from ..models import Hit, SearchResult, ShownNames
from .documents import team_names
from .params import BadRequest, Query

MAX_BASES = 20  # more than a firm's departments; the bound keeps one request from running every search at once


def asked_bases(values: list[str], may_read: Callable[[str], bool], known: dict[str, Index]) -> list[str] | None:
    """Bazy z parametru ``bazy`` (w kolejności, bez powtórzeń); ``None``, gdy któraś nie istnieje albo nie wolno jej
    czytać – wtedy odpowiedź jest taka sama jak o nieistniejącej bazie."""
    names = list(dict.fromkeys(value.strip() for value in values if value.strip()))
    if not names:
        raise BadRequest("Podaj bazy do przeszukania w polu „bazy” (można kilka: bazy=spory&bazy=umowy) – "
                         "bez niego wyszukiwanie zostaje w jednej bazie pod /b/NAZWA/api/szukaj.")
    if len(names) > MAX_BASES:
        raise BadRequest(f"Za dużo baz naraz (najwyżej {MAX_BASES}).")
    if any(name not in known or not may_read(name) for name in names):
        return None
    return names


def search_bases(indexes: dict[str, Index], query: Query) -> dict[str, Any]:
    """Jedno wyszukiwanie w każdej bazie i ``query.k`` najlepszych trafień wszystkich razem (pole ``baza``).

    Filtr pliku albo aktu zwykle należy do jednej bazy: baza, która go nie zna, nic nie dodaje; błąd filtra
    wraca dopiero wtedy, gdy nie zna go żadna."""
    results: dict[str, SearchResult] = {}
    names: dict[str, ShownNames] = {}
    refused: list[UserError] = []
    for name, index in indexes.items():
        try:
            results[name] = index.search(query.question, query.k, query.filters, query.mode)
        except UserError as exc:
            refused.append(exc)
            continue
        names[name] = team_names(index)
    if not results:
        raise refused[0]
    ranked = sorted(((hit, name, position) for name, result in results.items()
                     for position, hit in enumerate(result)), key=_merge_key)
    reasons = {result.reason for result in results.values() if result.reason}
    return {
        "wyniki": [{**names[name].hit(hit.to_json()), "baza": name} for hit, name, _ in ranked[: query.k]],
        "powod": None if ranked else ("prog" if "prog" in reasons else "filtry"),
        "bazy": list(indexes),
    }


def _merge_key(entry: tuple[Hit, str, int]) -> tuple[bool, float, int, float]:
    # Each base ranks by its own fused score (hybrid: reciprocal ranks of the same two lists, so comparable across
    # bases built with one model; vector mode: 0, then the cosine similarity decides). A unit the question cites
    # ("art 90 kc") stays first, as in one base; equal scores keep each base's own order.
    hit, _, position = entry
    return (not hit.cited, -hit.score, position, -hit.similarity)
