"""Podstawowe polecenia na prawdziwej Chromie, prawdziwych PDF-ach i prawdziwym modelu."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import DATA_PROTECTION, PATIENTS, REPO, SAMPLES, run_cli


def search_json(capsys, db: Path, *args: str) -> list[dict]:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", "--baza", db)
    assert code == 0, err
    return json.loads(out)


def test_json_shape_and_plik_filter(capsys, two_acts_db):
    question = "Kto może zobaczyć moją dokumentację medyczną?"
    hits = search_json(capsys, two_acts_db, question, "--plik", PATIENTS, "-k", "8")
    assert len(hits) == 8
    for hit in hits:
        assert hit["plik"] == PATIENTS
        assert isinstance(hit["rok"], int) and hit["rok"] == 2009
        assert isinstance(hit["strona"], int) and hit["strona"] >= 1
        assert hit["typ"] == "ustawa"
        assert hit["art"] and hit["tekst"]
        assert 0.0 < hit["podobienstwo"] <= 1.0
    scores = [h["podobienstwo"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_colloquial_question_finds_patients_rights_act(capsys, two_acts_db):
    hits = search_json(capsys, two_acts_db, "Czy mogę dostać kopię mojej dokumentacji medycznej ze szpitala?")
    assert PATIENTS in [h["plik"] for h in hits[:3]]


def test_year_filters(capsys, two_acts_db):
    assert {h["rok"] for h in search_json(capsys, two_acts_db, "dane osobowe", "--rok", "1997", "-k", "10")} == {1997}
    assert {h["plik"] for h in search_json(capsys, two_acts_db, "dane", "--od-roku", "2000", "-k", "10")} == {PATIENTS}
    assert {h["plik"] for h in search_json(capsys, two_acts_db, "dane", "--do-roku", "2000", "-k", "10")} == {
        DATA_PROTECTION
    }
    assert search_json(capsys, two_acts_db, "dane", "--od-roku", "1998", "--do-roku", "2008") == []


def test_type_article_and_combined_filters(capsys, two_acts_db):
    assert {h["typ"] for h in search_json(capsys, two_acts_db, "zgoda", "--typ", "ustawa", "-k", "10")} == {"ustawa"}
    assert search_json(capsys, two_acts_db, "zgoda", "--typ", "kodeks") == []
    hits = search_json(capsys, two_acts_db, "prawo pacjenta", "--art", "23", "--art", "24", "-k", "10")
    assert {h["art"] for h in hits} <= {"23", "24"} and hits
    hits = search_json(
        capsys, two_acts_db, "informacja", "--plik", DATA_PROTECTION, "--art", "24", "--rok", "1997", "--typ", "ustawa"
    )
    assert hits and all(h["plik"] == DATA_PROTECTION and h["art"] == "24" for h in hits)


def test_unknown_file_lists_closest_names(capsys, two_acts_db):
    code, out, err = run_cli(capsys, "szukaj", "x", "--plik", "prawa-pacjeta.pdf", "--baza", two_acts_db)
    assert code == 1
    assert "prawa-pacjeta.pdf" in err and PATIENTS in err
    assert "Traceback" not in err + out


def test_lista_json(capsys, two_acts_db):
    code, out, _ = run_cli(capsys, "lista", "--json", "--baza", two_acts_db)
    assert code == 0
    files = {f["plik"]: f for f in json.loads(out)}
    assert set(files) == {PATIENTS, DATA_PROTECTION}
    assert files[PATIENTS]["rok"] == 2009 and files[PATIENTS]["typ"] == "ustawa"
    assert files[PATIENTS]["fragmenty"] > 30
    assert files[PATIENTS]["modele"] == ["lokalny:multilingual-e5-small"]


def chunk_counts(capsys, db: Path) -> dict[str, int]:
    return {f["plik"]: f["fragmenty"] for f in json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])}


def test_usun_removes_exactly_one_file(capsys, two_acts_copy):
    before = chunk_counts(capsys, two_acts_copy)
    code, out, _ = run_cli(capsys, "usun", PATIENTS, "--baza", two_acts_copy)
    assert code == 0 and str(before[PATIENTS]) in out
    after = chunk_counts(capsys, two_acts_copy)
    assert after == {DATA_PROTECTION: before[DATA_PROTECTION]}
    code, _, err = run_cli(capsys, "usun", PATIENTS, "--baza", two_acts_copy)
    assert code == 1 and "nie ma pliku" in err


def test_reindexing_keeps_chunk_count(capsys, tmp_path):
    db = tmp_path / "db"
    assert run_cli(capsys, "indeksuj", SAMPLES, "--baza", db)[0] == 0
    first = json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])
    assert run_cli(capsys, "indeksuj", SAMPLES, "--baza", db)[0] == 0
    assert json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1]) == first


def test_sample_documents_answer_quick_start_question(capsys, samples_db):
    hits = search_json(capsys, samples_db, "Ile dni urlopu przysługuje pracownikowi?", "-k", "1")
    assert hits[0]["art"] == "§ 6" and hits[0]["typ"] == "dokument"
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
