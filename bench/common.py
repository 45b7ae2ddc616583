"""Wspólne narzędzia pomiarów: opis maszyny i zapis sekcji w docs/BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "docs" / "BENCHMARKS.md"
USTAWY = REPO.parent / "shared" / "dane" / "ustawy"


def machine() -> str:
    cpu = "?"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        match = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = match.group(1).strip() if match else cpu
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{date.today().isoformat()}, {cpu}, {os.cpu_count()} rdzenie, {mem_gib:.0f} GiB RAM, "
        f"Python {platform.python_version()}"
    )


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def percentile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def write_section(name: str, body: str, document: Path = BENCHMARKS) -> None:
    """Podmienia w ``document`` (domyślnie BENCHMARKS.md) sekcję między znacznikami ``name`` (albo dopisuje ją na
    końcu)."""
    start, end = f"<!-- {name}: start -->", f"<!-- {name}: koniec -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = document.read_text(encoding="utf-8") if document.exists() else "# Pomiary\n"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    document.write_text(text, encoding="utf-8")


def process_age_s() -> float:
    """Sekundy od uruchomienia tego procesu (z ``/proc``, co 10 ms): zimny start liczony jak dla `chroma-rag
    szukaj` – z interpreterem i importami – bez stopera ustawianego przed importami."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    started_ticks = int(fields[19])  # field 22 (starttime) of proc(5), counted after the ")" of field 2
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """Wolny port na loopback dla serwera uruchamianego przez bench."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_chroma_run(path: Path, wait_s: float = 300.0) -> tuple[subprocess.Popen, str]:
    """`chroma run --path PATH` na loopback (dziennik obok, ``<PATH>.log``), gotowy, gdy odpowie na heartbeat;
    przy milionie fragmentów start trwa dziesiątki sekund."""
    import httpx

    port = free_port()
    exe = Path(sys.executable).with_name("chroma")
    log = (path.parent / f"{path.name}.log").open("w")
    process = subprocess.Popen([str(exe), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("chroma run nie wystartował")


class KnownVectors:
    """Model embeddingów do pomiarów wyszukiwania, podawany ``Index(embedder=…)``: wektory pytań policzone raz
    z góry (``remember_queries``), więc pomiar nie liczy modelu (dziesiątki ms CPU na pytanie); inne pytania liczy
    prawdziwy ``model``. ``passages`` (tekst → gotowy wektor): fragment pliku dostaje wektor pierwszego z tych
    tekstów, który zawiera (a bez takiego – pierwszy z nich), bez modelu."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.model_id, self.dim = model.model_id, model.dim
        self.queries: dict[str, Any] = {}
        self.passages: dict[str, Any] = {}

    def remember_queries(self, texts: list[str]) -> None:
        self.queries.update((text, self.model.embed_query(text)) for text in texts)

    def embed_query(self, text: str) -> Any:
        known = self.queries.get(text)
        return known if known is not None else self.model.embed_query(text)

    def embed_passages(self, texts: list[str], progress: Any = None) -> Any:
        if not self.passages:
            return self.model.embed_passages(texts, progress)
        import numpy as np

        if progress is not None:
            progress(len(texts))
        spare = next(iter(self.passages.values()))
        return np.array([next((v for t, v in self.passages.items() if t in text), spare) for text in texts])
