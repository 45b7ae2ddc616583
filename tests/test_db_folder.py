"""Issue 13: folder bazy w nietypowym stanie – tylko do odczytu, zwykły plik, miejsce bez prawa zapisu.
Każdy przypadek to jedno polskie zdanie z nazwą ścieżki albo poprawny odczyt, nigdy „Nieoczekiwany błąd”."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import DATA_PROTECTION, PATIENTS, run_cli

ENGLISH_OS_TEXT = ("No such file", "Read-only file system", "Permission denied", "Errno", "Nieoczekiwany")


@pytest.fixture()
def read_only_db(two_acts_copy: Path, tmp_path: Path):
    """Kopia dwóch ustaw pod prawdziwym montażem tylko do odczytu (``mount --bind`` + ``remount,ro``)."""
    mounted = tmp_path / "ro"
    mounted.mkdir()
    if subprocess.run(["mount", "--bind", str(two_acts_copy), str(mounted)], capture_output=True).returncode:
        pytest.skip("montowanie niedostępne (test wymaga uprawnień do mount)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True, capture_output=True)
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_reading_works_on_a_read_only_mount(capsys, read_only_db, tmp_path, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_CACHE", str(tmp_path / "cache"))
    code, out, err = run_cli(capsys, "lista", "--json", "--baza", read_only_db)
    assert code == 0, err
    assert {f["plik"] for f in json.loads(out)} == {PATIENTS, DATA_PROTECTION}
    code, out, err = run_cli(capsys, "szukaj", "zgoda pacjenta", "--json", "--baza", read_only_db)
    assert code == 0, err
    assert json.loads(out)["wyniki"][0]["plik"] == PATIENTS
    code, out, err = run_cli(capsys, "pytaj", "Czy pacjent może odmówić zgody?", "--pokaz-prompt", "--baza",
                             read_only_db)
    assert code == 0 and "Fragment 1" in out, err
    questions = tmp_path / "pytania.jsonl"
    questions.write_text(json.dumps({"pytanie": "zgoda pacjenta", "plik": PATIENTS, "art": ["16"]}) + "\n")
    code, out, err = run_cli(capsys, "ocena", questions, "--json", "--baza", read_only_db)
    assert code == 0 and json.loads(out)["n"] == 1, err
    code, _, err = run_cli(capsys, "sprawdz", "--baza", read_only_db)
    assert code == 0, err


@pytest.mark.parametrize("command", [["indeksuj", "{doc}"], ["usun", PATIENTS], ["sprawdz", "--napraw"]])
def test_writing_to_a_read_only_mount_is_one_sentence(capsys, read_only_db, tmp_path, command):
    doc = tmp_path / "a.txt"
    doc.write_text("Regulamin.\n\n§ 1. Treść.\n", encoding="utf-8")
    code, out, err = run_cli(capsys, *[a.format(doc=doc) for a in command], "--baza", read_only_db)
    assert code == 1 and "tylko do odczytu" in err and str(read_only_db) in " ".join(err.split())
    assert not any(text in out + err for text in ENGLISH_OS_TEXT)


@pytest.mark.parametrize("command", [["indeksuj", "{doc}"], ["szukaj", "zgoda"], ["lista"]])
def test_db_path_that_is_a_regular_file(capsys, tmp_path, command):
    doc = tmp_path / "a.txt"
    doc.write_text("Regulamin.\n\n§ 1. Treść.\n", encoding="utf-8")
    not_a_folder = tmp_path / "baza.txt"
    not_a_folder.write_text("to nie baza")
    code, out, err = run_cli(capsys, *[a.format(doc=doc) for a in command], "--baza", not_a_folder)
    assert code == 1 and "to plik, a nie folder bazy" in err and "nie istnieje" not in err
    assert not any(text in out + err for text in ENGLISH_OS_TEXT)


def test_db_path_where_no_folder_can_be_made(capsys, tmp_path):
    doc = tmp_path / "a.txt"
    doc.write_text("Regulamin.\n\n§ 1. Treść.\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "indeksuj", doc, "--baza", "/proc/chroma_db")
    assert code == 1 and "Nie można utworzyć folderu bazy „/proc/chroma_db”" in err
    assert not any(text in out + err for text in ENGLISH_OS_TEXT)
    code, out, err = run_cli(capsys, "indeksuj", doc, "--baza", doc / "db")  # a file in the middle of the path
    assert code == 1 and str(doc) in " ".join(err.split())
    assert not any(text in out + err for text in ENGLISH_OS_TEXT)
