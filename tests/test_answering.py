"""Odpowiedzi z cytatami na poziomie API: prompt, cytaty, strumień, przepisywanie pytania, błędy serwera.

Model czatu zastępuje lokalny serwer HTTP mówiący protokołem OpenAI (``tests/llm_server.py``).
"""

from __future__ import annotations

import logging

import pytest
from llm_server import FakeLlm, Reply, running_fake_llm

from chroma_rag.answering.answer import (
    NOT_FOUND,
    SYSTEM_PROMPT,
    Answer,
    Citation,
    ask,
    build_messages,
    citation_label,
    find_citations,
    invalid_citations,
)
from chroma_rag.errors import ServiceError, UserError
from chroma_rag.llm import LlmSettings
from chroma_rag.models import Hit

KEY = "sk-or-v1-TAJNY-klucz-0123456789"

HITS = [  # best first, as retrieval returns them
    Hit(
        "a-5",
        "Art. 5. Pacjent ma prawo do informacji.",
        {"plik": "pacjent.pdf", "art": "5", "strona": 2},
        0.91,
    ),
    Hit("a-7", "Art. 7. Pacjent ma prawo do zgody.", {"plik": "pacjent.pdf", "art": "7", "strona": 3}, 0.87),
    Hit("r-3", "§ 3. Dokumentację prowadzi się.", {"plik": "rozp.pdf", "art": "§ 3", "strona": 1}, 0.84),
]


@pytest.fixture
def fake() -> FakeLlm:
    with running_fake_llm() as server:
        yield server


def settings_for(fake: FakeLlm, **overrides) -> LlmSettings:
    values = {"url": fake.url, "model": "testowy/model-1", "key": KEY, "timeout": 5.0, "max_retries": 0}
    return LlmSettings(**{**values, **overrides})


def fixed(hits: list[Hit]):
    return lambda query, earlier: list(hits)


# --- prompt ---------------------------------------------------------------------------------------


def test_messages_put_the_best_fragment_last_right_before_the_question():
    system, user = build_messages("Czy pacjent ma prawo do informacji?", HITS)

    assert [system["role"], user["role"]] == ["system", "user"]
    content = user["content"]
    positions = [content.index(hit.text) for hit in HITS]
    assert positions[2] < positions[1] < positions[0]  # least relevant first, best last
    assert content.endswith("Pytanie: Czy pacjent ma prawo do informacji?")
    between = content[positions[0] + len(HITS[0].text) : content.index("Pytanie:")]
    assert between.strip() == ""  # nothing separates the best fragment from the question
    assert "[pacjent.pdf, art. 5], strona 2" in content
    assert "[rozp.pdf, § 3], strona 1" in content


def test_system_rules_demand_citations_and_the_exact_refusal():
    assert f"odpowiedz dokładnie: {NOT_FOUND}" in SYSTEM_PROMPT
    assert "[plik, art. N]" in SYSTEM_PROMPT
    assert "wyłącznie na podstawie podanych fragmentów" in SYSTEM_PROMPT


def test_fragment_without_article_is_labelled_by_page():
    hit = Hit("d-1", "Umowa najmu lokalu.", {"plik": "umowa.docx", "art": "", "strona": 4}, 0.8)
    assert (
        "=== Fragment 1: [umowa.docx, s. 4], strona 4 ===\nUmowa najmu lokalu."
        in build_messages("?", [hit])[1]["content"]
    )


# --- citations ------------------------------------------------------------------------------------


def test_find_citations_understands_common_forms():
    text = (
        "Tak [pacjent.pdf, art. 5 ust. 2]. Też [kk.pdf, Art. 148 § 1; rozp.pdf, § 3] oraz "
        "[pacjent, art. 7, art. 9a] i [umowa.docx, str. 4]. Przypis [1] i [zwykły nawias] pomijamy."
    )
    assert find_citations(text) == [
        Citation("pacjent.pdf", "art. 5"),
        Citation("kk.pdf", "art. 148"),
        Citation("rozp.pdf", "§ 3"),
        Citation("pacjent", "art. 7"),
        Citation("pacjent", "art. 9a"),
        Citation("umowa.docx", "s. 4"),
    ]


def test_citations_not_matching_any_given_fragment_are_flagged():
    text = (
        "Tak [pacjent.pdf, art. 5], [PACJENT, art. 7], [rozp.pdf, § 3], [pacjent.pdf, s. 2]; "
        "nie [pacjent.pdf, art. 6] [inny.pdf, art. 5]."
    )
    assert invalid_citations(text, HITS) == [
        Citation("pacjent.pdf", "art. 6"),
        Citation("inny.pdf", "art. 5"),
    ]


SAME_NAME = [  # two folders, one file name: the citation must say which file
    Hit("k-1", "§ 1. Urlop planuje kierownik.", {"plik": "regulamin.txt", "art": "§ 1", "strona": 1,
                                                 "sciezka": "/firma/kadry/regulamin.txt"}, 0.9),
    Hit("i-1", "§ 1. Hasło zmienia się co 90 dni.", {"plik": "regulamin.txt", "art": "§ 1", "strona": 1,
                                                     "sciezka": "/firma/it/regulamin.txt"}, 0.8),
    HITS[0],
]


def test_same_named_files_are_cited_with_their_folder():
    user = build_messages("Kto planuje urlop?", SAME_NAME)[1]["content"]
    assert "[kadry/regulamin.txt, § 1]" in user and "[it/regulamin.txt, § 1]" in user
    assert "[pacjent.pdf, art. 5]" in user  # a unique name stays as it was
    text = "Kierownik [kadry/regulamin.txt, § 1]; co 90 dni [IT/regulamin, § 1]; który? [regulamin.txt, § 1]."
    assert invalid_citations(text, SAME_NAME) == [Citation("regulamin.txt", "§ 1")]


def test_citations_of_superscript_articles_keep_the_superscript():
    """„art. 385^1” (tak jak w etykiecie fragmentu) i „art. 385¹” (tak jak w tekście) to art. 385^1, nie 385."""
    kc = [Hit("kc-385^1", "Art. 385¹. …", {"plik": "kc.pdf", "art": "385^1", "strona": 80}, 0.9)]
    text = "Tak [kc.pdf, art. 385^1], też [kc.pdf, art. 385¹ § 2]; nie [kc.pdf, art. 385]."
    assert find_citations(text) == [Citation("kc.pdf", "art. 385^1"), Citation("kc.pdf", "art. 385")]
    assert invalid_citations(text, kc) == [Citation("kc.pdf", "art. 385")]


def test_a_unit_cited_with_its_paragraph_is_labelled_and_checked_so():
    """Pytanie „art. 505 § 1 kpc”: fragment ma etykietę „art. 505 § 1 k.p.c.”, a cytat modelu w tej postaci
    wskazuje art. 505 (paragraf jest częścią artykułu)."""
    hit = Hit("kpc-505", "Art. 505. § 1. Od nakazu zapłaty pozwany może wnieść sprzeciw.",
              {"plik": "kpc.txt", "art": "505", "strona": 1, "skrot": "k.p.c."}, 0.9, cited=True, subunit="§ 1")
    assert citation_label(hit) == "[kpc.txt, art. 505 § 1 k.p.c.]"
    assert "[kpc.txt, art. 505 § 1 k.p.c.]" in build_messages("Co mówi art. 505 § 1 kpc?", [hit])[1]["content"]
    assert invalid_citations("Sprzeciw [kpc.txt, art. 505 § 1 k.p.c.], nie [kpc.txt, art. 506].", [hit]) == [
        Citation("kpc.txt", "art. 506")]


# --- asking ---------------------------------------------------------------------------------------


def test_nothing_relevant_answers_refusal_without_calling_the_model(fake):
    tokens: list[str] = []
    no_key_cloud = LlmSettings(key=None)  # would fail if it ever tried to connect
    answer = ask("Ile kosztuje bilet do kina?", fixed([]), settings=no_key_cloud, on_token=tokens.append)

    assert answer.text == NOT_FOUND
    assert tokens == [NOT_FOUND]
    assert answer.hits == [] and answer.model is None and not answer.found
    assert fake.requests == []


def test_answer_sends_the_prompt_and_reports_usage_cost_and_bad_citations(fake):
    fake.enqueue(
        Reply(text="Pacjent ma prawo do informacji [pacjent.pdf, art. 5] i do nieba [pacjent.pdf, art. 99].")
    )
    answer = ask("Czy pacjent ma prawo do informacji?", fixed(HITS), settings=settings_for(fake))

    [request] = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "testowy/model-1"
    assert request.body["messages"] == build_messages("Czy pacjent ma prawo do informacji?", HITS)
    assert not request.body.get("stream")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert answer.text.startswith("Pacjent ma prawo")
    assert answer.hits == HITS and answer.found
    assert answer.invalid_citations == [Citation("pacjent.pdf", "art. 99")]
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.cost) == (
        120,
        30,
        0.00042,
    )
    assert answer.model == FakeLlm.model


def test_streaming_delivers_pieces_as_they_come_and_usage_from_the_last_chunk(fake):
    fake.enqueue(Reply(text="Tak, pacjent ma prawo do informacji [pacjent.pdf, art. 5].", cost=None))
    pieces: list[str] = []
    answer = ask("Informacja?", fixed(HITS), settings=settings_for(fake), on_token=pieces.append)

    body = fake.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert len(pieces) > 3
    assert "".join(pieces) == answer.text == "Tak, pacjent ma prawo do informacji [pacjent.pdf, art. 5]."
    assert answer.invalid_citations == []
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.cost) == (120, 30, None)


def test_local_server_without_key_gets_a_dummy_key(fake):
    answer = ask("Informacja?", fixed(HITS), settings=settings_for(fake, key=None))
    assert answer.found
    assert fake.requests[0].headers["authorization"] == "Bearer brak-klucza"


def test_answer_json_has_the_documented_fields():
    answer = Answer("Tak [pacjent.pdf, art. 5].", HITS[:1], model="m")
    data = answer.to_json()
    assert {"odpowiedz", "fragmenty", "uzycie", "model"} <= set(data)
    assert data["fragmenty"] == [HITS[0].to_json()]
    assert data["uzycie"] == {"tokeny_wejscia": 0, "tokeny_wyjscia": 0, "koszt": None}


def test_empty_question_is_a_user_error(fake):
    with pytest.raises(UserError, match="puste"):
        ask("  ", fixed(HITS), settings=settings_for(fake))


# --- errors ---------------------------------------------------------------------------------------


def ask_expecting_error(fake: FakeLlm, caplog, stream: bool = False, **overrides) -> str:
    caplog.set_level(logging.DEBUG)
    on_token = (lambda piece: None) if stream else None
    with pytest.raises(ServiceError) as caught:
        ask("Informacja?", fixed(HITS), settings=settings_for(fake, **overrides), on_token=on_token)
    message = str(caught.value)
    assert KEY not in message and KEY not in caplog.text
    assert "\n" not in message
    return message


@pytest.mark.parametrize("stream", [False, True])
def test_rejected_key(fake, caplog, stream):
    fake.enqueue(Reply(status=401))
    message = ask_expecting_error(fake, caplog, stream)
    assert "odrzucił klucz API (błąd 401)" in message and "CHROMA_RAG_LLM_KEY" in message


def test_unknown_model(fake, caplog):
    fake.enqueue(Reply(status=404))
    message = ask_expecting_error(fake, caplog, model="nie/istnieje")
    assert "nie zna modelu „nie/istnieje” (błąd 404)" in message and fake.url in message


def test_rate_limit_is_retried_then_reported(fake, caplog):
    fake.enqueue(*[Reply(status=429, headers={"retry-after-ms": "10"})] * 3)
    message = ask_expecting_error(fake, caplog, max_retries=2)
    assert len(fake.requests) == 3
    assert "błąd 429" in message and "po 2 ponowieniach" in message


def test_server_error_is_retried_with_backoff_and_can_recover(fake, caplog):
    fake.enqueue(Reply(status=503), Reply(status=500), Reply(text="Tak [pacjent.pdf, art. 5]."))
    caplog.set_level(logging.INFO, logger="openai")
    answer = ask("Informacja?", fixed(HITS), settings=settings_for(fake, max_retries=2))
    assert answer.text == "Tak [pacjent.pdf, art. 5]."
    assert [request.headers["x-stainless-retry-count"] for request in fake.requests] == ["0", "1", "2"]
    # the pauses the client asked for, not the time that passed: exponential 0.5 s, then 1 s (up to 25% less)
    pauses = [record.args[0] for record in caplog.records if record.getMessage().startswith("Retrying request")]
    assert len(pauses) == 2 and 0.375 <= pauses[0] <= 0.5 and 0.75 <= pauses[1] <= 1.0, pauses


def test_server_error_that_persists(fake, caplog):
    fake.enqueue(*[Reply(status=500, headers={"retry-after-ms": "10"})] * 2)
    message = ask_expecting_error(fake, caplog, stream=True, max_retries=1)
    assert "błąd 500 także po 1 ponowieniach" in message and len(fake.requests) == 2


def test_error_in_the_middle_of_a_stream(fake, caplog):
    fake.enqueue(Reply(text="Pacjent ma prawo do informacji.", fail_after=2))
    message = ask_expecting_error(fake, caplog, stream=True)
    assert f"Serwer modelu {fake.url} przerwał odpowiedź błędem" in message


def test_timeout(fake, caplog):
    fake.enqueue(Reply(delay=2.0))
    message = ask_expecting_error(fake, caplog, timeout=0.3)
    assert "nie odpowiedział w ciągu 0.3 s" in message and "CHROMA_RAG_LLM_TIMEOUT" in message


def test_server_down_names_the_url(caplog):
    with running_fake_llm() as gone:
        url = gone.url
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ServiceError) as caught:
        ask("Informacja?", fixed(HITS), settings=LlmSettings(url=url, key=KEY, timeout=2, max_retries=0))
    assert f"Nie można połączyć się z serwerem modelu {url}" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in caplog.text


def test_missing_key_for_openrouter_says_how_to_set_it(fake):
    with pytest.raises(UserError) as caught:
        ask("Informacja?", fixed(HITS), settings=LlmSettings(key=None))
    message = str(caught.value)
    assert "Brak klucza API do openrouter.ai" in message
    assert "CHROMA_RAG_LLM_KEY" in message and "OPENROUTER_API_KEY" in message and ".env" in message
    assert fake.requests == []


# --- settings -------------------------------------------------------------------------------------


def test_settings_defaults_point_at_openrouter():
    settings = LlmSettings.from_env({})
    assert settings.url == "https://openrouter.ai/api/v1"
    assert "/" in settings.model and settings.key is None and settings.needs_key


def test_settings_read_dotenv_but_real_environment_wins(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text(
        f"CHROMA_RAG_LLM_URL=http://localhost:11434/v1/\nCHROMA_RAG_LLM_MODEL=qwen3:4b\nCHROMA_RAG_LLM_KEY={KEY}\n"
        "CHROMA_RAG_LLM_TIMEOUT=7.5\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHROMA_RAG_LLM_MODEL", "llama3.2")
    monkeypatch.setenv("CHROMA_RAG_LLM_RETRIES", "1")
    settings = LlmSettings.from_env()
    assert (settings.url, settings.model, settings.key) == ("http://localhost:11434/v1", "llama3.2", KEY)
    assert (settings.timeout, settings.max_retries) == (7.5, 1)
    assert not settings.needs_key
    assert KEY not in repr(settings)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("", "klucz-openrouter"),
        ("https://api.openai.com/v1", "klucz-openai"),
        ("http://localhost:11434/v1", "klucz-openai"),
    ],
)
def test_provider_keys_go_only_to_their_provider(url, expected):
    environ = {
        "CHROMA_RAG_LLM_URL": url,
        "OPENROUTER_API_KEY": "klucz-openrouter",
        "OPENAI_API_KEY": "klucz-openai",
    }
    assert LlmSettings.from_env(environ).key == expected
    assert LlmSettings.from_env({**environ, "CHROMA_RAG_LLM_KEY": "własny"}).key == "własny"


def test_bad_number_in_settings_is_a_user_error():
    with pytest.raises(UserError, match="CHROMA_RAG_LLM_TIMEOUT"):
        LlmSettings.from_env({"CHROMA_RAG_LLM_TIMEOUT": "szybko"})
