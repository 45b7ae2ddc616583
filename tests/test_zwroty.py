"""Zwroty pytania w przepisie (``derived.phrases``, lista fuzji ``frazy/pytanie``): pytanie, które nazywa akt
i powtarza słowa przepisu („Zgodnie z Kodeksem postępowania cywilnego, rozpoznawanie spraw odbywa się:”), stawia
ten przepis wyżej – na prawdziwym tekście KPC z biblioteki i prawdziwej bazie (bez tej listy art. 9 jest tu
siódmy)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from library_support import BIBLIOTEKA, CIVIL_PROCEDURE, library_db

from chroma_rag import Index
from chroma_rag.derived import KeywordIndex
from chroma_rag.derived.phrases import phrase_score, question_pairs
from chroma_rag.retrieval.calibration import DEFAULT_FUSION, FusionSettings
from chroma_rag.retrieval.search import SearchRequest

KPC_TITLE = "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego"
STEM = "Zgodnie z Kodeksem postępowania cywilnego, rozpoznawanie spraw odbywa się:"


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


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return library_db(tmp_path_factory)


def test_a_stem_naming_the_act_lifts_the_quoted_article(library: Path):
    searcher = Index(library).retrieval.searcher()
    vector = searcher.embedder.embed_query(STEM)
    lists = searcher.fusion_lists(SearchRequest(STEM, 10), vector, 50)

    def place(fusion: FusionSettings) -> int:
        hits = searcher.fused_hits(lists, vector, 10, fusion)
        return next((n for n, hit in enumerate(hits, 1) if hit.art == "9"), 99)

    assert place(DEFAULT_FUSION) <= 5 < place(replace(DEFAULT_FUSION, phrase_weight=0.0))
    assert "9" in [hit.art for hit in Index(library).search(STEM, k=5)]


@pytest.mark.parametrize("question", ["rozpoznawanie spraw odbywa się jawnie", "Czy rozprawa w sądzie jest jawna?"])
def test_a_question_without_an_act_gets_no_phrase_list(library: Path, question: str):
    searcher = Index(library).retrieval.searcher()
    lists = searcher.fusion_lists(SearchRequest(question, 5), searcher.embedder.embed_query(question), 50)
    assert "frazy/pytanie" not in [item.source for item in lists]
    named = searcher.fusion_lists(SearchRequest(STEM, 5), searcher.embedder.embed_query(STEM), 50)
    phrase_list = next(item for item in named if item.source == "frazy/pytanie")
    assert searcher.derived.hits(phrase_list.ids[:1])[0].art == "9"
