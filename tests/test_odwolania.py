"""Odwołania, jakie piszą prawnicy („art 90 kc”, „art. 148 § 1 KK”, „art. 5 ustawy o własności lokali”), na
prawdziwej bazie z aktami, które mają te same numery artykułów: Kodeks wykroczeń (PDF) i trzy ustawy z biblioteki
(tekst). Wskazana jednostka jest pierwsza w każdej powierzchni (API, CLI, JSON API strony, MCP, ``pytaj``), akt
spoza indeksu to jedno polskie zdanie, ``--akt`` filtruje po nazwie albo skrócie, ``--plik`` przyjmuje nazwę
bez przyrostka Dziennika Ustaw."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
import requests
from conftest import USTAWY, run_cli
from llm_server import llm_environment
from mcp import Client
from serving_support import running_server

from chroma_rag import Index
from chroma_rag.errors import UnknownAct, UserError
from chroma_rag.filters import SearchFilters

LIBRARY = USTAWY.parent / "biblioteka"
PETTY = "kodeks-wykroczen-DU-1971-114.pdf"
FLATS = "o-wlasnosci-lokali-DU-1994-388.txt"
PRESS = "prawo-prasowe-DU-1984-24.txt"
BAILIFF_COSTS = "o-kosztach-komorniczych-DU-2018-770.txt"
MEDICAL_RECORDS = "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf"  # a regulation: paragraphs, no articles

# every spelling kind of a reference, with the file whose unit must come first (each of these acts has an art. 10)
SPELLINGS = {
    "art 10 kw": (PETTY, "10"),  # abbreviation without dots, lower case
    "art. 10 k.w.": (PETTY, "10"),  # with dots
    "Art. 10 KW": (PETTY, "10"),  # upper case
    "art. 10 k. w.": (PETTY, "10"),  # dots and spaces
    "art. 10 § 2 kw": (PETTY, "10"),  # with a paragraph of the article
    "Co mówi art. 12 k.w.?": (PETTY, "12"),  # inside a question
    "art. 10 kodeksu wykroczeń": (PETTY, "10"),  # the code's name, declined
    "artykuł 10 Kodeksu wykroczeń": (PETTY, "10"),
    "art. 10 ustawy o własności lokali": (FLATS, "10"),  # a statute by its subject
    "art. 10 ustawy z dnia 24 czerwca 1994 r. o własności lokali": (FLATS, "10"),  # with its date
    "art. 10 u.w.l.": (FLATS, "10"),  # a statute's customary abbreviation
    "art. 10 uwl": (FLATS, "10"),
    "art. 10 Prawa prasowego": (PRESS, "10"),  # an act named "Prawo …", declined
    "art. 10 ustawy – Prawo prasowe": (PRESS, "10"),
    "art. 10 pr. pras.": (PRESS, "10"),
    "art. 10 ustawy o kosztach komorniczych": (BAILIFF_COSTS, "10"),
    "art. 10 ustawy o wlasnosci lokali": (FLATS, "10"),  # without Polish letters
    "art. 10 ust 2 ustawy z 24.06.1994 r. o własności lokali": (FLATS, "10"),  # a date in digits, "ust" without a dot
    "art. 10 § 1 i 2 kw": (PETTY, "10"),  # several paragraphs of the article
    "art. 10 ust. 1–3 u.w.l.": (FLATS, "10"),  # a range of its sections
    "art. 10 w zw. z art. 12 u.w.l.": (FLATS, "10"),  # the act at the end covers both
    "§ 10 ust. 1 rozporządzenia w sprawie dokumentacji medycznej": (MEDICAL_RECORDS, "§ 10"),  # a regulation's unit
    "art. 10 ustawy z dnia 24 czerwca 1994 r. (Dz.U. z 2021 r. poz. 1048)": (FLATS, "10"),  # by its date alone
    "Art. 10. ust. 2 zdanie drugie u.w.l.": (FLATS, "10"),  # as the article heads it, a sentence in words
    "art. 12 k.w. w zw. z art. 10. § 1 pkt 2 lit. b) k.w.": (PETTY, "12"),
    "KW art. 10 § 1": (PETTY, "10"),  # the act before the article, as in notes
    "Ustawa o własności lokali, art. 10": (FLATS, "10"),
    "art. 10 ustawy o wł. lok.": (FLATS, "10"),  # the name shortened word by word
    "art. 10 kodeksu wykr.": (PETTY, "10"),  # a code's name shortened
    "art.10§2kw": (PETTY, "10"),  # typed without spaces
    "art.10ust.2uwl": (FLATS, "10"),
    "art. 10 ustawy z 1994 r. o własności lokali": (FLATS, "10"),  # the statute's year alone before its name
    "art. 10 ustawy z 1984 r.": (PRESS, "10"),  # the year alone: the acts of that year (here one)
    "art. 10 § 1 i art. 12 kw": (PETTY, "10"),  # two provisions joined, the act named after the second
}


@pytest.fixture(scope="module")
def library_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("odwolania") / "db"
    Index(db).add([USTAWY / PETTY, LIBRARY / FLATS, LIBRARY / PRESS, LIBRARY / BAILIFF_COSTS, USTAWY / MEDICAL_RECORDS])
    return db


def test_every_spelling_puts_the_cited_unit_first(library_db: Path) -> None:
    index = Index(library_db)
    for question, (file, art) in SPELLINGS.items():
        hits = index.search(question, k=5)
        assert hits, question  # never "nothing relevant"
        assert (hits[0].file, hits[0].art) == (file, art), question
        assert hits[0].cited


def test_two_references_keep_their_order_and_the_rest_ranks_the_rest(library_db: Path) -> None:
    hits = Index(library_db).search("art. 12 u.w.l. i art 10 kw – czy wspólnota może sprzedać lokal?", k=5)
    assert [(h.file, h.art) for h in hits[:2]] == [(FLATS, "12"), (PETTY, "10")]
    assert len({(h.file, h.art) for h in hits}) == 5  # the question's own ranking fills the rest


def test_a_range_of_articles_puts_each_of_them_first_in_order(library_db: Path) -> None:
    """„art. 10–12 u.w.l.”, jak piszą prawnicy (półpauza): trzy jednostki po kolei, a nie pusty wynik."""
    for question in ("art. 10–12 u.w.l.", "art. 10-12 ustawy o własności lokali"):
        hits = Index(library_db).search(question, k=5)
        assert [(h.file, h.art, h.cited) for h in hits[:3]] == [(FLATS, a, True) for a in ("10", "11", "12")], [
            (h.file, h.art) for h in hits]


def test_citation_shows_the_customary_abbreviation(library_db: Path, capsys) -> None:
    hit = Index(library_db).search("art 10 kw", k=1)[0]
    assert hit.cited_unit == "art. 10 k.w." and hit.metadata["skrot"] == "k.w."
    assert hit.to_json()["skrot"] == "k.w."
    code, out, _ = run_cli(capsys, "szukaj", "art 10 kw", "--baza", library_db, "-k", "1")
    assert code == 0 and f"1. {PETTY} · art. 10 k.w." in out
    # the part of the unit the question named is part of the citation, as a lawyer writes it
    hit = Index(library_db).search("Co mówi art. 10 §1 pkt. 2 kw?", k=1)[0]
    assert hit.cited_unit == "art. 10 § 1 pkt 2 k.w." and hit.to_json()["podjednostka"] == "§ 1 pkt 2"
    assert "podjednostka" not in Index(library_db).search("art 10 kw", k=1)[0].to_json()
    # only a part the unit has: art. 5 u.w.l. has no numbered paragraphs, art. 12 k.w. no § 1, art. 10 k.w. no § 7
    for question, unit in {"art. 5 ust 1-2 uwl": "art. 5 u.w.l.", "art. 12 § 1 kw": "art. 12 k.w.",
                           "art. 10 § 7 kw": "art. 10 k.w.", "art. 10 ust. 2 kw": "art. 10 k.w.",
                           "art. 10 § 2 pkt 1 kw": "art. 10 § 2 pkt 1 k.w."}.items():
        assert Index(library_db).search(question, k=1)[0].cited_unit == unit, question
    code, out, _ = run_cli(capsys, "szukaj", "art. 5 ust 1-2 uwl", "--baza", library_db, "-k", "1")
    assert code == 0 and f"1. {FLATS} · art. 5 u.w.l." in out and "ust." not in out.splitlines()[0]
    code, out, _ = run_cli(capsys, "szukaj", "art. 10 § 1 i 2 kw", "--baza", library_db, "-k", "1")
    assert code == 0 and f"1. {PETTY} · art. 10 § 1 i 2 k.w." in out


def test_an_act_not_indexed_is_one_polish_sentence(library_db: Path, capsys) -> None:
    index = Index(library_db)
    with pytest.raises(UnknownAct) as raised:
        index.search("art. 148 § 1 kk", k=5)
    assert "Aktu „kk” (Kodeks karny) nie ma w dokumentach" in str(raised.value)
    # a statute known by its customary abbreviation is named as a statute, not by its bare "o …" name
    with pytest.raises(UnknownAct, match="Aktu „uznk” \\(ustawa o zwalczaniu nieuczciwej konkurencji\\) nie ma"):
        index.search("art. 3 uznk", k=5)
    with pytest.raises(UnknownAct, match="Aktu „ustawy o partiach politycznych” nie ma"):
        index.search("art. 5 ustawy o partiach politycznych", k=5)
    code, out, err = run_cli(capsys, "szukaj", "Co mówi art. 505 k.p.c.?", "--baza", library_db)
    assert code == 1 and not out
    assert err.count("\n") == 1 and "Aktu „k.p.c.” (Kodeks postępowania cywilnego) nie ma w dokumentach" in err
    assert "Traceback" not in err


def test_akt_filter_by_name_or_abbreviation(library_db: Path, capsys) -> None:
    index = Index(library_db)
    for act in ("kw", "K.W.", "Kodeks wykroczeń"):
        hits = index.search("kara grzywny", k=5, filters=SearchFilters(acts=[act]))
        assert hits and {h.file for h in hits} == {PETTY}, act
    both = index.search("lokal", k=10, filters=SearchFilters(acts=["ustawa o własności lokali", "pr. pras."]))
    assert {h.file for h in both} <= {FLATS, PRESS} and FLATS in {h.file for h in both}
    code, out, _ = run_cli(capsys, "szukaj", "kara grzywny", "--akt", "kw", "--baza", library_db, "--json")
    assert code == 0 and {h["plik"] for h in json.loads(out)["wyniki"]} == {PETTY}
    code, plain, _ = run_cli(capsys, "szukaj", "kara grzywny", "--baza", library_db, "--json")
    code_blank, blank, _ = run_cli(capsys, "szukaj", "kara grzywny", "--akt", " ", "--baza", library_db, "--json")
    assert code == code_blank == 0 and json.loads(blank)["wyniki"] == json.loads(plain)["wyniki"]  # limits nothing
    code, _, err = run_cli(capsys, "szukaj", "kara", "--akt", "kpk", "--baza", library_db)
    assert code == 2 and "Aktu „kpk” (Kodeks postępowania karnego) nie ma w dokumentach" in err
    assert "--akt" not in err or "chroma-rag lista" in err


def test_plik_without_the_publication_suffix(library_db: Path, capsys) -> None:
    code, out, err = run_cli(capsys, "szukaj", "lokal", "--plik", "o-wlasnosci-lokali.txt", "--baza", library_db,
                             "--json")
    assert code == 0, err
    assert {h["plik"] for h in json.loads(out)["wyniki"]} == {FLATS}
    code, out, err = run_cli(capsys, "szukaj", "lokal", "--plik", "o-", "--baza", library_db)
    assert code == 2 and not out and f"pasuje do kilku plików: {BAILIFF_COSTS}, {FLATS}" in err


def test_page_api_cites_first_and_speaks_to_a_team_member(library_db: Path) -> None:
    with running_server(library_db) as base:
        found = requests.get(f"{base}/api/szukaj", params={"q": "art 10 kw", "k": 3}, timeout=60).json()
        assert (found["wyniki"][0]["plik"], found["wyniki"][0]["art"]) == (PETTY, "10")
        filtered = requests.get(f"{base}/api/szukaj", params={"q": "kara", "akt": "k.w."}, timeout=60).json()
        assert {h["plik"] for h in filtered["wyniki"]} == {PETTY}
        missing = requests.get(f"{base}/api/szukaj", params={"q": "art. 148 kk"}, timeout=60)
        assert missing.status_code == 404
        said = missing.json()["blad"]
        assert "Aktu „kk” (Kodeks karny) nie ma w dokumentach" in said and "chroma-rag" not in said
        bad_filter = requests.get(f"{base}/api/szukaj", params={"q": "kara", "akt": "kpk"}, timeout=60)
        assert bad_filter.status_code == 404 and "wybierz akt z listy" in bad_filter.json()["blad"]
        # the part of the unit the question named, and the act's abbreviation of the whole unit, as the page shows them
        part = requests.get(f"{base}/api/szukaj", params={"q": "art. 10 § 1 kw", "k": 1}, timeout=60).json()
        assert (part["wyniki"][0]["art"], part["wyniki"][0]["podjednostka"]) == ("10", "§ 1")
        absent = requests.get(f"{base}/api/szukaj", params={"q": "art. 5 ust. 2 uwl", "k": 1}, timeout=60).json()
        assert absent["wyniki"][0]["art"] == "5" and "podjednostka" not in absent["wyniki"][0]
        unit = requests.get(f"{base}/api/jednostka", params={"plik": PETTY, "art": "10"}, timeout=60).json()
        assert unit["skrot"] == "k.w."


def test_mcp_cites_first_with_the_abbreviation(library_db: Path) -> None:
    with running_server(library_db) as base:
        async def main() -> None:
            async with Client(f"{base}/mcp") as client:
                result = await client.call_tool("szukaj", {"pytanie": "art. 10 ustawy o własności lokali", "k": 3})
                first = json.loads(result.content[0].text)["wyniki"][0]
                assert (first["plik"], first["jednostka"]) == (FLATS, "art. 10")
                assert first["cytat"] == f"[{FLATS}, art. 10 u.w.l.]"
                part = await client.call_tool("szukaj", {"pytanie": "art. 3 ust. 2 ustawy o własności lokali", "k": 1})
                assert json.loads(part.content[0].text)["wyniki"][0]["cytat"] == f"[{FLATS}, art. 3 ust. 2 u.w.l.]"
                unit = await client.call_tool("pokaz_jednostke", {"plik": FLATS, "art": "10"})
                assert json.loads(unit.content[0].text)["cytat"] == f"[{FLATS}, art. 10 u.w.l.]"
                filtered = await client.call_tool("szukaj", {"pytanie": "kara", "akt": "kw"})
                assert {h["plik"] for h in json.loads(filtered.content[0].text)["wyniki"]} == {PETTY}
                missing = await client.call_tool("szukaj", {"pytanie": "art. 148 kk"})
                assert missing.is_error and "Aktu „kk” (Kodeks karny) nie ma w dokumentach" in missing.content[0].text
                assert "lista_plikow" in missing.content[0].text and "chroma-rag" not in missing.content[0].text

        anyio.run(main)


def test_pytaj_sends_the_cited_unit_as_the_best_fragment(library_db: Path, monkeypatch, tmp_path, capsys) -> None:
    with llm_environment(monkeypatch, tmp_path, "klucz") as fake:
        monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "0")
        code, _, err = run_cli(capsys, "pytaj", "Co stanowi art. 10 Prawa prasowego?", "--baza", library_db)
        assert code == 0, err
        sent = fake.requests[-1].body["messages"][-1]["content"]
        # fragments go from the least to the most relevant: the cited unit stands right before the question
        last_block = sent.rsplit("=== Fragment", 1)[1]
        assert f"{PRESS}, art. 10 pr. pras.]" in last_block.split("\n", 1)[0]
        code, _, err = run_cli(capsys, "pytaj", "Co stanowi art. 10 ust. 1 Prawa prasowego?", "--baza", library_db)
        assert code == 0, err
        last_block = fake.requests[-1].body["messages"][-1]["content"].rsplit("=== Fragment", 1)[1]
        assert f"{PRESS}, art. 10 ust. 1 pr. pras.]" in last_block.split("\n", 1)[0]


def test_a_unit_the_act_does_not_have_is_said_so(library_db: Path) -> None:
    from chroma_rag.errors import MissingUnit

    with pytest.raises(MissingUnit, match=f"W pliku „{PETTY}” nie ma jednostki art. 9999"):
        Index(library_db).search("art. 9999 kw", k=5)


def test_pokaz_takes_the_act_by_its_abbreviation_or_name(library_db: Path, capsys) -> None:
    for act in ("kw", "Kodeks wykroczeń", "u.w.l."):
        code, out, err = run_cli(capsys, "pokaz", act, "10", "--baza", library_db)
        assert code == 0, err
        assert out.startswith(f"{PETTY if act != 'u.w.l.' else FLATS} · art. 10")


def test_a_reference_to_an_act_the_filter_leaves_out_says_so(library_db: Path, capsys) -> None:
    """„art 10 kw” przy zawężeniu do ustawy o własności lokali (albo do art. 12): nie art. 10 tej ustawy czy inny
    artykuł pokazany tak, jakby o niego pytano, tylko jedno zdanie, że odwołanie i filtry się wykluczają – w słowach
    każdej powierzchni."""
    index = Index(library_db)
    for filters in (SearchFilters(acts=["u.w.l."]), SearchFilters(files=[FLATS]), SearchFilters(articles=["12"])):
        with pytest.raises(UserError) as raised:
            index.search("art 10 kw", k=5, filters=filters)
        assert "art. 10 kw" in str(raised.value) and "--akt" in str(raised.value), str(raised.value)
    # a unit of the filtered act beside it: that one is shown, the other reference just drops
    hits = index.search("art. 12 u.w.l. i art 10 kw", k=5, filters=SearchFilters(acts=["u.w.l."]))
    assert (hits[0].file, hits[0].art) == (FLATS, "12") and {h.file for h in hits} == {FLATS}
    code, out, err = run_cli(capsys, "szukaj", "art 10 kw", "--akt", "u.w.l.", "--baza", library_db)
    assert code == 2 and not out and err.count("\n") == 1 and "--akt" in err, err
    with running_server(library_db) as base:
        refused = requests.get(f"{base}/api/szukaj", params={"q": "art 10 kw", "akt": "u.w.l."}, timeout=60)
        said = refused.json()["blad"]
        assert refused.status_code == 400 and "art. 10 kw" in said and "--" not in said, said

        async def main() -> str:
            async with Client(f"{base}/mcp") as client:
                result = await client.call_tool("szukaj", {"pytanie": "art 10 kw", "akt": "u.w.l."})
                assert result.is_error
                return result.content[0].text

        told = anyio.run(main)
        assert "art. 10 kw" in told and "„akt”" in told and "--" not in told, told


@pytest.mark.parametrize("question", ["art. 12 u.w.l. i art 10 kw", "art. 10 i art. 12 – kto zarządza lokalem?"])
def test_the_art_filter_holds_for_every_reference_in_the_question(library_db: Path, question: str) -> None:
    """``--art 12`` przy pytaniu, które wskazuje też inne artykuły (z aktem albo bez): w wynikach tylko art. 12 –
    odwołanie wybiera akt i kolejność, a nie omija filtra użytkownika."""
    hits = Index(library_db).search(question, k=10, filters=SearchFilters(articles=["12"]))
    # "--art 12" is art. 12 of a statute and § 12 of the regulation beside them
    assert hits and {h.art for h in hits} <= {"12", "§ 12"}, [(h.file, h.art) for h in hits]


def test_a_reference_the_kind_or_year_filter_leaves_out_says_so(library_db: Path, capsys) -> None:
    """„art 10 kw” z ``--typ ustawa`` albo ``--od-roku 1990`` (Kodeks wykroczeń to kodeks z 1971 r.): zdanie, że filtry
    wykluczają wskazaną jednostkę – a nie „nic nie znaleziono”, jakby takiego artykułu nie było, ani art. 10 ustawy."""
    index = Index(library_db)
    for filters, option in ((SearchFilters(types=["ustawa"]), "--typ"), (SearchFilters(year_from=1990), "--od-roku")):
        with pytest.raises(UserError) as raised:
            index.search("art 10 kw – kara grzywny", k=5, filters=filters)
        assert "art. 10 kw" in str(raised.value) and option in str(raised.value), str(raised.value)
    # beside a unit the filters keep, the excluded reference only drops
    hits = index.search("art. 12 u.w.l. i art 10 kw", k=5, filters=SearchFilters(types=["ustawa"]))
    assert (hits[0].file, hits[0].art) == (FLATS, "12") and PETTY not in {h.file for h in hits}
    code, out, err = run_cli(capsys, "szukaj", "art 10 kw", "--typ", "ustawa", "--baza", library_db)
    assert code == 2 and not out and err.count("\n") == 1 and "--typ" in err, err
    with running_server(library_db) as base:
        refused = requests.get(f"{base}/api/szukaj", params={"q": "art 10 kw", "od_roku": 1990}, timeout=60)
        said = refused.json()["blad"]
        assert refused.status_code == 400 and "art. 10 kw" in said and "--" not in said and "lata" in said, said

        async def main() -> str:
            async with Client(f"{base}/mcp") as client:
                result = await client.call_tool("szukaj", {"pytanie": "art 10 kw", "typ": ["ustawa"]})
                assert result.is_error
                return result.content[0].text

        told = anyio.run(main)
        assert "art. 10 kw" in told and "„typ”" in told and "--" not in told, told


def test_a_paragraph_of_the_teams_own_rules_by_their_title(tmp_path: Path) -> None:
    """HR pyta „§ 3 regulaminu pracy zdalnej”: § 3 tego regulaminu, a nie § 3 rozporządzenia obok; „§ 3 umowy o
    pracę” (dokumentu, którego zespół nie ma) nie wybiera regulaminu ani nie jest zdaniem o braku aktu."""
    rules = tmp_path / "dokumenty" / "regulamin-zdalnej.md"
    rules.parent.mkdir()
    rules.write_text(
        "# Regulamin pracy zdalnej\n\n§ 1. Regulamin określa zasady pracy zdalnej w spółce.\n\n"
        "§ 2. Pracę zdalną wykonuje się na wniosek pracownika.\n\n"
        "§ 3. Pracownik może pracować zdalnie najwyżej trzy dni w tygodniu.\n\n"
        "§ 4. Spółka zwraca koszty energii elektrycznej ryczałtem.\n", encoding="utf-8")
    db = tmp_path / "db"
    Index(db).add([rules.parent, USTAWY / MEDICAL_RECORDS])
    for question in ("§ 3 regulaminu pracy zdalnej", "Co mówi § 3 Regulaminu pracy zdalnej?"):
        hits = Index(db).search(question, k=3)
        assert (hits[0].file, hits[0].art, hits[0].cited) == (rules.name, "§ 3", True), question
    hits = Index(db).search("§ 3 umowy o pracę", k=3)
    assert hits and not hits[0].cited


def test_a_cited_paragraph_of_a_long_article_shows_the_part_that_holds_it(tmp_path: Path) -> None:
    """„art. 19 ust. 13 ustawy o VAT”: art. 19 ma 11 części; pokazana jest ta, w której zaczyna się ust. 13, a nie
    ta, która najbardziej przypomina pytanie."""
    vat = "o-podatku-od-towarow-i-uslug-DU-2004-535.txt"
    db = tmp_path / "db"
    Index(db).add([LIBRARY / vat])
    for question, number in (("art. 19 ust. 13 pkt 1 ustawy o VAT", 13), ("Co mówi art. 19 ust. 2 u.p.t.u.?", 2),
                             ("art. 19 ust. 21 ustawy o VAT", 21)):
        hit = Index(db).search(question, k=1)[0]
        assert (hit.file, hit.art, hit.cited) == (vat, "19", True), question
        # "13. Jeżeli …" begins the paragraph; "w ust. 13. " only mentions it
        assert re.search(rf"(?<!ust\. )(?<![\d.]){number}\. [A-ZŁŚŻ]", hit.text), (question, hit.metadata["fragment"])
    # the article alone, nothing more asked: from its beginning, not the part most like "ustawa o VAT"
    for question in ("art. 19 ustawy o VAT", "Co mówi art. 19 u.p.t.u.?", "u.p.t.u. art. 19"):
        hit = Index(db).search(question, k=1)[0]
        assert (hit.art, hit.metadata["fragment"]) == ("19", 1), question


def test_a_date_of_several_acts_cites_the_unit_of_each(tmp_path: Path) -> None:
    """„art. 5 ustawy z dnia 6 czerwca 1997 r.” – tego dnia uchwalono k.p.k. i k.k.w. (oba w bazie, początki do
    art. 8): art. 5 każdego z nich na pierwszych miejscach, a art. 5 ustawy o własności lokali (inna data) za nimi."""
    docs = tmp_path / "dokumenty"
    docs.mkdir()
    procedure, execution = "kodeks-postepowania-karnego-DU-1997-555.txt", "kodeks-karny-wykonawczy-DU-1997-557.txt"
    for name in (procedure, execution, FLATS):
        lines = (LIBRARY / name).read_text(encoding="utf-8").splitlines()
        end = next(i for i, line in enumerate(lines) if line.startswith("Art. 9."))
        (docs / name).write_text("\n".join(lines[:end]) + "\n", encoding="utf-8")
    db = tmp_path / "db"
    Index(db).add([docs])
    hits = Index(db).search("art. 5 ustawy z dnia 6 czerwca 1997 r.", k=5)
    assert {(h.file, h.art, h.cited) for h in hits[:2]} == {(procedure, "5", True), (execution, "5", True)}
    assert (FLATS, "5") not in {(h.file, h.art) for h in hits[:2]}
