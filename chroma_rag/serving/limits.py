"""Limity zapytań w aplikacji: treść odebrana w całości (najwyżej ``MAX_BODY_BYTES`` w ``BODY_SECONDS``), zanim
zapytanie zajmie miejsce wśród ``MAX_REQUESTS`` obsługiwanych naraz, osobna pula na bezczynne strumienie MCP,
limit czasu odpowiedzi i zerwane połączenia jako jedna linia dziennika."""

from __future__ import annotations

import logging

import anyio
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .responses import error

MAX_BODY_BYTES = 64 * 1024
BODY_SECONDS = 10.0  # the whole body, from the end of the headers; uvicorn itself waits for it forever
REQUEST_SECONDS = 60.0
MAX_REQUESTS = 64  # more at once get 503 instead of queueing on a 2-core machine
MAX_STREAMS = 16  # GET /mcp: a stream the client may hold open idle, so it has its own pool
TOO_LARGE = f"Treść zapytania jest za duża (najwyżej {MAX_BODY_BYTES // 1024} KiB)."
TOO_SLOW = f"Treść zapytania nie nadeszła w ciągu {BODY_SECONDS:.0f} s – wyślij ją w całości od razu."
BUSY = "Serwer obsługuje teraz za dużo zapytań naraz – spróbuj za chwilę."
log = logging.getLogger("chroma_rag.serwuj")


class _Gone(Exception):
    """Klient zamknął połączenie, zanim wysłał całą treść zapytania."""


class RequestLimits:
    """Treść zapytania czytana w całości przed aplikacją (413 za dużą, 408 za wolną – powolna treść nie trzyma
    miejsca wyszukiwania), najwyżej ``MAX_REQUESTS`` zapytań i ``MAX_STREAMS`` strumieni ``GET /mcp`` naraz
    (503), odpowiedź – poza ``untimed_prefixes`` – w ciągu ``REQUEST_SECONDS`` (503)."""

    def __init__(self, app: ASGIApp, untimed_prefixes: tuple[str, ...]) -> None:
        self.app = app
        self._untimed = untimed_prefixes
        self._active = {"requests": 0, "streams": 0}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._limited(scope, receive, send)
        except (_Gone, ClientDisconnect):
            # a dropped connection is the client's choice, not a server fault: one line, no traceback
            log.warning("Klient zerwał połączenie przy %s %s – zapytanie porzucone.", scope["method"], scope["path"])

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            await error(413, TOO_LARGE)(scope, receive, send)
            return
        refusal, body = await _read_body(receive)
        if refusal:
            await error(*refusal)(scope, receive, send)
            return
        pool = "streams" if scope["method"] == "GET" and scope["path"].startswith("/mcp") else "requests"
        if self._active[pool] >= (MAX_STREAMS if pool == "streams" else MAX_REQUESTS):
            await error(503, BUSY)(scope, receive, send)
            return

        replayed = False

        async def replay() -> Message:  # the body read above, then the client's disconnect when it comes
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        self._active[pool] += 1
        try:
            await self._timed(scope, replay, send)
        finally:
            self._active[pool] -= 1

    async def _timed(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith(self._untimed):
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        with anyio.move_on_after(REQUEST_SECONDS) as deadline:
            await self.app(scope, receive, tracking_send)
        if deadline.cancelled_caught and not started:
            await error(503, f"Odpowiedź trwała dłużej niż {REQUEST_SECONDS:.0f} s – spróbuj węższego pytania.")(
                scope, receive, send
            )


async def _read_body(receive: Receive) -> tuple[tuple[int, str] | None, bytes]:
    """Cała treść zapytania albo (kod, zdanie) odmowy; ``_Gone``, gdy klient się rozłączył."""
    chunks: list[bytes] = []
    received = 0
    with anyio.move_on_after(BODY_SECONDS):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > MAX_BODY_BYTES:  # chunked, so no Content-Length said so up front
                return (413, TOO_LARGE), b""
            chunks.append(chunk)
            if not message.get("more_body", False):
                return None, b"".join(chunks)
    return (408, TOO_SLOW), b""
