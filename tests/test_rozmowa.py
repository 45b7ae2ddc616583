"""Rozmowa (issue 38): pytanie dopowiadające idzie do wyszukiwania jako samodzielne, model odpowiadający dostaje
wcześniejsze tury (najwyżej tyle, ile pozwalają limity, i mówi się o tym), każda tura jest zapisana ze swoimi
źródłami – w CLI (`pytaj --dalej`, `--rozmowa`) i w API (`rozmowa`, `/api/rozmowy/ID`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from conftest import PATIENTS, run_cli
from llm_server import FakeLlm, Reply, Request, llm_environment

from chroma_rag.answering.conversation import STANDALONE_PROMPT, ConversationStore, Turn
from chroma_rag.retrieval.planning import FOLLOW_UP_RULE, PLAN_PROMPT

KEY = "klucz-rozmowy-nie-pokazuj"
FIRST = "Czy pacjent ma prawo do informacji o swoim stanie zdrowia?"
FIRST_ANSWER = f"Tak, pacjent ma prawo do informacji [{PATIENTS}, art. 9]."
FOLLOW_UP = "a czy może z niej zrezygnować?"
STANDALONE = "Czy pacjent może zrezygnować z informacji o swoim stanie zdrowia?"
FOLLOW_UP_ANSWER = f"Tak, pacjent może zrezygnować z informacji [{PATIENTS}, art. 9]."


# a follow-up's plan: the standalone question and where to look for it
FOLLOW_UP_PLAN = {"pytanie_samodzielne": STANDALONE, "zapytania": ["prawo pacjenta do informacji"],
                  "dokumenty": [PATIENTS], "jednostki": ["art. 9"]}


def responder(answers: list[str]):
    """Model, który przepisuje pytania dopowiadające na STANDALONE (osobno albo w planie – FOLLOW_UP_PLAN), na
    prośbę o plan pytania bez rozmowy odpowiada domyślnie (bez użytecznego planu), a na pytania z fragmentami
    odpowiada po kolei ``answers``."""
    def respond(request: Request) -> Reply | None:
        messages = request.body["messages"]
        if messages[0]["content"] == STANDALONE_PROMPT:
            return Reply(text=STANDALONE)
        if "response_format" in request.body:
            follow_up = FOLLOW_UP_RULE in messages[0]["content"]
            return Reply(text=json.dumps(FOLLOW_UP_PLAN, ensure_ascii=False)) if follow_up else None
        return Reply(text=answers.pop(0)) if answers else None
    return respond


def without_follow_up_plan(standalone: str):
    """Model, któremu plan dopytania się nie udaje (odpowiada czymś, co planem nie jest): osobno przepisuje dopytanie
    na ``standalone``, plan pytania bez rozmowy daje domyślny, a na pytania z fragmentami odpowiada FIRST_ANSWER,
    potem FOLLOW_UP_ANSWER."""
    answers = [FIRST_ANSWER, FOLLOW_UP_ANSWER]

    def respond(request: Request) -> Reply | None:
        messages = request.body["messages"]
        if messages[0]["content"] == STANDALONE_PROMPT:
            return Reply(text=standalone)
        if "response_format" in request.body:
            return Reply(text="to nie jest plan") if FOLLOW_UP_RULE in messages[0]["content"] else None
        return Reply(text=answers.pop(0))
    return respond


def answer_requests(fake: FakeLlm) -> list[list[dict]]:
    return [r.body["messages"] for r in fake.requests
            if r.body["messages"][0]["content"] != STANDALONE_PROMPT and "response_format" not in r.body]


def plan_requests(fake: FakeLlm) -> list[list[dict]]:
    return [r.body["messages"] for r in fake.requests if "response_format" in r.body]


@pytest.fixture
def fake(monkeypatch, tmp_path) -> FakeLlm:
    with llm_environment(monkeypatch, tmp_path, KEY) as server:
        monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "0")  # planning has its own tests; here the conversation
        yield server


@pytest.fixture
def db(two_acts_copy: Path) -> Path:
    return two_acts_copy


def test_pytaj_dalej_continues_the_last_conversation(capsys, db: Path, fake: FakeLlm) -> None:
    fake.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
    before = set((db / "rozmowy").glob("*.json"))  # the copied base may hold the served tests' conversations
    code, out, err = run_cli(capsys, "pytaj", FIRST, "--baza", db)
    assert code == 0 and out.startswith(FIRST_ANSWER), err
    assert "pytaj --dalej" in err
    code, out, err = run_cli(capsys, "pytaj", "--dalej", FOLLOW_UP, "--baza", db)
    assert code == 0 and out.startswith(FOLLOW_UP_ANSWER), err
    assert f"Szukano pytania: „{STANDALONE}”" in err and KEY not in out + err

    [rewrite] = [r.body["messages"] for r in fake.requests if r.body["messages"][0]["content"] == STANDALONE_PROMPT]
    assert FIRST in rewrite[1]["content"] and FIRST_ANSWER in rewrite[1]["content"]
    assert rewrite[1]["content"].endswith(f"Ostatnie pytanie: {FOLLOW_UP}")
    first, second = answer_requests(fake)
    assert [m["role"] for m in first] == ["system", "user"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[1]["content"] == FIRST and second[2]["content"] == FIRST_ANSWER
    assert f"Pytanie: {FOLLOW_UP}" in second[3]["content"] and STANDALONE in second[3]["content"]

    [saved] = set((db / "rozmowy").glob("*.json")) - before
    turns = json.loads(saved.read_text(encoding="utf-8"))["tury"]
    assert [t["pytanie"] for t in turns] == [FIRST, FOLLOW_UP]
    assert turns[1]["pytanie_samodzielne"] == STANDALONE and turns[1]["odpowiedz"] == FOLLOW_UP_ANSWER
    assert all(t["zrodla"] and t["zrodla"][0]["plik"] for t in turns)  # each turn keeps its own sources

    fake.responder = responder([FIRST_ANSWER])
    code, _, err = run_cli(capsys, "pytaj", FIRST, "--baza", db)  # without --dalej: a new conversation
    assert code == 0 and "Szukano pytania" not in err
    assert [m["role"] for m in answer_requests(fake)[-1]] == ["system", "user"]
    assert len(set((db / "rozmowy").glob("*.json")) - before) == 2


def test_pytaj_ponow_answers_the_last_question_anew_or_an_edited_one(capsys, db: Path, fake: FakeLlm) -> None:
    again, edited, edited_answer = "Tak – odpowiedź od nowa.", "Kto udziela informacji?", "Lekarz – poprawiona."
    fake.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER, again, edited_answer])
    before = set((db / "rozmowy").glob("*.json"))
    assert run_cli(capsys, "pytaj", FIRST, "--baza", db)[0] == 0
    assert run_cli(capsys, "pytaj", "--dalej", FOLLOW_UP, "--baza", db)[0] == 0
    [saved] = set((db / "rozmowy").glob("*.json")) - before

    def turns() -> list[tuple[str, str]]:
        return [(t["pytanie"], t["odpowiedz"]) for t in json.loads(saved.read_text(encoding="utf-8"))["tury"]]

    code, out, err = run_cli(capsys, "pytaj", "--ponow", "--baza", db)
    assert code == 0 and out.startswith(again), err
    assert turns() == [(FIRST, FIRST_ANSWER), (FOLLOW_UP, again)]
    sent = answer_requests(fake)[-1]  # the turn before, not the answer being replaced
    assert [m["content"] for m in sent if m["role"] == "assistant"] == [FIRST_ANSWER]
    code, out, err = run_cli(capsys, "pytaj", "--ponow", edited, "--rozmowa", saved.stem, "--baza", db)
    assert code == 0 and out.startswith(edited_answer), err
    assert turns() == [(FIRST, FIRST_ANSWER), (edited, edited_answer)]

    fake.responder = lambda request: Reply(status=500)  # the model down: the conversation stays as it was
    code, _, err = run_cli(capsys, "pytaj", "--ponow", "--baza", db)
    assert code != 0 and "Traceback" not in err and turns() == [(FIRST, FIRST_ANSWER), (edited, edited_answer)]

    code, _, err = run_cli(capsys, "pytaj", "--baza", db)
    assert code == 2 and "Brakuje pytania" in err
    empty = ConversationStore(db / "rozmowy").new()
    ConversationStore(db / "rozmowy").save(empty)
    code, _, err = run_cli(capsys, "pytaj", "--ponow", "--rozmowa", empty.id, "--baza", db)
    assert code == 2 and "Nie ma jeszcze rozmowy" in err


def test_a_long_conversation_sends_only_its_last_turns_and_says_so(capsys, db: Path, fake: FakeLlm) -> None:
    store = ConversationStore(db / "rozmowy")
    conversation = store.new()
    for n in range(6):
        conversation.add(Turn(question=f"pytanie {n}", standalone=f"pytanie {n}", answer=f"odpowiedź {n}"))
    store.save(conversation)
    fake.responder = responder([FOLLOW_UP_ANSWER, FOLLOW_UP_ANSWER])
    code, out, err = run_cli(capsys, "pytaj", "--rozmowa", conversation.id, FOLLOW_UP, "--baza", db)
    assert code == 0 and "Model dostał tylko ostatnie tury rozmowy (4 z 6) – limit to 4 tury i 6000 znaków (ok. " \
        "1500 tokenów)" in err, err
    sent = answer_requests(fake)[-1]
    assert [m["content"] for m in sent if m["role"] == "user"][:-1] == [f"pytanie {n}" for n in range(2, 6)]
    assert len(store.load(conversation.id).turns) == 7
    code, out, err = run_cli(capsys, "pytaj", "--rozmowa", conversation.id, FOLLOW_UP, "--baza", db, "--json")
    answer = json.loads(out)
    assert answer["rozmowa"] == conversation.id and answer["tury_dla_modelu"] == 4 and answer["pominiete_tury"] == 3
    code, _, err = run_cli(capsys, "pytaj", "--rozmowa", "nie-ma-takiej", FOLLOW_UP, "--baza", db)
    assert code == 2 and "Nie ma zapisanej rozmowy" in err


def test_a_planned_follow_up_asks_the_model_once_for_the_plan_and_the_standalone_question(
        capsys, monkeypatch, db: Path, fake: FakeLlm) -> None:
    monkeypatch.delenv("CHROMA_RAG_PRZEPISZ")  # planned, as by default
    fake.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
    code, out, err = run_cli(capsys, "pytaj", FIRST, "--baza", db)
    assert code == 0 and out.startswith(FIRST_ANSWER), err
    code, out, err = run_cli(capsys, "pytaj", "--dalej", FOLLOW_UP, "--baza", db, "--json", "--pokaz-prompt")
    shown = json.loads(out)  # what the follow-up's two requests would carry, without asking the model
    assert code == 0 and len(fake.requests) == 2, err
    system, user = shown["planowanie"]
    assert system["content"] == PLAN_PROMPT + FOLLOW_UP_RULE and FIRST in user["content"]
    code, out, err = run_cli(capsys, "pytaj", "--dalej", FOLLOW_UP, "--baza", db, "--json")
    assert code == 0, err
    answer = json.loads(out)

    # two chat calls a turn (plan, answer), as for a lone question; the rewrite rides in the plan
    assert len(fake.requests) == 4 and not [r for r in fake.requests
                                            if r.body["messages"][0]["content"] == STANDALONE_PROMPT]
    lone, follow_up = plan_requests(fake)
    assert lone[0]["content"] == PLAN_PROMPT and "Rozmowa" not in lone[1]["content"]  # the request as before
    assert follow_up[0]["content"] == PLAN_PROMPT + FOLLOW_UP_RULE
    said = follow_up[1]["content"]
    assert said.index(f"Użytkownik: {FIRST}\nAsystent: {FIRST_ANSWER}") < said.index("Dokumenty w indeksie")
    assert said.endswith(f"Pytanie: {FOLLOW_UP}")
    assert answer["pytanie_samodzielne"] == STANDALONE and answer["plan"]["dokumenty"] == [PATIENTS]
    assert answer["fragmenty"][0]["plik"] == PATIENTS  # searched for the standalone question, with its plan
    assert answer["tury_dla_modelu"] == 1 and answer["pominiete_tury"] == 0 and answer["uwaga_rozmowy"] is None
    sent = answer_requests(fake)[-1]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert f"(Samodzielnie: {STANDALONE})" in sent[-1]["content"]

    # a long conversation: the plan request carries only the turns the limits let through, and the user is told
    store = ConversationStore(db / "rozmowy")
    long = store.new()
    for n in range(6):
        long.add(Turn(question=f"pytanie {n}", standalone=f"pytanie {n}", answer=f"odpowiedź {n}"))
    store.save(long)
    fake.responder = responder([FOLLOW_UP_ANSWER])
    code, out, err = run_cli(capsys, "pytaj", "--rozmowa", long.id, FOLLOW_UP, "--baza", db)
    assert code == 0 and "(4 z 6) – limit to 4 tury i 6000 znaków" in err, err
    said = plan_requests(fake)[-1][1]["content"]
    assert [n for n in range(6) if f"Użytkownik: pytanie {n}\n" in said] == [2, 3, 4, 5]
    assert f"Szukano pytania: „{STANDALONE}”" in err


def test_a_follow_up_whose_plan_fails_is_rewritten_by_a_separate_call(capsys, monkeypatch, db: Path,
                                                                     fake: FakeLlm) -> None:
    """Plan dopytania nie przyszedł (model odpowiedział czymś, co planem nie jest): samo „a czy może z niej
    zrezygnować?” nie mówi, o co chodzi – pytanie samodzielne pisze osobne zapytanie, jak bez planowania, a szuka się
    go bez drugiej próby planu."""
    monkeypatch.delenv("CHROMA_RAG_PRZEPISZ")  # planned, as by default
    fake.responder = without_follow_up_plan(STANDALONE)
    code, out, err = run_cli(capsys, "pytaj", FIRST, "--baza", db)
    assert code == 0, err
    code, out, err = run_cli(capsys, "pytaj", "--dalej", FOLLOW_UP, "--baza", db, "--json")
    assert code == 0, err
    answer = json.loads(out)
    rewrites = [r for r in fake.requests if r.body["messages"][0]["content"] == STANDALONE_PROMPT]
    assert len(rewrites) == 1 and FIRST in rewrites[0].body["messages"][-1]["content"]
    assert len(plan_requests(fake)) == 2  # one for each turn: no second plan after a failed one
    assert answer["pytanie_samodzielne"] == STANDALONE and answer["plan"]["blad"]  # the failure is still said
    assert answer["fragmenty"][0]["plik"] == PATIENTS
    assert f"(Samodzielnie: {STANDALONE})" in answer_requests(fake)[-1][-1]["content"]


def test_api_conversation_id_continues_and_the_saved_conversation_opens_without_the_model(
        base: str, fake_llm: FakeLlm) -> None:
    fake_llm.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
    fake_llm.requests.clear()
    try:
        def ask(body: dict) -> dict:
            response = httpx.post(f"{base}/api/pytaj", json=body, headers={"Accept": "application/json"},
                                  timeout=60)
            assert response.status_code == 200, response.text
            return response.json()

        first = ask({"pytanie": FIRST})
        second = ask({"pytanie": FOLLOW_UP, "rozmowa": first["rozmowa"]})
    finally:
        fake_llm.responder = None
    assert second["rozmowa"] == first["rozmowa"] and second["pytanie_samodzielne"] == STANDALONE
    assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user", "assistant", "user"]
    asked = len(fake_llm.requests)
    saved = httpx.get(f"{base}/api/rozmowy/{first['rozmowa']}", timeout=60)
    assert saved.status_code == 200 and len(fake_llm.requests) == asked  # no model call to show it
    turns = saved.json()["tury"]
    assert [t["pytanie"] for t in turns] == [FIRST, FOLLOW_UP]
    assert turns[1]["odpowiedz"] == FOLLOW_UP_ANSWER and turns[1]["zrodla"] == second["fragmenty"]
    missing = httpx.get(f"{base}/api/rozmowy/abcdefabcdef", timeout=60)
    assert missing.status_code == 404 and "Nie ma zapisanej rozmowy" in missing.json()["blad"]
    assert "--dalej" not in missing.json()["blad"]
    wrong = httpx.post(f"{base}/api/pytaj", json={"pytanie": FOLLOW_UP, "rozmowa": 5}, timeout=60)
    assert wrong.status_code == 400 and "„rozmowa”" in wrong.json()["blad"]


def test_a_follow_up_whose_plan_fails_streams_only_the_sources_of_the_standalone_question(
        base: str, fake_llm: FakeLlm) -> None:
    """Strona pokazuje źródła, zanim model zacznie pisać: przy nieudanym planie dopytania to mają być od razu źródła
    pytania samodzielnego, a nie najpierw wyszukiwania samego dopytania (które też coś znajduje)."""
    follow_up = "a dokumentacja medyczna?"
    standalone = "Czy pacjent ma prawo dostępu do swojej dokumentacji medycznej?"
    fake_llm.responder = without_follow_up_plan(standalone)
    fake_llm.requests.clear()
    try:
        first = httpx.post(f"{base}/api/pytaj", json={"pytanie": FIRST}, headers={"Accept": "application/json"},
                           timeout=60).json()
        alone = httpx.get(f"{base}/api/szukaj", params={"q": follow_up}, timeout=60).json()
        stream = httpx.post(f"{base}/api/pytaj", json={"pytanie": follow_up, "rozmowa": first["rozmowa"]},
                            headers={"Accept": "text/event-stream"}, timeout=60)
    finally:
        fake_llm.responder = None
    assert alone["wyniki"], alone  # the follow-up alone finds something too: its sources must not be streamed
    assert stream.status_code == 200 and len(plan_requests(fake_llm)) == 2, stream.text
    events = [block for block in stream.text.split("\n\n") if block.startswith("event: zrodla")]
    assert len(events) == 1, events


def test_a_saved_conversation_can_be_deleted(base: str, fake_llm: FakeLlm) -> None:
    fake_llm.responder = responder([FIRST_ANSWER])
    try:
        asked = httpx.post(f"{base}/api/pytaj", json={"pytanie": FIRST}, headers={"Accept": "application/json"},
                           timeout=60).json()
    finally:
        fake_llm.responder = None
    address = f"{base}/api/rozmowy/{asked['rozmowa']}"
    assert len(asked["rozmowa"]) == 24  # the id is the link: not guessable
    foreign = httpx.request("DELETE", address, headers={"Origin": "http://zla.strona.example"}, json={}, timeout=60)
    assert foreign.status_code == 403 and httpx.get(address, timeout=60).status_code == 200
    assert httpx.request("DELETE", address, json={}, timeout=60).status_code == 204
    assert httpx.get(address, timeout=60).status_code == 404
    again = httpx.request("DELETE", address, json={}, timeout=60)
    assert again.status_code == 404 and "Nie ma zapisanej rozmowy" in again.json()["blad"]


def test_a_saved_conversation_says_when_the_documents_changed_since(two_acts_copy: Path, tmp_path: Path) -> None:
    from serving_support import chat_model, running_server

    from chroma_rag import Index

    with chat_model(FIRST_ANSWER) as fake, running_server(two_acts_copy) as url:
        fake.responder = responder([FIRST_ANSWER])
        asked = httpx.post(f"{url}/api/pytaj", json={"pytanie": FIRST}, headers={"Accept": "application/json"},
                           timeout=60).json()
        address = f"{url}/api/rozmowy/{asked['rozmowa']}"
        assert httpx.get(address, timeout=60).json()["dokumenty_zmienione"] is False
        added = tmp_path / "regulamin-pracy.md"
        added.write_text("# Regulamin pracy\n\nArt. 1. Praca zaczyna się o ósmej.\n", encoding="utf-8")
        Index(two_acts_copy).add([added])
        saved = httpx.get(address, timeout=60).json()
        assert saved["dokumenty_zmienione"] is True and saved["tury"][0]["odpowiedz"] == FIRST_ANSWER


def test_rozmowa_reads_questions_line_by_line_in_one_conversation(db: Path, fake: FakeLlm) -> None:
    import os
    import subprocess
    import sys

    fake.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
    shown = subprocess.run([sys.executable, "-m", "chroma_rag", "rozmowa", "--baza", str(db)],
                           input=f"{FIRST}\n{FOLLOW_UP}\n", capture_output=True, text=True, timeout=600,
                           env={**os.environ, "COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index(FIRST_ANSWER) < shown.stdout.index(f"Pytanie: {FOLLOW_UP}")
    assert FOLLOW_UP_ANSWER in shown.stdout and f"Szukano pytania: „{STANDALONE}”" in shown.stderr
    assert [m["role"] for m in answer_requests(fake)[-1]] == ["system", "user", "assistant", "user"]
    assert "Traceback" not in shown.stderr and KEY not in shown.stdout + shown.stderr


def post_answer(base: str, body: dict, headers: dict | None = None) -> httpx.Response:
    return httpx.post(f"{base}/api/pytaj", json=body, headers={"Accept": "application/json", **(headers or {})},
                      timeout=120)


def test_an_answer_is_regenerated_and_a_question_edited_in_place(base: str, fake_llm: FakeLlm) -> None:
    again, edited = "Tak – ponowiona odpowiedź [" + PATIENTS + ", art. 9].", "Kto udziela pacjentowi informacji?"
    fake_llm.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER, again, FIRST_ANSWER])
    try:
        first = post_answer(base, {"pytanie": FIRST}).json()
        conversation = first["rozmowa"]
        post_answer(base, {"pytanie": FOLLOW_UP, "rozmowa": conversation})
        address = f"{base}/api/rozmowy/{conversation}"

        regenerated = post_answer(base, {"pytanie": FOLLOW_UP, "rozmowa": conversation, "tura": 2})
        assert regenerated.status_code == 200 and regenerated.json()["rozmowa"] == conversation
        assert regenerated.json()["odpowiedz"] == again
        sent = answer_requests(fake_llm)[-1]  # the earlier turn, not the answer being replaced
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
        assert sent[2]["content"] == FIRST_ANSWER
        turns = httpx.get(address, timeout=60).json()["tury"]
        assert [(t["pytanie"], t["odpowiedz"]) for t in turns] == [(FIRST, FIRST_ANSWER), (FOLLOW_UP, again)]

        rewritten = post_answer(base, {"pytanie": edited, "rozmowa": conversation, "tura": 1})
        assert rewritten.status_code == 200, rewritten.text
        assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user"]  # nothing before turn 1
        turns = httpx.get(address, timeout=60).json()["tury"]
        assert [t["pytanie"] for t in turns] == [edited]  # the later turns followed the old question: gone

        # bad input: nothing changes, one Polish sentence each
        asked = len(fake_llm.requests)
        for body, status, said in [
            ({"pytanie": edited, "rozmowa": conversation, "tura": 2}, 400, "nie ma tury 2 – ma ich 1"),
            ({"pytanie": edited, "tura": 1}, 400, "razem z polem „rozmowa”"),
            ({"pytanie": edited, "rozmowa": conversation, "tura": 0}, 400, "od 1"),
            ({"pytanie": edited, "rozmowa": conversation, "tura": "druga"}, 400, "liczbą całkowitą"),
            ({"pytanie": "x" * 2001, "rozmowa": conversation, "tura": 1}, 400, "za długie"),
            ({"pytanie": edited, "rozmowa": "0" * 24, "tura": 1}, 404, "Nie ma zapisanej rozmowy"),
        ]:
            refused = post_answer(base, body)
            assert refused.status_code == status and said in refused.json()["blad"], (body, refused.text)
        assert len(fake_llm.requests) == asked

        # the model breaks off in the middle of the new answer: the saved turn stays as it was
        fake_llm.responder = lambda request: (None if "response_format" in request.body
                                              else Reply(text="Początek odpowiedzi, która się urwie.", fail_after=1))
        broken = post_answer(base, {"pytanie": edited, "rozmowa": conversation, "tura": 1})
        assert broken.status_code == 502 and "blad" in broken.json()
        assert httpx.get(address, timeout=60).json()["tury"] == turns
    finally:
        fake_llm.responder = None


def test_without_users_all_listed_conversations_are_deleted_at_once(base: str, fake_llm: FakeLlm) -> None:
    fake_llm.responder = responder([FIRST_ANSWER, FIRST_ANSWER])
    try:
        ids = [post_answer(base, {"pytanie": FIRST}).json()["rozmowa"] for _ in range(2)]
    finally:
        fake_llm.responder = None
    # without accounts the server cannot tell whose a conversation is: no list, and "all" needs the ids
    assert httpx.get(f"{base}/api/rozmowy", timeout=60).json() == {"rozmowy": None}
    everything = httpx.request("DELETE", f"{base}/api/rozmowy", json={}, timeout=60)
    assert everything.status_code == 400 and "nie wie, które rozmowy są twoje" in everything.json()["blad"]
    for body, said in [({"rozmowy": "abc"}, "lista identyfikatorów"), ({"rozmowy": ["a"] * 201}, "najwyżej 200")]:
        refused = httpx.request("DELETE", f"{base}/api/rozmowy", json=body, timeout=60)
        assert refused.status_code == 400 and said in refused.json()["blad"]
    foreign = httpx.request("DELETE", f"{base}/api/rozmowy", json={"rozmowy": ids},
                            headers={"Origin": "http://zla.strona.example"}, timeout=60)
    assert foreign.status_code == 403
    deleted = httpx.request("DELETE", f"{base}/api/rozmowy", json={"rozmowy": [*ids, "0" * 24, "zly"]}, timeout=60)
    assert deleted.status_code == 200 and deleted.json() == {"usuniete": 2}
    assert all(httpx.get(f"{base}/api/rozmowy/{i}", timeout=60).status_code == 404 for i in ids)


def test_each_user_lists_and_deletes_only_their_own_conversations(two_acts_copy: Path, tmp_path: Path) -> None:
    from serving_support import chat_model, running_server

    from chroma_rag.serving.accounts import Accounts

    accounts = Accounts(tmp_path / "uzytkownicy.json")
    anna, jan = ({"Authorization": f"Bearer {accounts.add(name)}"} for name in ("anna", "jan"))
    with chat_model(FIRST_ANSWER) as fake, running_server(two_acts_copy, accounts=accounts) as url:
        fake.responder = responder([FIRST_ANSWER, FIRST_ANSWER, FOLLOW_UP_ANSWER])
        annas = post_answer(url, {"pytanie": FIRST}, anna).json()["rozmowa"]
        jans = post_answer(url, {"pytanie": FIRST}, jan).json()["rozmowa"]
        assert (two_acts_copy / "rozmowy" / "uzytkownicy" / "anna" / f"{annas}.json").is_file()

        def listed(who: dict) -> list[dict]:
            return httpx.get(f"{url}/api/rozmowy", headers=who, timeout=60).json()["rozmowy"]

        damaged = two_acts_copy / "rozmowy" / "uzytkownicy" / "anna" / f"{'f' * 24}.json"
        damaged.write_text("{uszkodzony", encoding="utf-8")  # one damaged file does not hide the rest of the list
        [mine] = listed(anna)
        opened = httpx.get(f"{url}/api/rozmowy/{damaged.stem}", headers=anna, timeout=60)
        assert opened.status_code == 400 and "uszkodzony" in opened.json()["blad"]
        damaged.unlink()
        assert mine["rozmowa"] == annas and mine["pytanie"] == FIRST and mine["odpowiedz"] == FIRST_ANSWER
        assert mine["tury"] == 1 and mine["czas"]
        assert [c["rozmowa"] for c in listed(jan)] == [jans]

        # Anna's link opens for Jan, read-only: he can neither delete it nor add to it
        annas_address = f"{url}/api/rozmowy/{annas}"
        shared = httpx.get(annas_address, headers=jan, timeout=60).json()
        assert shared["moja"] is False and shared["tury"][0]["odpowiedz"] == FIRST_ANSWER
        assert httpx.get(annas_address, headers=anna, timeout=60).json()["moja"] is True
        refused = httpx.request("DELETE", annas_address, headers=jan, json={}, timeout=60)
        assert refused.status_code == 404 and "Nie ma zapisanej rozmowy" in refused.json()["blad"]
        listed_delete = httpx.request("DELETE", f"{url}/api/rozmowy", headers=jan, json={"rozmowy": [annas]},
                                      timeout=60)
        assert listed_delete.json() == {"usuniete": 0}
        continued = post_answer(url, {"pytanie": FOLLOW_UP, "rozmowa": annas}, jan).json()
        assert continued["rozmowa"] not in (annas, jans)  # Jan's own copy, with Anna's turn as its history
        assert answer_requests(fake)[-1][2]["content"] == FIRST_ANSWER
        assert len(httpx.get(annas_address, headers=anna, timeout=60).json()["tury"]) == 1
        assert [c["rozmowa"] for c in listed(jan)] == [continued["rozmowa"], jans]
        assert [c["tury"] for c in listed(jan)] == [2, 1]

        everything = httpx.request("DELETE", f"{url}/api/rozmowy", headers=jan, json={}, timeout=60)
        assert everything.json() == {"usuniete": 2} and listed(jan) == []
        assert [c["rozmowa"] for c in listed(anna)] == [annas]
        assert httpx.get(annas_address, headers=anna, timeout=60).status_code == 200
