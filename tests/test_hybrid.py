"""Wyszukiwanie hybrydowe: fuzja RRF, tryby, odwołania w pytaniu i próg „nic trafnego”."""

from __future__ import annotations

import json

import pytest
from conftest import DATA_PROTECTION, PATIENTS, run_cli

from chroma_rag import Index
from chroma_rag.filters import SearchFilters
from chroma_rag.models import Hit
from chroma_rag.retrieval.search import DEFAULT_THRESHOLD, refuses, rrf


def test_rrf_rewards_agreement_and_weights():
    scores = rrf([(1.0, ["a", "b", "c"]), (1.0, ["b", "a"])], k=10)
    assert scores["a"] == pytest.approx(1 / 11 + 1 / 12) == scores["b"]
    assert scores["c"] == pytest.approx(1 / 13)
    weighted = rrf([(2.0, ["a"]), (1.0, ["b"])], k=10)
    assert weighted["a"] == pytest.approx(2 * weighted["b"])


def test_refusal_compares_the_best_hit_with_the_threshold():
    weak = [Hit("x", "", {}, similarity=0.70), Hit("y", "", {}, similarity=0.95)]
    assert refuses(weak, 0.8)
    assert not refuses(weak, 0.6)
    assert not refuses(weak, None) and not refuses([], 0.8)


@pytest.mark.parametrize("mode", ["hybryda", "wektor", "slowa"])
def test_every_mode_finds_the_close_relative_definition(two_acts_db, mode):
    hits = Index(two_acts_db).search("Kto jest osobą bliską pacjenta?", k=5, mode=mode, threshold=None)
    assert (PATIENTS, "3") in [(h.file, h.art) for h in hits]
    assert len({(h.file, h.art) for h in hits}) == len(hits)  # one part per article


def test_hybrid_is_ordered_by_fused_score_and_keeps_filters(two_acts_db):
    hits = Index(two_acts_db).search("przetwarzanie danych", k=8, filters=SearchFilters(files=[DATA_PROTECTION]))
    assert hits and all(h.file == DATA_PROTECTION for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0.0 < h.similarity <= 1.0 for h in hits)


def test_direct_article_reference_is_looked_up(two_acts_db):
    hits = Index(two_acts_db).search("Co mówi art. 27 ustawy o prawach pacjenta?", k=3)
    assert (hits[0].file, hits[0].art) == (PATIENTS, "27")


def test_threshold_refuses_weak_results(capsys, two_acts_db):
    index = Index(two_acts_db)
    question = "Czy astronauta na orbicie ma prawo do urlopu?"
    assert index.search(question, threshold=0.99) == []
    assert index.search(question, threshold=None)
    code, out, _ = run_cli(capsys, "szukaj", question, "--prog", "0.99", "--baza", two_acts_db)
    assert code == 0 and "Nie znaleziono nic trafnego" in out
    code, out, _ = run_cli(capsys, "szukaj", question, "--prog", "0.99", "--json", "--baza", two_acts_db)
    assert code == 0 and json.loads(out) == {"wyniki": [], "powod": "prog", "plan": None}
    code, out, _ = run_cli(capsys, "szukaj", question, "--prog", "0", "--json", "--baza", two_acts_db)
    assert json.loads(out)["wyniki"]


def test_keyword_query_fully_found_in_results_is_not_refused(two_acts_db):
    # e5 gives a bare keyword a low similarity; every word occurring in the top results keeps the answer.
    assert Index(two_acts_db).search("dokumentacja medyczna", threshold=0.99)
    assert Index(two_acts_db).search("dokumentacja medyczna", mode="wektor", threshold=0.99) == []


def test_default_threshold_refuses_an_unrelated_question(two_acts_db):
    if DEFAULT_THRESHOLD <= 0:
        pytest.skip("próg wyłączony")
    assert Index(two_acts_db).search("Jaki jest przepis na sernik z rodzynkami?") == []


def test_unknown_mode_is_a_polish_error(capsys, two_acts_db):
    code, _, err = run_cli(capsys, "szukaj", "pacjent", "--tryb", "magia", "--baza", two_acts_db)
    assert code == 2 and "--tryb „magia”" in err and "dozwolone: hybryda, wektor, slowa" in err


def test_hybrid_legs_run_at_the_same_time_and_errors_surface(two_acts_db, monkeypatch):
    """Noga słów liczy się w osobnym wątku, gdy noga wektorowa liczy swoją: każda czeka tu na start drugiej
    (kolejno – pierwsza nie doczekałaby się). Wynik jak bez wątków; błąd nogi słów dochodzi do pytającego."""
    import threading

    from chroma_rag.derived import DerivedIndex, KeywordIndex

    index = Index(two_acts_db)
    question = "Kto jest osobą bliską pacjenta?"
    alone = [(h.id, h.score) for h in index.search(question, k=5, threshold=None)]
    both_started = threading.Barrier(2, timeout=10)
    threads = {}
    search, ranked = KeywordIndex.search, DerivedIndex.ranked

    def keyword_search(self, *args, **kwargs):
        threads["slowa"] = threading.get_ident()
        both_started.wait()
        return search(self, *args, **kwargs)

    def vector_ranked(self, *args, **kwargs):
        threads["wektor"] = threading.get_ident()
        both_started.wait()
        return ranked(self, *args, **kwargs)

    monkeypatch.setattr(KeywordIndex, "search", keyword_search)
    monkeypatch.setattr(DerivedIndex, "ranked", vector_ranked)
    assert [(h.id, h.score) for h in index.search(question, k=5, threshold=None)] == alone
    assert threads["wektor"] == threading.get_ident() != threads["slowa"]

    def broken(self, *args, **kwargs):
        raise OSError("indeks słów nieczytelny")

    monkeypatch.setattr(KeywordIndex, "search", broken)
    monkeypatch.setattr(DerivedIndex, "ranked", ranked)
    with pytest.raises(OSError, match="nieczytelny"):
        index.search(question, k=5, threshold=None)
