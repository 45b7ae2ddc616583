"""Polecenia serwera: serwuj (strona, JSON API i MCP po HTTP) i mcp (narzędzia MCP przez stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from .options import DbOption, ModelOption, ServerOption


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Adres nasłuchu; inny niż 127.0.0.1 wymaga --token.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port HTTP.", min=1, max=65535)] = 8080,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Token dostępu do strony, API i MCP (domyślnie $CHROMA_RAG_TOKEN).",
                     show_default=False),
    ] = None,
    db: DbOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
) -> None:
    """Strona dla zespołu, JSON API i narzędzia MCP (/mcp) z jednego lokalnego serwera, tylko do odczytu."""
    from ..serving.run import serve
    from ..serving.shared_index import SharedIndex

    serve(SharedIndex(db, model=model, server=server), host, port, token)


def mcp_command(db: DbOption = None, model: ModelOption = None, server: ServerOption = None) -> None:
    """Narzędzia MCP (szukaj, pokaz_jednostke, lista_plikow) przez stdio – dla Claude Desktop i innych klientów."""
    from ..serving.run import serve_stdio
    from ..serving.shared_index import SharedIndex

    serve_stdio(SharedIndex(db, model=model, server=server))
