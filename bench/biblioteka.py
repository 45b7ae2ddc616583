"""Jakość w bibliotece (issue 37): wszystkie zbiory dev na jednej bazie z 11 PDF-ami i 66 aktami biblioteki.

    python -m bench.biblioteka --baza chroma_db_biblioteka [--zapisz]      (make ocena-biblioteka)

Zbiory: egzaminy pięciu kodeksów z PDF-ów i sześciu kodeksów biblioteki (offline, bez planu), pytania mieszane
i potoczne bez planu i z planami silnego modelu (odtwarzanymi przez testowy serwer czatu, jak ``make ocena-plan``),
zbiór odwołań ``bench/odwolania-dev.jsonl`` (``bench/odwolania.py``). Wiersz: n, hit@1, hit@5, MRR, odmowy pytań
spoza dokumentów. Pod nią czas ``Index.search`` (bez planu, ciepły indeks) na pytanie: egzaminy biblioteki (pytanie
nazywa akt – zwroty i cytaty w całym akcie) i potoczne (nie nazywa). Z ``--zapisz`` tabele trafiają do
docs/BENCHMARKS.md (sekcja ``biblioteka``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bench.common import REPO, machine, median_ms, percentile_ms, write_section
from chroma_rag import Index
from chroma_rag.llm import LlmSettings
from chroma_rag.retrieval.evaluation import load_questions
from tests.llm_server import running_fake_llm
from tests.plan_replay import load_plans, plan_responder

DANE = REPO.parent / "shared" / "dane"
SETS = [
    ("egzaminy-dev", DANE / "egzaminy-dev.jsonl", None),
    ("egzaminy-biblioteka-dev", DANE / "egzaminy-biblioteka-dev.jsonl", None),
    ("odwolania-dev", REPO / "bench" / "odwolania-dev.jsonl", None),
    ("pytania-dev", DANE / "pytania-dev.jsonl", None),
    ("potoczne-dev", DANE / "potoczne-dev.jsonl", None),
    ("pytania-dev + plany", DANE / "pytania-dev.jsonl", DANE / "plany-dev.jsonl"),
    ("potoczne-dev + plany", DANE / "potoczne-dev.jsonl", DANE / "plany-potoczne-dev.jsonl"),
]


def evaluate(index: Index, questions: Path, plans: Path | None) -> dict:
    if plans is None:
        return index.evaluate(questions)
    with running_fake_llm(plan_responder(load_plans(plans))) as server:
        settings = LlmSettings(url=server.url, model="odtworzone-plany-0", max_retries=0)  # its own plan cache
        return index.evaluate(questions, rewrite=True, settings=settings)


TIMED = ["egzaminy-biblioteka-dev", "potoczne-dev"]


def search_seconds(index: Index, questions: Path) -> list[float]:
    """Czas ``Index.search`` (k 5, bez planu) każdego pytania zbioru, w sekundach."""
    samples = []
    for question in load_questions(questions):
        started = time.perf_counter()
        index.search(question.text, k=5)
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, default=REPO / "chroma_db_biblioteka")
    parser.add_argument("--zapisz", action="store_true")
    parser.add_argument("--json", type=Path, help="pełne wyniki (z pudłami) do pliku")
    args = parser.parse_args()
    os.environ.pop("CHROMA_RAG_LLM_URL", None)
    index = Index(args.baza)
    documents = len(index.files())
    rows, full = [], {}
    for name, questions, plans in SETS:
        result = evaluate(index, questions, plans)
        full[name] = result
        refusals = result["odmowy"]
        refused = f"{refusals['poprawne']}/{refusals['spoza']}" if refusals["spoza"] else "–"
        rows.append(f"| {name} | {result['n']} | {result['hit@1']:.3f} | {result['hit@5']:.3f} | {result['mrr']:.3f} "
                    f"| {refused} | {refusals['utracone_trafienia']} |")
        print(rows[-1], flush=True)
    if args.json:
        args.json.write_text(json.dumps(full, ensure_ascii=False, indent=1), encoding="utf-8")
    paths = {name: questions for name, questions, plans in SETS if plans is None}
    timings = []
    for name in TIMED:
        samples = search_seconds(index, paths[name])
        timings.append(f"| {name} | {len(samples)} | {median_ms(samples):.1f} | {percentile_ms(samples, 0.95):.1f} |")
        print(timings[-1], flush=True)
    table = "\n".join([
        f"Maszyna: {machine()}. Baza `{args.baza.name}`: {documents} dokumentów, "
        f"`python -m bench.biblioteka --baza {args.baza.name} --zapisz` (`make ocena-biblioteka ZAPISZ=1`). "
        "Zbiory dev – strojone na nich liczby nie są wynikami.",
        "",
        "| zbiór | n | hit@1 | hit@5 | MRR | odmowy spoza | utracone trafienia |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        "Czas wyszukiwania (`Index.search`, k 5, bez planu, ciepły indeks; ta sama maszyna, w tym samym przebiegu):",
        "",
        "| zbiór | pytań | mediana ms | p95 ms |",
        "| --- | --- | --- | --- |",
        *timings,
    ])
    if args.zapisz:
        write_section("biblioteka", table)
    print(table)


if __name__ == "__main__":
    main()
