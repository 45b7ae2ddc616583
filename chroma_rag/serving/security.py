"""Zabezpieczenia serwera: token (nagłówek ``Authorization: Bearer`` albo ciasteczko z formularza logowania)
z limitem błędnych prób, nazwa hosta przy pracy tylko na pętli zwrotnej (ochrona przed DNS rebinding), odmowa
zapytań obcych stron (CSRF) i złożenie wszystkich warstw przed aplikacją (``middleware``)."""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import logging
import os
import re
import secrets
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import anyio
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ServiceError, UsageError, UserError
from .accounts import OPEN, SHARED_TOKEN, UNKNOWN, USER_STATE, Accounts
from .audit import AuditLog, AuditTrail
from .limits import LIMITS, LimitSettings, RequestLimits
from .responses import McpErrors, SecurityHeaders, error
from .sessions import ENDED_SESSIONS_FILE, EndedSessions

log = logging.getLogger("chroma_rag.serwuj")

TOKEN_ENV = "CHROMA_RAG_TOKEN"
COOKIE = "chroma_rag_sesja"
LOGIN_PATH = "/logowanie"
LOGOUT_PATH = "/wylogowanie"
RETURN_FIELD = "dalej"  # the page's address to come back to after the login
PUBLIC_PREFIX = "/static/"  # the page's own scripts and styles, no data: the login form needs the styles
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SESSION_SECONDS = 12 * 3600  # a login cookie's life; a restarted server also ends every session
MAX_FAILURES = 10  # wrong tokens from one address within FAILURE_WINDOW before every token check there is 429
FAILURE_WINDOW = 60.0
# wrong tokens from all addresses within FAILURE_WINDOW before every token check is 429: guessing spread over many
# addresses (an IPv6 block) slows down as much as from one; a logged-in browser (valid cookie) never waits
GLOBAL_FAILURES = 100
EXPIRY_DIGITS = 12  # a login cookie's expiry time in seconds since 1970: 10 digits until the year 2286


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_token(host: str, token: str | None, token_file: Path | None = None,
                  accounts: Accounts | None = None) -> str | None:
    """Token z pliku (``--token-plik``), z opcji (widać ją w ``ps`` – ostrzeżenie) albo ``CHROMA_RAG_TOKEN``;
    poza pętlą zwrotną bez tokenu i bez użytkowników (``accounts``) serwer nie wystartuje."""
    if token_file is not None and token is not None:
        raise UsageError("Podaj token jednym sposobem: --token-plik PLIK albo --token, nie oba naraz.")
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            raise UsageError(f"Nie da się przeczytać tokenu z pliku {token_file} – podaj plik tekstowy z tokenem "
                             "w pierwszym wierszu: --token-plik PLIK.") from None
        if not token:
            raise UsageError(f"Plik {token_file} jest pusty – zapisz w nim token: --token-plik PLIK.")
    elif token is not None:
        print(f"Uwaga: token podany w --token widzi każdy na tym komputerze na liście procesów (ps) – użyj "
              f"--token-plik PLIK albo zmiennej {TOKEN_ENV}.", file=sys.stderr, flush=True)
    token = (token or os.environ.get(TOKEN_ENV) or "").strip() or None
    if token is None and not is_loopback(host) and not (accounts is not None and accounts.exist()):
        raise UsageError(
            f"Serwer na adresie {host} byłby dostępny z sieci – dodaj użytkowników (chroma-rag uzytkownicy dodaj "
            f"NAZWA) albo podaj wspólny token: --token-plik PLIK (albo zmienna {TOKEN_ENV}); bez tego serwer działa "
            "tylko na 127.0.0.1."
        )
    return token


# UserError.kind → HTTP status: what is missing (404), a name of several files (409), no chat model (503)
_STATUS_BY_KIND = {
    "nieznany_plik": 404, "nieznany_akt": 404, "brak_jednostki": 404, "niejednoznaczny_plik": 409, "brak_modelu": 503,
    "nieznana_rozmowa": 404, "konfiguracja_serwera": 500, "blad_zapisu_serwera": 503,
}


def error_status(exc: UserError) -> int:
    """Kod HTTP błędu z jednym polskim zdaniem: zawiodła usługa, od której zależy odpowiedź (502), rodzaj błędu
    ma własny kod (``_STATUS_BY_KIND``) albo zapytanie jest do poprawienia (400)."""
    return 502 if isinstance(exc, ServiceError) else _STATUS_BY_KIND.get(exc.kind, 400)


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


@dataclass(frozen=True)
class Sharing:
    """Co dzielą procesy robocze jednego serwera (``workers.py``): sól podpisu ciasteczka logowania (ciasteczko
    z jednego procesu ważne w każdym) i ich liczba – każdy proces liczy błędne tokeny osobno, więc przyjmuje
    ich 1/``processes`` z ``MAX_FAILURES``, żeby cały serwer przyjął najwyżej ``MAX_FAILURES`` na okno."""

    session_key: bytes
    processes: int


class FailedTokens:
    """Błędne tokeny z jednego adresu w ostatnich ``FAILURE_WINDOW`` s; po ``limit`` każde sprawdzenie
    tokenu z tego adresu – także poprawnego, żeby 429 nie zdradzało trafienia – czeka, aż najstarsza próba
    wypadnie z okna. Po ``total_limit`` błędnych tokenach ze wszystkich adresów razem czeka każde sprawdzenie.
    Zalogowana przeglądarka (ważne ciasteczko) nie czeka. ``clock`` – dla testów."""

    def __init__(self, limit: int, total_limit: int = GLOBAL_FAILURES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._seen: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._limit, self._total_limit = limit, total_limit
        self._clock = clock

    def wait_seconds(self, client: str) -> float:
        now = self._clock()
        self._forget(now)
        tries = self._seen.get(client)
        waits = [0.0]
        if tries and len(tries) >= self._limit:
            waits.append(tries[0] + FAILURE_WINDOW - now)
        if len(self._all) >= self._total_limit:
            waits.append(self._all[0] + FAILURE_WINDOW - now)
        return max(waits)

    def failed(self, client: str) -> None:
        now = self._clock()
        self._seen.setdefault(client, deque()).append(now)
        self._all.append(now)

    def tracked_addresses(self) -> int:
        """Ilu adresów próby są jeszcze w oknie (pamięć nie rośnie z liczbą adresów, z których zgadywano)."""
        return len(self._seen)

    def _forget(self, now: float) -> None:
        old = now - FAILURE_WINDOW
        while self._all and self._all[0] <= old:
            self._all.popleft()
        if not self._all:
            self._seen.clear()
            return
        for client in [c for c, tries in self._seen.items() if tries[-1] <= old]:
            del self._seen[client]
        for tries in self._seen.values():
            while tries[0] <= old:
                tries.popleft()


class TokenGuard:
    """Każda ścieżka (strona, API, MCP, dokumenty) poza ``PUBLIC_PREFIX`` i formularzem logowania wymaga wspólnego
    tokenu albo osobistego tokenu użytkownika (``accounts``, czytane przy każdym zapytaniu, więc dodany użytkownik
    wchodzi, a usunięty wychodzi bez restartu). Strona dostaje dostęp z formularza logowania, który zapisuje
    w ciasteczku podpisany czas wygaśnięcia i nazwę użytkownika (sam token nie trafia do przeglądarki; podpis zależy
    od uruchomienia serwera i od skrótu tokenu użytkownika, więc restart, nowy token albo usunięcie kończy sesje).
    Na pętli zwrotnej bez tokenu, dopóki nie ma użytkowników, przepuszcza wszystko, jak bez logowania. Kto pyta,
    trafia do ``scope["state"][USER_STATE]`` (dziennik ``audit.py``; ``UNKNOWN``, gdy nie wpuszczony).

    Każde logowanie to osobna sesja (losowy identyfikator w ciasteczku); ``POST /wylogowanie`` kończy ją we
    wszystkich procesach (``sessions.py``, plik obok listy użytkowników), więc kopia ciasteczka przestaje działać
    od razu."""

    def __init__(self, app: ASGIApp, token: str | None, sharing: Sharing | None = None,
                 accounts: Accounts | None = None, open_without_access: bool = False) -> None:
        self.app = app
        self._token = token
        self._accounts = accounts
        self._open = open_without_access
        salt = sharing.session_key if sharing else os.urandom(16)
        self._signing = hmac.new((token or "").encode(), b"chroma-rag-strona" + salt, hashlib.sha256).digest()
        processes = sharing.processes if sharing else 1
        self._failures = FailedTokens(max(1, MAX_FAILURES // processes), max(1, GLOBAL_FAILURES // processes))
        self._ended = EndedSessions(accounts.path.with_name(ENDED_SESSIONS_FILE) if accounts is not None else None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._guarded(scope, receive, send)
        except UserError as exc:  # an unreadable list of users: nobody gets in, everybody hears why
            if exc.kind != "konfiguracja_serwera":
                raise
            await error(error_status(exc), exc.message("web"))(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        client = request.client.host if request.client else ""
        scope.setdefault("state", {})[USER_STATE] = UNKNOWN
        given = self._bearer(request)
        if request.url.path.startswith(PUBLIC_PREFIX):
            await self.app(scope, receive, send)
            return
        if self._open and self._token is None:
            # once a user exists, removing the last one must not open the server again (it may sit behind a proxy)
            self._open = not self._has_accounts()
            if self._open:
                await self._let_in(OPEN, scope, receive, send)
                return
        if request.url.path == LOGIN_PATH:
            response = await self._login(request, client)
        elif request.url.path == LOGOUT_PATH and request.method == "POST":
            response = await self._logout(request)
        elif (user := self._cookie_user(request)) is not None:
            await self._let_in(user, scope, receive, send)
            return
        elif given is not None and (refused := self._too_many(client)) is not None:
            response = refused
        elif given is not None and (user := self._token_user(given)) is not None:
            await self._let_in(user, scope, receive, send)
            return
        elif request.method == "GET" and given is None and "text/html" in request.headers.get("accept", ""):
            # a shared link (/?q=…) comes back after the login: the search it holds is what the user came for
            path, query = request.url.path, request.url.query
            page = path + (f"?{query}" if query else "")
            back = f"?{urlencode({RETURN_FIELD: page})}" if _PAGE_PATH.match(path) and page != "/" else ""
            response = RedirectResponse(LOGIN_PATH + back, status_code=303)
        else:
            if given is not None:
                self._failures.failed(client)
            response = error(401, "Brak ważnego tokenu – wyślij nagłówek „Authorization: Bearer TOKEN” "
                                  "albo zaloguj się na stronie.")
        await response(scope, receive, send)

    async def _let_in(self, user: str, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})[USER_STATE] = user
        await self.app(scope, receive, send)

    def _has_accounts(self) -> bool:
        return self._accounts is not None and self._accounts.exist()

    def _token_user(self, given: str) -> str | None:
        """Kto ma ten token: ``SHARED_TOKEN``, nazwa użytkownika albo ``None`` (zły token)."""
        if self._token is not None and hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                                                           self._token.encode()):
            return SHARED_TOKEN
        account = self._accounts.who(given) if self._accounts is not None else None
        return account.name if account is not None else None

    @staticmethod
    def _bearer(request: Request) -> str | None:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return given.strip() if scheme.lower() == "bearer" else None

    def _too_many(self, client: str, back: str | None = None) -> Response | None:
        """429, gdy z tego adresu (albo ze wszystkich) było za dużo błędnych tokenów; ``back`` – adres strony
        po zalogowaniu: odmowa to wtedy formularz, który go zachowuje."""
        wait = self._failures.wait_seconds(client)
        if not wait:
            return None
        seconds = max(1, round(wait))
        said = f"Za dużo prób z błędnym tokenem – odczekaj {seconds} s i spróbuj ponownie."
        response = HTMLResponse(_login_page(said, back), status_code=429) if back is not None else error(429, said)
        response.headers["retry-after"] = str(seconds)
        return response

    def _cookie_value(self, expires: int, session: str, user: str) -> str | None:
        """Wartość ciasteczka sesji ``session`` użytkownika ``user`` (``SHARED_TOKEN`` – pusta nazwa) do ``expires``:
        ``czas.sesja.nazwa.podpis``; ``None``, gdy takiego dostępu już nie ma."""
        if user == SHARED_TOKEN or not user:
            if self._token is None:
                return None
            name, stamp = "", ""
        else:
            account = self._accounts.named(user) if self._accounts is not None else None
            if account is None:
                return None
            name, stamp = account.name, account.digest
        signed = f"{expires}.{session}.{name}.{stamp}".encode()
        return f"{expires}.{session}.{name}.{hmac.new(self._signing, signed, hashlib.sha256).hexdigest()}"

    def _session(self, request: Request) -> tuple[str, int, str] | None:
        """Ważna sesja z ciasteczka: kto (``SHARED_TOKEN`` albo nazwa użytkownika), do kiedy i jej identyfikator;
        ``None`` – brak, podróbka, wygasła albo zakończona wylogowaniem."""
        value = request.cookies.get(COOKIE, "")
        expires, _, rest = value.partition(".")
        session, _, rest = rest.partition(".")
        name, _, _ = rest.rpartition(".")
        # a digit count bound first: int() of over 4300 digits raises (Python's limit), which would be a 500
        if not _small_number(expires, EXPIRY_DIGITS) or int(expires) < time.time() or not session:
            return None
        user = name or SHARED_TOKEN
        expected = self._cookie_value(int(expires), session, user)
        if expected is None or not hmac.compare_digest(value.encode("utf-8", "surrogatepass"), expected.encode()):
            return None
        if self._ended.ended(session):
            return None
        return user, int(expires), session

    def _cookie_user(self, request: Request) -> str | None:
        """Kto jest zalogowany ciasteczkiem (``SHARED_TOKEN`` albo nazwa użytkownika) albo ``None``."""
        found = self._session(request)
        return found[0] if found is not None else None

    async def _logout(self, request: Request) -> Response:
        """Kończy sesję z ciasteczka we wszystkich procesach i kasuje ciasteczko; jak inne zapytania zmieniające
        stan – tylko JSON ze strony tego serwera. Bez ważnej sesji nie ma czego kończyć: też 200."""
        refused = refused_state_change(request)
        if refused is not None:
            return refused
        found = self._session(request)
        if found is not None:
            _, expires, session = found
            try:
                await anyio.to_thread.run_sync(self._ended.end, session, expires)  # a file lock may wait a moment
            except UserError as exc:  # the cookie stays: the session it carries was not ended
                log.error("%s", exc)
                return error(error_status(exc), exc.message("web"))
        response = JSONResponse({"wylogowano": True})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def _login(self, request: Request, client: str) -> Response:
        if request.method != "POST":
            return HTMLResponse(_login_page("", page_address(request.query_params.get(RETURN_FIELD, ""))))
        refused = refused_state_change(request, needs_json=False)
        if refused is not None:
            return refused
        form = await request.form()  # RequestLimits, which wraps this guard, has already read and limited the body
        back = page_address(str(form.get(RETURN_FIELD, "")))
        refused = self._too_many(client, back)  # the form shown again keeps the search to come back to
        if refused is not None:
            return refused
        user = self._token_user(str(form.get("token", "")))
        if user is None:
            self._failures.failed(client)
            return HTMLResponse(_login_page("Zły token – spróbuj jeszcze raz.", back), status_code=401)
        expires = int(time.time()) + SESSION_SECONDS
        response = RedirectResponse(back, status_code=303)
        # Secure only over https: directly with TLS or from a proxy trusted with --zaufane-proxy (run.py)
        session = secrets.token_urlsafe(16)  # its own id: a logout ends this session, not the user's others
        response.set_cookie(COOKIE, self._cookie_value(expires, session, user) or "", max_age=SESSION_SECONDS,
                            httponly=True, samesite="strict", path="/", secure=request.url.scheme == "https")
        return response


# the page: "/" or a base's "/b/NAME/" on a server with several bases (NAME as accounts.check_base_name allows)
_PAGE_PATH = re.compile(r"^/(?:b/[^\W_][\w.-]{0,39}/)?$")


def page_address(requested: str) -> str:
    """Adres, pod który wrócić po zalogowaniu: tylko strona (``/`` albo ``/b/NAZWA/``) z jej parametrami
    (``?q=…``), zakodowanymi od nowa – nigdy inny host (``//evil``), inna ścieżka ani znaki nowej linii
    w nagłówku."""
    path, _, query = requested.partition("?")
    if not _PAGE_PATH.match(path):
        return "/"
    query = urlencode(parse_qsl(query, keep_blank_values=True))
    return f"{path}?{query}" if query else path


def _login_page(message: str, back: str = "/") -> str:
    note = f'<p class="blad">{html.escape(message)}</p>' if message else ""
    back_field = f'<input type="hidden" name="{RETURN_FIELD}" value="{html.escape(back)}">' if back != "/" else ""
    return f"""<!doctype html>
<html lang="pl"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>chroma-rag – logowanie</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main class="logowanie"><h1>chroma-rag</h1>{note}
<form method="post" action="{LOGIN_PATH}">{back_field}<label>Token dostępu <input type="password" name="token" required
autofocus></label> <button type="submit">Zaloguj</button></form></main></body></html>"""


def host_name(host: str) -> str | None:
    """Nazwa z nagłówka ``Host`` („nazwa”, „nazwa:port”, „[::1]:port”) albo ``None``, gdy port nie jest liczbą
    (``127.0.0.1:evil``, ``127.0.0.1:80@evil.com`` – nie wolno sprawdzać tylko części przed ostatnim dwukropkiem)."""
    name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon:
        return host
    if not _small_number(port, 5) or int(port) > 65535:
        return None
    return name


def _small_number(text: str, digits: int) -> bool:
    """Liczba z cyfr ASCII, najwyżej ``digits`` cyfr – dopiero taką wolno podać ``int()`` (nie wyjątek ani 500)."""
    return 0 < len(text) <= digits and text.isascii() and text.isdigit()


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


def middleware(host: str, token: str | None, untimed_prefixes: tuple[str, ...],
               sharing: Sharing | None = None, accounts: Accounts | None = None,
               audit: AuditLog | None = None, limits: LimitSettings = LIMITS) -> list[Middleware]:
    """Warstwy przed aplikacją, od zewnętrznej: nagłówki bezpieczeństwa (na każdej odpowiedzi, także odmowach
    niżej), nazwa hosta (na pętli zwrotnej), limity (``limits``; obejmują też formularz logowania), dziennik zapytań
    (``audit``; także odrzuconych tokenów), token wspólny albo osobisty (gdy jest token albo lista użytkowników),
    polskie odmowy transportu MCP."""
    layers = [Middleware(SecurityHeaders)]
    if is_loopback(host):
        layers.append(Middleware(LoopbackHost))
    layers.append(Middleware(RequestLimits, untimed_prefixes=untimed_prefixes, settings=limits))
    if audit is not None:  # before the guard: refused tokens are written too
        layers.append(Middleware(AuditTrail, log=audit, login_path=LOGIN_PATH))
    if token or accounts is not None:
        layers.append(Middleware(TokenGuard, token=token or None, sharing=sharing, accounts=accounts,
                                 open_without_access=is_loopback(host)))
    layers.append(Middleware(McpErrors))
    return layers
