"""`chroma-rag podglad PLIK [--json]`: cięcie pliku bez embeddingu i bez bazy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from chroma_rag.api import preview

TECHNIKA = "rozporzadzenie-technika-prawodawcza-DU-2002-908.pdf"


def test_preview_json_lists_units_with_metadata(capsys: pytest.CaptureFixture[str], ustawy: Path) -> None:
    code, out, _ = run_cli(capsys, "podglad", ustawy / TECHNIKA, "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows == preview(ustawy / TECHNIKA)
    row = next(r for r in rows if r["art"] == "§ 44" and r.get("zalacznik") == "1")
    assert row["tekst"].startswith("§ 44. 1. Ustawa powinna wchodzić w życie w całości w jednym terminie.")
    assert row["strona"] == 5 and row["strona_do"] >= 5 and row["typ"] == "rozporzadzenie" and row["rok"] == 2002
    assert "strona_od" not in row  # the same pages as in szukaj --json: strona, strona_do
    assert row["dz_u"] == "Dz.U. 2002 Nr 100 poz. 908" and row["uchylony"] is False
    assert row["tytul"].startswith("ROZPORZĄDZENIE PREZESA RADY MINISTRÓW z dnia 20 czerwca 2002 r.")


def test_preview_table_and_errors(capsys: pytest.CaptureFixture[str], ustawy: Path, tmp_path: Path) -> None:
    note = tmp_path / "notatka.md"
    note.write_text("# Zebranie\n\nZebranie zarządu w piątek o 10:00.\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "podglad", note)
    assert code == 0 and "notatka.md: 1 fragment\n" in out and "Zebranie zarządu" in out
    code, _, err = run_cli(capsys, "podglad", tmp_path / "brak.pdf")
    assert code != 0 and "Nie ma pliku" in err and "Traceback" not in err
