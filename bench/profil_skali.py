"""Gdzie idzie czas zapytania na dużej bazie (docs/BENCHMARKS.md, „Gdzie idzie zimny start przy 1 mln”): świeży
proces mierzy importy, start modelu, pierwsze i drugie wyszukiwanie, potem ciepłe zapytania pod ``cProfile``.

    python -m bench.profil_skali --baza /work/scratch-1m/folder/dane
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from bench.common import KnownVectors, process_age_s
from chroma_rag.api import Index
from chroma_rag.embedding.embedder import LocalE5Embedder

QUESTIONS = ["Jaki jest termin przedawnienia roszczeń?", "Kto odpowiada za szkodę wyrządzoną przez zwierzę?",
             "urlop wypoczynkowy pracownika", "kara pozbawienia wolności za kradzież", "prawo pacjenta do informacji"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baza", type=Path, required=True, help="folder bazy z gotowymi danymi pochodnymi")
    parser.add_argument("--wiersze", type=int, default=14, help="ile najdroższych funkcji wypisać")
    args = parser.parse_args()
    embedder = KnownVectors(LocalE5Embedder())  # question vectors computed once: the search is measured alone
    index = Index(args.baza, embedder=embedder)
    imports_and_open = process_age_s()  # since the process started: interpreter, imports, model, Index
    opened = time.perf_counter()
    embedder.remember_queries(QUESTIONS)
    model = time.perf_counter()
    times = []
    for question in QUESTIONS[:2]:
        started = time.perf_counter()
        index.search(question, k=10, threshold=None)
        times.append(time.perf_counter() - started)
    print(f"importy, model i Index: {imports_and_open:.2f} s, wektory 5 pytań: {model - opened:.2f} s, "
          f"pierwsze wyszukiwanie: {times[0]:.2f} s, drugie: {times[1]:.2f} s")
    profile, warm = cProfile.Profile(), []
    for question in QUESTIONS * 2:
        started = time.perf_counter()
        profile.enable()
        index.search(question, k=10, threshold=None)
        profile.disable()
        warm.append(time.perf_counter() - started)
    print("ciepłe zapytania (s):", " ".join(f"{t:.3f}" for t in warm))
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.wiersze)


if __name__ == "__main__":
    main()
