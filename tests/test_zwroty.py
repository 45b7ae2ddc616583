"""Zwroty i cytaty pytania w przepisie (``derived.phrases``, listy stopniowane ``frazy/pytanie``
i ``cytat/pytanie``): pytanie, które nazywa akt i powtarza słowa przepisu („Zgodnie z Kodeksem postępowania
cywilnego, rozpoznawanie spraw odbywa się:”, „Zgodnie z Kodeksem wykroczeń, czynem zabronionym jest:”), stawia ten
przepis wyżej – na prawdziwym tekście KPC z biblioteki i prawdziwej bazie (bez tych list art. 9 jest tu siódmy,
art. 47 k.w. bez listy cytatów też siódmy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from library_support import BIBLIOTEKA, CIVIL_PROCEDURE, PETTY_OFFENCES, library_db

from chroma_rag import Index
from chroma_rag.derived import KeywordIndex
from chroma_rag.derived.phrases import phrase_score, question_pairs, quoted_run
from chroma_rag.retrieval.calibration import DEFAULT_FUSION, FusionSettings
from chroma_rag.retrieval.search import FusionList, SearchRequest, fuse, graded

KPC_TITLE = "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego"
STEM = "Zgodnie z Kodeksem postępowania cywilnego, rozpoznawanie spraw odbywa się:"
# one content word after the act's name, so no pair of words: only the quote finds art. 47 k.w.
QUOTING_STEM = "Zgodnie z Kodeksem wykroczeń, czynem zabronionym jest:"


def kpc_articles(*numbers: str) -> dict[str, str]:
    lines = (BIBLIOTEKA / CIVIL_PROCEDURE).read_text(encoding="utf-8").splitlines()
    return {n: next(line for line in lines if line.startswith(f"Art. {n}. ")) for n in numbers}


def test_act_name_splits_the_question_and_pairs_keep_their_order():
    readings = [("kodeks",), ("postępowanie",), ("cywilny",), ("rozpoznawanie",), ("sprawa",), ("odbywać",)]
    pairs = question_pairs(readings, frozenset({"kodeks", "postępowanie", "cywilny"}))
    assert pairs == [(("rozpoznawanie",), ("sprawa",)), (("sprawa",), ("odbywać",))]
    tokens = ["rozpoznawanie", "sprawa", "odbywać", "jawnie"]
    assert phrase_score(pairs, [1.0, 2.0], tokens, window=1) == 3.0
    assert phrase_score(pairs, [1.0, 2.0], list(reversed(tokens)), window=2) == 0.0  # order matters
    # a second reading of an ambiguous word may stand between the pair's words
    assert phrase_score(pairs, [1.0, 2.0], ["rozpoznawanie", "rozpoznać", "sprawa"], window=2) == 1.0
    assert phrase_score(pairs, [1.0, 2.0], ["rozpoznawanie", "rozpoznać", "sprawa"], window=1) == 0.0


def test_the_provision_the_question_quotes_scores_highest():
    texts = kpc_articles("2", "9", "13")
    texts["tytul"] = KPC_TITLE  # the act's own name: no pair of the question once its title words are ignored
    index = KeywordIndex(None)
    index.sync(dict.fromkeys(texts, "v1"), lambda ids: {i: texts[i] for i in ids})
    scores = index.phrase_scores(STEM, list(texts), ignored_text=KPC_TITLE, window=2)
    assert max(scores, key=scores.get) == "9"
    assert "tytul" not in scores
    with_title_words = index.phrase_scores(STEM, list(texts), window=2)
    assert with_title_words.get("tytul", 0) > 0  # without ignoring the title, the act's name is a "phrase"


def test_a_quote_is_a_run_of_consecutive_words_function_words_included_weighed_by_its_content_words():
    question = [frozenset({w}) for w in ("świadkami", "nie", "mogą", "być")]
    weights = [2.0, 0.0, 0.0, 0.0]
    fragment = [frozenset({w}) for w in ("art", "259", "świadkami", "nie", "mogą", "być", "osoby")]
    assert quoted_run(question, weights, fragment, min_words=3) == 2.0
    assert quoted_run(question, weights, fragment, min_words=5) == 0.0  # the run is four words long
    scattered = [frozenset({w}) for w in ("świadkami", "są", "osoby", "które", "nie", "mogą", "być")]
    assert quoted_run(question, weights, scattered, min_words=3) == 0.0  # "nie mogą być" alone: function words
    # words match by any shared form: a lemma of a differently inflected word
    lemmas = [frozenset({"świadkami", "świadek"}), *question[1:]]
    assert quoted_run(lemmas, weights, [frozenset({"świadkowie", "świadek"}), *question[1:]], min_words=3) == 2.0


def test_the_provision_the_question_quotes_word_for_word_scores_highest():
    texts = kpc_articles("259", "260", "261", "273")
    index = KeywordIndex(None)
    index.sync(dict.fromkeys(texts, "v1"), lambda ids: {i: texts[i] for i in ids})
    question = "Zgodnie z Kodeksem postępowania cywilnego, świadkami nie mogą być:"
    assert index.phrase_scores(question, list(texts), ignored_text=KPC_TITLE, window=2) == {}  # no pair of words
    quoted = index.quote_scores(question, texts, KPC_TITLE, min_words=3)
    assert list(quoted) == ["259"]
    assert 0 < quoted["259"] < 1  # "Zgodnie" is not quoted
    # the act's own name is no quote of a provision in it (as it forms no pair of words)
    naming = {"odeslanie": "stosuje się odpowiednio zgodnie z Kodeksem postępowania cywilnego"}
    assert "odeslanie" in index.quote_scores(question, naming, "", min_words=3)
    assert index.quote_scores(question, naming, KPC_TITLE, min_words=3) == {}


def test_a_graded_list_counts_first_place_scaled_by_the_share_of_the_question():
    own = [FusionList("wektor/pytanie", ["vector", "quoted"]), FusionList("slowa/pytanie", ["vector"])]
    similarity = {"vector": 0.85, "quoted": 0.84}
    scores = fuse([*own, graded("cytat/pytanie", {"quoted": 0.05, "vector": 0.01})], similarity, DEFAULT_FUSION)
    assert scores["vector"] > scores["quoted"]  # a fragment holding a twentieth of the question is not first
    scores = fuse([*own, graded("cytat/pytanie", {"quoted": 0.6})], similarity, DEFAULT_FUSION)
    assert scores["quoted"] > scores["vector"]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return library_db(tmp_path_factory)


def placing(library: Path, question: str, art: str, file: str) -> Callable[[FusionSettings], int]:
    """Miejsce jednostki ``art`` pliku ``file`` w rankingu pytania przy danych ustawieniach fuzji (listy raz)."""
    searcher = Index(library).retrieval.searcher()
    vector = searcher.embedder.embed_query(question)
    lists = searcher.fusion_lists(SearchRequest(question, 10), vector, 50)

    def place(fusion: FusionSettings) -> int:
        hits = searcher.fused_hits(lists, vector, 10, fusion)
        return next((n for n, hit in enumerate(hits, 1) if (hit.art, hit.file) == (art, file)), 99)
    return place


def test_a_stem_naming_the_act_lifts_the_quoted_article(library: Path):
    place = placing(library, STEM, "9", CIVIL_PROCEDURE)
    assert place(DEFAULT_FUSION) <= 5 < place(replace(DEFAULT_FUSION, phrase_weight=0.0, quote_weight=0.0))
    assert place(replace(DEFAULT_FUSION, quote_weight=0.0)) <= 5  # its pairs of words alone lift it
    assert "9" in [hit.art for hit in Index(library).search(STEM, k=5)]


def test_a_stem_quoting_the_opening_words_with_a_single_content_word_finds_the_article(library: Path):
    place = placing(library, QUOTING_STEM, "47", PETTY_OFFENCES)
    assert place(DEFAULT_FUSION) <= 5 < place(replace(DEFAULT_FUSION, quote_weight=0.0))
    top = Index(library).search(QUOTING_STEM, k=5)
    assert ("47", PETTY_OFFENCES) in [(hit.art, hit.file) for hit in top]


def test_phrases_are_sought_in_the_whole_named_act_not_only_among_both_legs_first_fragments(library: Path):
    searcher = Index(library).retrieval.searcher()
    lists = searcher.fusion_lists(SearchRequest(STEM, 10), searcher.embedder.embed_query(STEM), depth=1)
    legs = {i for item in lists if item.shares is None for i in item.ids}
    phrase_list = next(item for item in lists if item.source == "frazy/pytanie")
    assert set(phrase_list.ids) - legs  # fragments outside the first place of every leg
    assert searcher.derived.hits(phrase_list.ids[:1])[0].art == "9"


@pytest.mark.parametrize("question", ["rozpoznawanie spraw odbywa się jawnie", "Czy rozprawa w sądzie jest jawna?"])
def test_a_question_without_an_act_gets_no_phrase_list(library: Path, question: str):
    searcher = Index(library).retrieval.searcher()
    lists = searcher.fusion_lists(SearchRequest(question, 5), searcher.embedder.embed_query(question), 50)
    assert "frazy/pytanie" not in [item.source for item in lists]
    named = searcher.fusion_lists(SearchRequest(STEM, 5), searcher.embedder.embed_query(STEM), 50)
    phrase_list = next(item for item in named if item.source == "frazy/pytanie")
    assert searcher.derived.hits(phrase_list.ids[:1])[0].art == "9"
