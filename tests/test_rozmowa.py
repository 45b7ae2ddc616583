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
