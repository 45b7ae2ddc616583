"""`make bench-serwuj`: czasy `GET /api/szukaj` prawdziwego `chroma-rag serwuj` (ciepłe; 1 klient i 8 naraz;
domyślna liczba procesów i jeden).

Uruchomienie: `.venv/bin/python -m bench.serwuj --baza chroma_db_ocena [--zapisz]`; z `--zapisz` wynik trafia do
docs/BENCHMARKS.md (sekcja „serwuj”).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.common import free_port, machine, median_ms, percentile_ms, write_section
from bench.run import QUESTIONS as BASIC_QUESTIONS
from chroma_rag.serving.workers import default_processes

QUESTIONS = [
    *BASIC_QUESTIONS,
    "Ile lat więzienia grozi za kradzież?",
    "Kiedy małżonkowie mogą otrzymać rozwód?",
    "Jaka jest kara za jazdę rowerem po alkoholu?",
]
CLI = str(Path(sys.executable).with_name("chroma-rag"))


def wait_until_up(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/api/pliki", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"serwer nie odpowiada na {url}")


def timed_search(client: httpx.Client, url: str, question: str) -> float:
    started = time.perf_counter()
    response = client.get(f"{url}/api/szukaj", params={"q": question, "k": 5})
    response.raise_for_status()
    return time.perf_counter() - started


def sequential(url: str, rounds: int) -> list[float]:
    with httpx.Client(timeout=60) as client:
        return [timed_search(client, url, q) for _ in range(rounds) for q in QUESTIONS]


def concurrent(url: str, clients: int, rounds: int) -> tuple[list[float], float]:
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        runs = list(pool.map(lambda _: sequential(url, rounds), range(clients)))
    return [s for run in runs for s in run], time.perf_counter() - started


def row(processes: str, clients: str, samples: list[float], wall: float) -> str:
    p50, p95 = median_ms(samples), percentile_ms(samples, 0.95)
    return (f"| {processes} | {clients} | {len(samples)} | {p50:.0f} ms | {p95:.0f} ms | "
            f"{len(samples) / wall:.1f} zapytań/s |")


def measure(db: Path, processes: int | None, rounds: int) -> tuple[list[dict], list[float], list[float], float]:
    """Pliki bazy, czasy 1 klienta, czasy 8 klientów naraz i ich czas całkowity dla `serwuj` z `--procesy`."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [CLI, "serwuj", "--baza", str(db), "--port", str(port)]
    command += ["--procesy", str(processes)] if processes else []
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(url, process)
        files = httpx.get(f"{url}/api/pliki").json()
        concurrent(url, 8, 1)  # warm every worker process: model, keyword index, snapshot
        one = sequential(url, rounds)
        many, wall = concurrent(url, 8, rounds)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return files, one, many, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--rundy", type=int, default=5, help="ile razy każde z pytań (na klienta)")
    parser.add_argument("--zapisz", action="store_true", help="zapisz wynik w docs/BENCHMARKS.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # before the server starts: what the neighbours put on the machine
    rows, ratios = [], {}
    default = f"domyślnie ({default_processes()})"
    for processes, label in ((None, default), (1, "1")):
        files, one, many, wall = measure(args.baza, processes, args.rundy)
        ratios[label] = (len(many) / wall) / (len(one) / sum(one))
        rows += [row(label, "1", one, sum(one)), row(label, "8 naraz", many, wall)]
    chunks = sum(f["fragmenty"] for f in files)
    table = "\n".join(rows)
    body = f"""Maszyna: {machine()}; load average przed pomiarem ≈ {load:.1f}. Baza: `{args.baza}` –
plików: {len(files)}, fragmentów: {chunks}. Polecenie: `.venv/bin/python -m bench.serwuj --baza {args.baza} --zapisz`
(prawdziwy `chroma-rag serwuj` w podprocesie – z domyślną liczbą procesów i z `--procesy 1` – klient httpx po
pętli zwrotnej, tryb hybrydowy, k=5, {len(QUESTIONS)} pytań × {args.rundy} rund na klienta, po rozgrzewce).

| `--procesy` | klienci | zapytań | p50 | p95 | przepustowość |
| --- | --- | ---: | ---: | ---: | ---: |
{table}

Stosunek przepustowości 8 klientów do 1: **{ratios[default]:.2f}×** przy domyślnej liczbie procesów,
{ratios["1"]:.2f}× przy jednym (na maszynie dzielonej z innymi procesami – patrz load average – liczy się raczej
stosunek niż wartości bezwzględne). Procesy robocze (issue 23, `serving/workers.py`) liczą jedno zapytanie na
jednym rdzeniu, a zapytania różnych klientów – na różnych; w jednym procesie wyszukiwania też biegną równolegle
(`serving/shared_index.py`), ale dzielą jeden GIL. Plan od modelu czatu, odpowiedź modelu i obsługa HTTP są poza
wszelką blokadą indeksu.
"""
    print(body)
    if args.zapisz:
        write_section("serwuj", body)


if __name__ == "__main__":
    main()
