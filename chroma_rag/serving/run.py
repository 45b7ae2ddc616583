"""Uruchomienie: serwer HTTP (uvicorn) z limitami połączeń albo MCP przez stdio."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable

from ..api import Index
from ..errors import UserError
from .security import MAX_REQUESTS, resolve_token

# uvicorn's own refusal (English text) is only a backstop: RequestLimits refuses in Polish at MAX_REQUESTS,
# while idle keep-alive connections also count here
MAX_CONNECTIONS = 4 * MAX_REQUESTS
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 16 * 1024


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
    uvicorn.run(
        app,
        host=host,
        port=port,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
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
