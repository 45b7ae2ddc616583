"""Tożsamość aktu z samego dokumentu (issue 37): tytuł i publikator z pierwszych linii pliku tekstowego i z bloku
tytułowego PDF-a, rodzaj (także umowa i regulamin), rok nigdy z daty pliku, nazwa cytowania i zwyczajowy skrót –
na prawdziwych plikach biblioteki i wspólnych PDF-ach; rozpoznawanie nazw aktów we wszystkich zapisach."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import USTAWY

from chroma_rag.errors import UnknownAct
from chroma_rag.ingest.acts import act_name, cited_short_name, short_name
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.metadata import detect_publication, detect_title, detect_type, detect_year
from chroma_rag.retrieval.references import find_references, resolve_act

LIBRARY = USTAWY.parent / "biblioteka"


def identity(path: Path) -> tuple[str, str, str, int, str, str]:
    text = load_document(path).text
    title = detect_title(text)
    return (title, detect_type(title, text), detect_publication(text), detect_year(path, text), act_name(title),
            short_name(title))


def test_every_library_act_is_identified_from_its_own_first_lines() -> None:
    files = sorted(LIBRARY.glob("*.txt"))
    assert len(files) == 66
    for path in files:
        first, second = path.read_text(encoding="utf-8").splitlines()[:2]
        title, kind, publication, year, name, short = identity(path)
        assert title == first.strip(), path.name
        assert publication.startswith(second.split(" – ")[0]), path.name  # "Dz.U. 1997 poz. 939"
        assert year == int(publication.split()[1]), path.name
        # a statute that only amends a code in its title ("… i o zmianie Kodeksu cywilnego") is no code
        assert kind == ("kodeks" if name.startswith("Kodeks") else "ustawa"), path.name
        assert name and name.lower() in title.lower().replace(" - ", " "), path.name
        assert short, f"{path.name}: bez skrótu"


@pytest.mark.parametrize(("file", "name", "short"), [
    ("kodeks-postepowania-cywilnego-DU-1964-296.txt", "Kodeks postępowania cywilnego", "k.p.c."),
    ("kodeks-spolek-handlowych-DU-2000-1037.txt", "Kodeks spółek handlowych", "k.s.h."),
    ("kodeks-karny-skarbowy-DU-1999-930.txt", "Kodeks karny skarbowy", "k.k.s."),
    ("o-wlasnosci-lokali-DU-1994-388.txt", "o własności lokali", "u.w.l."),
    ("prawo-bankowe-DU-1997-939.txt", "Prawo bankowe", "pr. bank."),
    ("ordynacja-podatkowa-DU-1997-926.txt", "Ordynacja podatkowa", "o.p."),
])
def test_citation_name_and_abbreviation(file: str, name: str, short: str) -> None:
    assert identity(LIBRARY / file)[4:] == (name, short)


def test_pdf_title_blocks() -> None:
    assert identity(USTAWY / "kodeks-cywilny-DU-1964-93.pdf")[4:] == ("Kodeks cywilny", "k.c.")
    assert identity(USTAWY / "konstytucja-DU-1997-483.pdf")[1] == "konstytucja"
    constitution = identity(USTAWY / "konstytucja-DU-1997-483.pdf")[0]
    assert short_name(constitution) == "Konstytucja RP" and cited_short_name(constitution) == "Konstytucji RP"
    # an amending act is not the act it amends
    amending = identity(USTAWY / "nowelizacja-ppsa-DU-2015-658.pdf")
    assert amending[1] == "nowelizacja" and amending[5] == ""


def test_user_documents_kind_and_no_year_from_the_file_date(tmp_path: Path) -> None:
    contract = tmp_path / "najem.md"
    contract.write_text("# Umowa najmu lokalu\n\n§ 1. Wynajmujący oddaje lokal.\n", encoding="utf-8")
    rules = tmp_path / "zasady.txt"
    rules.write_text("Regulamin pracy zdalnej\n\n§ 1. Pracownik pracuje zdalnie.\n", encoding="utf-8")
    os.utime(contract, (1_700_000_000, 1_700_000_000))  # 2023: the file's date says nothing of the document
    assert identity(contract)[1] == "umowa" and identity(contract)[3] == 0
    assert identity(rules)[1] == "regulamin" and identity(rules)[3] == 0
    dated = tmp_path / "uchwala.txt"
    dated.write_text("Regulamin z dnia 3 marca 2021 r. o pracy zdalnej\n\n§ 1. Tekst.\n", encoding="utf-8")
    assert identity(dated)[3] == 2021


@pytest.fixture(scope="module")
def titles() -> dict[str, str]:
    """Nazwa pliku → tytuł, jak przy indeksowaniu, dla 77 dokumentów biblioteki i wspólnych PDF-ów."""
    titles = {p.name: p.read_text(encoding="utf-8").splitlines()[0] for p in LIBRARY.glob("*.txt")}
    for path in USTAWY.glob("*.pdf"):
        titles[path.name] = detect_title(load_document(path).text)
    return titles


def test_library_references_and_act_filter_names(titles: dict[str, str]) -> None:
    cases = {
        "art. 148 § 1 kk": "kodeks-karny-DU-1997-553.pdf",  # not k.k.s., k.k.w. (same first words)
        "art. 33 kodeksu karnego skarbowego": "kodeks-karny-skarbowy-DU-1999-930.txt",
        "art 90 KC": "kodeks-cywilny-DU-1964-93.pdf",
        "Art. 505^1 k.p.c.": "kodeks-postepowania-cywilnego-DU-1964-296.txt",
        "art. 505 ind. 1 k.p.c.": "kodeks-postepowania-cywilnego-DU-1964-296.txt",
        "art. 23 Konstytucji RP": "konstytucja-DU-1997-483.pdf",
        "art. 7 ustawy – Prawo bankowe": "prawo-bankowe-DU-1997-939.txt",
        "art. 12 ustawy o kosztach sądowych": "o-kosztach-sadowych-w-sprawach-cywilnych-DU-2005-1398.txt",
        "art. 5 ustawy z dnia 24 czerwca 1994 r. o własności lokali": "o-wlasnosci-lokali-DU-1994-388.txt",
        "art. 70 op": "ordynacja-podatkowa-DU-1997-926.txt",
        # "p.b." is how construction law is cited ("art. 48 p.b."); banking law is "pr. bank."
        "art. 48 p.b.": "prawo-budowlane-DU-1994-414.txt",
        "art. 48 pr. bud.": "prawo-budowlane-DU-1994-414.txt",
        # an abbreviation that is also a word ("po", "pr") is one when it ends the reference or is in capitals
        "art 133 po": "prawo-oswiatowe-DU-2017-59.txt",
        "Art. 218 PR": "prawo-restrukturyzacyjne-DU-2015-978.txt",
        "Co mówi art. 120 po?": "prawo-oswiatowe-DU-2017-59.txt",
    }
    for question, file in cases.items():
        units = find_references(question, titles).units
        assert [u.files for u in units] == [[file]], question
    assert find_references("art. 148 § 1 kk", titles).units[0].subunit == "§ 1"
    assert find_references("art. 505 ind. 1 k.p.c.", titles).units[0].articles == ["505^1"]
    assert find_references("Zgodnie z Kodeksem karnym sprawca", titles).files == ["kodeks-karny-DU-1997-553.pdf"]
    assert resolve_act("KPA", titles) == ["kodeks-postepowania-administracyjnego-DU-1960-168.txt"]
    assert resolve_act("Kodeks pracy", titles) == ["kodeks-pracy-DU-1974-141.txt"]
    for unknown in ("kpw", "Prawo energetyczne", "ustawa o samorządzie"):
        with pytest.raises(UnknownAct):
            resolve_act(unknown, titles)


def test_a_longer_abbreviation_of_an_unindexed_act_is_not_its_known_beginning(titles: dict[str, str]) -> None:
    """„pr. energ.” (Prawo energetyczne, poza biblioteką) zaczyna się jak „p.r.” (Prawo restrukturyzacyjne): to
    odwołanie do aktu, którego nie ma, a nie do art. 3 p.r.; znane „pr. bank.” i „k.c.” przed zwykłym skrótem
    („tzw.”) zostają sobą."""
    cases = {"art. 3 pr. energ.": "pr. energ.", "Co mówi art. 9 pr. wod.?": "pr. wod.",
             "art. 5 ust. 1 pr. telekom.": "pr. telekom."}
    for question, spelled in cases.items():
        refs = find_references(question, titles)
        assert not refs.units and [written for written, _ in refs.unknown] == [spelled], question
    assert [u.files for u in find_references("art. 5 pr. bank.", titles).units] == [["prawo-bankowe-DU-1997-939.txt"]]
    for known in ("art. 415 k.c. tzw. czyn niedozwolony", "Wyjaśnij art. 415 kc proszę.", "art. 415 KC. Dzięki."):
        assert [u.files for u in find_references(known, titles).units] == [["kodeks-cywilny-DU-1964-93.pdf"]], known


def test_pr_before_the_rest_of_a_name_is_prawo_not_the_restructuring_law(titles: dict[str, str]) -> None:
    """„pr.” to w skrótach nazw „Prawo” („pr. o adw.”, „pr. o not.”), a nie „p.r.” (Prawo restrukturyzacyjne):
    zwyczajowe skróty „Prawa o …” nazywają swój akt, nieznany „pr. o prok.” – akt spoza dokumentów."""
    cases = {"art. 5 pr. o adw.": "prawo-o-adwokaturze-DU-1982-124.txt",
             "Co mówi art. 2 pr. o not.?": "prawo-o-notariacie-DU-1991-91.txt",
             "art. 5 ust. 1 Pr. o adw.": "prawo-o-adwokaturze-DU-1982-124.txt",
             "art. 77 pr. o u.s.p.": "prawo-o-ustroju-sadow-powszechnych-DU-2001-1070.txt"}
    for question, file in cases.items():
        assert [u.files for u in find_references(question, titles).units] == [[file]], question
    for question, written in {"art. 5 pr. o prok.": "pr. o prok.", "art. 5 pr. o miar.": "pr. o miar."}.items():
        refs = find_references(question, titles)
        assert not refs.units and [spelled for spelled, _ in refs.unknown] == [written], question
    assert [u.files for u in find_references("art. 218 pr.", titles).units] == [
        ["prawo-restrukturyzacyjne-DU-2015-978.txt"]]


def test_a_statute_by_the_name_lawyers_use_instead_of_its_title(titles: dict[str, str]) -> None:
    """„Prawo o adwokaturze” cytuje się też jako „ustawę o adwokaturze” (każde „Prawo o …”), a kilka ustaw nazwą
    zwyczajową („ustawa antymonopolowa”, „prawo autorskie”): to ich akt, nie odmowa „aktu nie ma”."""
    cases = {"art. 5 ustawy o adwokaturze": "prawo-o-adwokaturze-DU-1982-124.txt",
             "Co mówi art. 2 ustawy o notariacie?": "prawo-o-notariacie-DU-1991-91.txt",
             "art. 77 § 1 ustawy o ustroju sądów powszechnych": "prawo-o-ustroju-sadow-powszechnych-DU-2001-1070.txt",
             "art. 5 ustawy o ruchu drogowym": "prawo-o-ruchu-drogowym-DU-1997-602.txt",
             "art. 5 ustawy o szkolnictwie wyższym": "prawo-o-szkolnictwie-wyzszym-i-nauce-DU-2018-1668.txt",
             "art. 5 ustawy o zamówieniach publicznych": "prawo-zamowien-publicznych-DU-2019-2019.txt",
             "art. 5 prawa autorskiego": "o-prawie-autorskim-i-prawach-pokrewnych-DU-1994-83.txt",
             "art. 5 ustawy antymonopolowej": "o-ochronie-konkurencji-i-konsumentow-DU-2007-331.txt",
             "art. 6 ustawy systemowej": "o-systemie-ubezpieczen-spolecznych-DU-1998-887.txt",
             "art. 24 ustawy emerytalnej": "o-emeryturach-i-rentach-z-funduszu-DU-1998-1118.txt",
             "art. 10 ustawy o planowaniu przestrzennym":
                 "o-planowaniu-i-zagospodarowaniu-przestrzennym-DU-2003-717.txt",
             "art. 11 ustawy lokatorskiej": "o-ochronie-praw-lokatorow-mieszkaniowym-zasobie-DU-2001-733.txt",
             "art. 10 ustawy o zagospodarowaniu przestrzennym":
                 "o-planowaniu-i-zagospodarowaniu-przestrzennym-DU-2003-717.txt",
             "art. 24 ustawy o własności przemysłowej": "prawo-wlasnosci-przemyslowej-DU-2001-508.txt",
             "art. 5 ustawy o prawie prywatnym międzynarodowym": "prawo-prywatne-miedzynarodowe-DU-2011-432.txt"}
    for question, file in cases.items():
        assert [u.files for u in find_references(question, titles).units] == [[file]], question
    refs = find_references("art. 5 ustawy o prokuraturze", titles)  # Prawo o prokuraturze: known, not indexed
    assert not refs.units and [act.short for _, act in refs.unknown if act] == ["p.o.p."]
    assert resolve_act("ustawa o adwokaturze", titles) == ["prawo-o-adwokaturze-DU-1982-124.txt"]  # --akt
    assert resolve_act("ustawa antymonopolowa", titles) == ["o-ochronie-konkurencji-i-konsumentow-DU-2007-331.txt"]
    # "ustawy o ustroju sądów" alone may be the common courts or the administrative ones: no act, no refusal
    assert not find_references("art. 5 ustawy o ustroju sądów", titles).unknown


def test_more_spellings_lawyers_type(titles: dict[str, str]) -> None:
    """„par.” zamiast „§”, „PoRD”; skrót z kropkami albo wielkimi literami, którego nie ma w bazie („u.p.d.o.p.”,
    „RODO”) – akt spoza dokumentów, a nie art. 3 dowolnego aktu."""
    assert [(u.files, u.subunit) for u in find_references("art. 58 par. 1 kc", titles).units] == [
        (["kodeks-cywilny-DU-1964-93.pdf"], "§ 1")]
    assert [u.files for u in find_references("art. 92 PoRD", titles).units] == [
        ["prawo-o-ruchu-drogowym-DU-1997-602.txt"]]
    cases = {"art. 3 ust. 1 pkt 2 u.p.d.o.p.": "u.p.d.o.p.", "Co mówi art. 6 RODO?": "RODO",
             "art. 5 ust. 2 TFUE": "TFUE"}
    for question, spelled in cases.items():
        refs = find_references(question, titles)
        assert not refs.units and [written for written, _ in refs.unknown] == [spelled], question


def test_a_statute_named_in_short_words_or_letters(titles: dict[str, str]) -> None:
    """„ustawy o wł. lok.”, „ustawy o k.w.h.”, „ustawy o KRS”, „ustawy o VAT”, „kodeksu post. cyw.”: zaindeksowany
    akt, a nie zdanie, że go nie ma; „kodeksu karn.” to k.k., bo jego nazwa kończy się tam, gdzie skrót (k.k.s.
    i k.k.w. mają jeszcze słowo). Skrót, który pasuje do żadnego albo kilku aktów („kodeksu post.” – trzech), nie
    jest ani aktem, ani odmową."""
    cases = {"art. 5 ustawy o wł. lok.": "o-wlasnosci-lokali-DU-1994-388.txt",
             "art. 5 ustawy o ks. wiecz. i hip.": "o-ksiegach-wieczystych-i-hipotece-DU-1982-147.txt",
             "art. 5 ustawy o k.w.h.": "o-ksiegach-wieczystych-i-hipotece-DU-1982-147.txt",
             "art. 5 ustawy o KRS": "o-krajowym-rejestrze-sadowym-DU-1997-769.txt",
             "Co mówi art. 19 ust. 1 ustawy o VAT?": "o-podatku-od-towarow-i-uslug-DU-2004-535.txt",
             "art. 10 ustawy o PIT": "o-podatku-dochodowym-od-osob-fizycznych-DU-1991-350.txt",
             "art. 5 ustawy o spółdz. mieszk.": "o-spoldzielniach-mieszkaniowych-DU-2001-27.txt",
             "Co mówi art. 22 ustawy o wł. lok. o zarządzie?": "o-wlasnosci-lokali-DU-1994-388.txt",
             "art. 5 ustawy o ochr. danych os.": "ochrona-danych-osobowych-DU-1997-883.pdf",
             "art. 35 kodeksu cyw.": "kodeks-cywilny-DU-1964-93.pdf",
             "art. 5 kodeksu post. cyw.": "kodeks-postepowania-cywilnego-DU-1964-296.txt",
             "art. 148 § 1 kodeksu karn.": "kodeks-karny-DU-1997-553.pdf",
             "art. 5 kodeksu karn. wyk.": "kodeks-karny-wykonawczy-DU-1997-557.txt",
             "art. 10 Kodeksu post. adm.": "kodeks-postepowania-administracyjnego-DU-1960-168.txt",
             "Co mówi art. 201 kodeksu sp. handl. o zarządzie?": "kodeks-spolek-handlowych-DU-2000-1037.txt"}
    for question, file in cases.items():
        refs = find_references(question, titles)
        assert [u.files for u in refs.units] == [[file]] and not refs.unknown, (question, refs.unknown)
    for question in ("art. 5 ustawy o zw. nieucz. konk.", "art. 5 ustawy o ochr. środ.",  # none, several
                     "Co mówi art. 5 kodeksu post. o terminach?"):
        refs = find_references(question, titles)
        assert not refs.units and not refs.unknown, question
    # a word with a dot that ends a sentence is no shortened name: the act the index lacks is said to be missing
    refs = find_references("art. 12 ustawy o ochronie przyrody. Czy gmina może wyciąć drzewo?", titles)
    assert not refs.units and [written for written, _ in refs.unknown] == ["ustawy o ochronie przyrody"]
    refs = find_references("art. 15 ustawy o CIT", titles)  # known, not in the library: named
    assert not refs.units and [act.short for _, act in refs.unknown if act] == ["u.p.d.o.p."]


def test_the_constitution_by_its_other_name(titles: dict[str, str]) -> None:
    """„ustawa zasadnicza” to Konstytucja: w odwołaniu, w pytaniu i w filtrze aktu, w każdej odmianie."""
    constitution = "konstytucja-DU-1997-483.pdf"
    for question in ("art. 45 ustawy zasadniczej", "Co mówi art. 32 Ustawy Zasadniczej?", "art. 2 ustawą zasadniczą"):
        assert [u.files for u in find_references(question, titles).units] == [[constitution]], question
    assert find_references("Co mówi ustawa zasadnicza o wolności słowa?", titles).files == [constitution]
    assert resolve_act("ustawa zasadnicza", titles) == [constitution]
    without = {name: title for name, title in titles.items() if name != constitution}
    refs = find_references("art. 45 ustawy zasadniczej", without)
    assert not refs.units and [act.short for _, act in refs.unknown if act] == ["Konstytucja RP"]


def test_words_that_are_not_acts_stay_plain(titles: dict[str, str]) -> None:
    for question in ("art. 5 po zmianie", "art. 10 kodeksu postępowania", "Co mówi kodeks?",
                     "art. 5 pr o zmianie", "Co mówi art. 12 po nowelizacji?", "art. 5 np. w umowie",
                     "Czy art. 5 OK?", "art. 5 w zw. z art. 6", "art. 5 m.in. stanowi", "art. 5 Dz. U. z 2023 r."):
        refs = find_references(question, titles)
        assert not refs.units and not refs.unknown, question
