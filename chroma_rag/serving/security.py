"""Zabezpieczenia serwera: token (nagłówek ``Authorization: Bearer`` albo ciasteczko z formularza logowania),
nazwa hosta przy pracy tylko na pętli zwrotnej (ochrona przed DNS rebinding), limity wielkości i czasu zapytań."""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import os

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ServiceError, UsageError, UserError
from .limits import RequestLimits
from .responses import McpErrors, SecurityHeaders, error

TOKEN_ENV = "CHROMA_RAG_TOKEN"
COOKIE = "chroma_rag_sesja"
LOGIN_PATH = "/logowanie"
PUBLIC_PREFIX = "/static/"  # the page's own scripts and styles, no data: the login form needs the styles
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_token(host: str, token: str | None) -> str | None:
    """Token z opcji albo ``CHROMA_RAG_TOKEN``; poza pętlą zwrotną bez tokenu serwer nie wystartuje."""
    token = (token or os.environ.get(TOKEN_ENV) or "").strip() or None
    if token is None and not is_loopback(host):
        raise UsageError(
            f"Serwer na adresie {host} byłby dostępny z sieci – podaj token: --token TAJNE (albo zmienna "
            f"{TOKEN_ENV}); bez tokenu serwer działa tylko na 127.0.0.1."
        )
    return token


def error_status(exc: UserError) -> int:
    """Kod HTTP błędu z jednym polskim zdaniem: zawiodła usługa, od której zależy odpowiedź (502), albo
    zapytanie jest do poprawienia (400)."""
    return 502 if isinstance(exc, ServiceError) else 400


def cross_origin(request: Request) -> bool:
    """Zapytanie wysłane ze strony innego pochodzenia (inny host albo port – także inny port 127.0.0.1, który
    przeglądarka uznaje za tę samą witrynę i dołącza ciasteczko). Bez nagłówka ``Origin`` to nie przeglądarka
    (curl, klient API), więc nie ma czego podrabiać."""
    origin = request.headers.get("origin")
    return origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}"


def refused_state_change(request: Request, needs_json: bool = True) -> Response | None:
    """Odmowa zapytania zmieniającego stan (pytanie modelu czatu na koszt serwera, logowanie) od obcej strony:
    formularz i ``fetch(no-cors)`` nie wyślą ``application/json`` ani zgodnego ``Origin``."""
    if cross_origin(request):
        return error(403, "Zapytanie z innej strony niż ten serwer jest odrzucane – otwórz stronę serwera.")
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if needs_json and content_type != "application/json":
        return error(415, "Wyślij treść jako JSON z nagłówkiem „Content-Type: application/json”.")
    return None


class TokenGuard:
    """Każda ścieżka (strona, API, MCP, dokumenty) wymaga tokenu; strona dostaje go z formularza logowania,
    który zapisuje w ciasteczku skrót tokenu (sam token nie trafia do przeglądarki po zalogowaniu)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token
        self._cookie = hmac.new(token.encode(), b"chroma-rag-strona", hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        if request.url.path == LOGIN_PATH:
            response = await self._login(request)
        elif self._authorized(request) or request.url.path.startswith(PUBLIC_PREFIX):
            await self.app(scope, receive, send)
            return
        elif request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            response = RedirectResponse(LOGIN_PATH, status_code=303)
        else:
            response = error(401, "Brak ważnego tokenu – wyślij nagłówek „Authorization: Bearer TOKEN” "
                                  "albo zaloguj się na stronie.")
        await response(scope, receive, send)

    def _authorized(self, request: Request) -> bool:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self._token.encode()):
            return True
        return hmac.compare_digest(request.cookies.get(COOKIE, "").encode(), self._cookie.encode())

    async def _login(self, request: Request) -> Response:
        if request.method != "POST":
            return HTMLResponse(_login_page(""))
        refused = refused_state_change(request, needs_json=False)
        if refused is not None:
            return refused
        form = await request.form()  # RequestLimits, which wraps this guard, has already read and limited the body
        given = str(form.get("token", ""))
        if not hmac.compare_digest(given.encode(), self._token.encode()):
            return HTMLResponse(_login_page("Zły token – spróbuj jeszcze raz."), status_code=401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, self._cookie, httponly=True, samesite="strict", path="/")
        return response


def _login_page(message: str) -> str:
    note = f'<p class="blad">{html.escape(message)}</p>' if message else ""
    return f"""<!doctype html>
<html lang="pl"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>chroma-rag – logowanie</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main class="logowanie"><h1>chroma-rag</h1>{note}
<form method="post" action="{LOGIN_PATH}"><label>Token dostępu <input type="password" name="token" required
autofocus></label> <button type="submit">Zaloguj</button></form></main></body></html>"""


def host_name(host: str) -> str | None:
    """Nazwa z nagłówka ``Host`` („nazwa”, „nazwa:port”, „[::1]:port”) albo ``None``, gdy port nie jest liczbą
    (``127.0.0.1:evil``, ``127.0.0.1:80@evil.com`` – nie wolno sprawdzać tylko części przed ostatnim dwukropkiem)."""
    name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon:
        return host
    if not port.isascii() or not port.isdigit() or int(port) > 65535:
        return None
    return name


class LoopbackHost:
    """Na pętli zwrotnej bez tokenu tylko nagłówek ``Host`` 127.0.0.1/localhost: strona z innej domeny nie
    przeczyta API przez nazwę DNS przestawioną na 127.0.0.1 (DNS rebinding)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_name(host) not in LOOPBACK_NAMES:
                await error(400, f"Nieoczekiwana nazwa hosta „{host}” – otwórz stronę pod http://127.0.0.1:PORT/.")(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


def middleware(host: str, token: str | None, untimed_prefixes: tuple[str, ...]) -> list[Middleware]:
    """Warstwy przed aplikacją, od zewnętrznej: nagłówki bezpieczeństwa (na każdej odpowiedzi, także odmowach
    niżej), nazwa hosta (na pętli zwrotnej), limity (obejmują też formularz logowania), token (gdy podany),
    polskie odmowy transportu MCP."""
    layers = [Middleware(SecurityHeaders)]
    if is_loopback(host):
        layers.append(Middleware(LoopbackHost))
    layers.append(Middleware(RequestLimits, untimed_prefixes=untimed_prefixes))
    if token:
        layers.append(Middleware(TokenGuard, token=token))
    layers.append(Middleware(McpErrors))
    return layers
