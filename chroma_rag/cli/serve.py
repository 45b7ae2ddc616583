"""Polecenia serwera: serwuj (strona, JSON API i MCP po HTTP) i mcp (narzędzia MCP przez stdio)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError, UserError
from .options import DbOption, ModelOption, ServerOption
from .output import err


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Adres nasłuchu; inny niż 127.0.0.1 wymaga tokenu.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port HTTP.", min=1, max=65535)] = 8080,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-plik", metavar="PLIK", help="Plik z tokenem dostępu do strony, API i MCP "
                     "(domyślnie $CHROMA_RAG_TOKEN); token nie pojawia się na liście procesów.", show_default=False),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Token wprost (domyślnie żaden) – widoczny dla innych w ps; lepiej --token-plik.",
                     show_default=False),
    ] = None,
    trusted_proxy: Annotated[
        str | None,
        typer.Option("--zaufane-proxy", metavar="ADRES", help="Adres pośrednika z TLS (np. 127.0.0.1), któremu "
                     "wolno podać X-Forwarded-Proto/-For; wtedy ciasteczko logowania ma atrybut Secure "
                     "(domyślnie żaden).", show_default=False),
    ] = None,
    watch: Annotated[
        list[Path] | None,
        typer.Option("--obserwuj", metavar="FOLDER", help="Utrzymuj indeks zgodny z folderem w tle (nowe, zmienione, "
                     "przeniesione i usunięte pliki; stan: /api/stan); można powtarzać (domyślnie żaden).",
                     show_default=False),
    ] = None,
    polling: Annotated[
        bool, typer.Option("--odpytuj", help="Z --obserwuj: sprawdzaj foldery co pół sekundy zamiast powiadomień "
                           "systemu (udziały SMB/NFS; dla nich wybierane samo).")
    ] = False,
    processes: Annotated[
        int | None,
        typer.Option("--procesy", metavar="N", min=1, max=32, show_default=False,
                     help="Ile procesów odpowiada na zapytania (domyślnie tyle, ile rdzeni, najwyżej 4); każdy "
                     "trzyma w pamięci własny model i gorące dane wyszukiwania."),
    ] = None,
    bases: Annotated[
        list[str] | None,
        typer.Option("--bazy", metavar="NAZWA=FOLDER", help="Kilka baz w jednym serwerze, każda pod /b/NAZWA/ "
                     "(strona, API, MCP); można powtarzać; zamiast --baza (domyślnie żadna).", show_default=False),
    ] = None,
    accounts_file: Annotated[
        Path | None,
        typer.Option("--uzytkownicy", metavar="PLIK", help="Lista użytkowników z osobistymi tokenami (domyślnie "
                     "uzytkownicy.json w folderze bazy, przy --bazy – pierwszej).", show_default=False),
    ] = None,
    audit_file: Annotated[
        Path | None,
        typer.Option("--dziennik", metavar="PLIK", help="Dopisuj do PLIKU wiersz JSON o każdym zapytaniu: kto, kiedy, "
                     "o co, z jakim skutkiem (domyślnie żaden); plik można przenosić (logrotate).", show_default=False),
    ] = None,
    audit_answers: Annotated[
        bool, typer.Option("--dziennik-odpowiedzi", help="Z --dziennik: zapisuj też treść odpowiedzi modelu.")
    ] = False,
    db: DbOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
) -> None:
    """Strona dla zespołu, JSON API i narzędzia MCP (/mcp) z jednego lokalnego serwera, tylko do odczytu.

    Dostęp: wspólny token (--token-plik) albo osobiste tokeny użytkowników (chroma-rag uzytkownicy dodaj)."""
    from ..serving.audit import AuditLog
    from ..serving.run import serve
    from ..serving.workers import default_processes

    if audit_answers and audit_file is None:
        raise UsageError("--dziennik-odpowiedzi działa tylko z --dziennik PLIK.")
    audit = AuditLog(audit_file.absolute(), answers=audit_answers) if audit_file else None
    named = named_bases(bases or [])
    if named and (db is not None or server is not None or watch):
        raise UsageError("--bazy NAZWA=FOLDER zastępuje --baza i --serwer i nie działa z --obserwuj – podaj jedno "
                         "albo drugie.")
    processes = processes or default_processes()
    if not watch:
        serve(db, model, server, host, port, token, processes=processes, token_file=token_file,
              trusted_proxy=trusted_proxy, audit=audit, bases=named or None,
              accounts_file=accounts_file.absolute() if accounts_file else None)
        return
    from ..indexing.watch import BackgroundWatch
    from .options import open_index

    not_folders = [str(p) for p in watch if not p.is_dir()]
    if not_folders:
        raise UserError(f"--obserwuj działa tylko na folderach, a to nie są foldery: {', '.join(not_folders)}.")
    writer = open_index(db, model, server=server)  # its own Index: writes never hold the readers' lock
    if not writer.store.exists():  # the server needs a database to open; the first sync creates it
        err.print("Pierwsze indeksowanie obserwowanych folderów…")
        writer.add(watch, prune=True)
    watcher = BackgroundWatch(watch, lambda progress: writer.add(watch, prune=True, progress=progress), polling or None,
                              ignore=[writer.store.path])
    watcher.start()
    try:
        serve(db, model, server, host, port, token, processes=processes, status=watcher.state.to_json,
              token_file=token_file, trusted_proxy=trusted_proxy, audit=audit,
              accounts_file=accounts_file.absolute() if accounts_file else None)
    finally:
        watcher.stop()


def named_bases(given: list[str]) -> dict[str, Path]:
    """``--bazy NAZWA=FOLDER`` → nazwa → folder (bezwzględny: procesy robocze nie dziedziczą katalogu)."""
    from ..serving.accounts import check_base_name

    bases: dict[str, Path] = {}
    for item in given:
        name, equals, folder = item.partition("=")
        if not equals or not folder.strip():
            raise UsageError(f"--bazy „{item}”: podaj NAZWA=FOLDER, np. --bazy umowy=/srv/umowy/chroma_db.")
        if check_base_name(name.strip()) in bases:
            raise UsageError(f"--bazy: nazwa „{name.strip()}” powtarza się – każda baza potrzebuje własnej.")
        bases[name.strip()] = Path(folder.strip()).expanduser().absolute()
    return bases


def mcp_command(db: DbOption = None, model: ModelOption = None, server: ServerOption = None) -> None:
    """Narzędzia MCP (szukaj, pokaz_jednostke, lista_plikow) przez stdio – dla Claude Desktop i innych klientów."""
    from ..serving.run import serve_stdio
    from ..serving.shared_index import SharedIndex

    serve_stdio(SharedIndex(db, model=model, server=server))
