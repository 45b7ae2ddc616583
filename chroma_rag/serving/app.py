"""Aplikacja ASGI (Starlette): JSON API o kształtach ``--json`` CLI, pliki źródłowe dokumentów, MCP i strona."""

from __future__ import annotations

import contextlib
import logging
import mimetypes
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..answering.answer import distinct_names
from ..api import Index
from ..errors import UserError
from .answers import answer_events, sse
from .mcp_tools import build_mcp, mcp_transport_security
from .params import query_from_body, query_from_params
from .security import COOKIE, Sharing, error, error_status, middleware, refused_state_change

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
              sharing: Sharing | None = None) -> Starlette:
    """Cała aplikacja nad ``index``; ``token`` – wymagany na każdej ścieżce, gdy podany (``/api/stan`` mówi
    stronie, czy jest, a ``POST /wylogowanie`` kasuje ciasteczko logowania); ``status`` – stan obserwowania
    folderów (serwuj --obserwuj) dla ``/api/stan``; ``sharing`` – co dzielą procesy robocze jednego serwera
    (``workers.py``; bez tego – jeden proces)."""
    mcp = build_mcp(index)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=mcp_transport_security(host),
        host=host,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    routes: list[BaseRoute] = [
        Route("/", lambda _: FileResponse(STATIC / "index.html")),
        Route("/favicon.ico", lambda _: FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/pliki", lambda _: JSONResponse([info.to_json() for info in index.files()])),
        Route("/api/stan", lambda _: JSONResponse({"obserwowanie": status() if status else None,
                                                   "token": bool(token)})),
        Route("/api/szukaj", _search(index)),
        Route("/api/jednostka", _unit(index)),
        Route("/api/pytaj", _ask(index), methods=["POST"]),
        Route("/api/rozmowy/{rozmowa}", _conversation(index), methods=["GET", "DELETE"]),
        Route("/dokumenty/{plik}", _document(index)),
        Route(LOGOUT_PATH, _logout, methods=["POST"]),
        *mcp_app.routes,
    ]
    return Starlette(
        routes=routes,
        middleware=middleware(host, token, untimed_prefixes=("/mcp", "/api/pytaj"), sharing=sharing),
        lifespan=lifespan,
        exception_handlers={
            UserError: lambda _, exc: error(error_status(exc), exc.message("web")),
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function`` w wątku roboczym; gdy minie limit czasu zapytania, odpowiedź 503 wychodzi od razu, a wątek
    kończy się w tle (wątku nie da się przerwać, a Starlette czekałby na niego mimo limitu)."""
    return await anyio.to_thread.run_sync(lambda: function(*args), abandon_on_cancel=True)


def _search(index: Index):
    async def search(request: Request) -> Response:
        query = query_from_params(request.query_params)
        result = await in_thread(index.search, query.question, query.k, query.filters, query.mode)
        return JSONResponse(result.to_json("web"))

    return search


def _conversation(index: Index):
    async def conversation(request: Request) -> Response:
        conversation_id = request.path_params["rozmowa"]
        if request.method == "DELETE":
            refused = refused_state_change(request)
            if refused is not None:
                return refused
            await in_thread(index.conversations.delete, conversation_id)
            return Response(status_code=204)
        # a saved conversation as it was, without asking the model again (a shared link opens it)
        found = await in_thread(index.conversations.load, conversation_id)
        return JSONResponse(found.to_json(await in_thread(index.documents_version)))

    return conversation


def _unit(index: Index):
    async def unit(request: Request) -> Response:
        file, art = request.query_params.get("plik", ""), request.query_params.get("art", "")
        if not file.strip() or not art.strip():
            return error(400, "Podaj plik i jednostkę, np. /api/jednostka?plik=ustawa.pdf&art=5.")
        found = await in_thread(index.unit, file, art)  # a UserError: its status by kind (error_status)
        return JSONResponse(found.to_json())

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
        events = answer_events(index, query)
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

    return ask


LOGOUT_PATH = "/wylogowanie"


async def _logout(request: Request) -> Response:
    """Kasuje ciasteczko logowania; jak inne zapytania zmieniające stan – tylko JSON ze strony tego serwera."""
    refused = refused_state_change(request)
    if refused is not None:
        return refused
    response = JSONResponse({"wylogowano": True})
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
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
        name, wanted = request.path_params["plik"], request.query_params.get("sciezka")
        # Only names and paths from the index are looked up; the request never becomes a path on disk.
        recorded = [info.path for info in index.files() if info.name == name and wanted in (None, info.path)]
        if not recorded:
            return error(404, f"W indeksie nie ma pliku „{name}”; listę plików zwraca /api/pliki.")
        if len(recorded) > 1:
            # named as in citations (it/regulamin.md): the server's folders are none of the team's business
            names = ", ".join(sorted(distinct_names(recorded).values()))
            return error(409, f"Plik „{name}” jest w kilku folderach ({names}) – otwórz właściwy z wyników "
                              "wyszukiwania albo z listy plików.")
        path = Path(recorded[0])
        handle = _open_indexed(path)
        if handle is None:
            return error(404, f"Pliku „{name}” nie ma już na dysku pod zaindeksowaną ścieżką albo został "
                              "podmieniony na dowiązanie – zaindeksuj go ponownie.")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        headers = {"Content-Disposition": f"inline; filename*=utf-8''{quote(path.name)}",
                   "Content-Length": str(os.fstat(handle.fileno()).st_size)}
        if media_type in ACTIVE_TYPES:  # an indexed web page is shown, never run, under the server's address
            headers["Content-Security-Policy"] = SANDBOXED_DOCUMENT
        return StreamingResponse(_chunks(handle), media_type=media_type, headers=headers)

    return document


def _open_indexed(path: Path) -> BinaryIO | None:
    """Zaindeksowany plik otwarty tylko wtedy, gdy to wciąż zwykły plik dokładnie pod zapisaną ścieżką: dowiązanie
    w miejscu pliku (O_NOFOLLOW) albo któregoś folderu (rozwiązana ścieżka inna niż zapisana – indeks zapisuje
    ścieżki już rozwiązane) nie prowadzi nigdzie indziej, np. do /etc/passwd."""
    try:
        if os.path.realpath(path) != str(path):
            return None
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    handle = os.fdopen(descriptor, "rb")
    opened, now = os.fstat(descriptor), os.stat(os.path.realpath(path))
    # a folder swapped between the check and the open: the opened file is not the one at the recorded path
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (now.st_dev, now.st_ino):
        handle.close()
        return None
    return handle


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        yield from iter(lambda: handle.read(1 << 16), b"")


async def _http_error(_: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    return error(status, _HTTP_MESSAGES.get(status, f"Błąd HTTP {status}."))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("Nieoczekiwany błąd przy %s %s", request.method, request.url.path)
    return error(500, "Nieoczekiwany błąd serwera – szczegóły są w dzienniku serwera; zgłoś go razem z pytaniem.")
