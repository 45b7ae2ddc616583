"""`make bench-serwuj`: czasy `GET /api/szukaj` prawdziwego `chroma-rag serwuj` (ciepłe; 1 klient i 8 naraz).

Uruchomienie: `.venv/bin/python bench/serwuj.py --baza chroma_db_ocena [--zapisz]`; z `--zapisz` wynik trafia do
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
from common import free_port, machine, median_ms, percentile_ms, write_section
from run import QUESTIONS as BASIC_QUESTIONS

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


def row(clients: str, samples: list[float], wall: float) -> str:
    p50, p95 = median_ms(samples), percentile_ms(samples, 0.95)
    return f"| {clients} | {len(samples)} | {p50:.0f} ms | {p95:.0f} ms | {len(samples) / wall:.1f} zapytań/s |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--rundy", type=int, default=5, help="ile razy każde z pytań (na klienta)")
    parser.add_argument("--zapisz", action="store_true", help="zapisz wynik w docs/BENCHMARKS.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # before the server starts: what the neighbours put on the machine
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    command = [CLI, "serwuj", "--baza", str(args.baza), "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(url, process)
        files = httpx.get(f"{url}/api/pliki").json()
        sequential(url, 1)  # warm: model, keyword index, snapshot
        one = sequential(url, args.rundy)
        many, wall = concurrent(url, 8, args.rundy)
    finally:
        process.terminate()
        process.wait(timeout=30)
    chunks = sum(f["fragmenty"] for f in files)
    ratio = (len(many) / wall) / (len(one) / sum(one))
    body = f"""## Serwer `chroma-rag serwuj`: `GET /api/szukaj` (issue 15)

Maszyna: {machine()}; load average przed pomiarem ≈ {load:.1f}. Baza: `{args.baza}` – plików: {len(files)},
fragmentów: {chunks}. Polecenie: `.venv/bin/python bench/serwuj.py --baza {args.baza} --zapisz`
(prawdziwy `chroma-rag serwuj` w podprocesie, klient httpx po pętli zwrotnej, tryb hybrydowy, k=5,
{len(QUESTIONS)} pytań × {args.rundy} rund na klienta, po rozgrzewce).

| klienci | zapytań | p50 | p95 | przepustowość |
| --- | ---: | ---: | ---: | ---: |
{row("1", one, sum(one))}
{row("8 naraz", many, wall)}

Stosunek przepustowości 8 klientów do 1: **{ratio:.2f}×** (na maszynie dzielonej z innymi procesami – patrz load
average – liczy się raczej stosunek niż wartości bezwzględne). Wyszukiwania biegną równolegle (issue 23,
`serving/shared_index.py`): wyłączne są tylko budowa wyszukiwarki i indeksu słów, pierwsze wczytanie modelu,
budowa migawki i wymiana klienta Chromy po zapisie innego procesu. Plan od modelu czatu, odpowiedź modelu
i obsługa HTTP są poza wszelką blokadą indeksu.
"""
    print(body)
    if args.zapisz:
        write_section("serwuj", body)


if __name__ == "__main__":
    main()
