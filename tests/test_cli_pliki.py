"""Pliki w CLI tak, jak wpisuje je człowiek (issue 38): `lista` rozróżnia imienniki z różnych folderów, `usun`
rozpoznaje nazwę jak `pokaz` i `--plik`, nieznany plik to zła wartość (kod 2), `podglad` mieści się w 80
kolumnach potoku."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PATIENTS, Target, run_cli


def cli(*args: object, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """Polecenie we własnym procesie, wyjście w potoku (konsola czyta COLUMNS przy starcie)."""
    return subprocess.run([sys.executable, "-m", "chroma_rag", *map(str, args)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": str(columns)})


def test_lista_names_same_named_files_with_their_folder_as_citations_do(same_named_db: Path) -> None:
    for columns in (80, 200):
        shown = cli("lista", "--baza", same_named_db, columns=columns)
        assert shown.returncode == 0, shown.stderr
        assert "it/regulamin.md" in shown.stdout and "kadry/regulamin.md" in shown.stdout, shown.stdout


def test_usun_takes_the_names_pokaz_takes(capsys, two_acts_private: Target) -> None:
    code, _, err = run_cli(capsys, "usun", "prawa-kierowcy", *two_acts_private.args)
    assert code == 2 and "nie ma pliku „prawa-kierowcy”" in err and "Może chodziło o" in err, err
    assert "zaindeksowane pliki" not in err  # a suggestion, not the whole index
    code, out, err = run_cli(capsys, "usun", "prawa-pacj", *two_acts_private.args)  # a unique beginning
    assert code == 0 and f"pliku {PATIENTS}" in out, err
    code, _, err = run_cli(capsys, "usun", PATIENTS, *two_acts_private.args)
    assert code == 2 and "nie ma pliku" in err


def test_usun_of_a_same_named_file_wants_its_folder(capsys, same_named_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    shutil.copytree(same_named_db, db)
    code, _, err = run_cli(capsys, "usun", "regulamin.md", "--baza", db)
    assert code == 2 and "chroma-rag usun it/regulamin.md" in err, err
    code, out, err = run_cli(capsys, "usun", "it/regulamin.md", "--baza", db)
    assert code == 0 and "Usunięto 2 fragmenty" in out, err
    assert run_cli(capsys, "pokaz", "regulamin.md", "1", "--baza", db)[0] == 0  # the other one stays, unambiguous


def test_unknown_plik_is_a_bad_option_value(capsys, two_acts_db: Path) -> None:
    code, _, err = run_cli(capsys, "szukaj", "urlop", "--plik", "prawa-kierowcy.pdf", "--baza", two_acts_db)
    assert code == 2 and "nie ma pliku „prawa-kierowcy.pdf”" in err
    code, _, err = run_cli(capsys, "pokaz", "prawa-kierowcy.pdf", "1", "--baza", two_acts_db)
    assert code == 2 and "nie ma pliku" in err


def test_podglad_at_80_columns_keeps_the_text_readable(ustawy: Path) -> None:
    shown = cli("podglad", ustawy / PATIENTS)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    text = [line for line in lines if line.startswith("  ")]
    assert text and max(len(line) for line in text) > 60  # not a 15-character column
    assert "art. 9 · str. " in shown.stdout and "Art. 9." in shown.stdout
