"""Gdzie idzie czas zapytania na dużej bazie (docs/BENCHMARKS.md, „Gdzie idzie zimny start przy 1 mln”): świeży
proces mierzy importy, start modelu, pierwsze i drugie wyszukiwanie, potem ciepłe zapytania pod ``cProfile``.

    python bench/profil_skali.py --baza /work/scratch-1m/folder/dane
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # before the imports: a cold process pays for them too

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chroma_rag.api import Index  # noqa: E402

QUESTIONS = ["Jaki jest termin przedawnienia roszczeń?", "Kto odpowiada za szkodę wyrządzoną przez zwierzę?",
             "urlop wypoczynkowy pracownika", "kara pozbawienia wolności za kradzież", "prawo pacjenta do informacji"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baza", type=Path, required=True, help="folder bazy z gotowymi danymi pochodnymi")
    parser.add_argument("--wiersze", type=int, default=14, help="ile najdroższych funkcji wypisać")
    args = parser.parse_args()
    index = Index(args.baza)
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
    print(f"importy i Index: {opened - STARTED:.2f} s, model (5 wektorów pytań): {model - opened:.2f} s, "
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
