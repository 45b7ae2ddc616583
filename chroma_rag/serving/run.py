"""Uruchomienie: serwer HTTP (uvicorn) z limitami połączeń albo MCP przez stdio."""

from __future__ import annotations

import sys

from ..api import Index
from .security import resolve_token

MAX_CONNECTIONS = 64  # more at once get 503 instead of queueing on a 2-core machine
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 16 * 1024


def serve(index: Index, host: str, port: int, token: str | None) -> None:
    """Strona, API i MCP na ``host:port``; poza pętlą zwrotną tylko z tokenem (inaczej ``UserError``)."""
    import uvicorn

    from .app import build_app

    token = resolve_token(host, token)
    app = build_app(index, host=host, token=token)
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

    build_mcp(index).run("stdio")
