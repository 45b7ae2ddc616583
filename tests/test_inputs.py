"""Issue 13: zwykłe pomyłki użytkownika (pisownia filtrów, sprzeczne lata, nazwy plików) dają błąd wywołania
albo poprawny wynik – nigdy cichą pustą odpowiedź, która wygląda jak „nie ma tego w dokumentach”."""

from __future__ import annotations

import json
import re

import pytest
from conftest import DATA_PROTECTION, PATIENTS, run_cli

from chroma_rag.errors import UserError
from chroma_rag.filters import SearchFilters


def search(capsys, db, *args: str) -> dict:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", "--baza", db)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("spelling", ["Ustawa", "USTAWA", "ustawa "])
def test_type_filter_ignores_case(capsys, two_acts_db, spelling):
    hits = search(capsys, two_acts_db, "zgoda pacjenta", "--typ", spelling)["wyniki"]
    assert hits and {h["typ"] for h in hits} == {"ustawa"}


def test_diacritics_are_accepted_for_enumerated_values(capsys, two_acts_db):
    # rozporządzenie is spelled as the user writes it; the DB has none, so the filters match nothing (exit 0)
    assert search(capsys, two_acts_db, "dokumentacja", "--typ", "rozporządzenie")["powod"] == "filtry"
    assert search(capsys, two_acts_db, "dokumentacja medyczna", "--tryb", "słowa")["wyniki"]
    from chroma_rag.retrieval.validation import fold

    assert fold("Rozporządzenie ŁÓDŹ") == "rozporzadzenie lodz"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--typ", "ustawy"],
         "dozwolone: ustawa, kodeks, rozporzadzenie, konstytucja, nowelizacja, umowa, regulamin, dokument"),
        (["--tryb", "magia"], "dozwolone: hybryda, wektor, slowa"),
        (["--od-roku", "2020", "--do-roku", "2000"], "--od-roku 2020 jest późniejszy niż --do-roku 2000"),
        (["--rok", "2009", "--od-roku", "2010"], "--rok 2009 wyklucza się z --od-roku 2010"),
        (["--rok", "-5"], "Rok (--rok) musi być liczbą od 1000 do 9999"),
        (["--prog", "2"], "Próg (--prog) to podobieństwo od 0 do 1"),
        (["-k", "0"], "musi być dodatnia"),
    ],
)
def test_bad_values_are_usage_errors(capsys, two_acts_db, args, expected):
    code, out, err = run_cli(capsys, "szukaj", "zgoda", *args, "--baza", two_acts_db)
    assert code == 2 and out == ""
    assert expected in " ".join(err.split())
    assert err.startswith("Błąd:") and err.count("\n") == 1 and "Traceback" not in err


def test_indeksuj_type_accepts_diacritics_and_rejects_unknown(capsys, tmp_path):
    doc = tmp_path / "a.txt"
    doc.write_text("Krótki regulamin.\n\n§ 1. Treść.\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", doc, "--typ", "rozporządzeniе", "--baza", tmp_path / "db")
    assert code == 2 and "dozwolone:" in err  # a Cyrillic "е" at the end: unknown, not silently accepted
    code, _, err = run_cli(capsys, "indeksuj", doc, "--typ", "Rozporządzenie", "--baza", tmp_path / "db")
    assert code == 0, err
    code, out, _ = run_cli(capsys, "lista", "--json", "--baza", tmp_path / "db")
    assert json.loads(out)[0]["typ"] == "rozporzadzenie"


def test_filters_matching_nothing_are_said_so(capsys, two_acts_db):
    result = search(capsys, two_acts_db, "zgoda", "--typ", "kodeks")
    assert result["wyniki"] == [] and result["powod"] == "filtry"
    assert search(capsys, two_acts_db, "dane", "--od-roku", "1998", "--do-roku", "2008")["powod"] == "filtry"
    code, out, _ = run_cli(capsys, "szukaj", "zgoda", "--typ", "kodeks", "--baza", two_acts_db)
    assert code == 0 and "nie pasują do żadnego fragmentu" in " ".join(out.split())
    code, out, _ = run_cli(capsys, "szukaj", "przepis na sernik z rodzynkami", "--prog", "0.99", "--baza", two_acts_db)
    assert code == 0 and "Nie znaleziono nic trafnego" in out and "nie pasują" not in out
    assert search(capsys, two_acts_db, "przepis na sernik", "--prog", "0.99")["powod"] == "prog"


@pytest.mark.parametrize(
    "given", ["prawa-pacjenta", "PRAWA-PACJENTA-DU-2009-417.PDF", "prawa-pacjenta-DU-2009-417", "Prawa-Pac"]
)
def test_plik_accepts_unambiguous_forms(capsys, two_acts_db, given):
    hits = search(capsys, two_acts_db, "zgoda", "--plik", given, "-k", "4")["wyniki"]
    assert hits and {h["plik"] for h in hits} == {PATIENTS}


def test_plik_accepts_the_path_given_to_indeksuj(capsys, two_acts_db, ustawy, monkeypatch):
    monkeypatch.chdir(ustawy.parent)
    hits = search(capsys, two_acts_db, "zgoda", "--plik", f"ustawy/{DATA_PROTECTION}", "-k", "4")["wyniki"]
    assert hits and {h["plik"] for h in hits} == {DATA_PROTECTION}
    hits = search(capsys, two_acts_db, "zgoda", "--plik", str(ustawy / PATIENTS), "--plik", DATA_PROTECTION, "-k", "9")
    assert {h["plik"] for h in hits["wyniki"]} == {PATIENTS, DATA_PROTECTION}


def test_a_prefix_of_many_library_files_lists_some_and_says_where_the_rest_are():
    """„--plik prawo” w bibliotece: 20 plików „prawo-…” – zdanie wymienia pierwsze dziesięć i mówi, ile jeszcze,
    zamiast jednego wiersza ze wszystkimi nazwami (w bibliotece 150 aktów byłoby ich kilkadziesiąt)."""
    from library_support import BIBLIOTEKA

    from chroma_rag.retrieval.validation import resolve_files

    names = sorted(p.name for p in BIBLIOTEKA.glob("*.txt"))
    starting = [n for n in names if n.startswith("prawo")]
    assert len(starting) == 20
    with pytest.raises(UserError) as raised:
        resolve_files(SearchFilters(files=["prawo"]), [(n, f"/biblioteka/{n}") for n in names])
    said = str(raised.value)
    assert f"pasuje do 20 plików, m.in.: {', '.join(starting[:10])} i 10 innych" in said
    assert starting[10] not in said and "chroma-rag lista" in said
    for surface in ("web", "mcp"):
        assert "chroma-rag" not in raised.value.message(surface) and starting[0] in raised.value.message(surface)
    assert "lista_plikow" in raised.value.message("mcp")


def test_ambiguous_or_unknown_plik_lists_candidates():
    from chroma_rag.retrieval.validation import resolve_files

    indexed = [("umowa.pdf", "/a/umowa.pdf"), ("umowa.docx", "/a/umowa.docx"), ("regulamin.txt", "/b/regulamin.txt")]
    with pytest.raises(UserError, match=re.escape("pasuje do kilku plików: umowa.docx, umowa.pdf")):
        resolve_files(SearchFilters(files=["umowa"]), indexed)
    with pytest.raises(UserError, match=re.escape("pasuje do kilku plików: umowa.docx, umowa.pdf")):
        resolve_files(SearchFilters(files=["um"]), indexed)
    with pytest.raises(UserError, match=re.escape("Może chodziło o: regulamin.txt")):
        resolve_files(SearchFilters(files=["regulamn.txt"]), indexed)
    resolved = resolve_files(SearchFilters(files=["REG", "/a/umowa.pdf"]), indexed)
    assert resolved.files == ["regulamin.txt"] and resolved.paths == ["/a/umowa.pdf"]
    # a second path of a document (documents.py) selects the path that holds its chunks
    indexed.append(("kopia-umowy.pdf", "/pobrane/kopia-umowy.pdf"))
    holders = {"/pobrane/kopia-umowy.pdf": "/a/umowa.pdf"}
    for given in ("kopia-umowy.pdf", "/pobrane/kopia-umowy.pdf", "kopia"):
        resolved = resolve_files(SearchFilters(files=[given]), indexed, holders)
        assert resolved.files == [] and resolved.paths == ["/a/umowa.pdf"], given
