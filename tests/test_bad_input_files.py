"""Złe pliki wygenerowane w teście: każdy nazwany w jednej linii z powodem, reszta zaindeksowana, nic się
nie wysypuje, żaden śmieć (HTML, krzaki z pliku binarnego, puste fragmenty) nie trafia do indeksu."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from chroma_rag.ingest.loading import is_supported

SOURCE_PDF = "rozporzadzenie-technika-prawodawcza-DU-2002-908.pdf"
GOOD_NOTE = "Zebranie zarządu odbędzie się w piątek o 10:00 w sali 204. Obecność obowiązkowa."

# file name → words the skip reason must contain (one of them)
EXPECTED_REASONS = {
    "pusty.txt": ("pusty",),
    "pusty.pdf": ("pusty",),
    "obciety.pdf": ("uszkodzony",),
    "strona-bledu.pdf": ("nie jest PDF",),
    "zaszyfrowany.pdf": ("zaszyfrowany",),
    "skan.pdf": ("puste strony",),
    "smieci.txt": ("binarny",),
}


@pytest.fixture(scope="module")
def bad_corpus(tmp_path_factory: pytest.TempPathFactory, ustawy: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path_factory.mktemp("zle") / "dokumenty"
    folder.mkdir()
    source = ustawy / SOURCE_PDF
    (folder / "notatka.txt").write_text(GOOD_NOTE, encoding="utf-8")
    (folder / "pusty.txt").write_bytes(b"")
    (folder / "pusty.pdf").write_bytes(b"")
    data = source.read_bytes()
    (folder / "obciety.pdf").write_bytes(data[: len(data) // 2])
    (folder / "strona-bledu.pdf").write_text(
        "<!DOCTYPE html><html><body><h1>Błąd 404 – nie znaleziono strony</h1></body></html>", encoding="utf-8"
    )
    locked = PdfWriter()
    locked.add_page(PdfReader(source).pages[0])
    locked.encrypt(user_password="tajne", algorithm="RC4-128")
    locked.write(folder / "zaszyfrowany.pdf")
    owner_only = PdfWriter()  # encrypted, but opens with the empty password
    owner_only.add_page(PdfReader(source).pages[0])
    owner_only.encrypt(user_password="", owner_password="wlasciciel", algorithm="RC4-128")
    owner_only.write(folder / "tylko-haslo-wlasciciela.pdf")
    scan = PdfWriter()
    scan.add_blank_page(595, 842)
    scan.write(folder / "skan.pdf")
    (folder / "uszkodzony.docx").write_bytes(b"PK\x03\x04" + os.urandom(300))
    (folder / "smieci.txt").write_bytes(os.urandom(20_000))
    (folder / "tabela.xlsx").write_bytes(b"PK\x03\x04" + os.urandom(100))
    (folder / "zdjecie.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(100))
    return folder


@pytest.fixture(scope="module")
def bad_run(bad_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str, Path]:
    """One real `chroma-rag indeksuj` process over the whole bad corpus."""
    db = tmp_path_factory.mktemp("zle-db") / "db"
    result = subprocess.run(
        [sys.executable, "-m", "chroma_rag", "indeksuj", str(bad_corpus), "--baza", str(db)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "COLUMNS": "200"},
    )
    return result.returncode, result.stdout, result.stderr, db


def test_run_goes_on_and_exit_code_says_some_skipped(bad_run):
    code, out, err, _ = bad_run
    assert code == 3, err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("name", sorted(EXPECTED_REASONS))
def test_each_bad_file_named_with_reason_on_one_line(bad_run, name):
    _, _, err, _ = bad_run
    lines = [line for line in err.splitlines() if name in line]
    assert len(lines) == 1, err
    assert any(word in lines[0] for word in EXPECTED_REASONS[name]), lines[0]
    assert not ENGLISH.search(lines[0].split(":", 1)[1]), lines[0]  # a library's own (English) text stays out


ENGLISH = re.compile(r"\b(not|found|error|invalid|stream|marker|object|expected|missing|unexpected)\b", re.I)


def test_docx_corrupt_file_is_named_or_ignored(bad_run):
    _, _, err, _ = bad_run
    if is_supported(Path("x.docx")):  # docx support comes from the ingestion branch
        assert "uszkodzony.docx" in err
    else:
        assert "uszkodzony.docx" not in err


def test_only_good_files_indexed_and_no_garbage(capsys, bad_run):
    _, _, _, db = bad_run
    listed = {f["plik"] for f in json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])}
    assert listed == {"notatka.txt", "tylko-haslo-wlasciciela.pdf"}
    from chroma_rag.storage.store import Store

    store = Store(db)
    collection = store.client.get_collection(next(c.name for c in store.client.list_collections()
                                                  if c.name.startswith("fragmenty-")))
    texts = collection.get(include=["documents"])["documents"]
    store.close()
    assert texts and all(t.strip() for t in texts)
    assert not any("404" in t or "<html" in t.lower() or "\ufffd" in t for t in texts)


def test_unsupported_types_are_ignored_silently(bad_run):
    _, out, err, _ = bad_run
    assert "tabela.xlsx" not in out + err and "zdjecie.png" not in out + err


def test_nothing_indexable_exits_1(capsys, tmp_path):
    folder = tmp_path / "zle"
    folder.mkdir()
    (folder / "pusty.txt").write_bytes(b"")
    (folder / "smieci.txt").write_bytes(b"\x00\x01\x02" * 100)
    code, _, err = run_cli(capsys, "indeksuj", folder, "--baza", tmp_path / "db")
    assert code == 1 and "pusty.txt" in err and "smieci.txt" in err and "żadnego" in err
