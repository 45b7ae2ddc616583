"""Uruchomienie: serwer HTTP (uvicorn) z limitami połączeń albo MCP przez stdio."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..api import Index
from ..errors import UserError
from .security import resolve_token

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

KEEP_ALIVE_SECONDS = 5


def serve(index: Index, host: str, port: int, token: str | None,
          status: Callable[[], dict[str, object]] | None = None) -> None:
    """Strona, API i MCP na ``host:port``; poza pętlą zwrotną tylko z tokenem (inaczej ``UserError``)."""
    import uvicorn

    from .app import build_app

    token = resolve_token(host, token)
    index.store.require_existing()
    _check_free(host, port)
    app = build_app(index, host=host, token=token, status=status)
    shown = f"[{host}]" if ":" in host else host
    print(f"chroma-rag: strona http://{shown}:{port}/ , MCP http://{shown}:{port}/mcp"
          f"{' (z tokenem)' if token else ''}; Ctrl-C kończy.", file=sys.stderr, flush=True)
    uvicorn.Server(server_config(app, host, port)).run()


def server_config(app: ASGIApp, host: str, port: int) -> uvicorn.Config:
    """Ustawienia uvicorn serwera: parser h11 z limitem nagłówków i czasu (``transport.GuardedH11Protocol``);
    limit połączeń sprawdza ten protokół, zapytań – ``limits.RequestLimits``."""
    import uvicorn

    from .transport import MAX_HEADER_BYTES, GuardedH11Protocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=GuardedH11Protocol,  # httptools would ignore the header size limit
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=False,  # X-Forwarded-* from anyone on this machine would set the client's address and scheme
        server_header=False,
        log_level="warning",
    )


def serve_stdio(index: Index) -> None:
    """Narzędzia MCP przez stdin/stdout (Claude Desktop i inni klienci uruchamiający serwer sami)."""
    from .mcp_tools import build_mcp

    index.store.require_existing()
    build_mcp(index).run("stdio")


def _check_free(host: str, port: int) -> None:
    """Zajęty port albo zły adres jako jedno zdanie po polsku, zanim uvicorn wypisze swój angielski błąd."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family) as probe:
            probe.bind((host, port))
    except OSError:
        raise UserError(
            f"Nie da się nasłuchiwać na {host}:{port} – port jest zajęty albo adres nie należy do tego komputera; "
            "wybierz inny: --port NUMER albo --host ADRES."
        ) from None
