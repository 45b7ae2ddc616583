"""Aplikacja ASGI (Starlette): JSON API o kształtach ``--json`` CLI, pliki źródłowe dokumentów, MCP i strona."""

from __future__ import annotations

import contextlib
import html
import json
import logging
import mimetypes
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..api import Index
from ..errors import UserError
from ..models import distinct_names, paths_named
from .accounts import OPEN, SHARED_TOKEN, USER_STATE, Accounts, account_name
from .across_bases import asked_bases, search_bases
from .answers import answer_events, sse
from .audit import AuditLog
from .documents import file_chunks, on_server_disk, open_indexed, team_names
from .limits import LIMITS, LimitSettings
from .mcp_tools import MCPServer, build_mcp, mcp_transport_security
from .params import conversation_ids, query_from_body, query_from_params
from .security import (
    Sharing,
    error,
    error_status,
    middleware,
    refused_state_change,
)

STATIC = Path(__file__).with_name("static")
T = TypeVar("T")
log = logging.getLogger("chroma_rag.serwuj")
_HTTP_MESSAGES = {
    404: "Nie ma takiej strony ani ścieżki API – dostępne: /, /api/pliki, /api/szukaj, /api/jednostka, "
         "/api/pytaj, /dokumenty/PLIK, /mcp.",
    405: "Ta ścieżka nie przyjmuje tej metody HTTP (pytania: POST /api/pytaj, reszta API: GET).",
}


def build_app(index: Index, host: str = "127.0.0.1", token: str | None = None,
              status: Callable[[], dict[str, object] | None] | None = None,
              sharing: Sharing | None = None, accounts: Accounts | None = None,
              audit: AuditLog | None = None, limits: LimitSettings = LIMITS) -> Starlette:
    """Cała aplikacja nad jedną bazą ``index``; ``token`` – wspólny token, ``accounts`` – użytkownicy z osobistymi
    tokenami: gdy jest jedno albo drugie, każda ścieżka wymaga logowania (``/api/stan`` mówi stronie, czy jest i kto
    jest zalogowany; logowanie i wylogowanie obsługuje ``security.TokenGuard``); ``status`` – stan obserwowania
    folderów (serwuj --obserwuj) dla ``/api/stan``; ``sharing`` – co dzielą procesy robocze jednego serwera
    (``workers.py``; bez tego – jeden proces); ``audit`` – dziennik zapytań (``audit.py``); ``limits`` – limity
    zapytań (``limits.py``)."""
    routes, mcp = _base_routes(index, host, status, _guarded(token, accounts))
    return _application([*_common_routes(), *routes], [mcp], host, token, sharing, accounts, audit, limits)


def build_bases_app(bases: dict[str, Index], host: str = "127.0.0.1", token: str | None = None,
                    sharing: Sharing | None = None, accounts: Accounts | None = None,
                    audit: AuditLog | None = None,
                    status: Callable[[], dict[str, object] | None] | None = None,
                    limits: LimitSettings = LIMITS) -> Starlette:
    """Serwer z kilkoma bazami (``serwuj --bazy NAZWA=FOLDER``): każda pod ``/b/NAZWA/`` ze stroną, API i MCP
    jednej bazy (jak ``build_app``), ``/`` – wybór baz, ``/api/bazy`` – ich lista. Użytkownik widzi tylko bazy,
    które może czytać (``Account.bases``): o innej słyszy to samo co o nieistniejącej (404), więc nie dowie się
    nawet jej nazwy. Wyszukiwanie sięga poza bazę z adresu tylko na życzenie: ``/api/szukaj?bazy=…``
    (``across_bases``). ``status`` – stan obserwowania folderów każdej obserwowanej bazy po nazwie
    (``serwuj --obserwuj NAZWA=FOLDER``)."""
    guarded = _guarded(token, accounts)
    apps, mcps = {}, []
    for name, index in bases.items():
        routes, mcp = _base_routes(index, host, _status_of(status, name), guarded)
        apps[name] = Router(routes)
        mcps.append(mcp)
    routes = [
        Route("/", _base_choice(list(bases), accounts)),
        Route("/api/bazy", lambda request: JSONResponse([{"nazwa": name} for name in bases
                                                         if _reads(request, name, accounts)])),
        Route("/api/szukaj", _search_bases(bases, accounts)),
        *_common_routes(),
        Mount("/b/{baza}", app=BaseAccess(apps, accounts)),
    ]
    return _application(routes, mcps, host, token, sharing, accounts, audit, limits)


def _status_of(status: Callable[[], dict[str, object] | None] | None,
               base: str) -> Callable[[], dict[str, object] | None] | None:
    """Stan obserwowania jednej bazy ze stanu wszystkich; ``None`` – baza bez obserwowanych folderów."""
    if status is None:
        return None
    return lambda: (status() or {}).get(base)  # type: ignore[return-value]


def _guarded(token: str | None, accounts: Accounts | None) -> Callable[[], bool]:
    return lambda: bool(token) or (accounts is not None and accounts.exist())


def _common_routes() -> list[BaseRoute]:
    return [
        Route("/favicon.ico", lambda _: FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]


def _base_routes(index: Index, host: str, status: Callable[[], dict[str, object] | None] | None,
                 guarded: Callable[[], bool]) -> tuple[list[BaseRoute], MCPServer]:
    """Strona, API, dokumenty i MCP jednej bazy (w korzeniu albo pod ``/b/NAZWA``)."""
    mcp = build_mcp(index)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=mcp_transport_security(host),
        host=host,
    )
    routes: list[BaseRoute] = [
        Route("/", lambda _: FileResponse(STATIC / "index.html")),
        Route("/api/pliki", _files(index)),
        Route("/api/stan", _state(status, guarded)),
        Route("/api/szukaj", _search(index)),
        Route("/api/jednostka", _unit(index)),
        Route("/api/pytaj", _ask(index), methods=["POST"]),
        Route("/api/rozmowy", _conversations(index), methods=["GET", "DELETE"]),
        Route("/api/rozmowy/{rozmowa}", _conversation(index), methods=["GET", "DELETE"]),
        Route("/dokumenty/{plik}", _document(index)),
        Route("/mcp", _no_mcp_stream, methods=["GET"]),
        *mcp_app.routes,
    ]
    return routes, mcp


async def _no_mcp_stream(_: Request) -> Response:
    """``GET /mcp``: bezstanowy serwer (każde wywołanie to jedno POST) nie ma czego wysyłać strumieniem, więc zgodnie
    ze specyfikacją MCP odmawia (405), zamiast trzymać bezczynne połączenie i jego miejsce."""
    response = error(405, "Ten serwer MCP nie prowadzi strumieni – wysyłaj wywołania metodą POST na ten sam adres.")
    response.headers["allow"] = "POST"
    return response


def _application(routes: list[BaseRoute], mcps: list[MCPServer], host: str, token: str | None,
                 sharing: Sharing | None, accounts: Accounts | None, audit: AuditLog | None,
                 limits: LimitSettings) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for mcp in mcps:
                await stack.enter_async_context(mcp.session_manager.run())
            yield

    return Starlette(
        routes=routes,
        middleware=middleware(host, token, untimed_prefixes=("/mcp", "/api/pytaj"), sharing=sharing,
                              accounts=accounts, audit=audit, limits=limits),
        lifespan=lifespan,
        exception_handlers={
            UserError: lambda _, exc: error(error_status(exc), exc.message("web")),
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )


NO_BASE = "Nie ma takiej bazy – listę baz, które możesz przeglądać, zwraca /api/bazy."


def _reads(request_or_scope: Request | Scope, base: str, accounts: Accounts | None) -> bool:
    """Czy ten, kto pyta, może czytać bazę ``base``: wspólny token i serwer bez logowania – każdą, użytkownik –
    swoje (``Account.bases``)."""
    scope = request_or_scope.scope if isinstance(request_or_scope, Request) else request_or_scope
    user = scope.get("state", {}).get(USER_STATE, OPEN)
    if user in (OPEN, SHARED_TOKEN):
        return True
    account = accounts.named(user) if accounts is not None else None
    return account is not None and account.reads(base)


class BaseAccess:
    """``/b/NAZWA/…``: aplikacja bazy ``NAZWA``, jeśli istnieje i ten, kto pyta, może ją czytać; inaczej 404 z tym
    samym zdaniem w obu przypadkach."""

    def __init__(self, apps: dict[str, ASGIApp], accounts: Accounts | None) -> None:
        self.apps = apps
        self.accounts = accounts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope.get("path_params", {}).get("baza", "")
        app = self.apps.get(name)
        if app is None or not _reads(scope, name, self.accounts):
            await error(404, NO_BASE)(scope, receive, send)
            return
        await app(scope, receive, send)


def _base_choice(names: list[str], accounts: Accounts | None):
    async def choice(request: Request) -> Response:
        readable = [name for name in names if _reads(request, name, accounts)]
        if len(readable) == 1:  # nothing to choose: straight to the base, with a shared link's parameters
            query = f"?{request.url.query}" if request.url.query else ""
            return RedirectResponse(f"/b/{quote(readable[0])}/{query}", status_code=303)
        items = "".join(f'<li><a href="/b/{quote(name)}/">{html.escape(name)}</a></li>' for name in readable)
        body = (f"<ul>{items}</ul>" if readable else
                "<p>Nie masz dostępu do żadnej bazy – poproś o niego osobę, która prowadzi ten serwer.</p>")
        return _small_page("bazy", f"<p>Wybierz bazę dokumentów:</p>{body}")

    return choice


def _small_page(title: str, body: str, status: int = 200) -> HTMLResponse:
    """Mała strona w stylu strony głównej (wybór bazy, odmowa otwarcia pliku); ``body`` – gotowy HTML."""
    return HTMLResponse(f"""<!doctype html>
<html lang="pl"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>chroma-rag – {html.escape(title)}</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main class="logowanie"><h1>chroma-rag</h1>{body}</main></body></html>""", status_code=status)


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function`` w wątku roboczym; gdy minie limit czasu zapytania, odpowiedź 503 wychodzi od razu, a wątek
    kończy się w tle (wątku nie da się przerwać, a Starlette czekałby na niego mimo limitu)."""
    return await anyio.to_thread.run_sync(lambda: function(*args), abandon_on_cancel=True)


def _state(status: Callable[[], dict[str, object] | None] | None, guarded: Callable[[], bool]):
    async def state(request: Request) -> Response:
        return JSONResponse({"obserwowanie": status() if status else None, "token": guarded(),
                             "uzytkownik": account_name(request.scope)})

    return state


def _files(index: Index):
    def files(_: Request) -> Response:  # run in a worker thread (a plain function): reads the registry
        names = index.shown_names()
        return JSONResponse([names.file(info.to_json()) for info in index.files()])

    return files


def _search(index: Index):
    async def search(request: Request) -> Response:
        query = query_from_params(request.query_params)
        result = await in_thread(index.search, query.question, query.k, query.filters, query.mode)
        found = result.to_json("web")
        return JSONResponse({**found, "wyniki": (await in_thread(team_names, index)).hits(found["wyniki"])})

    return search


def _search_bases(bases: dict[str, Index], accounts: Accounts | None):
    async def search(request: Request) -> Response:
        query = query_from_params(request.query_params)
        names = asked_bases(request.query_params.getlist("bazy"), lambda name: _reads(request, name, accounts), bases)
        if names is None:
            return error(404, NO_BASE)
        return JSONResponse(await in_thread(search_bases, {name: bases[name] for name in names}, query))

    return search


def _conversation(index: Index):
    async def conversation(request: Request) -> Response:
        conversation_id, owner = request.path_params["rozmowa"], account_name(request.scope)
        if request.method == "DELETE":
            refused = refused_state_change(request)
            if refused is not None:
                return refused
            await in_thread(index.conversations.delete, conversation_id, owner)  # someone else's: 404
            return Response(status_code=204)
        # a saved conversation as it was, without asking the model again (a shared link opens it, read-only for
        # anyone but its owner: "moja" false – a follow-up then continues in the reader's own copy)
        found = await in_thread(index.conversations.load, conversation_id)
        version = await in_thread(index.documents_version)
        saved = (await in_thread(team_names, index)).conversation(found.to_json(version))  # also one saved with paths
        return JSONResponse({**saved, "moja": found.owner == owner})

    return conversation


NOT_KNOWN_WHOSE = ("Ten serwer nie ma kont użytkowników, więc nie wie, które rozmowy są twoje – podaj ich "
                   "identyfikatory w polu „rozmowy”.")


def _conversations(index: Index):
    """``GET /api/rozmowy``: rozmowy zalogowanego użytkownika (``{"rozmowy": null}`` bez kont – strona trzyma
    wtedy listę w przeglądarce); ``DELETE``: wszystkie jego rozmowy albo te z ``{"rozmowy": [ID, …]}``, które
    może usunąć – odpowiedź ``{"usuniete": N}``."""

    async def conversations(request: Request) -> Response:
        owner, store = account_name(request.scope), index.conversations
        if request.method == "GET":
            owned = await in_thread(store.owned, owner) if owner is not None else None
            return JSONResponse({"rozmowy": [c.summary() for c in owned if c.turns] if owned is not None else None})
        refused = refused_state_change(request)
        if refused is not None:
            return refused
        try:
            raw = await request.body()
            ids = conversation_ids(json.loads(raw) if raw.strip() else {})  # no body: all of them
        except (ValueError, RecursionError):
            return error(400, "Treść zapytania nie jest poprawnym JSON-em, np. {\"rozmowy\": [\"…\"]}.")
        if ids is not None:
            return JSONResponse({"usuniete": await in_thread(store.delete_listed, ids, owner)})
        if owner is None:
            return error(400, NOT_KNOWN_WHOSE)
        return JSONResponse({"usuniete": await in_thread(store.delete_owned, owner)})

    return conversations


def _unit(index: Index):
    async def unit(request: Request) -> Response:
        file, art = request.query_params.get("plik", ""), request.query_params.get("art", "")
        if not file.strip() or not art.strip():
            return error(400, "Podaj plik i jednostkę, np. /api/jednostka?plik=ustawa.pdf&art=5.")
        found = await in_thread(index.unit, file, art)  # a UserError: its status by kind (error_status)
        return JSONResponse({**found.to_json(), "plik_na_serwerze": await in_thread(on_server_disk, found.path)})

    return unit


def _ask(index: Index):
    async def ask(request: Request) -> Response:
        refused = refused_state_change(request)
        if refused is not None:
            return refused
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # RecursionError: JSON nested thousands of levels deep
            return error(400, "Treść zapytania nie jest poprawnym JSON-em, np. {\"pytanie\": \"Ile dni urlopu?\"}.")
        query = query_from_body(body)
        accept = request.headers.get("accept", "")
        gone = threading.Event()
        events = answer_events(index, query, account_name(request.scope), gone)

        async def respond() -> Response:
            # an error before the first piece of text gets its own status code, not a 200 stream with one error event
            first = await anext(events)
            if first.kind == "blad":
                return JSONResponse(first.data, status_code=first.status)
            if "application/json" in accept and "text/event-stream" not in accept:
                async for event in _chained(first, events):
                    if event.kind == "blad":
                        return JSONResponse(event.data, status_code=event.status)
                    if event.kind == "wynik":
                        return JSONResponse(event.data)
            stream = (sse(event.kind, event.data) async for event in _chained(first, events))
            return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

        return await _unless_hung_up(request, gone, respond)

    return ask


async def _unless_hung_up(request: Request, gone: threading.Event, respond: Callable[[], Awaitable[Response]]
                          ) -> Response:
    """Odpowiedź ``respond()``, chyba że klient wcześniej się rozłączy: wtedy ``gone`` (model nie dostaje dalszych
    wywołań) i koniec czekania. Strumień odpowiedzi pilnuje rozłączenia sam (``StreamingResponse``), a tu – czas do
    pierwszych źródeł (plan i wyszukiwanie) i cała odpowiedź JSON, kiedy nikt inny nie czyta z połączenia."""
    response: Response = error(499, "Klient rozłączył się przed odpowiedzią.")  # nobody reads it: the audit log does
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone.set()
            log.warning("Klient rozłączył się w trakcie pytania %s – odpowiedź przerwana.", request.url.path)
            group.cancel_scope.cancel()

        group.start_soon(watch)
        response = await respond()
        group.cancel_scope.cancel()
    return response


async def _chained(first: T, rest: AsyncIterator[T]) -> AsyncIterator[T]:
    yield first
    async for item in rest:
        yield item


# Indexed documents a browser would run (a saved web page may carry scripts, forms and redirects): a sandbox with
# an opaque origin, no scripts, no forms, nothing loaded but the page's own styles and images.
ACTIVE_TYPES = {"text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml"}
SANDBOXED_DOCUMENT = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"


def _document(index: Index):
    def document(request: Request) -> Response:
        name, wanted = request.path_params["plik"], request.query_params.get("sciezka", "").strip("/")
        # Only names and paths from the index are looked up; the request never becomes a path on disk. "sciezka"
        # tells same-named files apart by the name the page shows ("it/regulamin.md"), or by a link's older path.
        recorded = paths_named(wanted or name, [info.path for info in index.files() if info.name == name])
        if not recorded:
            return _refused(request, 404, f"W indeksie nie ma pliku „{wanted or name}” – otwórz plik z wyników "
                                          "wyszukiwania albo z listy plików.")
        if len(recorded) > 1:
            # named as in citations (it/regulamin.md): the server's folders are none of the team's business
            names = ", ".join(sorted(distinct_names(recorded).values()))
            return _refused(request, 409, f"Plik „{name}” jest w kilku folderach ({names}) – otwórz właściwy "
                                          "z wyników wyszukiwania albo z listy plików.")
        path = Path(recorded[0])
        handle = open_indexed(path)
        if handle is None:
            # a shared Chroma server is indexed from the team's own computers (Windows too): the server may never
            # have had the file; the team can't reindex anything, but the unit view shows the text from the index
            return _refused(request, 404, f"Pliku „{wanted or name}” nie ma na dysku serwera pod ścieżką z indeksu "
                                          "(przeniesiono go, usunięto albo zaindeksowano na innym komputerze) – jego "
                                          "treść pokazują wyniki wyszukiwania i cały artykuł.")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        headers = {"Content-Disposition": f"inline; filename*=utf-8''{quote(path.name)}",
                   "Content-Length": str(os.fstat(handle.fileno()).st_size)}
        if media_type in ACTIVE_TYPES:  # an indexed web page is shown, never run, under the server's address
            headers["Content-Security-Policy"] = SANDBOXED_DOCUMENT
        return StreamingResponse(file_chunks(handle), media_type=media_type, headers=headers)

    return document


def _refused(request: Request, status: int, message: str) -> Response:
    """Pliku nie da się otworzyć: przeglądarka, która przyszła z linku „otwórz plik”, dostaje stronę ze zdaniem
    i drogą z powrotem, a klient API – JSON jak z każdej ścieżki API."""
    if "text/html" not in request.headers.get("accept", ""):
        return error(status, message)
    # "../" from …/dokumenty/PLIK is the base's own page: / or /b/NAZWA/
    return _small_page("pliku nie da się otworzyć",
                       f'<p class="blad">{html.escape(message)}</p><p><a href="../">Wróć do wyszukiwania</a></p>',
                       status)


async def _http_error(_: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    return error(status, _HTTP_MESSAGES.get(status, f"Błąd HTTP {status}."))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("Nieoczekiwany błąd przy %s %s", request.method, request.url.path)
    return error(500, "Nieoczekiwany błąd serwera – szczegóły są w dzienniku serwera; zgłoś go razem z pytaniem.")
