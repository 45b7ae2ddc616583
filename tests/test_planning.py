"""Planowanie zapytań (issue 12): prompt, obsługa JSON, awarie, pamięć planów, fuzja, odmowa, plany błędne.

Prawdziwa baza (dwie ustawy), prawdziwy model embeddingów, model czatu zastąpiony serwerem HTTP na pętli
zwrotnej mówiącym protokołem OpenAI (``llm_server.py``; plany z pliku – ``plan_replay.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA_PROTECTION, PATIENTS, run_cli
from llm_server import Reply, Request, llm_environment
from plan_replay import load_plans, plan_responder

from chroma_rag import Index
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.llm import LlmSettings
from chroma_rag.models import Plan
from chroma_rag.retrieval.planning import Catalog, DocumentEntry, plan_messages
from chroma_rag.retrieval.search import DEFAULT_FUSION, FusionList, fuse, share_above

KEY = "sk-test-PLAN-0123456789"
# Colloquial: the statute says "dokumentacja medyczna", "udostępnia", not "papiery ze szpitala".
QUESTION = "Czy mogę dostać kopię papierów ze szpitala o moim leczeniu?"
PLAN = {
    "zapytania": ["udostępnianie dokumentacji medycznej pacjentowi", "kopia dokumentacji medycznej"],
    "dokumenty": [PATIENTS],
    "jednostki": ["art. 27"],
}
OUTSIDE = "Jaki jest okres wypowiedzenia umowy o pracę na czas nieokreślony?"


def plan_reply(plan: dict) -> Reply:
    return Reply(text=json.dumps(plan, ensure_ascii=False))


def is_planning(request: Request) -> bool:
    return '"zapytania"' in request.body["messages"][0]["content"]


@pytest.fixture
def fake(monkeypatch, tmp_path):
    with llm_environment(monkeypatch, tmp_path, KEY) as server:
        monkeypatch.setenv("CHROMA_RAG_LLM_TIMEOUT", "5")
        yield server


@pytest.fixture
def db(two_acts_copy):
    """Prywatna kopia: plany są zapamiętywane w folderze bazy."""
    return two_acts_copy


def szukaj(capsys, db, *args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", "--baza", db)
    assert "Traceback" not in out + err and KEY not in out + err
    return code, (json.loads(out) if code == 0 else {}), err


def ranked_units(result: dict) -> list[tuple[str, str]]:
    return [(hit["plik"], hit["art"]) for hit in result["wyniki"]]


# --- zapytanie planowania -----------------------------------------------------------------------------


def test_planning_request_has_the_question_verbatim_the_documents_and_asks_for_json(capsys, db, fake):
    fake.enqueue(plan_reply(PLAN))
    code, result, err = szukaj(capsys, db, QUESTION, "--przepisz")

    assert code == 0, err
    [request] = fake.requests
    assert request.body["response_format"] == {"type": "json_object"}
    system, user = request.body["messages"]
    assert '"zapytania"' in system["content"] and '"dokumenty"' in system["content"]
    assert user["content"].endswith(f"Pytanie: {QUESTION}")
    for name in (PATIENTS, DATA_PROTECTION):
        assert re.search(rf"- {re.escape(name)} \| .+ \| ustawa \| (2009|1997)", user["content"])
    assert "Rzeczniku Praw Pacjenta" in user["content"]  # the act's title
    assert "więcej" not in user["content"]
    assert result["plan"] == {**PLAN, "z_pamieci": False, "blad": None}


def test_many_documents_list_the_30_best_ranked_and_count_the_rest():
    documents = [DocumentEntry(f"plik-{n:02d}.txt", f"Tytuł {n}", "dokument", 2020) for n in range(34)]
    [_, user] = plan_messages("Pytanie?", Catalog(documents))
    listed = [line for line in user["content"].splitlines() if line.startswith("- plik-")]
    assert [line.split(" | ")[0] for line in listed] == [f"- plik-{n:02d}.txt" for n in range(30)]
    assert "i 4 więcej" in user["content"]


def test_many_files_put_the_unplanned_search_favourites_first(capsys, tmp_path, fake):
    folder = tmp_path / "dokumenty"
    folder.mkdir()
    for n in range(31):
        (folder / f"notatka-{n:02d}.txt").write_text(f"Notatka numer {n} o sprawach różnych.\n", encoding="utf-8")
    (folder / "urlop.txt").write_text("Pracownikowi przysługuje urlop wypoczynkowy w wymiarze 26 dni.\n")
    index = Index(tmp_path / "db")
    index.add([folder])
    fake.enqueue(plan_reply({"zapytania": ["urlop wypoczynkowy"], "dokumenty": ["urlop.txt"], "jednostki": []}))

    index.search("Ile dni urlopu wypoczynkowego mi przysługuje?", rewrite=True, settings=LlmSettings.from_env())

    content = fake.requests[0].body["messages"][1]["content"]
    listed = [line for line in content.splitlines() if line.startswith("- ")]
    assert listed[0].startswith("- urlop.txt | ")
    assert len(listed) == 31 and listed[-1] == "- … i 2 więcej (niewymienione, mniej pasujące do pytania)"


# --- odpowiedź modelu: JSON, pola spoza indeksu --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "```json\n" + json.dumps(PLAN) + "\n```",
        "Oto plan wyszukiwania:\n" + json.dumps(PLAN, ensure_ascii=False) + "\nPowodzenia!",
    ],
    ids=["blok-json", "tekst-wokol"],
)
def test_plan_is_found_inside_fences_or_surrounding_text(capsys, db, fake, text):
    fake.enqueue(Reply(text=text))
    code, result, err = szukaj(capsys, db, QUESTION, "--przepisz")
    assert code == 0, err
    assert result["plan"]["zapytania"] == PLAN["zapytania"] and result["plan"]["blad"] is None


def test_server_rejecting_response_format_is_asked_again_without_it(capsys, db, fake):
    fake.enqueue(Reply(status=400), plan_reply(PLAN))
    code, result, err = szukaj(capsys, db, QUESTION, "--przepisz")
    assert code == 0, err
    first, second = fake.requests
    assert "response_format" in first.body and "response_format" not in second.body
    assert result["plan"]["dokumenty"] == [PATIENTS] and "Uwaga" not in err


def test_unknown_documents_and_units_are_dropped(capsys, db, fake):
    plan = {"zapytania": ["dokumentacja medyczna"], "dokumenty": ["kodeks-pracy.pdf", PATIENTS.removesuffix(".pdf")],
            "jednostki": ["art. 9999", "Art. 27", "§ 3"]}
    fake.enqueue(plan_reply(plan))
    code, result, err = szukaj(capsys, db, QUESTION, "--przepisz")
    assert code == 0, err
    assert result["plan"]["dokumenty"] == [PATIENTS]  # the stem named it; the unknown act is gone
    assert result["plan"]["jednostki"] == ["art. 27"]


# --- awarie: zwykłe wyszukiwanie i jedno ostrzeżenie ---------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(text="Nie wiem, o co chodzi."), "niepoprawny plan"),
        (Reply(text=""), "niepoprawny plan"),
        (Reply(text='{"zapytania": "x", "dokumenty": 5}'), "niepoprawny plan"),
        (Reply(delay=2.0), "nie odpowiedział w ciągu 0.5 s"),
        (Reply(status=503), "błąd 503"),
    ],
    ids=["tekst", "pusta", "zle-pola", "czas", "5xx"],
)
def test_planning_failure_falls_back_to_unplanned_search_with_one_warning(
    capsys, db, fake, monkeypatch, reply, reason
):
    monkeypatch.setenv("CHROMA_RAG_LLM_TIMEOUT", "0.5")
    fake.enqueue(reply, reply)  # a 400-free failure is not retried
    code, out, err = run_cli(capsys, "szukaj", QUESTION, "--przepisz", "--baza", db)

    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("Uwaga: wyszukiwanie bez planu") and reason in warnings[0]
    assert "Traceback" not in err
    _, unplanned, _ = szukaj(capsys, db, QUESTION)
    # a long header wraps at 80 columns between its parts: "trafność 1.00" may begin the next line
    assert [hit["plik"] for hit in unplanned["wyniki"]] and len(re.findall(r"\btrafność \d\.\d\d", out)) == len(
        unplanned["wyniki"]
    )
    fake.enqueue(reply)
    _, planned, _ = szukaj(capsys, db, QUESTION, "--przepisz")
    assert ranked_units(planned) == ranked_units(unplanned) and reason in planned["plan"]["blad"]


# --- pamięć planów -----------------------------------------------------------------------------------------


def test_repeated_evaluation_makes_no_chat_requests_and_fresh_plan_asks_again(capsys, db, fake, tmp_path):
    questions = tmp_path / "pytania.jsonl"
    rows = [{"pytanie": QUESTION, "plik": PATIENTS, "art": ["27"]}, {"pytanie": OUTSIDE, "plik": None, "art": []}]
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    fake.responder = plan_responder({QUESTION: PLAN, OUTSIDE: {"zapytania": ["wypowiedzenie umowy o pracę"],
                                                               "dokumenty": [], "jednostki": []}})
    args = ("ocena", questions, "--przepisz", "--json", "--baza", db)

    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    first = json.loads(out)
    assert first["planowanie"]["zapytania_do_modelu"] == 2 and first["planowanie"]["z_pamieci"] == 0
    assert first["planowanie"]["tokeny_wejscia"] == 240 and first["planowanie"]["koszt"] == pytest.approx(0.00084)

    code, out, _ = run_cli(capsys, *args)
    second = json.loads(out)
    assert len(fake.requests) == 2  # nothing asked the second time
    assert second["planowanie"]["zapytania_do_modelu"] == 0 and second["planowanie"]["z_pamieci"] == 2
    assert {k: second[k] for k in ("hit@1", "hit@5", "mrr", "odmowy")} == {
        k: first[k] for k in ("hit@1", "hit@5", "mrr", "odmowy")
    }

    code, out, _ = run_cli(capsys, *args, "--nowy-plan")
    assert json.loads(out)["planowanie"]["zapytania_do_modelu"] == 2 and len(fake.requests) == 4

    code, out, _ = run_cli(capsys, "ocena", questions, "--json", "--baza", db)
    assert "planowanie" not in json.loads(out) and len(fake.requests) == 4


# --- fuzja, odmowa, plany błędne --------------------------------------------------------------------------------


def test_plan_brings_the_statute_article_to_the_top(capsys, db, fake):
    _, unplanned, _ = szukaj(capsys, db, QUESTION, "-k", "10")
    fake.enqueue(plan_reply(PLAN))
    _, planned, _ = szukaj(capsys, db, QUESTION, "-k", "10", "--przepisz")
    assert ranked_units(planned)[0] == (PATIENTS, "27")
    assert ranked_units(unplanned)[0] != (PATIENTS, "27")


def test_user_filters_apply_to_every_planned_list(capsys, db, fake):
    fake.enqueue(plan_reply(PLAN))
    _, result, _ = szukaj(capsys, db, QUESTION, "--przepisz", "--plik", DATA_PROTECTION, "-k", "10", "--prog", "0")
    assert result["wyniki"] and {hit["plik"] for hit in result["wyniki"]} == {DATA_PROTECTION}


def test_a_wrong_plan_does_not_sink_a_good_search(capsys, db, fake):
    question = "Kto jest administratorem danych osobowych?"
    _, unplanned, _ = szukaj(capsys, db, question, "-k", "5")
    expected = ranked_units(unplanned)[0]
    fake.enqueue(plan_reply(PLAN))  # the plan of another question: other words, other act and unit
    _, planned, _ = szukaj(capsys, db, question, "-k", "5", "--przepisz")
    assert expected in ranked_units(planned)


def test_a_hinted_unit_counts_by_its_rank_within_the_hinted_files_not_by_a_similarity_margin():
    # issue 20: the article a right plan names is often much less similar to a colloquial question than the
    # question's best fragment (below the 0.06 sieve, which dropped it), yet within its own files the question
    # ranks it among the first few percent; a wrong plan's unit sits anywhere in its files
    own = FusionList("wektor/pytanie", ["best", "other"])
    similarity = {"best": 0.90, "other": 0.85, "article": 0.80}
    kept = fuse([own, FusionList("jednostki", ["article"], percentile=0.01)], similarity, DEFAULT_FUSION)
    assert max(kept, key=kept.get) == "article"  # a named unit confirmed by the ranking can reach rank 1
    dropped = fuse([own, FusionList("jednostki", ["article"], percentile=0.45)], similarity, DEFAULT_FUSION)
    assert set(dropped) == {"best", "other"}


def test_a_planned_query_the_question_ranks_high_counts_whole_and_a_wrong_one_not_at_all():
    # a statute-worded query is less similar to a colloquial question than the question's own best fragment
    # (the old sieve dropped such a query whole); its first fragment in the question's own ranking decides
    own = [FusionList("wektor/pytanie", ["broad", "other"]), FusionList("slowa/pytanie", ["broad"])]
    similarity = {"broad": 0.90, "other": 0.86, "article": 0.83}
    def planned(percentile: float) -> list[FusionList]:
        return [FusionList(f"{leg}/plan", ["article"], percentile, 0.85) for leg in ("wektor", "slowa")]
    right = fuse(own + planned(0.002), similarity, DEFAULT_FUSION)
    assert max(right, key=right.get) == "article"
    wrong = fuse(own + planned(0.4), similarity, DEFAULT_FUSION)
    assert "article" not in wrong


def test_a_neighbours_plan_of_the_same_act_does_not_push_its_article_above_the_right_one():
    # issue 20, pytania-dev: questions come in pairs about one act, so the plan of the neighbouring question
    # names the same act and its query's first fragment is within the first 2 % of all fragments of the
    # question's ranking; within that act the question ranks it like any other fragment
    own = [FusionList("wektor/pytanie", ["right", "other"]), FusionList("slowa/pytanie", ["right"])]
    similarity = {"right": 0.88, "other": 0.86, "neighbour": 0.85}
    def planned(within: float) -> list[FusionList]:
        return [FusionList(f"{leg}/{origin}", ["neighbour"], 0.01, 0.87, within)
                for leg in ("wektor", "slowa") for origin in ("plan", "dokumenty")]
    wrong = fuse(own + planned(0.4), similarity, DEFAULT_FUSION)
    assert max(wrong, key=wrong.get) == "right"
    right = fuse(own + planned(0.01), similarity, DEFAULT_FUSION)
    assert max(right, key=right.get) == "neighbour"  # the same query ranked high within its act counts whole


def test_a_planned_query_first_within_a_big_named_act_counts_whole_though_just_outside_the_share_of_all():
    # issue 20, potoczne-dev (zachowek, art. 999 k.c.): the right query's first fragment is 2.3 % down the
    # question's ranking of all fragments but 1.5 % down its ranking of the civil code, which the plan named –
    # in a big act the same share is fewer places; the gate of all fragments alone dropped the right article
    own = [FusionList("wektor/pytanie", ["other", "next"]), FusionList("slowa/pytanie", ["other"])]
    similarity = {"other": 0.88, "next": 0.87, "article": 0.84}
    def planned(everywhere: float, within: float) -> list[FusionList]:
        return [FusionList(f"{leg}/{origin}", ["article"], everywhere, 0.86, within)
                for leg in ("wektor", "slowa") for origin in ("plan", "dokumenty")]
    right = fuse(own + planned(0.023, 0.015), similarity, DEFAULT_FUSION)
    assert max(right, key=right.get) == "article"
    # a query neither near the top of all fragments nor of the named act stays outside the gates
    doubtful = fuse(own + planned(0.023, 0.05), similarity, DEFAULT_FUSION)
    assert max(doubtful, key=doubtful.get) == "other"


def test_a_plan_the_question_ranks_nowhere_near_does_not_reorder_the_questions_ranking():
    # pytania-dev, "pali śmieci" (art. 144 k.c.) with the plan of the next question (art. 426, 427 k.c.): no
    # query and no unit of it is within the first 30 % of the question's ranking, yet the sieves kept its unit
    # list close enough to the question's best fragment and it pushed the right article out of the first five
    own = [FusionList("wektor/pytanie", ["a", "b", "right"]), FusionList("slowa/pytanie", ["a", "right"])]
    similarity = {"a": 0.87, "b": 0.86, "right": 0.85, "unit": 0.84}
    def plan(percentile: float) -> list[FusionList]:
        return [FusionList("wektor/plan", ["unit"], percentile, 0.9, percentile),
                FusionList("jednostki", ["unit"], percentile)]
    unplanned = fuse(own, similarity, DEFAULT_FUSION)
    wrong = fuse(own + plan(0.4), similarity, DEFAULT_FUSION)
    assert sorted(wrong, key=lambda i: -wrong[i])[:3] == sorted(unplanned, key=lambda i: -unplanned[i])
    doubtful = fuse(own + plan(0.25), similarity, DEFAULT_FUSION)  # outside the gates, but near the question
    assert max(doubtful, key=doubtful.get) == "unit"


def test_what_a_planned_query_puts_first_outweighs_what_the_colloquial_question_puts_first():
    # dev set (art. 426 k.c., § 22 and § 75 of the medical records regulation): the statute-worded query
    # ranks the answering unit first, the colloquial question ranks another fragment first and the planned
    # query has it second; flat RRF (k 60) let that fragment win on breadth
    own = [FusionList("wektor/pytanie", ["broad", "article"]), FusionList("slowa/pytanie", ["broad"])]
    planned = [FusionList(f"{leg}/plan", ["article", "broad"], query_similarity=0.91) for leg in ("wektor", "slowa")]
    scores = fuse(own + planned, {"broad": 0.90, "article": 0.89}, DEFAULT_FUSION)
    assert max(scores, key=scores.get) == "article"
    unplanned = fuse(own, {"broad": 0.90, "article": 0.89}, DEFAULT_FUSION)
    assert max(unplanned, key=unplanned.get) == "broad"


def test_plan_naming_no_document_refuses_an_outside_question(capsys, db, fake):
    fake.enqueue(plan_reply({"zapytania": ["okres wypowiedzenia umowy o pracę"], "dokumenty": [], "jednostki": []}))
    code, result, _ = szukaj(capsys, db, OUTSIDE, "--przepisz")
    assert code == 0 and result["wyniki"] == [] and result["powod"] == "prog"
    assert result["plan"]["dokumenty"] == []


def test_a_plan_whose_named_unit_the_rankings_confirm_is_never_refused(capsys, db, fake):
    # a threshold no colloquial question reaches: only the plan's confirmed unit may keep the answer
    _, unplanned, _ = szukaj(capsys, db, QUESTION, "--prog", "0.99")
    fake.enqueue(plan_reply(PLAN))
    _, planned, _ = szukaj(capsys, db, QUESTION, "--przepisz", "--prog", "0.99")
    assert unplanned["wyniki"] == [] and unplanned["powod"] == "prog"
    assert ranked_units(planned)[0] == (PATIENTS, "27")


def test_a_plan_naming_a_unit_the_rankings_do_not_put_first_is_still_refused(capsys, db, fake):
    # the right file, but a unit that the question and the planned queries rank below others: no confirmation
    fake.enqueue(plan_reply({**PLAN, "zapytania": [OUTSIDE], "jednostki": ["art. 1"]}))
    _, planned, _ = szukaj(capsys, db, OUTSIDE, "--przepisz", "--prog", "0.99")
    assert planned["wyniki"] == [] and planned["powod"] == "prog"


def test_a_wrong_plans_unit_first_after_fusion_is_not_confirmed_when_the_question_ranks_it_low(db):
    # issue 20: a wrong plan may name an existing unit of an existing file; that it came first after fusion
    # must not keep an outside question from "nic trafnego" unless the question itself ranks it high
    searcher = Index(db).retrieval.searcher()
    plan = Plan(queries=["udostępnianie dokumentacji medycznej"], documents=[PATIENTS], units=["art. 27"])
    vector = searcher.embedder.embed_query(OUTSIDE)
    where = build_where(SearchFilters(files=[PATIENTS], articles=["27"]))
    [unit] = searcher.derived.hits([i for i, _ in searcher.derived.ranked(vector, 1, where)], vector)
    assert searcher.refuses(OUTSIDE, [unit], 0.99, plan)
    question = "Kiedy szpital musi wydać pacjentowi kopię dokumentacji medycznej?"
    vector = searcher.embedder.embed_query(question)
    [unit] = searcher.derived.hits([i for i, _ in searcher.derived.ranked(vector, 1, where)], vector)
    assert not searcher.refuses(question, [unit], 0.99, plan, query_vector=vector)


def test_the_rank_pool_comes_from_the_snapshot_without_ids_and_equals_the_similarities_of_every_fragment(db):
    # issue 20: a planned question ranks its evidence among all fragments; with a million of them a list of
    # ids and a dictionary of similarities cost seconds per question
    searcher = Index(db).retrieval.searcher()
    vector = searcher.embedder.embed_query(QUESTION)
    for where in (None, build_where(SearchFilters(files=[PATIENTS]))):
        expected = sorted(searcher.derived.similarities(searcher.derived.rows(where), vector).values())
        pool = searcher.derived.sorted_similarities(vector, where)
        assert pool is not None and len(pool) == len(expected) > 0
        assert pool.tolist() == pytest.approx(expected, abs=1e-6)
    assert searcher.derived.sorted_similarities(vector, {"tresc": "x"}) is None  # not a snapshot column


def test_a_big_rank_pool_is_an_even_sample_that_keeps_the_shares(db):
    # at a million fragments every vector read for each planned question cost seconds and filled the RSS
    from chroma_rag.derived import DEFAULT_PARAMS, DerivedIndex

    searcher = Index(db).retrieval.searcher()
    vector = searcher.embedder.embed_query(QUESTION)
    everything = searcher.derived.sorted_similarities(vector)
    assert everything is not None and len(everything) > 100
    sampled = replace(DEFAULT_PARAMS, snapshot=replace(DEFAULT_PARAMS.snapshot, pool_rows=100))
    sample = DerivedIndex(searcher.derived.collection, params=sampled).sorted_similarities(vector)
    assert sample is not None and len(sample) == 100
    for similarity in np.quantile(everything, [0.5, 0.9, 0.98]):
        assert abs(share_above(sample, similarity) - share_above(everything, similarity)) <= 0.05


def test_calibration_is_the_one_source_of_the_products_numbers():
    from chroma_rag.config import DEFAULT_THRESHOLD
    from chroma_rag.retrieval import search
    from chroma_rag.retrieval.calibration import DEFAULT_CALIBRATION

    assert search.DEFAULT_FUSION is DEFAULT_CALIBRATION.fusion
    assert search.DEFAULT_THRESHOLD == DEFAULT_CALIBRATION.threshold == DEFAULT_THRESHOLD
    assert DEFAULT_CALIBRATION.refusal_bump > 0


def test_replayed_plans_come_from_the_shared_file(ustawy):
    plans = load_plans(ustawy.parent / "plany-dev.jsonl")
    rotated = load_plans(ustawy.parent / "plany-dev.jsonl", rotate=1)
    questions = list(plans)
    assert len(plans) == 25 and rotated[questions[0]] == plans[questions[1]]
    responder = plan_responder(plans)
    request = Request("/v1/chat/completions", {}, {"messages": plan_messages(questions[3], Catalog([]))})
    assert json.loads(responder(request).text) == plans[questions[3]]
    answering = Request("/v1/chat/completions", {}, {"messages": [{"role": "user", "content": questions[3]}]})
    assert responder(answering) is None  # not a planning request: the server's plain answer


# --- pytaj --------------------------------------------------------------------------------------------------------


def test_pytaj_plans_by_default_and_shows_the_plan_above_the_answer(capsys, db, fake):
    fake.enqueue(plan_reply(PLAN), Reply(text="Tak [prawa-pacjenta-DU-2009-417.pdf, art. 27]."))
    code, out, err = run_cli(capsys, "pytaj", QUESTION, "--baza", db)

    assert code == 0, err
    planning, answering = fake.requests
    assert is_planning(planning) and not is_planning(answering)
    assert err.splitlines()[0].startswith("Plan: „udostępnianie dokumentacji medycznej pacjentowi”")
    assert f"dokumenty: {PATIENTS}; jednostki: art. 27" in err.splitlines()[0]
    assert out.startswith("Tak [prawa-pacjenta-DU-2009-417.pdf, art. 27].")
    assert f"1. [{PATIENTS}, art. 27 u.p.p.]" in out


def test_pytaj_json_has_the_plan_and_bez_planu_or_env_turn_it_off(capsys, db, fake, monkeypatch):
    fake.enqueue(plan_reply(PLAN))
    code, out, _ = run_cli(capsys, "pytaj", QUESTION, "--json", "--baza", db)
    assert code == 0 and json.loads(out)["plan"]["jednostki"] == ["art. 27"] and len(fake.requests) == 2

    code, out, _ = run_cli(capsys, "pytaj", QUESTION, "--json", "--bez-planu", "--baza", db)
    assert code == 0 and json.loads(out)["plan"] is None and len(fake.requests) == 3
    monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "nie")
    code, out, _ = run_cli(capsys, "pytaj", QUESTION, "--json", "--baza", db)
    assert code == 0 and json.loads(out)["plan"] is None and len(fake.requests) == 4


def test_env_default_plans_szukaj_and_bad_value_is_one_sentence(capsys, db, fake, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "tak")
    fake.enqueue(plan_reply(PLAN))
    code, result, _ = szukaj(capsys, db, QUESTION)
    assert code == 0 and result["plan"]["dokumenty"] == [PATIENTS]
    monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "może")
    code, _, err = szukaj(capsys, db, QUESTION)
    assert code == 1 and "CHROMA_RAG_PRZEPISZ" in err and "tak/nie" in err


def test_szukaj_shows_the_plan_in_one_line(capsys, db, fake):
    fake.enqueue(plan_reply(PLAN))
    code, _, err = run_cli(capsys, "szukaj", QUESTION, "--przepisz", "--baza", db)
    assert code == 0
    assert [line for line in err.splitlines() if line.startswith("Plan")] == [
        "Plan: „udostępnianie dokumentacji medycznej pacjentowi”; „kopia dokumentacji medycznej”; "
        f"dokumenty: {PATIENTS}; jednostki: art. 27"
    ]


# --- poprawki bez modelu czatu -------------------------------------------------------------------------------------


def test_printed_relevance_follows_the_order(capsys, two_acts_db):
    code, out, _ = run_cli(capsys, "szukaj", QUESTION, "-k", "8", "--baza", two_acts_db)
    assert code == 0
    shown = [float(x) for x in re.findall(r"trafność\s+(\d\.\d\d)", out)]
    assert len(shown) == 8 and shown == sorted(shown, reverse=True) and shown[0] == 1.0


def test_named_article_of_a_named_act_is_found(capsys, two_acts_db):
    code, result, _ = szukaj(capsys, two_acts_db, "art. 3 ustawy o prawach pacjenta", "-k", "10")
    assert code == 0 and (PATIENTS, "3") in ranked_units(result)


def test_explicit_unit_filter_is_never_refused(capsys, two_acts_db):
    code, result, _ = szukaj(capsys, two_acts_db, "pies", "--plik", PATIENTS, "--art", "3", "--prog", "0.99")
    assert code == 0 and ranked_units(result)[0] == (PATIENTS, "3") and result["powod"] is None


def test_paragraph_filter_does_not_match_articles_and_article_filter_not_paragraphs():
    assert build_where(SearchFilters(articles=["§ 22"]))["$and"][0] == {"art": "§ 22"}
    assert build_where(SearchFilters(articles=["art. 22"]))["$and"][0] == {"art": "22"}
    assert build_where(SearchFilters(articles=["22"]))["$and"][0] == {"art": {"$in": ["22", "§ 22"]}}


def test_no_threshold_hint_when_the_threshold_is_off(capsys, two_acts_db):
    code, out, _ = run_cli(capsys, "szukaj", QUESTION, "--art", "9999", "--prog", "0", "--baza", two_acts_db)
    assert code == 0 and "nie pasują do" in " ".join(out.split()) and "--prog" not in out
