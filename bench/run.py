"""`make bench`: czasy startu CLI, zimnego i ciepłego wyszukiwania oraz etapów indeksowania.

Wynik trafia do docs/BENCHMARKS.md (sekcja „podstawy”). Uruchomienie: `.venv/bin/python -m bench.run`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import USTAWY, machine, median_ms, percentile_ms, write_section
from chroma_rag import Index

FILES = ["prawa-pacjenta-DU-2009-417.pdf", "ochrona-danych-osobowych-DU-1997-883.pdf"]
QUESTIONS = [
    "Czy mogę dostać kopię mojej dokumentacji medycznej?",
    "Kto odpowiada za bezpieczeństwo danych osobowych w firmie?",
    "Czy lekarz musi mi powiedzieć, co mi dolega?",
    "Jak złożyć skargę do Rzecznika Praw Pacjenta?",
    "Czy mogę nie zgodzić się na operację?",
]
CLI = [str(Path(sys.executable).with_name("chroma-rag"))]


def timed_runs(command: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "db"
        index = Index(db)
        started = time.perf_counter()
        report = index.add([USTAWY / name for name in FILES])
        total = time.perf_counter() - started

        help_s = timed_runs([*CLI, "--help"], 7)
        cold_s = timed_runs([*CLI, "szukaj", QUESTIONS[0], "--baza", str(db), "--json"], 5)
        index.search(QUESTIONS[0])  # warm-up: model and client loaded once per process
        warm = []
        for _ in range(10):
            for question in QUESTIONS:
                t0 = time.perf_counter()
                index.search(question, k=5)
                warm.append(time.perf_counter() - t0)

    pages, chunks = report.pages, report.chunks
    stage_rows = "\n".join(
        f"| {stage} | {seconds:.2f} | {seconds / pages * 1000:.1f} | {seconds / chunks * 1000:.1f} |"
        for stage, seconds in report.seconds.items()
    )
    body = f"""Maszyna: {machine()}. Polecenie: `make bench` (`python -m bench.run`). Mediany z kilku uruchomień;
maszyny są współdzielone i hałaśliwe, więc liczą się rzędy wielkości i proporcje.

| pomiar | wynik | cel |
|---|---|---|
| `chroma-rag --help` (mediana z 7) | {median_ms(help_s):.0f} ms | ≤ 500 ms |
| zimny `chroma-rag szukaj … --json` (mediana z 5, cały proces) | {median_ms(cold_s):.0f} ms | ≤ 2500 ms |
| ciepłe zapytanie w procesie, p50 (50 zapytań) | {median_ms(warm):.1f} ms | ≤ 50 ms |
| ciepłe zapytanie w procesie, p95 | {percentile_ms(warm, 0.95):.1f} ms | |

Indeksowanie {", ".join(FILES)}: {pages} stron, {chunks} fragmentów, razem {total:.1f} s.

| etap | s | ms / stronę | ms / fragment |
|---|---|---|---|
{stage_rows}
"""
    write_section("podstawy", body)
    print(body)


if __name__ == "__main__":
    main()
