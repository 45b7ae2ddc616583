"""Co niesie każda odpowiedź serwera: nagłówki bezpieczeństwa, błąd jako ``{"blad": "jedno polskie zdanie"}`` i polskie
odmowy transportu MCP."""

from __future__ import annotations

import json

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# No response runs another site's script, is framed by another site or is sniffed into another type. The
# referrer stays within the server: with "no-referrer" Chromium sends `Origin: null` on the login form's POST,
# which the cross-site check then refuses.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"blad": message}, status_code=status)


class SecurityHeaders:
    """``SECURITY_HEADERS`` na wszystkich odpowiedziach aplikacji – także błędach, przekierowaniach i MCP –
    chyba że odpowiedź ustawia własne."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


MCP_PREFIX = "/mcp"
# ``data`` of a JSON-RPC error this server has already worded in Polish (``mcp_tools``): McpErrors keeps its message
POLISH_ERROR_DATA = {"jezyk": "pl"}
_MCP_MESSAGES = {
    400: "Zapytanie MCP nie jest poprawnym komunikatem JSON-RPC 2.0 – sprawdź jego treść.",
    403: "Zapytanie MCP ze strony innej niż ten serwer jest odrzucane (nagłówek Origin).",
    404: "Nie ma takiej sesji MCP – ten serwer działa bez sesji, wyślij zapytanie bez nagłówka Mcp-Session-Id.",
    405: "Ta metoda HTTP nie działa na /mcp – zapytania MCP wysyłaj przez POST /mcp.",
    406: "Zapytanie MCP musi przyjmować JSON i strumień: nagłówek „Accept: application/json, text/event-stream”.",
    409: "Strumień MCP jest już otwarty – zamknij poprzedni, zanim otworzysz nowy.",
    413: "Zapytanie MCP jest za duże – wyślij krótsze.",
    415: "Wyślij zapytanie MCP jako JSON z nagłówkiem „Content-Type: application/json”.",
    421: "Nieoczekiwana nazwa hosta w zapytaniu MCP – łącz się pod adresem, na którym serwer nasłuchuje.",
    500: "Nieoczekiwany błąd serwera MCP – szczegóły są w dzienniku serwera.",
}


class McpErrors:
    """Odmowy transportu MCP (``Invalid Origin header``, ``Not Acceptable: …``, błędy walidacji pydantic) po
    polsku: biblioteka MCP pisze je po angielsku, a klient pokazuje je użytkownikowi. Odpowiedź JSON-RPC
    zachowuje ``id`` i ``code``, zmienia się tylko ``message`` – poza błędem, który serwer już sformułował po polsku
    (``POLISH_ERROR_DATA``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(MCP_PREFIX):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = b""

        async def polish_send(message: Message) -> None:
            nonlocal start, body
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message
                return
            if start is None:
                await send(message)
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                polished = _polish_mcp_error(start["status"], body)
                headers = MutableHeaders(scope=start)
                headers["content-type"] = "application/json"
                headers["content-length"] = str(len(polished))
                await send(start)
                await send({"type": "http.response.body", "body": polished, "more_body": False})

        await self.app(scope, receive, polish_send)


def _polish_mcp_error(status: int, body: bytes) -> bytes:
    said = _MCP_MESSAGES.get(status, f"Serwer MCP odrzucił zapytanie (błąd HTTP {status}).")
    try:
        reply = json.loads(body)
    except ValueError:
        reply = None
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        if reply["error"].get("data") == POLISH_ERROR_DATA:
            return body
        reply["error"] = {"code": reply["error"].get("code", -32600), "message": said}
    else:
        reply = {"blad": said}
    return json.dumps(reply, ensure_ascii=False).encode()
