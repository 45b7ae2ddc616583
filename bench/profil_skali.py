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

from bench.common import process_age_s
from chroma_rag.api import Index

QUESTIONS = ["Jaki jest termin przedawnienia roszczeń?", "Kto odpowiada za szkodę wyrządzoną przez zwierzę?",
             "urlop wypoczynkowy pracownika", "kara pozbawienia wolności za kradzież", "prawo pacjenta do informacji"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baza", type=Path, required=True, help="folder bazy z gotowymi danymi pochodnymi")
    parser.add_argument("--wiersze", type=int, default=14, help="ile najdroższych funkcji wypisać")
    args = parser.parse_args()
    index = Index(args.baza)
    imports_and_open = process_age_s()  # since the process started: interpreter, imports, Index
    opened = time.perf_counter()
    vectors = {q: index.embedder.embed_query(q) for q in QUESTIONS}
    model = time.perf_counter()
    embed = index.embedder.embed_query
    index.embedder.embed_query = lambda text: vectors[text] if text in vectors else embed(text)
    times = []
    for question in QUESTIONS[:2]:
        started = time.perf_counter()
        index.search(question, k=10, threshold=None)
        times.append(time.perf_counter() - started)
    print(f"importy i Index: {imports_and_open:.2f} s, model (5 wektorów pytań): {model - opened:.2f} s, "
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
