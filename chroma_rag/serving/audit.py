"""Dziennik zapytań ``serwuj`` (``--dziennik PLIK``): kto o co pytał, w której bazie, kiedy i z jakim skutkiem – jeden
wiersz JSON na zapytanie do API, MCP albo dokumentu, bez treści odpowiedzi, chyba że ją włączono
(``--dziennik-odpowiedzi``).

Każdy wiersz to jedno dopisanie (``O_APPEND``) do pliku otwieranego na nowo: administrator może plik przenieść
(logrotate) i następne zapytanie założy nowy, a wiersze kilku procesów roboczych nie przeplatają się."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import UsageError, os_reason
from .accounts import OPEN, USER_STATE
from .limits import within_base

log = logging.getLogger("chroma_rag.serwuj")
AUDITED_PREFIXES = ("/api/", "/mcp", "/dokumenty/")
UNAUDITED = ("/api/stan",)  # the page polls it every few seconds: no question, no document
BODY_LIMIT = 64 * 1024  # what a question, its filters or an MCP call can take (RequestLimits bounds bodies anyway)
ANSWER_LIMIT = 256 * 1024
TEXT_LIMIT = 2000  # one field's characters in a line: a log is read by people and grep


@dataclass(frozen=True)
class AuditLog:
    """Plik dziennika i czy zapisywać treść odpowiedzi modelu."""

    path: Path
    answers: bool = False

    def check_writable(self) -> None:
        """Przed startem serwera: dziennik, do którego nie da się pisać, to błąd od razu, a nie przy pytaniu."""
        try:
            os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
        except OSError as exc:
            raise UsageError(f"Nie da się pisać do dziennika „{self.path}” ({os_reason(exc)}) – wskaż inny plik: "
                             "--dziennik PLIK.") from exc

    def write(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "replace")
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)


class AuditTrail:
    """Warstwa ASGI przed sprawdzeniem tokenu: zapisuje w ``log`` zapytania ścieżek ``AUDITED_PREFIXES`` (także
    odrzucone: kto zgadywał token, jest w dzienniku jako ``UNKNOWN``) i wysłane formularze logowania
    (``login_path``; bez ich treści – to token)."""

    def __init__(self, app: ASGIApp, log: AuditLog, login_path: str) -> None:
        self.app = app
        self.log = log
        self._login_path = login_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = within_base(scope.get("path", ""))[1]
        login = scope["type"] == "http" and scope["path"] == self._login_path and scope["method"] == "POST"
        if not login and (scope["type"] != "http" or not path.startswith(AUDITED_PREFIXES) or path in UNAUDITED):
            await self.app(scope, receive, send)
            return
        body, answer = bytearray(), bytearray()
        status = 0
        keep_answer = self.log.answers and path == "/api/pytaj"

        async def reading() -> Message:
            message = await receive()
            if message["type"] == "http.request" and not login:
                body.extend(message.get("body", b"")[: BODY_LIMIT - len(body)])
            return message

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and keep_answer:
                answer.extend(message.get("body", b"")[: ANSWER_LIMIT - len(answer)])
            await send(message)

        try:
            await self.app(scope, reading, sending)
        finally:
            try:
                self.log.write(_entry(scope, bytes(body), status, bytes(answer) if keep_answer else None))
            except OSError as exc:  # a full disk must not take the answers down with the log: the operator is told
                log.error("Nie da się dopisać do dziennika %s: %s", self.log.path, os_reason(exc))


def _entry(scope: Scope, body: bytes, status: int, answer: bytes | None) -> dict[str, Any]:
    client = scope.get("client")
    entry: dict[str, Any] = {
        "czas": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "uzytkownik": scope.get("state", {}).get(USER_STATE, OPEN),  # no guard: an open loopback server
        "adres": client[0] if client else "",
        "metoda": scope.get("method", ""),
        "sciezka": scope.get("path", ""),
        "status": status or 499,  # no response started: the client left first
    }
    base, path = within_base(entry["sciezka"])
    if base:
        entry["baza"] = base
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    if query:
        entry["parametry"] = _bounded(query)
    request = _json(body)
    if isinstance(request, dict) and path == "/mcp":
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        entry["mcp"] = _bounded({"metoda": request.get("method"), "narzedzie": params.get("name"),
                                 "argumenty": params.get("arguments")})
    elif isinstance(request, dict):
        entry["tresc"] = _bounded(request)
    if answer is not None:
        entry["odpowiedz"] = _answer_text(answer)
    return entry


def _json(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except (ValueError, RecursionError):
        return None


def _answer_text(data: bytes) -> str:
    """Treść odpowiedzi z JSON-a (``odpowiedz``) albo ze strumienia SSE (zdarzenie ``wynik``)."""
    found = _json(data)
    if isinstance(found, dict):
        return _bounded(found.get("odpowiedz", ""))
    event = ""
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:") and event == "wynik":
            result = _json(line[5:].strip().encode())
            if isinstance(result, dict):
                return _bounded(result.get("odpowiedz", ""))
    return ""


def _bounded(value: Any) -> Any:
    """Wartość z polami tekstowymi przyciętymi do ``TEXT_LIMIT`` znaków."""
    if isinstance(value, str):
        return value[:TEXT_LIMIT]
    if isinstance(value, dict):
        return {str(k)[:100]: _bounded(v) for k, v in list(value.items())[:50]}
    if isinstance(value, list):
        return [_bounded(v) for v in value[:50]]
    return value
