"""Cała jednostka: `Index.unit` i `chroma-rag pokaz` na prawdziwej bazie dwóch ustaw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PATIENTS, run_cli

from chroma_rag import Index
from chroma_rag.errors import UserError
from chroma_rag.ingest.preview import preview
from chroma_rag.models import Hit
from chroma_rag.retrieval.units import assemble_unit, join_overlapping


def unit_rows(path: Path, art: str, version: str | None = None) -> list[dict]:
    return [r for r in preview(path) if r["art"] == art and r.get("wersja") == version]


def test_parts_are_joined_without_their_overlap(ustawy: Path) -> None:
    rows = unit_rows(ustawy / PATIENTS, "9")
    assert len(rows) > 1, "art. 9 ustawy o prawach pacjenta ma kilka części"
    joined = rows[0]["tekst"]
    for row in rows[1:]:
        joined = join_overlapping(joined, row["tekst"])
    assert all(row["tekst"] in joined for row in rows)
    assert len(joined) < sum(len(row["tekst"]) for row in rows)  # the overlaps appear once
    assert joined.count("1. Pacjent ma prawo do informacji o swoim stanie zdrowia.") == 1
    assert joined.rstrip().endswith(rows[-1]["tekst"].rstrip())


def test_parts_without_common_edge_are_kept_whole() -> None:
    assert join_overlapping("Art. 1. Pierwsze zdanie.", "Drugie zdanie.") == "Art. 1. Pierwsze zdanie.\nDrugie zdanie."


def test_index_unit_whole_article(two_acts_db: Path) -> None:
    index = Index(two_acts_db)
    unit = index.unit(PATIENTS, "9")
    chunks = [h for h in index.search("informacja o stanie zdrowia", k=20, filters=None) if h.art == "9"]
    assert unit.file == PATIENTS and unit.label == "art. 9" and not unit.repealed
    [version] = unit.versions
    assert version.version is None and version.parts > 1
    assert version.heading == "Rozdział 3. Prawo pacjenta do informacji"
    assert version.text.startswith("Art. 9.") and "rokowaniu" in version.text
    assert all(chunk.text in version.text for chunk in chunks)
    assert (unit.page_from, unit.page_to) == (3, 4)
    assert index.unit(PATIENTS, "art. 9").to_json() == unit.to_json()


def test_index_unit_current_and_future_wording(two_acts_db: Path) -> None:
    unit = Index(two_acts_db).unit(PATIENTS, "24")
    assert [v.version for v in unit.versions] == ["obecna", "przyszla"]
    current, future = (v.text for v in unit.versions)
    assert current != future
    data = unit.to_json()
    assert [v["wersja"] for v in data["wersje"]] == ["obecna", "przyszla"]
    assert data["jednostka"] == "art. 24" and data["plik"] == PATIENTS


@pytest.mark.parametrize(
    ("file", "art", "message"),
    [
        (PATIENTS, "999", "nie ma jednostki art. 999"),
        (PATIENTS, "§ 9", "nie ma jednostki § 9"),
        (PATIENTS, "  ", "Podaj numer artykułu"),
        ("prawa-kierowcy.pdf", "9", "W indeksie nie ma pliku „prawa-kierowcy.pdf”"),
    ],
)
def test_index_unit_bad_input(two_acts_db: Path, file: str, art: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        Index(two_acts_db).unit(file, art)


def test_assemble_prefers_the_acts_own_unit_over_a_quoted_one() -> None:
    def hit(text: str, **meta: object) -> Hit:
        return Hit(id=text, text=text, metadata={"plik": "n.pdf", "art": "5", "fragment": 1, **meta}, similarity=0)

    quoted = hit("Art. 5. brzmienie ustawy zmienianej", akt_zmieniany="ustawa o X")
    own = hit("Art. 5. Ustawa wchodzi w życie po 14 dniach.")
    unit = assemble_unit("n.pdf", "5", [quoted, own])
    assert [v.text for v in unit.versions] == [own.text]


def test_pokaz_cli(two_acts_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(capsys, "pokaz", PATIENTS, "24", "--baza", two_acts_db)
    assert code == 0
    assert f"{PATIENTS} · art. 24 u.p.p. · str." in out
    assert "[obecna]" in out and "<przyszła>" in out
    code, out, _ = run_cli(capsys, "pokaz", PATIENTS, "24", "--json", "--baza", two_acts_db)
    assert code == 0 and json.loads(out) == Index(two_acts_db).unit(PATIENTS, "24").to_json()
    data = json.loads(out)  # page fields as in szukaj --json (README, „Pola stron”): strona, strona_do
    for pages in (data, *data["wersje"]):
        assert "strona_od" not in pages and 1 <= pages["strona"] <= pages["strona_do"]
    code, out, _ = run_cli(capsys, "pokaz", "Prawa-Pacjenta", "24", "--baza", two_acts_db)  # like --plik: unique prefix
    assert code == 0 and f"{PATIENTS} · art. 24 u.p.p. · str." in out
    code, out, err = run_cli(capsys, "pokaz", PATIENTS, "999", "--baza", two_acts_db)
    assert code == 1 and "nie ma jednostki art. 999" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "pokaz", PATIENTS, "--baza", two_acts_db)
    assert code == 2 and "ART" in err


def test_pokaz_takes_the_unit_as_a_lawyer_writes_it(two_acts_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """„pokaz kpc art. 747”, „art. 24 ust. 1”, „Art. 9 § 2”: the whole article, not „Za dużo argumentów”."""
    for spelled in (["art.", "24"], ["art", "24"], ["Art.", "24", "ust.", "1"], ["art. 24 pkt 2"], ["artykuł", "24"]):
        code, out, err = run_cli(capsys, "pokaz", PATIENTS, *spelled, "--baza", two_acts_db)
        assert code == 0, (spelled, err)
        assert f"{PATIENTS} · art. 24 u.p.p. · str." in out
    assert Index(two_acts_db).unit(PATIENTS, "art. 9 § 2").art == "9"


def test_szukaj_says_how_to_open_the_whole_unit(two_acts_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "szukaj", "prawo do informacji o stanie zdrowia", "--baza", two_acts_db)
    assert code == 0
    assert out.strip().splitlines()[-1] == f"Całą jednostkę pokaże: chroma-rag pokaz {PATIENTS} 9"
    code, out, _ = run_cli(capsys, "szukaj", "prawo do informacji", "--json", "--baza", two_acts_db)
    assert "chroma-rag pokaz" not in out


def test_a_name_of_two_different_files_is_refused_and_a_path_chooses_one(capsys, same_named_db):
    code, out, err = run_cli(capsys, "pokaz", "regulamin.md", "1", "--baza", same_named_db)
    assert code == 1 and "kilku różnych plików" in err and "kadry" in err and "it" in err and not out
    it_path = next(info.path for info in Index(same_named_db).files() if "/it/" in info.path)
    code, out, err = run_cli(capsys, "szukaj", "urlop od pracy przy serwerach", "--baza", same_named_db, "--prog", "0")
    assert code == 0 and f"chroma-rag pokaz {it_path} 1" in out  # the hint names the path, not the name
    # also when only one of the two files is among the results: the name is shared in the index
    code, out, err = run_cli(capsys, "szukaj", "urlop", "--plik", "it/regulamin.md", "--baza", same_named_db,
                             "--prog", "0")
    assert code == 0 and f"chroma-rag pokaz {it_path} 1" in out
    code, out, err = run_cli(capsys, "pokaz", it_path, "1", "--baza", same_named_db)
    assert code == 0, err
    assert "administratorowi" in out and "kierownik" not in out

