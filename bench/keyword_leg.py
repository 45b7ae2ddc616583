"""Noga słów na kolekcji z bench/scale.py (np. 1 mln fragmentów): mediana i p95 ``Searcher.keyword_ids`` dla kilku
rodzajów filtra, 40 pytań na rodzaj (wycinki ustaw z ``scale_data``), i same wyniki – żeby porównać dwie wersje
kodu na tych samych danych (wyniki muszą być identyczne, czasy nie).

    python -m bench.keyword_leg --scratch /work/scratch-1m --wynik nowy.json
    PYTHONPATH=<stara kopia repozytorium>:. python -P -m bench.keyword_leg --scratch /work/scratch-1m --wynik stary.json
    python -m bench.keyword_leg --porownaj stary.json nowy.json

(``-P``: bieżący folder nie trafia na początek ścieżki importu, więc ``chroma_rag`` stara kopia, a ``bench`` z ``.``.)

Czas to drugie wywołanie tego samego pytania z tym samym filtrem (pierwsze ustala wybór fragmentów filtra –
osobny koszt, zapamiętany na kolejne pytania).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import scale_data

QUESTIONS = 40


def kinds(rng: np.random.Generator) -> dict[str, Callable[[], dict[str, Any]]]:
    """Rodzaj filtra → losowanie argumentów ``SearchFilters`` (udziały jak w bench/scale_large.py)."""
    return {
        "brak": lambda: {},
        "plik (0,1 %)": lambda: {"files": [f"plik-{int(rng.integers(scale_data.FILES)):04d}.pdf"]},
        "typ rozporządzenie (10 %)": lambda: {"types": ["rozporzadzenie"]},
        "rok (2,9 %)": lambda: {"year": int(rng.integers(scale_data.YEARS[0], scale_data.YEARS[1] + 1))},
        "jednostka (1 %)": lambda: {"articles": [str(int(rng.integers(1, scale_data.ARTICLES + 1)))]},
        "od roku 2007 (50 %)": lambda: {"year_from": 2007},
    }


def measure(scratch: Path) -> dict[str, Any]:
    from chroma_rag.api import Index
    from chroma_rag.filters import SearchFilters, build_where

    texts = scale_data.source(scratch).query_texts
    index = Index(scratch / "folder" / "dane")
    searcher, collection = index.retrieval.searcher(), index.retrieval.derived()
    found: dict[str, Any] = {}
    for name, draw in kinds(np.random.default_rng(7)).items():
        times, results = [], []
        for q in range(QUESTIONS):
            where = build_where(SearchFilters(**draw()))
            with collection.pinned():
                searcher.keyword_ids(texts[q % len(texts)], searcher.fusion.depth, where)
                started = time.perf_counter()
                results.append(searcher.keyword_ids(texts[q % len(texts)], searcher.fusion.depth, where))
                times.append(time.perf_counter() - started)
        found[name] = {"mediana_ms": round(float(np.median(times)) * 1000, 1),
                       "p95_ms": round(float(np.percentile(times, 95)) * 1000, 1), "wyniki": results}
    return found


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = ["| filtr | wyniki | mediana ms | p95 ms |", "|---|---|---|---|"]
    for name, old in before.items():
        new = after[name]
        same = "te same" if old["wyniki"] == new["wyniki"] else "**różne**"
        lines.append(f"| {name} | {same} | {old['mediana_ms']} → {new['mediana_ms']} | "
                     f"{old['p95_ms']} → {new['p95_ms']} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path, help="folder kolekcji bench/scale.py")
    parser.add_argument("--wynik", type=Path, help="plik JSON z czasami i wynikami")
    parser.add_argument("--porownaj", type=Path, nargs=2, metavar=("PRZED", "PO"))
    args = parser.parse_args()
    if args.porownaj:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.porownaj)
        print("\n".join(compare(before, after)))
        return
    if args.scratch is None or args.wynik is None:
        parser.error("podaj --scratch i --wynik albo --porownaj PRZED PO")
    found = measure(args.scratch)
    args.wynik.write_text(json.dumps(found), encoding="utf-8")
    for name, value in found.items():
        print(f"{name}: mediana {value['mediana_ms']} ms, p95 {value['p95_ms']} ms")


if __name__ == "__main__":
    main()
