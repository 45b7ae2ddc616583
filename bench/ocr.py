"""Jakość i czas OCR skanów (issue 41) na wspólnych ustawach: z każdego z 11 PDF-ów dwie kolejne strony ze środka
narysowane do obrazów i zapisane jako PDF bez warstwy tekstowej (skan 300 dpi, 150 dpi, 300 dpi krzywo o 1,5°),
odczytane tą samą ścieżką co w ``indeksuj`` (``load_document`` z OCR) i porównane z warstwą tekstową tych stron:

- CER – odległość edycyjna (Levenshtein, rapidfuzz) surowego tekstu OCR strony od tekstu jej warstwy tekstowej
  (PDFium), po zwinięciu białych znaków, przez liczbę znaków warstwy; suma po stronach;
- jednostki – ile jednostek (Art./§), które cięcie znajduje w tekście tych stron, znajduje też w skanie, i ile
  znajduje w skanie jednostek, których w tekście nie ma (fałszywe);
- s/stronę – średni czas wczytania strony skanu (rysowanie, Tesseract, cięcie) na tej maszynie.

Uruchomienie: `make bench-ocr` albo `python -m bench.ocr [--zapisz]` (z `--zapisz` tabela trafia do
docs/BENCHMARKS.md, sekcja „ocr”); kilka minut na 2 rdzeniach.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
from pypdf import PdfReader, PdfWriter
from rapidfuzz.distance import Levenshtein

from bench.common import USTAWY, machine, write_section
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.ocr import Ocr, OcrEngine, OcrSettings, PageCache
from tests.scans import image_pdf


@dataclass(frozen=True)
class Setting:
    label: str
    scan_dpi: int
    angle: float = 0.0
    ocr_dpi: int = OcrSettings().dpi


SETTINGS = [
    Setting("skan 300 dpi", 300),
    Setting("skan 150 dpi", 150),
    Setting("skan 300 dpi, krzywo o 1,5°", 300, angle=1.5),
    Setting("skan 300 dpi, OCR rysuje 200 dpi", 300, ocr_dpi=200),
]


@dataclass
class Result:
    pages: int = 0
    errors: int = 0
    chars: int = 0
    units: int = 0
    found: int = 0
    false_units: int = 0
    seconds: float = 0.0
    missed: list[str] = field(default_factory=list)


def sample(pdf: Path) -> list[int]:
    """Dwie kolejne strony ze środka dokumentu (od 0): jednostki przechodzące przez granicę stron są w obu."""
    count = len(PdfReader(pdf).pages)
    middle = count // 2
    return [middle, middle + 1] if count > 1 else [0]


def layer_text(pdf: Path, pages: list[int]) -> list[str]:
    document = pdfium.PdfDocument(pdf)
    try:
        return [document[i].get_textpage().get_text_bounded() for i in pages]
    finally:
        document.close()


def flat(text: str) -> str:
    return " ".join(text.split())


def text_subset(pdf: Path, pages: list[int], target: Path) -> Path:
    writer = PdfWriter()
    reader = PdfReader(pdf)
    for i in pages:
        writer.add_page(reader.pages[i])
    writer.write(target)
    return target


def units(path: Path, ocr: Ocr | None = None) -> set[str]:
    return {chunk.art for chunk in chunk_document(load_document(path, ocr)) if chunk.art}


def measure(setting: Setting, pdfs: list[Path], work: Path) -> Result:
    result = Result()
    engine = OcrEngine(settings=OcrSettings(dpi=setting.ocr_dpi))
    for pdf in pdfs:
        pages = sample(pdf)
        scan = image_pdf(pdf, pages, work / f"{pdf.stem}-{setting.scan_dpi}-{setting.angle}-{setting.ocr_dpi}.pdf",
                         dpi=setting.scan_dpi, angle=setting.angle)
        cache = PageCache(work / "ocr")
        started = time.perf_counter()
        found = units(scan, Ocr(engine, cache))  # OCR here; the raw page texts stay in the cache
        result.seconds += time.perf_counter() - started
        raw = Ocr(engine, cache).read(scan, list(range(len(pages))))
        for ocr_text, reference in zip([raw[i] for i in range(len(pages))], layer_text(pdf, pages), strict=True):
            result.errors += Levenshtein.distance(flat(ocr_text), flat(reference))
            result.chars += len(flat(reference))
        expected = units(text_subset(pdf, pages, work / f"{pdf.stem}-tekst.pdf"))
        result.pages += len(pages)
        result.units += len(expected)
        result.found += len(expected & found)
        result.false_units += len(found - expected)
        result.missed += [f"{pdf.stem.split('-DU-')[0]} {art}" for art in sorted(expected - found)]
        print(f"{setting.label}: {pdf.name} str. {pages[0] + 1}–{pages[-1] + 1}: CER do teraz "
              f"{result.errors / max(result.chars, 1):.3f}, jednostki {len(expected & found)}/{len(expected)}, "
              f"fałszywe {len(found - expected)}", flush=True)
    return result


def tesseract_version() -> str:
    done = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).splitlines()[0] if done.returncode == 0 else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--zapisz", action="store_true", help="wpisz tabelę do docs/BENCHMARKS.md")
    args = parser.parse_args()
    pdfs = sorted(USTAWY.glob("*.pdf"))
    results: dict[str, Result] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-ocr-") as work:
        for setting in SETTINGS:
            results[setting.label] = measure(setting, pdfs, Path(work))
    rows = [
        f"| {label} | {r.pages} | {r.errors / r.chars:.3f} | {r.found}/{r.units} ({r.found / r.units:.0%}) "
        f"| {r.false_units} | {r.seconds / r.pages:.1f} |"
        for label, r in results.items()
    ]
    missed = {label: r.missed for label, r in results.items() if r.missed}
    body = "\n".join([
        f"Maszyna: {machine()}; {tesseract_version()} (Debian, model `pol`). Polecenie: `make bench-ocr ZAPISZ=1` "
        f"(`python -m bench.ocr --zapisz`), {time.perf_counter() - started:.0f} s. Próbka: z każdego z "
        f"{len(pdfs)} wspólnych PDF-ów dwie kolejne strony ze środka, narysowane przez PDFium do obrazów w skali "
        "szarości i zapisane jako PDF bez warstwy tekstowej (Pillow, JPEG), odczytane ścieżką `indeksuj` "
        "(`load_document` z OCR, Tesseract na 1 wątku).",
        "",
        "CER – odległość edycyjna surowego tekstu OCR strony od jej warstwy tekstowej (białe znaki zwinięte) przez "
        "liczbę znaków warstwy; jednostki – ile jednostek (Art./§), które cięcie znajduje w tekście tych stron, "
        "znajduje też w skanie; fałszywe – jednostki skanu, których w tekście nie ma; s/stronę – średni czas "
        "strony (rysowanie, Tesseract, wczytanie i cięcie pliku) na współdzielonej maszynie.",
        "",
        "| ustawienie | strony | CER | jednostki znalezione | fałszywe | s/stronę |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        *[f"Nieznalezione ({label}): {', '.join(items)}." for label, items in missed.items()],
    ])
    print(body)
    if args.zapisz:
        write_section("ocr", body)


if __name__ == "__main__":
    main()
