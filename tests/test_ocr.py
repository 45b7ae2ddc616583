"""OCR skanów (issue 41) prawdziwym Tesseractem: skany robione przez test z wspólnej ustawy (strony narysowane do
obrazów i zapisane jako PDF bez warstwy tekstowej), zaindeksowane prawdziwym ``indeksuj`` i znalezione
``szukaj``; PDF mieszany, pusta kartka, zepsuty obraz, brak Tesseracta, pamięć odczytanych stron."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import PATIENTS, run_cli
from scans import blank_scan, image_pdf

from chroma_rag import Index
from chroma_rag.errors import UnreadableFile
from chroma_rag.indexing.report import Progress
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.ocr import Ocr, OcrEngine, PageCache, ocr_lines

# Pages 2–3 of the patients' rights act: art. 4 (compensation) on the first, art. 6–9 on the second.
SCANNED = [1, 2]
NO_TESSERACT = OcrEngine(command="/nie/ma/tesseract")
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-pol"


class PageRecorder(Progress):
    """Strony skanów zgłoszone przez ``indeksuj``: (plik, gotowe, wszystkie, z pamięci)."""

    def __init__(self) -> None:
        self.pages: list[tuple[str, int, int, bool]] = []

    def ocr_page(self, path: Path, done: int, pages: int, cached: bool) -> None:
        self.pages.append((path.name, done, pages, cached))


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory, ustawy: Path) -> Path:
    folder = tmp_path_factory.mktemp("skany") / "dokumenty"
    folder.mkdir()
    return image_pdf(ustawy / PATIENTS, SCANNED, folder / "skan-prawa-pacjenta.pdf", dpi=200)


def test_scanned_statute_is_indexed_with_pages_and_units_and_read_once(
    scan: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    code, _, err = run_cli(capsys, "indeksuj", scan.parent, "--baza", db)
    assert code == 0, err
    # a line a page in a pipe (the first and the last at once: two pages take seconds, not ten)
    assert "OCR: skan-prawa-pacjenta.pdf – strona 1/2" in err and "strona 2/2" in err

    code, out, err = run_cli(capsys, "szukaj", "zadośćuczynienie za zawinione naruszenie praw pacjenta", "--json",
                             "--baza", db)
    assert code == 0, err
    first = json.loads(out)["wyniki"][0]
    assert (first["plik"], first["art"], first["strona"]) == ("skan-prawa-pacjenta.pdf", "4", 1)
    assert "sumę tytułem zadośćuczynienia" in first["tekst"]
    code, out, err = run_cli(capsys, "szukaj", "prawo do informacji o swoim stanie zdrowia", "--art", "9", "--json",
                             "--baza", db)
    assert code == 0, err
    assert json.loads(out)["wyniki"][0]["strona"] == 2

    # the pages' text is kept by the file's content: read again (here: another --typ) with no Tesseract at all
    assert sorted(p.name for p in (db / "ocr").glob("*/*.txt")) == ["1.txt", "2.txt"]
    recorder = PageRecorder()
    report = Index(db).add([scan.parent], doc_type="ustawa", progress=recorder, ocr=NO_TESSERACT)
    assert list(report.indexed) == [str(scan)] and not report.skipped
    assert recorder.pages == [("skan-prawa-pacjenta.pdf", 1, 2, True), ("skan-prawa-pacjenta.pdf", 2, 2, True)]


def test_interrupted_ocr_resumes_from_the_next_page(scan: Path, tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "ocr")
    engine = OcrEngine()
    read: list[tuple[int, bool]] = []

    def interrupt_after_first(path: Path, done: int, pages: int, cached: bool) -> None:
        read.append((done, cached))
        raise KeyboardInterrupt  # Ctrl-C once the first page is read

    with pytest.raises(KeyboardInterrupt):
        load_document(scan, Ocr(engine, cache, interrupt_after_first))
    document = load_document(scan, Ocr(engine, cache, lambda path, done, pages, cached: read.append((done, cached))))
    assert read == [(1, False), (1, True), (2, False)]
    assert "Art. 4." in document.pages[0] and "Art. 9." in document.pages[1]


def test_mixed_pdf_reads_only_the_scanned_page_and_keeps_page_numbers(
    tmp_path: Path, ustawy: Path
) -> None:
    from pypdf import PdfReader, PdfWriter

    source = ustawy / PATIENTS
    scanned = PdfReader(image_pdf(source, [2], tmp_path / "strona-3.pdf", dpi=200))
    mixed = PdfWriter()
    for number, page in enumerate(PdfReader(source).pages[:4]):
        mixed.add_page(scanned.pages[0] if number == 2 else page)
    mixed.write(tmp_path / "mieszany.pdf")
    read: list[tuple[int, int]] = []
    document = load_document(tmp_path / "mieszany.pdf",
                             Ocr(on_page=lambda path, done, pages, cached: read.append((done, pages))))

    assert read == [(1, 1)] and len(document.pages) == 4
    assert "pacjent ma prawo do informacji o swoim stanie zdrowia" in " ".join(document.pages[2].split()).lower()
    units = {chunk.art: chunk for chunk in chunk_document(document)}
    assert {"4", "5", "6", "7", "8", "9", "10"} <= set(units)
    assert (units["4"].page_from, units["7"].page_from, units["9"].page_from) == (2, 3, 3)
    assert "Kancelaria Sejmu" not in document.pages[2]  # the scanned page's header goes as on text pages


def test_without_tesseract_a_scan_is_skipped_saying_what_to_install(scan: Path, tmp_path: Path, ustawy: Path) -> None:
    with pytest.raises(UnreadableFile) as err:
        load_document(scan, Ocr(NO_TESSERACT))
    assert str(err.value) == (f"skan-prawa-pacjenta.pdf: PDF nie ma warstwy tekstowej (skan) – do odczytania potrzebny "
                              f"jest OCR: zainstaluj Tesseract z modelem polskim ({INSTALL}).")
    # a text PDF needs no OCR
    assert "Art. 4." in load_document(ustawy / PATIENTS, Ocr(NO_TESSERACT)).text

    docs = tmp_path / "dokumenty"
    docs.mkdir()
    (docs / "notatka.txt").write_text("Zebranie zarządu w piątek o 10:00 w sali 204.", encoding="utf-8")
    shutil.copy(scan, docs / scan.name)
    report = Index(tmp_path / "db").add([docs], ocr=NO_TESSERACT)
    assert list(report.indexed) == [str(docs / "notatka.txt")]
    assert INSTALL in report.skipped[str(docs / scan.name)]


def test_blank_and_corrupt_scans_are_skipped_with_one_sentence(tmp_path: Path, ustawy: Path) -> None:
    docs = tmp_path / "dokumenty"
    docs.mkdir()
    (docs / "notatka.txt").write_text("Zebranie zarządu w piątek o 10:00 w sali 204.", encoding="utf-8")
    blank_scan(docs / "pusta-kartka.pdf")
    corrupt = bytearray(image_pdf(ustawy / PATIENTS, [1], docs / "zepsuty-obraz.pdf").read_bytes())
    image = corrupt.index(b"stream", corrupt.index(b"/Subtype /Image")) + len(b"stream\n")
    corrupt[image + 600 : image + 60_000] = os.urandom(59_400)  # the JPEG header stays, the picture is noise
    (docs / "zepsuty-obraz.pdf").write_bytes(bytes(corrupt))

    report = Index(tmp_path / "db").add([docs])
    assert list(report.indexed) == [str(docs / "notatka.txt")]
    for name in ("pusta-kartka.pdf", "zepsuty-obraz.pdf"):
        reason = report.skipped[str(docs / name)]
        assert reason == (f"{name}: OCR nie rozpoznał tekstu na żadnej stronie skanu (puste strony albo nieczytelny "
                          "obraz).")
        assert len(re.findall(r"[.!?](?:\s|$)", reason)) == 1


@pytest.mark.parametrize(("read", "line"), [
    ("8 44. Księga przyjęć", "§ 44. Księga przyjęć"),  # "§" read as "8" (bench/ocr.py)
    ("$ 45. Kartoteka", "§ 45. Kartoteka"),
    ("5 93.1. Ustawa zmieniająca", "§ 93.1. Ustawa zmieniająca"),  # a skewed page
    ("891. 1. Nie nowelizuje się", "891. 1. Nie nowelizuje się"),  # glued: a number, not guessed
    ("5 000. zł", "5 000. zł"),
    ("8 10.2005 r.", "8 10.2005 r."),
    ('wyrazy „ ..... " zastępuje', "wyrazy „ ..... ” zastępuje"),  # the closing quote, so cutting sees it closed
])
def test_ocr_lines_repair_what_tesseract_misreads_in_acts(read: str, line: str) -> None:
    assert ocr_lines(f"{read}\n\n\f") == [line]


def test_a_scan_longer_than_the_page_limit_is_skipped_saying_how_to_index_it(
    capsys: pytest.CaptureFixture[str], scan: Path, tmp_path: Path
) -> None:
    """Issue 41: długi skan (segregator 500 stron to pół godziny OCR) nie trzyma całego przebiegu – jest pomijany
    jednym zdaniem z poleceniem, które go zaindeksuje osobno; tu limit 1 strony na skanie 2 stron."""
    docs = tmp_path / "dokumenty"
    docs.mkdir()
    (docs / "notatka.txt").write_text("Zebranie zarządu w piątek o 10:00 w sali 204.", encoding="utf-8")
    shutil.copy(scan, docs / scan.name)
    code, _, said = run_cli(capsys, "indeksuj", docs, "--ocr-stron", "1", "--baza", tmp_path / "db")
    said = " ".join(said.split())  # the terminal wraps the sentence
    assert code == 3 and "Traceback" not in said and "Pominięto" in said
    assert "to 2 stron OCR" in said and "chroma-rag indeksuj PLIK --ocr-stron 2" in said
    code, listed, _ = run_cli(capsys, "lista", "--json", "--baza", tmp_path / "db")
    assert [row["plik"] for row in json.loads(listed)] == ["notatka.txt"]
    code, _, _ = run_cli(capsys, "indeksuj", docs / scan.name, "--ocr-stron", "2", "--baza", tmp_path / "db")
    assert code == 0
