"""Ocena: metryki na ręcznie ułożonych rankingach, wczytywanie pytań i polecenie ``ocena``."""

from __future__ import annotations

import json

import pytest
from conftest import DATA_PROTECTION, PATIENTS, run_cli

from chroma_rag.errors import UserError
from chroma_rag.models import Hit
from chroma_rag.retrieval.evaluation import Question, evaluate, first_hit_rank, is_hit, load_questions, metrics


def hit(file: str, art: str, similarity: float = 0.8) -> Hit:
    return Hit(id=f"{file}::{art}", text="", metadata={"plik": file, "art": art}, similarity=similarity)


def test_metrics_of_known_ranks():
    # Ranks of first hits for 5 questions: 1, 2, 4, 7 and a miss.
    result = metrics([1, 2, 4, 7, None])
    assert result["hit@1"] == pytest.approx(1 / 5)
    assert result["hit@3"] == pytest.approx(2 / 5)
    assert result["hit@5"] == pytest.approx(3 / 5)
    assert result["hit@10"] == pytest.approx(4 / 5)
    assert result["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 1 / 7) / 5)


def test_mrr_ignores_hits_below_rank_10_and_empty_input():
    assert metrics([11])["mrr"] == 0.0 and metrics([11])["hit@10"] == 0.0
    assert metrics([]) == {"hit@1": 0.0, "hit@3": 0.0, "hit@5": 0.0, "hit@10": 0.0, "mrr": 0.0}


def test_hit_needs_file_and_article_ignoring_spaces_and_paragraph_sign():
    question = Question("?", "rozp.pdf", ["§ 6", "385^1"])
    assert is_hit(hit("rozp.pdf", "§6"), question)
    assert is_hit(hit("rozp.pdf", "6"), question)
    assert is_hit(hit("rozp.pdf", "385¹"), question)
    assert not is_hit(hit("inny.pdf", "§ 6"), question)
    assert not is_hit(hit("rozp.pdf", "§ 61"), question)
    assert first_hit_rank([hit("inny.pdf", "6"), hit("rozp.pdf", "7"), hit("rozp.pdf", "§ 6")], question) == 3


def test_evaluate_counts_refusals_and_misses_on_hand_made_rankings():
    questions = [
        Question("a", "x.pdf", ["1"], kind="potoczne"),
        Question("b", "x.pdf", ["2"], kind="dokladne"),
        Question("c", "x.pdf", ["3"], kind="potoczne"),
        Question("d", None, [], kind="spoza"),
        Question("e", None, [], kind="spoza"),
    ]
    rankings = {
        "a": [hit("x.pdf", "1", 0.9)],
        "b": [hit("x.pdf", "9", 0.9), hit("x.pdf", "2", 0.85)],
        "c": [hit("x.pdf", "3", 0.5)],  # right answer, but below the threshold: lost to it
        "d": [hit("x.pdf", "5", 0.4)],
        "e": [hit("x.pdf", "5", 0.95)],
    }
    result = evaluate(questions, lambda q: rankings[q.text], lambda q, hits: hits[0].similarity < 0.7)
    assert result["n"] == 3
    assert result["hit@1"] == pytest.approx(1 / 3, abs=1e-3) and result["hit@3"] == pytest.approx(2 / 3, abs=1e-3)
    assert result["mrr"] == pytest.approx((1 + 0.5) / 3, abs=1e-3)
    assert result["per_rodzaj"]["potoczne"]["n"] == 2 and result["per_rodzaj"]["dokladne"]["mrr"] == 0.5
    assert result["odmowy"] == {"spoza": 2, "poprawne": 1, "utracone_trafienia": 1}
    missed = {m["pytanie"]: m for m in result["pudla"]}
    assert set(missed) == {"c", "e"}
    assert missed["c"]["odmowa"] and missed["e"]["pierwszy"] == {"plik": "x.pdf", "art": "5"}


def test_load_questions_reads_filters_and_rejects_bad_lines(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"pytanie": "p", "plik": "a.pdf", "art": ["1"], "filtr": {"typ": "kodeks", "rok": 1997},
                    "rodzaj": "wiele"}) + "\n\n"
        + json.dumps({"pytanie": "q", "plik": None, "art": [], "rodzaj": "spoza"}) + "\n",
        encoding="utf-8",
    )
    first, second = load_questions(path)
    assert first.filters.types == ["kodeks"] and first.filters.year == 1997 and first.kind == "wiele"
    assert not second.answerable
    path.write_text('{"plik": "a.pdf"}\n', encoding="utf-8")
    with pytest.raises(UserError, match="Wiersz 1"):
        load_questions(path)


@pytest.fixture()
def questions_file(tmp_path):
    rows = [
        {"pytanie": "Kogo ustawa o prawach pacjenta uważa za osobę bliską?", "plik": PATIENTS, "art": ["3"],
         "rodzaj": "dokladne"},
        {"pytanie": "Czy mogę dostać kopię mojej dokumentacji medycznej?", "plik": PATIENTS, "art": ["27"],
         "filtr": {"plik": PATIENTS}, "rodzaj": "potoczne"},
        {"pytanie": "Kto nadzoruje przetwarzanie danych osobowych?", "plik": DATA_PROTECTION, "art": ["8", "12"],
         "rodzaj": "potoczne"},
        {"pytanie": "Ile kosztuje bilet do kina w Krakowie?", "plik": None, "art": [], "rodzaj": "spoza"},
    ]
    path = tmp_path / "pytania.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_ocena_json_on_small_db(capsys, two_acts_db, questions_file):
    code, out, err = run_cli(capsys, "ocena", questions_file, "--json", "--baza", two_acts_db)
    assert code == 0, err
    result = json.loads(out)
    for key in ("n", "hit@1", "hit@3", "hit@5", "hit@10", "mrr", "per_rodzaj", "odmowy", "pudla"):
        assert key in result
    assert result["n"] == 3 and result["odmowy"]["spoza"] == 1
    assert result["hit@10"] >= 2 / 3
    assert 0.0 <= result["mrr"] <= result["hit@10"]


def test_ocena_table_and_vector_mode(capsys, two_acts_db, questions_file):
    code, out, err = run_cli(capsys, "ocena", questions_file, "--tryb", "wektor", "-k", "5", "--baza", two_acts_db)
    assert code == 0, err
    assert "hit@5" in out and "mrr" in out and "wszystkie" in out
    assert "Pytania spoza dokumentów" in out


def test_ocena_missing_file_is_a_polish_error(capsys, two_acts_db, tmp_path):
    code, _, err = run_cli(capsys, "ocena", tmp_path / "brak.jsonl", "--baza", two_acts_db)
    assert code != 0 and "Nie można odczytać" in err and "Traceback" not in err
