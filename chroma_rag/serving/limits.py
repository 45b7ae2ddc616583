"""Limity zapytań w aplikacji: treść odebrana w całości (najwyżej ``MAX_BODY_BYTES`` w ``BODY_SECONDS``), zanim
zapytanie zajmie miejsce wśród ``MAX_REQUESTS`` obsługiwanych naraz, osobna pula na pytania do modelu czatu
(``MAX_QUESTIONS``, ``QUESTION_SECONDS``), część każdej puli dla jednego adresu, limit czasu odpowiedzi i zerwane
połączenia jako jedna linia dziennika."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .responses import error

MAX_BODY_BYTES = 64 * 1024
BODY_SECONDS = 10.0  # the whole body, from the end of the headers; uvicorn itself waits for it forever
REQUEST_SECONDS = 60.0
# A question waits for the chat model (the plan, then the answer: 24–194 s seen with a slow one): questions have their
# own pool and limit, so a slow or hung model holds neither the searches' places nor anything for ever.
QUESTION_SECONDS = 180.0
MAX_REQUESTS = 64  # more at once get 503 instead of queueing on a 2-core machine
MAX_QUESTIONS = 8  # POST /api/pytaj at once (per process): each may hold a model call
# one address may not take a whole pool: the others' searches and questions still get places
MAX_CLIENT_REQUESTS = 16
MAX_CLIENT_QUESTIONS = 2
BUSY = "Serwer obsługuje teraz za dużo zapytań naraz – spróbuj za chwilę."
BUSY_QUESTIONS = "Serwer odpowiada teraz na za dużo pytań naraz – spróbuj za chwilę albo użyj samego wyszukiwania."
CLIENT_BUSY = "Z tego adresu trwa już za dużo zapytań naraz – poczekaj, aż się skończą."
log = logging.getLogger("chroma_rag.serwuj")


@dataclass(frozen=True)
class LimitSettings:
    """Limity jednego serwera; domyślnie stałe tego modułu (ich pochodzenie jest przy nich), test podaje własne."""

    body_bytes: int = MAX_BODY_BYTES
    body_seconds: float = BODY_SECONDS
    request_seconds: float = REQUEST_SECONDS
    question_seconds: float = QUESTION_SECONDS
    requests: int = MAX_REQUESTS
    questions: int = MAX_QUESTIONS
    client_requests: int = MAX_CLIENT_REQUESTS
    client_questions: int = MAX_CLIENT_QUESTIONS

    @property
    def too_large(self) -> str:
        return f"Treść zapytania jest za duża (najwyżej {self.body_bytes // 1024} KiB)."

    @property
    def too_slow(self) -> str:
        return f"Treść zapytania nie nadeszła w ciągu {self.body_seconds:.0f} s – wyślij ją w całości od razu."


LIMITS = LimitSettings()


class _Gone(Exception):
    """Klient zamknął połączenie, zanim wysłał całą treść zapytania."""


class RequestLimits:
    """Treść zapytania czytana w całości przed aplikacją (413 za dużą, 408 za wolną – powolna treść nie trzyma
    miejsca wyszukiwania), najwyżej ``settings.requests`` zapytań i ``settings.questions`` pytań naraz, z jednego
    adresu ich część (503), odpowiedź – poza ``untimed_prefixes`` – w ciągu ``settings.request_seconds`` (503)."""

    def __init__(self, app: ASGIApp, untimed_prefixes: tuple[str, ...], settings: LimitSettings = LIMITS) -> None:
        self.app = app
        self._untimed = untimed_prefixes
        self._settings = settings
        self._active = {"requests": 0, "questions": 0}
        self._clients: dict[tuple[str, str], int] = {}  # (pool, address) → requests in it now

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
        if not length.isdigit() or int(length) > self._settings.body_bytes:
            await error(413, self._settings.too_large)(scope, receive, send)
            return
        refusal, body = await _read_body(receive, self._settings)
        if refusal:
            await error(*refusal)(scope, receive, send)
            return
        pool = _pool(scope)
        client = (pool, scope["client"][0] if scope.get("client") else "")
        refusal = self._refusal(pool, client)
        if refusal is not None:
            await error(503, refusal)(scope, receive, send)
            return

        replayed = False

        async def replay() -> Message:  # the body read above, then the client's disconnect when it comes
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        self._active[pool] += 1
        self._clients[client] = self._clients.get(client, 0) + 1
        try:
            await self._timed(scope, replay, send, pool)
        finally:
            self._active[pool] -= 1
            self._clients[client] -= 1
            if not self._clients[client]:
                del self._clients[client]

    def _refusal(self, pool: str, client: tuple[str, str]) -> str | None:
        """Zdanie odmowy (503), gdy pula albo jej część dla jednego adresu jest pełna; ``None`` – jest miejsce."""
        questions = pool == "questions"
        if self._active[pool] >= (self._settings.questions if questions else self._settings.requests):
            return BUSY_QUESTIONS if questions else BUSY
        per_client = self._settings.client_questions if questions else self._settings.client_requests
        if self._clients.get(client, 0) >= per_client:
            return CLIENT_BUSY
        return None

    async def _timed(self, scope: Scope, receive: Receive, send: Send, pool: str) -> None:
        """Odpowiedź w ciągu ``request_seconds`` (pytanie: ``question_seconds``, poza ``untimed_prefixes``: bez
        limitu); przed pierwszym bajtem odpowiedzi – 503 z polskim zdaniem, w trakcie strumienia – jego koniec
        (model czatu przestaje być czytany)."""
        if pool == "questions":
            seconds = self._settings.question_seconds
            late = f"Odpowiedź trwała dłużej niż {seconds:.0f} s – model czatu jest teraz za wolny; spróbuj za chwilę."
        elif within_base(scope["path"])[1].startswith(self._untimed):
            await self.app(scope, receive, send)
            return
        else:
            seconds = self._settings.request_seconds
            late = f"Odpowiedź trwała dłużej niż {seconds:.0f} s – spróbuj węższego pytania."
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        with anyio.move_on_after(seconds) as deadline:
            await self.app(scope, receive, tracking_send)
        if deadline.cancelled_caught:
            log.warning("Zapytanie %s przekroczyło %.0f s – przerwane.", scope["path"], seconds)
            if not started:
                await error(503, late)(scope, receive, send)


def _pool(scope: Scope) -> str:
    """Pula zapytania: ``questions`` (``POST /api/pytaj``, także bazy ``/b/NAZWA/api/pytaj``) albo ``requests``."""
    path = within_base(scope["path"])[1]
    if scope["method"] == "POST" and path == "/api/pytaj":
        return "questions"
    return "requests"


def within_base(path: str) -> tuple[str, str]:
    """Baza serwera z kilkoma bazami i ścieżka w niej: ``/b/NAZWA/api/pytaj`` → (``NAZWA``, ``/api/pytaj``); bez
    bazy – pusta nazwa i ta sama ścieżka."""
    if not path.startswith("/b/"):
        return "", path
    base, _, rest = path[3:].partition("/")
    return base, "/" + rest


async def _read_body(receive: Receive, settings: LimitSettings) -> tuple[tuple[int, str] | None, bytes]:
    """Cała treść zapytania albo (kod, zdanie) odmowy; ``_Gone``, gdy klient się rozłączył."""
    chunks: list[bytes] = []
    received = 0
    with anyio.move_on_after(settings.body_seconds):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > settings.body_bytes:  # chunked, so no Content-Length said so up front
                return (413, settings.too_large), b""
            chunks.append(chunk)
            if not message.get("more_body", False):
                return None, b"".join(chunks)
    return (408, settings.too_slow), b""
