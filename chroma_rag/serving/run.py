"""Uruchomienie: serwer HTTP (uvicorn) z limitami połączeń albo MCP przez stdio."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..api import Index
from ..errors import UserError
from .security import resolve_token

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

KEEP_ALIVE_SECONDS = 5


def serve(index: Index, host: str, port: int, token: str | None,
          status: Callable[[], dict[str, object]] | None = None, token_file: Path | None = None,
          trusted_proxy: str | None = None) -> None:
    """Strona, API i MCP na ``host:port``; poza pętlą zwrotną tylko z tokenem (inaczej ``UserError``);
    ``trusted_proxy`` – adres pośrednika TLS, któremu wolno ustawić ``X-Forwarded-Proto``/``-For``."""
    import uvicorn

    from .app import build_app

    token = resolve_token(host, token, token_file)
    index.store.require_existing()
    _check_free(host, port)
    app = build_app(index, host=host, token=token, status=status)
    shown = f"[{host}]" if ":" in host else host
    print(f"chroma-rag: strona http://{shown}:{port}/ , MCP http://{shown}:{port}/mcp"
          f"{' (z tokenem)' if token else ''}; Ctrl-C kończy.", file=sys.stderr, flush=True)
    uvicorn.Server(server_config(app, host, port, trusted_proxy)).run()


def server_config(app: ASGIApp, host: str, port: int, trusted_proxy: str | None = None) -> uvicorn.Config:
    """Ustawienia uvicorn serwera: parser h11 z limitem nagłówków i czasu (``transport.GuardedH11Protocol``);
    limit połączeń sprawdza ten protokół, zapytań – ``limits.RequestLimits``. Nagłówki ``X-Forwarded-*``
    tylko od ``trusted_proxy``: od kogokolwiek innego na tym komputerze ustawiałyby adres klienta (limit
    błędnych tokenów) i schemat (ciasteczko ``Secure``)."""
    import uvicorn

    from .transport import MAX_HEADER_BYTES, GuardedH11Protocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=GuardedH11Protocol,  # httptools would ignore the header size limit
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=trusted_proxy is not None,
        forwarded_allow_ips=trusted_proxy,
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
