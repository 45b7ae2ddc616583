"""Pomiary do docs/NIEZAWODNOSC.md: koszt pominięcia niezmienionych plików, ponowne użycie wektorów przy
zmianie pliku, rozpoznanie przeniesienia. Jeden PDF z ../shared (osadzany raz), baza w katalogu tymczasowym.

    .venv/bin/python -m bench.niezawodnosc
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO
from chroma_rag import Index
from chroma_rag.indexing.discovery import collect_files, fingerprint

USTAWY = REPO.parent / "shared" / "dane" / "ustawy"
PDF = "prawa-pacjenta-DU-2009-417.pdf"


def timed(action):
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def lista(db: Path) -> bytes:
    return subprocess.run([sys.executable, "-m", "chroma_rag", "lista", "--json", "--baza", str(db)],
                          capture_output=True, check=True).stdout


def main() -> None:
    found = collect_files([USTAWY])
    skipped: dict[str, str] = {}
    sources, seconds = timed(lambda: fingerprint(found.files, skipped))
    size = sum(s.size for s in sources) / 2**20
    print(f"hash (SHA-256) wszystkich {len(sources)} PDF-ów ({size:.1f} MB): {seconds:.2f} s")

    work = Path(tempfile.mkdtemp(prefix="niezawodnosc-"))
    docs, db = work / "docs", work / "db"
    docs.mkdir()
    shutil.copy(USTAWY / PDF, docs / "a.pdf")
    index = Index(db)
    assert index.embedder.dim
    report, seconds = timed(lambda: index.add([docs]))
    print(f"pierwsze indeksowanie {PDF}: {report.chunks} fragmentów, {report.embedded} wektorów, {seconds:.1f} s")
    before = lista(db)
    report, seconds = timed(lambda: Index(db).add([docs]))
    print(f"ponownie bez zmian (API, model już w pamięci): bez zmian {len(report.unchanged)}, {seconds:.2f} s")
    command = [sys.executable, "-m", "chroma_rag", "indeksuj", str(docs), "--baza", str(db)]
    _, seconds = timed(lambda: subprocess.run(command, capture_output=True, check=True))
    print(f"ponownie bez zmian (nowy proces `chroma-rag indeksuj`, z importami i modelem): {seconds:.2f} s")
    print(f"lista --json bajt w bajt ta sama: {lista(db) == before}")

    from pypdf import PdfReader, PdfWriter

    shorter = PdfWriter()
    for page in PdfReader(USTAWY / PDF).pages[:-1]:
        shorter.add_page(page)
    shorter.write(docs / "a.pdf")
    report, seconds = timed(lambda: Index(db).add([docs]))
    print(f"zmieniony plik (bez ostatniej strony): {report.chunks} fragmentów, użyto ponownie {report.reused}, "
          f"policzono {report.embedded}, {seconds:.1f} s")
    (docs / "a.pdf").rename(docs / "przeniesiony.pdf")
    report, seconds = timed(lambda: Index(db).add([docs]))
    print(f"przeniesiony plik: przeniesienia {len(report.moved)}, użyto ponownie {report.reused}, "
          f"policzono {report.embedded}, {seconds:.1f} s")
    check, seconds = timed(lambda: Index(db).check())
    print(f"sprawdz: spójna={check.ok}, {check.chunks} fragmentów, {seconds:.1f} s")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
