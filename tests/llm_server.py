"""Lokalny serwer zgodny z API czatu OpenAI (``POST /v1/chat/completions``) dla testów.

Mówi prawdziwym protokołem po HTTP: zwykła odpowiedź JSON albo strumień SSE (``data: {...}``, na końcu
kawałek z ``usage``, gdy klient poprosi o ``stream_options.include_usage``, i ``data: [DONE]``), a także
statusy błędów w formacie OpenAI. Odpowiedzi układa się w kolejkę (``Reply``), każde zapytanie jest
zapisywane do sprawdzenia w teście.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_TYPES = {401: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_exceeded"}
# A held reply waits for its release at most this long: only so that a failing test cannot hang the suite.
HOLD_LIMIT = 120.0


@dataclass
class Hold:
    """Model zajęty tak długo, jak chce test: ``arrived`` – zapytanie dostało tę odpowiedź i czeka, aż test
    ustawi ``release``. Kolejność zdarzeń zamiast zgadywania, ile sekund wystarczy."""

    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class Reply:
    """Jedna zaplanowana odpowiedź: tekst albo status błędu, opcjonalnie po ``delay`` sekundach albo dopiero po
    zwolnieniu ``hold``."""

    text: str = "Odpowiedź testowa."
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 120
    completion_tokens: int = 30
    cost: float | None = 0.00042
    fail_after: int | None = None  # streaming: an SSE error event after this many pieces
    piece_delay: float = 0.0  # streaming: seconds before each piece (a slow model the client may walk away from)
    hold: Hold | None = None


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeLlm:
    """Serwer na 127.0.0.1 na wolnym porcie; ``url`` to adres bazowy dla ``CHROMA_RAG_LLM_URL``."""

    model = "testowy/model-1"

    def __init__(self, responder: Callable[[Request], Reply | None] | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        self.streamed: list[int] = []  # pieces written per streamed reply, until done or the reader went away
        self.default = Reply()
        self.responder = responder  # answers what the queue does not (e.g. stored plans, plan_replay.py)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # A client that timed out leaves a broken pipe behind; that is expected, not worth a traceback.
        self._server.handle_error = lambda request, client_address: None
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def next_reply(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        reply = self.responder(request) if self.responder is not None else None
        return reply or self.default

    def start(self) -> FakeLlm:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def running_fake_llm(responder: Callable[[Request], Reply | None] | None = None) -> Iterator[FakeLlm]:
    server = FakeLlm(responder).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def llm_environment(monkeypatch: Any, cwd: Any, key: str) -> Iterator[FakeLlm]:
    """Serwer czatu i zmienne ``CHROMA_RAG_LLM_*`` wskazujące na niego (bez ponowień); bieżący katalog
    ``cwd`` bez ``.env``, żadnych kluczy ani ustawień z zewnątrz."""
    monkeypatch.chdir(cwd)
    for name in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "CHROMA_RAG_LLM_MODEL", "CHROMA_RAG_LLM_TIMEOUT",
                 "CHROMA_RAG_PRZEPISZ"):
        monkeypatch.delenv(name, raising=False)
    with running_fake_llm() as server:
        monkeypatch.setenv("CHROMA_RAG_LLM_URL", server.url)
        monkeypatch.setenv("CHROMA_RAG_LLM_KEY", key)
        monkeypatch.setenv("CHROMA_RAG_LLM_RETRIES", "0")
        yield server


def _handler_for(fake: FakeLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw or b"{}")
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = fake.next_reply(Request(self.path, headers, body))
            if reply.delay:
                time.sleep(reply.delay)
            if reply.hold is not None:
                reply.hold.arrived.set()
                reply.hold.release.wait(HOLD_LIMIT)
            if self.path != "/v1/chat/completions":
                self._send_json(404, _error(404, f"Nieznana ścieżka {self.path}"), reply.headers)
            elif reply.status != 200:
                self._send_json(reply.status, _error(reply.status, f"Błąd {reply.status}"), reply.headers)
            elif body.get("stream"):
                self._send_stream(body, reply)
            else:
                self._send_json(200, _completion(body, reply), reply.headers)

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
            pieces = [word + " " for word in reply.text.split(" ")]
            pieces[-1] = pieces[-1][:-1]
            for i, piece in enumerate(pieces):
                if i == reply.fail_after:
                    self._event(_error(502, "Dostawca modelu przerwał generowanie"))
                    return
                time.sleep(reply.piece_delay)
                delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
                try:
                    self._event(_chunk([{"index": 0, "delta": delta, "finish_reason": None}]))
                except OSError:  # the reader closed the connection: it stopped reading the answer
                    fake.streamed.append(i)
                    return
            fake.streamed.append(len(pieces))
            self._event(_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
            if (body.get("stream_options") or {}).get("include_usage"):
                self._event(_chunk([], usage=_usage(reply)))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _event(self, payload: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()

    def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
        chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": fake.model,
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        return chunk

    def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": fake.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(reply),
        }

    return Handler


def _usage(reply: Reply) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
    if reply.cost is not None:
        usage["cost"] = reply.cost
    return usage


def _error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "code": status}}
