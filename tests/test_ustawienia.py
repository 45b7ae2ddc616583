"""Rejestr ustawień (``config.KEYS``): każda zmienna, którą czyta kod, jest w nim i w ``konfiguracja``, a wartość
domyślna, którą pokazuje, to ta, której kod używa."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from chroma_rag import config
from chroma_rag.embedding.remote import OllamaEmbedder, OpenAIEmbedder
from chroma_rag.llm import LlmSettings
from chroma_rag.storage.store import default_db_path

# Variables the code reads or sets that are not the user's settings, each with why.
NOT_SETTINGS = {
    "OMP_WAIT_POLICY",  # set by us before the model and faiss load, so idle threads do not spin
    "OMP_THREAD_LIMIT",  # set for Tesseract's own process (ingest/ocr.py)
    "OMP_NUM_THREADS",  # one thread per serwuj worker process (serving/workers.py)
    "XDG_CACHE_HOME",  # the platform's cache folder, under CHROMA_RAG_CACHE's default
}
VARIABLE = re.compile(r"""["']((?:CHROMA_RAG|OLLAMA|OPENAI|OPENROUTER|OMP|XDG)_[A-Z_]+)["']""")


def test_every_variable_the_code_reads_is_registered() -> None:
    named = {name for path in (REPO / "chroma_rag").rglob("*.py")
             for name in VARIABLE.findall(path.read_text(encoding="utf-8"))}
    assert "CHROMA_RAG_EMBED_PACZKA" in named  # the scan sees names passed to helpers, not only os.environ.get
    assert named - NOT_SETTINGS <= set(config.KEYS), sorted(named - NOT_SETTINGS - set(config.KEYS))


def test_konfiguracja_lists_every_key_with_its_option_and_meaning(capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in config.KEYS:
        monkeypatch.delenv(name, raising=False)
    code, out, _ = run_cli(capsys, "konfiguracja", "--json")
    rows = {row["klucz"]: row for row in json.loads(out)}
    assert code == 0 and list(rows) == list(config.KEYS)
    assert all(row["opis"] and row["zrodlo"] == "domyślnie" for row in rows.values())
    assert rows["CHROMA_RAG_K"]["opcja"] == "-k" and rows["CHROMA_RAG_TOKEN"]["opcja"] == "--token-plik"
    # pytaj plans unless told not to, szukaj and ocena only when asked (tests/test_planning.py)
    assert rows["CHROMA_RAG_PRZEPISZ"]["wartosc"] == "pytaj: 1, szukaj i ocena: 0"
    assert rows["CHROMA_RAG_EMBED_PACZKA"]["wartosc"] == "32 (ollama:), 64 (openai:)"


def test_the_defaults_shown_are_the_ones_the_code_uses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in config.KEYS:
        monkeypatch.delenv(name, raising=False)
    shown = {name: key.shown_default for name, key in config.KEYS.items()}
    chat = LlmSettings.from_env()
    assert (chat.url, chat.model) == (shown["CHROMA_RAG_LLM_URL"], shown["CHROMA_RAG_LLM_MODEL"])
    assert (str(chat.timeout), str(chat.max_retries)) == (shown["CHROMA_RAG_LLM_TIMEOUT"],
                                                           shown["CHROMA_RAG_LLM_RETRIES"])
    ollama, openai = OllamaEmbedder("model"), OpenAIEmbedder("model")
    assert shown["CHROMA_RAG_EMBED_PACZKA"] == f"{ollama.batch_size} (ollama:), {openai.batch_size} (openai:)"
    assert str(int(ollama.timeout)) == shown["CHROMA_RAG_EMBED_TIMEOUT"]
    assert str(ollama.retries) == shown["CHROMA_RAG_EMBED_PROBY"]
    assert ollama.url == shown["OLLAMA_URL"]
    assert f"./{default_db_path()}" == shown["CHROMA_RAG_BAZA"]


def test_chat_settings_come_from_the_same_files_as_every_other_setting(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """``LlmSettings.from_env`` czytał sam ``.env`` z bieżącego folderu: ``chroma-rag.toml`` i ``.env`` wyżej
    widziało tylko CLI. Teraz jak wszystko inne – przez rejestr."""
    for name in config.KEYS:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "chroma-rag.toml").write_text('CHROMA_RAG_LLM_MODEL = "z-pliku-toml"\n', encoding="utf-8")
    (tmp_path / ".env").write_text("CHROMA_RAG_LLM_RETRIES=1\n", encoding="utf-8")
    (tmp_path / "podfolder").mkdir()
    monkeypatch.chdir(tmp_path / "podfolder")
    chat = LlmSettings.from_env()
    assert (chat.model, chat.max_retries) == ("z-pliku-toml", 1)
    monkeypatch.setenv("CHROMA_RAG_LLM_MODEL", "ze-srodowiska")
    assert LlmSettings.from_env().model == "ze-srodowiska"
