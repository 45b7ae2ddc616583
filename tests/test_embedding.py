"""Opis modelu → embedder: bez sieci, bez ładowania modelu zdalnego."""

import os

import pytest

from chroma_rag.embedding.embedder import LocalE5Embedder, get_embedder, parse_spec
from chroma_rag.embedding.remote import OllamaEmbedder, OpenAIEmbedder, family_for
from chroma_rag.errors import UserError


@pytest.mark.parametrize(
    ("spec", "dims", "model_id"),
    [
        ("lokalny", None, "lokalny:multilingual-e5-small"),
        ("lokalny:multilingual-e5-small", 384, "lokalny:multilingual-e5-small"),
        ("ollama:bge-m3", None, "ollama:bge-m3"),
        ("ollama:bge-m3:567m", None, "ollama:bge-m3:567m"),
        ("openai:text-embedding-3-small", 256, "openai:text-embedding-3-small@256"),
        (" openai:text-embedding-3-small@256 ", None, "openai:text-embedding-3-small@256"),
        ("openai:text-embedding-3-small@256", 256, "openai:text-embedding-3-small@256"),
    ],
)
def test_model_id_is_stable_and_round_trips(spec, dims, model_id):
    assert parse_spec(spec, dims).model_id == model_id
    assert parse_spec(model_id).model_id == model_id


@pytest.mark.parametrize(
    ("spec", "dims", "fragment"),
    [
        ("word2vec", None, "Nieznany model"),
        ("ollama:", None, "Podaj nazwę"),
        ("lokalny", 256, "384"),
        ("lokalny:bge-m3", None, "tylko multilingual-e5-small"),
        ("openai:x@256", 512, "--wymiary"),
        ("openai:x", -3, "dodatnia"),
    ],
)
def test_bad_specs_are_one_polish_sentence(spec, dims, fragment):
    with pytest.raises(UserError, match=fragment):
        parse_spec(spec, dims)


def test_default_comes_from_env(monkeypatch):
    monkeypatch.delenv("CHROMA_RAG_MODEL", raising=False)
    assert parse_spec(None).model_id == "lokalny:multilingual-e5-small"
    monkeypatch.setenv("CHROMA_RAG_MODEL", "ollama:bge-m3")
    assert parse_spec(None).model_id == "ollama:bge-m3"
    assert parse_spec("lokalny").provider == "lokalny"  # jawne --model wygrywa


def test_http_embedders_are_cheap_and_offline_until_first_call(monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "127.0.0.1:1")
    monkeypatch.delenv("CHROMA_RAG_EMBED_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CHROMA_RAG_EMBED_URL", raising=False)
    ollama = get_embedder("ollama:bge-m3")
    assert isinstance(ollama, OllamaEmbedder)
    assert (ollama.url, ollama.dim) == ("http://127.0.0.1:1", None)
    openai = get_embedder("openai:text-embedding-3-large", 1024)
    assert isinstance(openai, OpenAIEmbedder)
    assert (openai.model_id, openai.dim) == ("openai:text-embedding-3-large@1024", 1024)
    with pytest.raises(UserError, match="Brak klucza API"):
        openai.embed_query("x")


def test_local_embedder_is_the_default():
    assert isinstance(get_embedder("lokalny"), LocalE5Embedder)


def test_local_embedder_waits_passively_unless_told_otherwise(monkeypatch):
    # Spinning OpenMP threads made one query take ~1 s on a busy 2-core machine.
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    LocalE5Embedder()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    LocalE5Embedder()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.mark.parametrize(
    ("name", "query", "passage", "input_type"),
    [
        ("multilingual-e5-small-q4", "query: ", "passage: ", True),
        ("jeffh/intfloat-multilingual-e5-large:f16", "query: ", "passage: ", True),
        ("bge-m3", "", "", False),
        (
            "jeffh/intfloat-multilingual-e5-large-instruct:f16",
            "Instruct: Given a question, retrieve passages that answer the question\nQuery: ",
            "",
            False,
        ),
        ("nomic-embed-text", "search_query: ", "search_document: ", False),
        ("embeddinggemma", "task: search result | query: ", "title: none | text: ", False),
        ("embeddinggemma:300m", "task: search result | query: ", "title: none | text: ", False),
        ("text-embedding-3-small", "", "", False),
        ("gte5x", "", "", False),
    ],
)
def test_prefixes_follow_model_family(name, query, passage, input_type):
    fam = family_for(name)
    assert (fam.query_prefix, fam.passage_prefix, fam.input_type) == (query, passage, input_type)


def test_prefixes_are_configurable(monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_PREFIKS_ZAPYTANIA", "Instruct: szukaj\nQuery: ")
    monkeypatch.setenv("CHROMA_RAG_EMBED_MAKS_ZNAKOW", "500")
    fam = family_for("multilingual-e5-small")
    assert (fam.query_prefix, fam.passage_prefix, fam.input_type, fam.max_chars) == (
        "Instruct: szukaj\nQuery: ",
        "passage: ",
        False,
        500,
    )
    monkeypatch.setenv("CHROMA_RAG_EMBED_MAKS_ZNAKOW", "dużo")
    with pytest.raises(UserError, match="CHROMA_RAG_EMBED_MAKS_ZNAKOW"):
        family_for("bge-m3")
