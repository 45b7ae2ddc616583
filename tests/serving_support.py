"""Prawdziwy uvicorn z aplikacją ``chroma-rag serwuj`` na wolnym porcie pętli zwrotnej, w wątku testu."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from llm_server import FakeLlm, Reply, running_fake_llm
from starlette.applications import Starlette

from chroma_rag import Index
from chroma_rag.serving.accounts import Accounts
from chroma_rag.serving.app import build_app
from chroma_rag.serving.audit import AuditLog
from chroma_rag.serving.limits import LIMITS, LimitSettings
from chroma_rag.serving.run import server_config
from chroma_rag.serving.shared_index import SharedIndex
from chroma_rag.serving.transport import TransportLimits


@contextmanager
def chat_model(answer: str, **env: str) -> Iterator[FakeLlm]:
    """Zastępczy model czatu (``FakeLlm``) odpowiadający ``answer`` i ustawiony w ``CHROMA_RAG_LLM_*``."""
    with running_fake_llm() as fake, pytest.MonkeyPatch.context() as patch:
        fake.default = Reply(text=answer)
        for name, value in {"URL": fake.url, "MODEL": fake.model, "RETRIES": "0", **env}.items():
            patch.setenv(f"CHROMA_RAG_LLM_{name}", value)
        yield fake


@contextmanager
def running_server(db: Path, token: str | None = None, production: bool = False,
                   trusted_proxy: str | None = None, status: Callable[[], dict[str, object]] | None = None,
                   accounts: Accounts | None = None, audit: AuditLog | None = None,
                   limits: LimitSettings = LIMITS, transport: TransportLimits | None = None) -> Iterator[str]:
    """Adres bazowy (``http://127.0.0.1:PORT``) serwera nad bazą ``db``; zatrzymany po wyjściu. ``production`` –
    z ustawieniami uvicorn ``chroma-rag serwuj`` (parser h11, limity nagłówków, czasu i połączeń); ``status`` –
    stan obserwowania folderów dla ``/api/stan`` (jak ``serwuj --obserwuj``); ``accounts`` – użytkownicy
    z osobistymi tokenami, ``audit`` – dziennik zapytań, ``limits`` i ``transport`` – limity zapytań i połączeń (inne
    niż domyślne)."""
    app = build_app(SharedIndex(db), host="127.0.0.1", token=token, status=status, accounts=accounts, audit=audit,
                    limits=limits)
    with running_app(app, production, trusted_proxy, transport) as url:
        yield url


@contextmanager
def running_app(app: Starlette, production: bool = False, trusted_proxy: str | None = None,
                transport: TransportLimits | None = None) -> Iterator[str]:
    """Adres bazowy prawdziwego uvicorn z aplikacją ``app`` na wolnym porcie pętli zwrotnej (``running_server``);
    ``transport`` – limity połączeń serwera ``production`` (inne niż domyślne)."""
    config = (server_config(app, "127.0.0.1", 0, trusted_proxy, limits=transport) if production
              else uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn nie wystartował")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def index_bases(root: Path, texts: dict[str, tuple[str, str]]) -> dict[str, Path]:
    """Bazy działów (``serwuj --bazy``): dla każdej nazwy jeden plik ``(nazwa pliku, treść)`` zaindeksowany we własnym
    folderze bazy; nazwa bazy → folder bazy."""
    bases = {}
    for name, (file, text) in texts.items():
        (root / name).mkdir()
        (root / name / file).write_text(text, encoding="utf-8")
        Index(root / name / "db").add([root / name / file])
        bases[name] = root / name / "db"
    return bases
