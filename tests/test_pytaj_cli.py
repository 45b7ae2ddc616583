"""``chroma-rag pytaj`` i ``Index.ask`` na prawdziwej bazie (dwie ustawy, prawdziwy model embeddingów)
przeciw lokalnemu serwerowi czatu zgodnemu z OpenAI (``llm_server.py``) po HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_PROTECTION, PATIENTS, REPO, run_cli
from llm_server import FakeLlm, Reply, llm_environment, running_fake_llm

from chroma_rag import Index
from chroma_rag.answering.answer import NOT_FOUND, SYSTEM_PROMPT
from chroma_rag.filters import FILTERS_MATCH_NOTHING, SearchFilters
from chroma_rag.llm import LlmSettings

KEY = "sk-or-v1-SEKRET-nie-pokazuj-9876543210"
QUESTION = "Czy pacjent może odmówić zgody na badanie?"


@pytest.fixture
def fake(monkeypatch, tmp_path) -> FakeLlm:
    """Serwer czatu i środowisko wskazujące na niego; bieżący katalog bez ``.env``. Bez planowania zapytań
    (``CHROMA_RAG_PRZEPISZ=0``): tu sprawdzamy odpowiadanie, planowanie – ``test_planning.py``."""
    with llm_environment(monkeypatch, tmp_path, KEY) as server:
        monkeypatch.setenv("CHROMA_RAG_PRZEPISZ", "0")
        yield server


def pytaj(capsys, db, *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(capsys, "pytaj", *args, "--baza", db)
    assert KEY not in out + err
    assert "Traceback" not in out + err
    return code, out, err


def szukaj(capsys, db, *args: str) -> list[dict]:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", "--baza", db)
    assert code == 0, err
    return json.loads(out)["wyniki"]


def test_streams_the_answer_then_sources_with_best_fragment_last_in_prompt(capsys, two_acts_db, fake):
    fake.enqueue(Reply(text="Tak, pacjent może odmówić zgody [prawa-pacjenta-DU-2009-417.pdf, art. 16]."))
    code, out, err = pytaj(capsys, two_acts_db, QUESTION, "--plik", PATIENTS, "-k", "3")

    assert code == 0, err
    assert out.startswith("Tak, pacjent może odmówić zgody [prawa-pacjenta-DU-2009-417.pdf, art. 16].\n")
    hits = szukaj(capsys, two_acts_db, QUESTION, "--plik", PATIENTS, "-k", "3")
    assert "Źródła:" in out
    for rank, hit in enumerate(hits, start=1):
        assert f"{rank}. [{PATIENTS}, art. {hit['art']} u.p.p.], strona {hit['strona']}" in out
    [request] = fake.requests
    assert request.body["stream"] is True
    system, user = request.body["messages"]
    assert system["content"] == SYSTEM_PROMPT
    content = user["content"]
    positions = [content.index(hit["tekst"]) for hit in hits]
    assert positions == sorted(positions, reverse=True)  # best fragment last
    assert content[positions[0] + len(hits[0]["tekst"]) :].strip() == f"Pytanie: {QUESTION}"
    assert content.count("=== Fragment") == 3 and DATA_PROTECTION not in content
    assert "testowy/model-1" in err and "koszt 0.000420 USD" in err


def test_nothing_matching_filters_refuses_without_a_request(capsys, two_acts_db, fake):
    code, out, _ = pytaj(capsys, two_acts_db, QUESTION, "--typ", "kodeks")
    assert code == 0
    assert out.strip() == FILTERS_MATCH_NOTHING and NOT_FOUND not in out  # the answer may be there: say why not
    code, out, _ = pytaj(capsys, two_acts_db, QUESTION, "--typ", "kodeks", "--json")
    assert code == 0 and json.loads(out)["powod"] == "filtry"
    assert fake.requests == []


def test_natural_spelling_of_filters_finds_the_answer(capsys, two_acts_db, fake):
    fake.replies.append(Reply("Tak [prawa-pacjenta-DU-2009-417.pdf, art. 16]."))
    code, out, err = pytaj(capsys, two_acts_db, QUESTION, "--typ", "Ustawa", "--plik", "prawa-pacjenta", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["powod"] is None and answer["fragmenty"] and fake.requests
    code, _, err = pytaj(capsys, two_acts_db, QUESTION, "--rok", "2009", "--od-roku", "2010")
    assert code == 2 and "wyklucza się" in err


def test_json_output(capsys, two_acts_db, fake):
    fake.enqueue(Reply(text="Tak [prawa-pacjenta-DU-2009-417.pdf, art. 16], [inna.pdf, art. 1]."))
    code, out, err = pytaj(capsys, two_acts_db, QUESTION, "--json", "--rok", "2009", "--art", "16", "--art", "17")

    assert code == 0, err
    data = json.loads(out)
    assert data["odpowiedz"] == "Tak [prawa-pacjenta-DU-2009-417.pdf, art. 16], [inna.pdf, art. 1]."
    assert data["fragmenty"] == szukaj(capsys, two_acts_db, QUESTION, "--rok", "2009", "--art", "16", "--art", "17")
    assert {f["art"] for f in data["fragmenty"]} <= {"16", "17"}
    assert data["uzycie"] == {"tokeny_wejscia": 120, "tokeny_wyjscia": 30, "koszt": 0.00042}
    assert data["model"] == FakeLlm.model
    assert data["niepasujace_cytaty"] == ["[inna.pdf, art. 1]"]
    assert not fake.requests[0].body.get("stream")


def test_invalid_citation_is_flagged_and_no_stream_waits(capsys, two_acts_db, fake):
    fake.enqueue(Reply(text="Tak [prawa-pacjenta-DU-2009-417.pdf, art. 999]."))
    code, out, err = pytaj(capsys, two_acts_db, QUESTION, "--bez-strumienia")
    assert code == 0
    assert out.startswith("Tak [prawa-pacjenta-DU-2009-417.pdf, art. 999].\n")
    assert "niepasujące do żadnego podanego fragmentu: [prawa-pacjenta-DU-2009-417.pdf, art. 999]" in err
    assert not fake.requests[0].body.get("stream")


def test_show_prompt_prints_messages_and_calls_nothing(capsys, two_acts_db, fake):
    code, out, _ = pytaj(capsys, two_acts_db, QUESTION, "--pokaz-prompt", "--przepisz", "-k", "2")
    assert code == 0
    assert fake.requests == []
    assert "plan wyszukiwania" in out and '"zapytania"' in out  # the planning request
    assert NOT_FOUND in out and out.count("=== Fragment") == 2
    assert out.rstrip().endswith(f"Pytanie: {QUESTION}")

    code, out, _ = pytaj(capsys, two_acts_db, QUESTION, "--pokaz-prompt", "--json", "--typ", "kodeks")
    assert code == 0 and json.loads(out) == {"planowanie": None, "wiadomosci": None}
    code, out, _ = pytaj(capsys, two_acts_db, QUESTION, "--pokaz-prompt", "--json", "-k", "1")
    messages = json.loads(out)["wiadomosci"]
    assert [m["role"] for m in messages] == ["system", "user"] and fake.requests == []


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(status=401), "odrzucił klucz API (błąd 401)"),
        (Reply(status=404), "nie zna modelu"),
        (Reply(status=429), "błąd 429"),
        (Reply(status=502), "błąd 502"),
        (Reply(delay=2.0), "nie odpowiedział w ciągu 0.3 s"),
    ],
)
def test_errors_are_one_sentence_without_the_key(capsys, two_acts_db, fake, monkeypatch, reply, expected):
    monkeypatch.setenv("CHROMA_RAG_LLM_TIMEOUT", "0.3")
    fake.enqueue(reply)
    code, _, err = pytaj(capsys, two_acts_db, QUESTION)
    assert code == 1
    assert expected in err and len(err.strip().splitlines()) <= 2  # one sentence, wrapped at most once


def test_missing_key_and_server_down(capsys, two_acts_db, fake, monkeypatch):
    monkeypatch.delenv("CHROMA_RAG_LLM_URL")
    monkeypatch.delenv("CHROMA_RAG_LLM_KEY")
    code, _, err = pytaj(capsys, two_acts_db, QUESTION)
    assert code == 1 and "Brak klucza API" in err and "OPENROUTER_API_KEY" in err

    with running_fake_llm() as gone:
        url = gone.url
    monkeypatch.setenv("CHROMA_RAG_LLM_URL", url)
    monkeypatch.setenv("CHROMA_RAG_LLM_KEY", KEY)
    code, _, err = pytaj(capsys, two_acts_db, QUESTION)
    assert code == 1 and "Nie można połączyć się z serwerem modelu" in err and "127.0.0.1" in err


def test_key_from_dotenv_in_current_directory(capsys, two_acts_db, fake, monkeypatch, tmp_path):
    monkeypatch.delenv("CHROMA_RAG_LLM_KEY")
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\n", encoding="utf-8")
    code, _, _ = pytaj(capsys, two_acts_db, QUESTION, "-k", "1")
    assert code == 0
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_index_ask_respects_the_similarity_threshold(two_acts_db, fake):
    index = Index(two_acts_db)
    settings = LlmSettings(url=fake.url, key=KEY, max_retries=0)
    refused = index.ask(QUESTION, threshold=0.999, mode="wektor", settings=settings, rewrite=False)
    assert refused.text == NOT_FOUND and refused.hits == [] and fake.requests == []

    answer = index.ask(QUESTION, k=2, filters=SearchFilters(files=[PATIENTS]), settings=settings, rewrite=False)
    assert answer.text == "Odpowiedź testowa." and len(answer.hits) == 2
    assert answer.usage.cost == 0.00042 and len(fake.requests) == 1


def test_console_script_streams_to_a_pipe(two_acts_db, fake, tmp_path):
    exe = Path(sys.executable).with_name("chroma-rag")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "chroma_rag"]
    fake.enqueue(Reply(text="Tak [prawa-pacjenta-DU-2009-417.pdf, art. 16]."))
    result = subprocess.run(
        [*command, "pytaj", QUESTION, "-k", "2", "--baza", str(two_acts_db)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Tak [prawa-pacjenta-DU-2009-417.pdf, art. 16].\n")
    assert KEY not in result.stdout + result.stderr


def test_same_named_files_in_two_folders_are_told_apart_in_the_prompt_and_sources(capsys, fake, same_named_db):
    code, out, _ = pytaj(capsys, same_named_db, "Kto planuje urlop?", "--pokaz-prompt", "--prog", "0")
    assert code == 0 and "[kadry/regulamin.md, art. 1]" in out and "[it/regulamin.md, art. 1]" in out
    fake.enqueue(Reply(text="Kierownik działu [kadry/regulamin.md, art. 1]."))
    code, out, err = pytaj(capsys, same_named_db, "Kto planuje urlop?", "--prog", "0")
    assert code == 0 and "Źródła:" in out and "kadry/regulamin.md, art. 1" in out and "niepasujące" not in err
