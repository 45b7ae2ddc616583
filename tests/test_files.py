"""Issue 13: pliki obok dokumentów (blokady Office, kopie robocze edytorów), kodowania tekstu, rok aktu z jego
treści, ocena na częściowym indeksie, pliki, których już nie ma na dysku."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import PATIENTS, run_cli
from sync_corpus import regulation

from chroma_rag.ingest.loading import load_document

AMENDMENT = "nowelizacja-ppsa-DU-2015-658.pdf"


def test_office_lock_and_editor_temp_files_are_ignored_silently(capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "umowa.txt").write_text(regulation("umowa", 2), encoding="utf-8")
    (docs / "~$umowa.docx").write_bytes(b"\x05Jan Kowalski" + b"\x00" * 149)  # Word's owner file: 162 bytes
    (docs / ".~lock.umowa.docx#").write_text(",Jan Kowalski,laptop,01.12.2026 10:00,file:///home/jan;")
    (docs / "umowa.txt~").write_text("kopia zapasowa edytora")
    (docs / "#umowa.txt#").write_text("autozapis emacsa")
    code, out, err = run_cli(capsys, "indeksuj", docs, "--baza", tmp_path / "db")
    assert code == 0, err
    assert "Pominięto" not in err and "pominięto: 0" in " ".join(out.split())
    code, out, err = run_cli(capsys, "indeksuj", docs / "~$umowa.docx", docs / "umowa.txt", "--baza", tmp_path / "db")
    assert code == 0 and "Pominięto" not in err


def test_utf16_text_with_bom_is_read(tmp_path):
    for encoding in ("utf-16", "utf-16-be"):
        path = tmp_path / f"{encoding}.txt"
        bom = "\ufeff" if encoding.endswith("be") else ""
        path.write_text(bom + "Załącznik nr 1\n\n§ 1. Źródło finansowania.\n", encoding=encoding)
        assert load_document(path).text.strip() == "Załącznik nr 1\n\n§ 1. Źródło finansowania."


def test_short_iso_8859_2_and_cp1250_texts_are_told_apart(tmp_path):
    text = "Załącznik nr 1. Świadczenia zdrowotne, źródło: ustawa.\n"
    for encoding in ("iso8859_2", "cp1250"):
        path = tmp_path / f"{encoding}.txt"
        path.write_bytes(text.encode(encoding))
        assert load_document(path).text == text, encoding


def test_docx_is_listed_wherever_supported_types_are(capsys, tmp_path):
    (tmp_path / "arkusz.xlsx").write_bytes(b"PK")
    code, _, err = run_cli(capsys, "indeksuj", tmp_path / "arkusz.xlsx", "--baza", tmp_path / "db")
    assert code == 1 and "PDF, DOCX, TXT i MD" in err
    (tmp_path / "pusty").mkdir()
    code, _, err = run_cli(capsys, "indeksuj", tmp_path / "pusty", "--baza", tmp_path / "db")
    assert code == 1 and "PDF, DOCX, TXT ani MD" in " ".join(err.split())
    code, out, _ = run_cli(capsys, "indeksuj", "--help")
    assert "DOCX" in out


def test_year_comes_from_the_act_when_the_name_has_none(tmp_path, ustawy):
    from chroma_rag.ingest.preview import preview

    renamed = tmp_path / "zmiana-ppsa.pdf"  # the amending act cites a 2012 act before its own date
    shutil.copy(ustawy / AMENDMENT, renamed)
    first = preview(renamed)[0]
    assert first["dz_u"].startswith("Dz.U. 2015") and first["rok"] == 2015


def test_ocena_skips_questions_about_files_missing_from_the_index(capsys, two_acts_db, tmp_path):
    questions = tmp_path / "pytania.jsonl"
    rows = [
        {"pytanie": "Czy pacjent może odmówić zgody?", "plik": PATIENTS, "art": ["16"]},
        {"pytanie": "Co grozi za kradzież?", "plik": "kodeks-karny-DU-1997-553.pdf", "art": ["278"]},
        {"pytanie": "Ile trwa urlop?", "plik": None, "art": [], "filtr": {"plik": "kodeks-pracy.pdf"}},
    ]
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run_cli(capsys, "ocena", questions, "--json", "--baza", two_acts_db)
    assert code == 0, err
    result = json.loads(out)
    assert result["n"] == 1 and result["pominiete"] == {
        "pytania": 2, "pliki": ["kodeks-karny-DU-1997-553.pdf", "kodeks-pracy.pdf"]
    }
    assert "pominięto 2 pytania o pliki" in err
    questions.write_text(json.dumps(rows[1]) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "ocena", questions, "--baza", two_acts_db)
    assert code == 1 and "kodeks-karny-DU-1997-553.pdf" in err


def test_bad_questions_file_is_polish(capsys, two_acts_db, tmp_path):
    questions = tmp_path / "pytania.jsonl"
    questions.write_text('{"pytanie": "x"\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "ocena", questions, "--baza", two_acts_db)
    assert code == 1 and "nie jest poprawnym JSON-em" in err and "Expecting" not in err
    code, _, err = run_cli(capsys, "ocena", tmp_path / "brak.jsonl", "--baza", two_acts_db)
    assert code == 1 and "nie istnieje" in err and "No such file" not in err


def test_files_gone_from_disk_are_mentioned(capsys, tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    docs.mkdir()
    for name in ("a.txt", "b.txt"):
        (docs / name).write_text(regulation(Path(name).stem, 1), encoding="utf-8")
    assert run_cli(capsys, "indeksuj", docs, "--baza", db)[0] == 0
    (docs / "b.txt").unlink()
    code, out, err = run_cli(capsys, "indeksuj", docs, "--baza", db)
    assert code == 0
    text = " ".join(err.split())
    assert "nie ma już w podanych folderach" in text and "b.txt" in text and "--usun-brakujace" in text
    code, out, err = run_cli(capsys, "sprawdz", "--baza", db)
    assert code == 0 and "brak na dysku: 1" in " ".join(out.split()) and str(docs / "b.txt") in out.replace("\n", "")
