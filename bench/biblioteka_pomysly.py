"""Pomysły na ranking w bibliotece (issue 37), sprawdzone na zbiorach dev bez planu – poza produktem.

    python -m bench.biblioteka_pomysly --baza chroma_db_biblioteka [--zapisz]

Listy fuzji produktu (``Searcher.fusion_lists`` i jednostki wskazane z aktem) liczone raz dla każdego pytania
z głębokością 100, potem każdy wariant łączy je inaczej: pierwszy wiersz to dokładnie ranking produktu (RRF k 60,
głębokość 50). Warianty: wybór aktu przed rankingiem (ocena dokumentu z jego najlepszych fragmentów jako mnożnik
albo osobna lista RRF), wygładzanie po sąsiednich artykułach, waga nogi słów, głębokość i stała RRF, wagi list
stopniowanych nazwanego aktu – zwrotów (``frazy/pytanie``) i cytatów pytania (``cytat/pytanie``) – także wybrane
walidacją krzyżową po aktach na siatce obu wag. Wynik: hit@5 / MRR na pięciu zbiorach; ``--zapisz`` wpisuje
tabelę do docs/BENCHMARKS.md (sekcja ``biblioteka-pomysly``).
"""

from __future__ import annotations

import argparse
import os
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import REPO, machine, write_section
from chroma_rag import Index
from chroma_rag.errors import UnknownAct
from chroma_rag.filters import article_key
from chroma_rag.retrieval.calibration import DEFAULT_FUSION
from chroma_rag.retrieval.evaluation import load_questions
from chroma_rag.retrieval.references import check_acts
from chroma_rag.retrieval.search import SearchRequest

DANE = REPO.parent / "shared" / "dane"
SETS = {"egzaminy-dev": DANE / "egzaminy-dev.jsonl", "egzaminy-biblioteka-dev": DANE / "egzaminy-biblioteka-dev.jsonl",
        "odwolania-dev": REPO / "bench" / "odwolania-dev.jsonl", "pytania-dev": DANE / "pytania-dev.jsonl",
        "potoczne-dev": DANE / "potoczne-dev.jsonl"}
LIST_DEPTH = 100
PHRASE_WEIGHTS = (0.0, 2.0, 3.0, 4.0, 6.0)  # 0: the fusion without the phrase list
QUOTE_WEIGHTS = (0.0, 1.0, 2.0, 4.0, 6.0)  # 0: without the quote list
WEIGHT_GRID = [(p, q) for p in PHRASE_WEIGHTS for q in QUOTE_WEIGHTS]


@dataclass
class Case:
    """Pytanie z oczekiwaną jednostką, listami fuzji produktu (źródło, id, udziały listy stopniowanej)
    i (plik, jednostka, ścieżka) ich fragmentów."""

    file: str
    articles: set[str]
    lists: list[tuple[str, list[str], list[float] | None]]
    cited: list[str]
    where: dict[str, tuple[str, str, str]] = field(default_factory=dict)


Scores = dict[str, float]
Variant = Callable[[Case], Scores]


def collect(index: Index) -> dict[str, list[Case]]:
    searcher = index.retrieval.searcher()
    collection = searcher.derived
    cases: dict[str, list[Case]] = {}
    with collection.pinned():
        for name, path in SETS.items():
            cases[name] = []
            for question in load_questions(path):
                if not question.file or question.file not in searcher.titles:
                    continue
                refs = searcher.references(question.text)
                try:
                    check_acts(refs)
                except UnknownAct:
                    continue
                vector = searcher.embedder.embed_query(question.text)
                lists = searcher.fusion_lists(SearchRequest(question.text, 10, question.filters), vector, LIST_DEPTH)
                cited = [hit.id for hit in searcher.cited_units(refs, question.filters, vector)]
                ids = list({i for item in lists for i in item.ids} | set(cited))
                where = {hit.id: (hit.file, hit.art or "", str(hit.metadata.get("sciezka", hit.file)))
                         for hit in collection.hits(ids, vector)}
                cases[name].append(Case(question.file, {article_key(a) for a in question.articles},
                                        [(item.source, item.ids, item.shares) for item in lists], cited, where))
    return cases


def fused(case: Case, depth: int = 50, k: int = 60, keyword_weight: float | None = None,
          weights: tuple[float, float] | None = None) -> Scores:
    """RRF jak ``search.fuse`` bez planu (``weights``: wagi list zwrotów i cytatów zamiast produktu)."""
    scores: Scores = defaultdict(float)
    for source, ids, shares in case.lists:
        weight = DEFAULT_FUSION.weight(source)
        if keyword_weight is not None and source.startswith("slowa"):
            weight = keyword_weight
        if weights is not None and source.startswith(("frazy", "cytat")):
            weight = weights[0] if source.startswith("frazy") else weights[1]
        if shares is not None:
            for chunk_id, share in zip(ids, shares, strict=True):
                scores[chunk_id] += weight * share / (k + 1)
            continue
        for position, chunk_id in enumerate(ids[:depth], start=1):
            scores[chunk_id] += weight / (k + position)
    return scores


def rank(case: Case, scores: Scores) -> int | None:
    seen: set[tuple[str, str]] = set()
    position = 0
    for chunk_id in [*case.cited, *sorted(scores, key=lambda i: -scores[i])]:
        file, art, path = case.where[chunk_id]
        if (path, art or chunk_id) in seen:
            continue
        seen.add((path, art or chunk_id))
        position += 1
        if position > 10:
            return None
        if file == case.file and art and article_key(art) in case.articles:
            return position
    return None


def act_prior(alpha: float, top: int, as_list: bool) -> Variant:
    """Dokument oceniany sumą ``top`` najlepszych wyników swoich fragmentów w pierwszych 50: mnożnik wyniku
    fragmentu (``1 + alpha·ocena/najlepsza``) albo lista RRF dokumentów (``alpha/(5 + miejsce dokumentu)``)."""
    def variant(case: Case) -> Scores:
        scores = fused(case)
        documents: dict[str, list[float]] = defaultdict(list)
        for chunk_id in sorted(scores, key=lambda i: -scores[i])[:50]:
            documents[case.where[chunk_id][2]].append(scores[chunk_id])
        rated = {doc: sum(sorted(values, reverse=True)[:top]) for doc, values in documents.items()}
        best = max(rated.values(), default=1.0)
        places = {doc: n for n, doc in enumerate(sorted(rated, key=lambda d: -rated[d]), start=1)}
        if as_list:
            return {i: s + alpha / (5 + places.get(case.where[i][2], 1000)) for i, s in scores.items()}
        return {i: s * (1 + alpha * rated.get(case.where[i][2], 0.0) / best) for i, s in scores.items()}
    return variant


def neighbours(beta: float) -> Variant:
    """Fragment dostaje ``beta`` razy wyniki artykułów o numerze ±1 w tym samym dokumencie."""
    def number(art: str) -> int | None:
        found = re.match(r"(\d+)", art)
        return int(found.group(1)) if found and "^" not in art else None

    def variant(case: Case) -> Scores:
        scores = fused(case)
        by_number: dict[tuple[str, int], float] = defaultdict(float)
        for chunk_id, score in scores.items():
            _, art, path = case.where[chunk_id]
            if (n := number(art)) is not None:
                by_number[(path, n)] = max(by_number[(path, n)], score)
        result = {}
        for chunk_id, score in scores.items():
            _, art, path = case.where[chunk_id]
            n = number(art)
            near = by_number.get((path, n - 1), 0.0) + by_number.get((path, n + 1), 0.0) if n is not None else 0.0
            result[chunk_id] = score + beta * near
        return result
    return variant


VARIANTS: list[tuple[str, Variant]] = [
    ("produkt (RRF k 60, głębokość 50, waga słów 1,5, zwrotów 4, cytatów 4)", fused),
    *[(f"akt: mnożnik α {a}, {t} najlepsze", act_prior(a, t, False)) for a, t in ((0.25, 1), (0.5, 3), (1.0, 3))],
    *[(f"akt: lista RRF α {a}", act_prior(a, 3, True)) for a in (0.005, 0.02)],
    *[(f"sąsiednie artykuły β {b}", neighbours(b)) for b in (0.1, 0.3)],
    *[(f"waga słów {w}", lambda case, w=w: fused(case, keyword_weight=w)) for w in (1.0, 2.0)],
    *[(f"głębokość {d}, k {k}", lambda case, d=d, k=k: fused(case, d, k)) for d, k in ((30, 20), (100, 20), (100, 60))],
    *[(f"zwroty {p}, cytaty {q}", lambda case, p=p, q=q: fused(case, weights=(p, q)))
      for p, q in WEIGHT_GRID if q == 0 or p == DEFAULT_FUSION.phrase_weight],
]


def phrase_cross_validation(cases: dict[str, list[Case]]) -> tuple[dict[str, list[int | None]],
                                                                   dict[str, tuple[float, float]]]:
    """Wagi list zwrotów i cytatów wybrane po aktach: dla każdego aktu para z ``WEIGHT_GRID``, która na pytaniach
    o inne akty (wszystkie zbiory) daje najwyższą sumę 1/miejsce; pytania o ten akt ocenia wybrana bez nich."""
    everything = [case for found in cases.values() for case in found]
    ranks = {w: {id(case): rank(case, fused(case, weights=w)) for case in everything} for w in WEIGHT_GRID}
    chosen = {}
    for act in sorted({case.file for case in everything}):
        chosen[act] = max(WEIGHT_GRID, key=lambda w: sum(1 / r for case in everything if case.file != act
                                                         and (r := ranks[w][id(case)])))
    return {name: [ranks[chosen[case.file]][id(case)] for case in found] for name, found in cases.items()}, chosen


def cell(ranks: list[int | None]) -> str:
    hit5 = sum(r is not None and r <= 5 for r in ranks) / len(ranks)
    mrr = sum(1 / r for r in ranks if r) / len(ranks)
    return f"{hit5:.3f} / {mrr:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, default=REPO / "chroma_db_biblioteka")
    parser.add_argument("--zapisz", action="store_true")
    args = parser.parse_args()
    os.environ.pop("CHROMA_RAG_LLM_URL", None)
    cases = collect(Index(args.baza))
    header = "| wariant | " + " | ".join(f"{name} ({len(found)})" for name, found in cases.items()) + " |"
    rows = [header, "|---|" + "---|" * len(cases)]
    for label, variant in VARIANTS:
        rows.append(f"| {label} | " + " | ".join(cell([rank(case, variant(case)) for case in found])
                                               for found in cases.values()) + " |")
        print(rows[-1], flush=True)
    validated, chosen = phrase_cross_validation(cases)
    rows.append("| zwroty i cytaty: wagi wybrane po aktach (walidacja krzyżowa) | "
                + " | ".join(cell(validated[name]) for name in cases) + " |")
    weights = ", ".join(f"{p}/{q}: {n}" for (p, q) in WEIGHT_GRID if (n := sum(v == (p, q) for v in chosen.values())))
    table = "\n".join([
        f"Maszyna: {machine()}. `python -m bench.biblioteka_pomysly --baza {args.baza.name} --zapisz`; "
        "hit@5 / MRR, bez planu, zbiory dev (pytania spoza dokumentów pominięte, próg odmowy nie liczony).",
        "", *rows, "", f"Walidacja krzyżowa po aktach ({len(chosen)} aktów z pytaniami): wagi list "
        f"zwrotów/cytatów wybrane bez ocenianego aktu (siatka {len(PHRASE_WEIGHTS)}×{len(QUOTE_WEIGHTS)}) – ile aktów "
        f"wybrało parę: {weights}."])
    if args.zapisz:
        write_section("biblioteka-pomysly", table)
    print(table)


if __name__ == "__main__":
    main()
