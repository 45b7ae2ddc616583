"""Złote testy wczytywania i cięcia 11 prawdziwych PDF-ów z ../shared/dane/ustawy."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.statute import number_key
from chroma_rag.models import Chunk

USTAWY = Path(__file__).resolve().parents[1] / ".." / "shared" / "dane" / "ustawy"
KC = "kodeks-cywilny-DU-1964-93.pdf"
KK = "kodeks-karny-DU-1997-553.pdf"
KRO = "kodeks-rodzinny-DU-1964-59.pdf"
KW = "kodeks-wykroczen-DU-1971-114.pdf"
KONSTYTUCJA = "konstytucja-DU-1997-483.pdf"
PPSA = "nowelizacja-ppsa-DU-2015-658.pdf"
ODO = "ochrona-danych-osobowych-DU-1997-883.pdf"
PACJENT = "prawa-pacjenta-DU-2009-417.pdf"
MEDYCZNA = "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf"
TECHNIKA = "rozporzadzenie-technika-prawodawcza-DU-2002-908.pdf"
LEKARZ = "zawod-lekarza-DU-1997-152.pdf"
ALL = [KC, KK, KRO, KW, KONSTYTUCJA, PPSA, ODO, PACJENT, MEDYCZNA, TECHNIKA, LEKARZ]

# numbers that really are absent from the text (e.g. KC art. 397–404: a whole repealed title, no units)
REAL_GAPS = {KC: {(396, 405)}, ODO: {(37, 39)}}
UNIT_COUNTS = {
    KC: 1298,
    KK: 405,
    KRO: 239,
    KW: 190,
    KONSTYTUCJA: 243,
    PPSA: 85,
    ODO: 71,
    PACJENT: 90,
    MEDYCZNA: 88,
    TECHNIKA: 165,
    LEKARZ: 134,
}


@cache
def chunks_of(name: str) -> tuple[Chunk, ...]:
    return tuple(chunk_document(load_document(USTAWY / name)))


def units(name: str) -> list[Chunk]:
    return [c for c in chunks_of(name) if c.art and c.part == 1]


def unit(name: str, art: str, **extra: object) -> Chunk:
    found = [c for c in units(name) if c.art == art and all(c.extra.get(k) == v for k, v in extra.items())]
    assert len(found) == 1, (name, art, extra, len(found))
    return found[0]


def distinct_key(chunk: Chunk) -> tuple[str, str, str]:
    return (
        chunk.extra.get("akt_zmieniany", ""),
        chunk.extra.get("zalacznik", ""),
        chunk.extra.get("wersja", ""),
    )


@pytest.mark.parametrize("name", ALL)
def test_unit_sequence_has_no_duplicates_and_no_false_gaps(name: str) -> None:
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for chunk in units(name):
        groups[distinct_key(chunk)].append(chunk.art)
    assert sum(len(g) for g in groups.values()) == UNIT_COUNTS[name]
    plain = groups[("", "", "")]
    assert not [a for a, n in Counter(plain).items() if n > 1]
    keys = [number_key(a.removeprefix("§ ")) for a in plain]
    assert keys == sorted(keys)
    versions = {number_key(c.art)[0] for c in units(name) if c.extra.get("wersja")}
    gaps = {
        (a[0], b[0])
        for a, b in pairwise(keys)
        if b[0] > a[0] + 1 and not set(range(a[0] + 1, b[0])) <= versions
    }
    assert gaps <= REAL_GAPS.get(name, set())


@pytest.mark.parametrize("name", ALL)
def test_ids_are_unique_per_file(name: str) -> None:
    keys = Counter((c.art, distinct_key(c), c.part) for c in chunks_of(name) if c.art)
    assert [k for k, n in keys.items() if n > 1] == []


def test_superscript_articles_resolved_from_the_pdf() -> None:
    assert unit(KC, "385^1").text.startswith("Art. 385¹.")
    assert unit(KC, "43^1").text.startswith("Art. 43¹. Przedsiębiorcą jest osoba fizyczna, osoba prawna")
    assert unit(KC, "431").text.startswith("Art. 431.\n§ 1. Kto zwierzę chowa albo się nim posługuje")
    assert [c.art for c in units(KW) if c.art.startswith("60")] == ["60", "60^1", "60^2", "60^3"]
    assert sum("^" in c.art for c in units(KRO)) >= 50


@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_typed_article_numbers_are_read_as_written(tmp_path: Path, suffix: str) -> None:
    # an excerpt with art. 1, 2 and 23: only a PDF flattens art. 2³ into "Art. 23."; a typed file means 23
    path = tmp_path / f"wyciag{suffix}"
    path.write_text("Art. 1. Pierwszy.\n\nArt. 2. Drugi.\n\nArt. 23. Pracownik ma prawo do urlopu.\n", encoding="utf-8")
    assert [c.art for c in chunk_document(load_document(path))] == ["1", "2", "23"]


def test_superscripts_in_references_inside_the_text() -> None:
    """„art. 4491” w tekście z podniesioną jedynką w PDF to odesłanie do art. 449¹, nie do art. 4491."""
    kc_text = "\n".join(c.text for c in chunks_of(KC))
    assert "na podstawie art. 449¹ nie" in kc_text and "mowa w art. 33¹ § 1," in kc_text
    assert "art. 4491" not in kc_text and "art. 331 § 1" not in kc_text
    assert "na podstawie art. 77⁵ § 2" in "\n".join(c.text for c in chunks_of(PACJENT))


def test_dual_versions_kept_apart() -> None:
    current = unit(KC, "22^1", wersja="obecna")
    future = unit(KC, "22^1", wersja="przyszla")
    assert current.text == (
        "Art. 22¹. Za konsumenta uważa się osobę fizyczną dokonującą czynności prawnej niezwiązanej "
        "bezpośrednio z jej działalnością gospodarczą lub zawodową."
    )
    assert future.text.startswith(
        "Art. 22¹. Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą"
    )
    assert "[" not in current.text and ">" not in future.text
    assert unit(KK, "66", wersja="obecna").text != unit(KK, "66", wersja="przyszla").text


def test_heading_in_two_versions_goes_with_the_matching_version() -> None:
    """„[Dział III. GWARANCJA JAKOŚCI]” i „<Dział III Gwarancja przy sprzedaży>”: obecne brzmienie art. 577
    i artykuły bez wersji mają obecny tytułu działu, przyszłe – przyszły."""
    assert unit(KC, "577", wersja="obecna").heading.endswith("Dział III. GWARANCJA JAKOŚCI")
    assert unit(KC, "577", wersja="przyszla").heading.endswith("Dział III. Gwarancja przy sprzedaży")
    assert unit(KC, "578").heading.endswith("Dział III. GWARANCJA JAKOŚCI")


def test_inline_dual_versions_of_one_paragraph_become_two_units() -> None:
    current, future = unit(KC, "557", wersja="obecna"), unit(KC, "557", wersja="przyszla")
    assert current.text == (
        "Art. 557.\n§ 1. Sprzedawca jest zwolniony od odpowiedzialności z tytułu rękojmi, jeżeli kupujący "
        "wiedział o wadzie w chwili zawarcia umowy.\n§ 2. Gdy przedmiotem sprzedaży są rzeczy oznaczone tylko co "
        "do gatunku albo rzeczy mające powstać w przyszłości, sprzedawca jest zwolniony od odpowiedzialności "
        "z tytułu rękojmi, jeżeli kupujący wiedział o wadzie w chwili wydania rzeczy."
    )
    assert "wydania rzeczy. Przepisu tego nie stosuje się, gdy kupującym jest konsument.\n§ 3. Sprzedawca" in (
        future.text
    )
    # a paragraph added only in the future version ("<§ 2. …>") and a paragraph number given only then
    assert unit(KC, "770", wersja="obecna").text.startswith("Art. 770.\nKomisant nie ponosi odpowiedzialności")
    assert unit(KC, "770", wersja="przyszla").text.endswith(
        "\n§ 2. Przepisu § 1 nie stosuje się, jeżeli kupującym jest konsument."
    )
    assert "1a. Dokumentację medyczną prowadzi się w postaci elektronicznej." not in unit(
        PACJENT, "24", wersja="obecna"
    ).text
    assert "\n1a. Dokumentację medyczną prowadzi się w postaci elektronicznej.\n2. Lekarze" in unit(
        PACJENT, "24", wersja="przyszla"
    ).text
    assert "o których mowa w art. 9 ust. 2–12, okręgowa" in unit(LEKARZ, "9a", wersja="obecna").text
    assert "o których mowa w art. 9 ust. 2 i 3–12, okręgowa" in unit(LEKARZ, "9a", wersja="przyszla").text
    # a whole chapter added in the future version ("<Dział II1 …" … "ograniczyć.>"), its raised 1 restored
    added = unit(KC, "576^4", wersja="przyszla")
    assert added.text == (
        "Art. 576⁴. Odpowiedzialności przewidzianej w niniejszym dziale nie można wyłączyć ani ograniczyć."
    )
    assert added.heading.endswith("Dział II¹. Roszczenie sprzedawcy w związku z wadliwością rzeczy sprzedanej")
    versioned = [c.text for name in (KC, KW, PACJENT, LEKARZ) for c in chunks_of(name) if c.extra.get("wersja")]
    assert not [t[:60] for t in versioned if re.search(r"[\[\]<>]", t)]


def test_repealed_units_are_marked() -> None:
    assert unit(KC, "2").extra["uchylony"] is True
    assert unit(KC, "3").extra["uchylony"] is False
    assert unit(KW, "60^2").extra["uchylony"] is True


def test_amending_act_quotes_become_units_of_the_amended_act() -> None:
    quoted = unit(PPSA, "261")
    assert (
        quoted.text
        == "Art. 261. Od sprzeciwu i zażaleń wnoszonych w sprawie prawa pomocy nie pobiera się opłat sądowych."
    )
    assert quoted.extra["akt_zmieniany"] == "Prawo o postępowaniu przed sądami administracyjnymi"
    assert unit(PPSA, "120").text.startswith("Art. 120. W trybie uproszczonym sąd rozpoznaje sprawy")
    own = [c.art for c in units(PPSA) if "akt_zmieniany" not in c.extra]
    assert own == ["1", "2", "3"]
    assert unit(PPSA, "1").text.endswith("wprowadza się następujące zmiany:")


def test_technika_annex_paragraphs_with_polish_letters_repaired() -> None:
    annex = unit(TECHNIKA, "§ 44", zalacznik="1")
    assert annex.text.startswith("§ 44. 1. Ustawa powinna wchodzić w życie w całości w jednym terminie.")
    assert unit(TECHNIKA, "§ 124", zalacznik="1").text.startswith(
        "§ 124.1. Podstawową jednostką redakcyjną i systematyzacyjną rozporządzenia jest paragraf."
    )
    assert unit(TECHNIKA, "§ 1", zalacznik=None).text.startswith(
        "§ 1. Ustala się „Zasady techniki prawodawczej”"
    )
    assert "Dział I. Projekt ustawy" in annex.heading


def test_two_column_regulation_read_in_order() -> None:
    par = unit(MEDYCZNA, "§ 22")
    assert par.text.startswith(
        "§ 22. 1. Lekarz wypisujący pacjenta wystawia na podstawie historii choroby albo karty noworodka"
    )
    ten = "\n".join(c.text for c in chunks_of(MEDYCZNA) if c.art == "§ 10")
    assert (
        ten.index("a) nazwę podmiotu")
        < ten.index("g) numer wpisu do rejestru")
        < ten.index("4) datę dokonania")
    )


def test_context_heading_pages_and_footnotes() -> None:
    art = unit(KC, "8")
    assert art.heading == (
        "Księga PIERWSZA › Część OGÓLNA › Tytuł II. OSOBY › Dział I. OSOBY FIZYCZNE › "
        "Rozdział I. Zdolność prawna i zdolność do czynności prawnych"
    )
    assert (art.page_from, art.page_to) == (2, 2)
    assert art.text.startswith("Art. 8.\n§ 1. Każdy człowiek od chwili urodzenia ma zdolność prawną.")
    assert art.extra["przypisy"].startswith("5) Oznaczenie § 1 nadane przez art. 6 pkt 1 lit. a ustawy")
    assert unit(KONSTYTUCJA, "30").text.startswith(
        "Art. 30. Przyrodzona i niezbywalna godność człowieka stanowi źródło wolności i praw człowieka"
    )
    assert unit(KONSTYTUCJA, "90").text.startswith("Art. 90")


HEADER = re.compile(
    r"©|Kancelaria Sejmu|Dziennik Ustaw\s*(Nr \d+\s*)?[–—-]\s*\d+\s*[–—-]|\b(19|20)\d\d-\d\d-\d\d\b"
)
MOJIBAKE = re.compile(r"[∏´˝Êƒ¸\ufffd\ue000\ue001]|[a-zżźćńółęąś][àç]")
FOOTNOTE_GLUED = re.compile(r"(?:Art\.|§) ?\d+[a-z]?\.\d{1,3}\)|\)\.\d{1,3}\)")
SPLIT_BEFORE_OGONEK = re.compile(r"[^\W\d_] [ąęń]")
HYPHEN_LEFT = re.compile(r"[a-ząęłńóśźż]- [a-ząęłńóśźż]")


@pytest.mark.parametrize("name", ALL)
def test_chunks_are_clean(name: str) -> None:
    texts = [c.text for c in chunks_of(name)]
    for pattern in (HEADER, MOJIBAKE, FOOTNOTE_GLUED, SPLIT_BEFORE_OGONEK):
        assert [t[:80] for t in texts if pattern.search(t)] == [], pattern.pattern
    assert sum(bool(HYPHEN_LEFT.search(t)) for t in texts) <= 2  # "społeczno- i gospodarczy" stays


@pytest.mark.parametrize("name", ALL)
def test_long_units_split_with_overlap(name: str) -> None:
    chunks = chunks_of(name)
    assert max(len(c.text) for c in chunks) <= 1200
    for first, second in pairwise(chunks):
        if second.part == first.part + 1 and second.art and second.art == first.art:
            assert second.text[:40] in first.text or len(second.text) < 40


# real words that pypdf printed with a stray space, and legit neighbours that must stay apart
REPAIRED_WORDS = {
    KONSTYTUCJA: ["Nikt nie może być", "świadczenie niektórych usług edukacyjnych"],
    KC: ["Jeżeli obowiązek płacenia renty", "Przez produkt rozumie się", "odpowiedzialność ubezpieczyciela"],
    KK: ["zatarcie skazania nie może nastąpić", "reszty kary tylko wówczas, gdy"],
    ODO: ["historycznych, statystycznych lub archiwalnych", "na piśmie Generalnemu Inspektorowi"],
    KW: ["w odległości mniejszej niż 3 m od stopy wału", "W razie popełnienia wykroczenia"],
    LEKARZ: ["lit. c lub d ustawy", "złożył PES z wynikiem"],
}
WRONGLY_GLUED = re.compile(r"\b(?:niemo że|tylkowów|nadnależytym|mod stopy|gust\.|club d|luborzecz|odakapitu|Xdodaje)")


@pytest.mark.parametrize("name", sorted(REPAIRED_WORDS))
def test_words_split_by_stray_spaces_are_joined_by_the_dictionary(name: str) -> None:
    text = "\n".join(c.text for c in chunks_of(name))
    flat = " ".join(text.split())
    for phrase in REPAIRED_WORDS[name]:
        assert phrase in flat, phrase
    assert not WRONGLY_GLUED.search(flat)
    assert not re.search(r"\b(?:nini ejszy|ta jemnica|spodzi ewana|mo że|us ług)\b", flat)
