"""Co niesie każda odpowiedź serwera: nagłówki bezpieczeństwa i błąd jako ``{"blad": "jedno polskie zdanie"}``."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# No response runs another site's script, is framed by another site or is sniffed into another type; the
# page sets its own, same policy (app.PAGE_HEADERS).
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
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
