"""Indeks pochodny jako jeden składnik: ścieżka prosto z Chromy (bez migawki – kolekcja bez folderu danych
pochodnych, jak przy nieudanym zapisie migawki albo cudzym zapisie w trakcie jej budowy) daje całemu wyszukiwaniu
hybrydowemu te same wyniki co migawka; wybór filtra to zawsze ``RowSet``."""

from __future__ import annotations

import pytest
from conftest import DATA_PROTECTION, PATIENTS

from chroma_rag import Index
from chroma_rag.derived import DerivedIndex, RowSet
from chroma_rag.errors import CitedOutsideFilters
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.retrieval.search import Searcher, SearchRequest
from chroma_rag.storage.collection import ChunkCollection

QUESTIONS = ["Kto jest osobą bliską pacjenta?", "Jakie dane osobowe wolno przetwarzać?",
             "art. 3 ustawy o ochronie danych osobowych", "Zupełnie obce pytanie o łowiectwo"]
FILTERS = [None, SearchFilters(files=[PATIENTS]), SearchFilters(files=[DATA_PROTECTION], articles=["3"]),
           SearchFilters(year=1800)]


@pytest.fixture(scope="module")
def searchers(two_acts_db) -> tuple[Searcher, Searcher]:
    with_snapshot = Index(two_acts_db).retrieval.searcher()
    stored = with_snapshot.derived.collection
    chroma = ChunkCollection(stored.chroma, 100)  # no folder of derived data: every read goes to Chroma
    chroma_only = Searcher(DerivedIndex(chroma, with_snapshot.derived.keywords), with_snapshot.embedder)
    return with_snapshot, chroma_only


def test_the_chroma_only_path_finds_what_the_snapshot_finds(searchers):
    with_snapshot, chroma_only = searchers
    assert with_snapshot.derived.snapshot() is not None and chroma_only.derived.snapshot() is None
    for question in QUESTIONS:
        for filters in FILTERS:
            request = SearchRequest(question, 5, filters, threshold=0.5)
            other_act = filters is not None and bool(filters.files) and DATA_PROTECTION not in filters.files
            other_year = filters is not None and filters.year is not None
            if question.startswith("art.") and (other_act or other_year):
                # the cited act filtered out by name or year: the same sentence on both paths, nothing ranked
                for searcher in searchers:
                    with pytest.raises(CitedOutsideFilters):
                        searcher.search(request)
                continue
            ours, theirs = with_snapshot.search(request), chroma_only.search(request)
            assert [h.id for h in ours] == [h.id for h in theirs], (question, filters)
            assert ours.reason == theirs.reason
            assert [h.similarity for h in ours] == pytest.approx([h.similarity for h in theirs], abs=1e-5)


def test_a_filter_is_one_row_set_on_both_paths(searchers):
    with_snapshot, chroma_only = searchers
    for filters in FILTERS[1:]:
        where = build_where(filters)
        ours, theirs = with_snapshot.derived.rows(where), chroma_only.derived.rows(where)
        assert isinstance(ours, RowSet) and isinstance(theirs, RowSet)
        assert list(ours) == list(theirs) == sorted(theirs) and len(ours) == len(theirs)
        assert ours[:3] == theirs[:3] and (not len(ours) or ours[-1] == theirs[-1])
