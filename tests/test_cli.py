"""Podstawowe polecenia na prawdziwej Chromie, prawdziwych PDF-ach i prawdziwym modelu (filtry, lista i usun
w obu trybach, folder i serwer: tests/test_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PATIENTS, REPO, SAMPLES, run_cli


def search_json(capsys, db: Path, *args: str) -> list[dict]:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", "--baza", db)
    assert code == 0, err
    return json.loads(out)["wyniki"]


def test_colloquial_question_finds_patients_rights_act(capsys, two_acts_db):
    hits = search_json(capsys, two_acts_db, "Czy mogę dostać kopię mojej dokumentacji medycznej ze szpitala?")
    assert PATIENTS in [h["plik"] for h in hits[:3]]


def test_results_are_listed_with_file_unit_pages_and_similarity(capsys, two_acts_db):
    code, out, _ = run_cli(capsys, "szukaj", "Kto jest osobą bliską pacjenta?", "-k", "2", "--plik", PATIENTS,
                           "--baza", two_acts_db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"1. {PATIENTS} · art. ") and " · str. " in lines[0] and " · trafność 1.00" in lines[0]
    assert lines[1].startswith("   podobieństwo 0.")
    assert any(line.startswith(f"2. {PATIENTS} · art. ") for line in lines)
    assert all(line.startswith("   ") or not line.strip() or line[0].isdigit() for line in lines[:-1])
    assert lines[-1].startswith(f"Całą jednostkę pokaże: chroma-rag pokaz {PATIENTS} ")


def test_reindexing_keeps_chunk_count(capsys, tmp_path):
    db = tmp_path / "db"
    assert run_cli(capsys, "indeksuj", SAMPLES, "--baza", db)[0] == 0
    first = json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])
    assert run_cli(capsys, "indeksuj", SAMPLES, "--baza", db)[0] == 0
    assert json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1]) == first


def test_sample_documents_answer_quick_start_question(capsys, samples_db):
    hits = search_json(capsys, samples_db, "Ile dni urlopu przysługuje pracownikowi?", "-k", "1")
    assert hits[0]["art"] == "§ 6" and hits[0]["typ"] == "regulamin"
    hits = search_json(capsys, samples_db, "Czy mogę wyciąć drzewo na swojej działce?", "--typ", "ustawa", "-k", "3")
    assert {h["plik"] for h in hits} == {"ustawa-o-ochronie-drzew-miejskich.txt"}


def test_missing_path_is_an_error_before_the_db_exists(capsys, tmp_path):
    db = tmp_path / "db"
    code, _, err = run_cli(capsys, "indeksuj", tmp_path / "nie-ma", "--baza", db)
    assert code == 1 and "nie istnieje" in err
    assert not db.exists()


def test_empty_folder_and_folder_without_supported_files(capsys, tmp_path):
    empty = tmp_path / "pusty"
    empty.mkdir()
    code, _, err = run_cli(capsys, "indeksuj", empty, "--baza", tmp_path / "db")
    assert code == 1 and "nie ma plików" in err
    (empty / "tabela.xlsx").write_bytes(b"PK\x03\x04")
    code, _, err = run_cli(capsys, "indeksuj", empty, "--baza", tmp_path / "db")
    assert code == 1 and "nie ma plików" in err


def test_search_before_indexing_says_to_run_indeksuj(capsys, tmp_path):
    code, _, err = run_cli(capsys, "szukaj", "cokolwiek", "--baza", tmp_path / "brak")
    assert code == 1 and "indeksuj" in err
    assert not (tmp_path / "brak").exists()


def test_unreadable_pdf_is_skipped_and_others_indexed(capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "zepsuty.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<")
    (folder / "notatka.txt").write_text("Zebranie zarządu odbędzie się w piątek o 10:00 w sali 204.", encoding="utf-8")
    code, out, err = run_cli(capsys, "indeksuj", folder, "--baza", tmp_path / "db")
    assert code == 3  # some files skipped
    assert "zepsuty.pdf" in err and "notatka.txt" in out


def test_nothing_indexable_is_a_failure(capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "zepsuty.pdf").write_bytes(b"to nie jest pdf")
    code, _, err = run_cli(capsys, "indeksuj", folder, "--baza", tmp_path / "db")
    assert code == 1 and "zepsuty.pdf" in err


def test_console_script_help_and_error_without_traceback(tmp_path):
    exe = Path(sys.executable).with_name("chroma-rag")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "chroma_rag"]
    result = subprocess.run([*command, "--help"], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0 and "indeksuj" in result.stdout
    result = subprocess.run(
        [*command, "szukaj", "x", "--baza", str(tmp_path / "brak")], capture_output=True, text=True
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr and "indeksuj" in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["szukaj"], "Brakuje argumentu PYTANIE. Składnię pokazuje: chroma-rag szukaj --help."),
        (["indeksuj"], "Brakuje argumentu SCIEZKI."),
        (["szukaj", "urlop", "--zla"], "Nieznana opcja --zla."),
        (["szukaj", "urlop", "-k", "abc"], "Zła wartość opcji -k/--ile: oczekiwano liczby całkowitej."),
        (["szukaj", "urlop", "--prog", "wysoki"], "Zła wartość opcji --prog: oczekiwano liczby."),
        (["szukaj", "urlop", "--tryb"], "Opcja --tryb wymaga wartości"),
        (["szukj", "urlop"], "Nie ma polecenia „szukj”. Może chodziło o: szukaj"),
        (["szukaj", "urlop", "wypoczynkowy"], "Za dużo argumentów: wypoczynkowy. Pytanie z kilkoma słowami ujmij"),
    ],
)
def test_usage_errors_are_one_polish_sentence(capsys, args, expected):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert out == ""
    assert expected in " ".join(err.split())
    assert err.startswith("Błąd:") and err.count("\n") == 1
