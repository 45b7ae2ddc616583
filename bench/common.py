"""Wspólne narzędzia pomiarów: opis maszyny i zapis sekcji w docs/BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import re
import statistics
from datetime import date
from pathlib import Path

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


def write_section(name: str, body: str) -> None:
    """Podmienia w BENCHMARKS.md sekcję między znacznikami ``name`` (albo dopisuje ją na końcu)."""
    start, end = f"<!-- {name}: start -->", f"<!-- {name}: koniec -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else "# Pomiary\n"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS.write_text(text, encoding="utf-8")
