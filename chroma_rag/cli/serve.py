"""Polecenia serwera: serwuj (strona, JSON API i MCP po HTTP) i mcp (narzędzia MCP przez stdio)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from .options import DbOption, ModelOption, ServerOption
from .output import err

if TYPE_CHECKING:
    from ..indexing.watch import BackgroundWatch
    from ..serving.shared_index import BaseLocation


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
        list[str] | None,
        typer.Option("--obserwuj", metavar="[NAZWA=]FOLDER", help="Utrzymuj indeks zgodny z folderem w tle (nowe, "
                     "zmienione, przeniesione i usunięte pliki; stan: /api/stan); przy --bazy: NAZWA=FOLDER – folder "
                     "tej bazy; można powtarzać (domyślnie żaden).", show_default=False),
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
        typer.Option("--bazy", metavar="NAZWA=FOLDER|URL", help="Kilka baz w jednym serwerze, każda pod /b/NAZWA/ "
                     "(strona, API, MCP): folder bazy albo adres serwera Chromy (http://…); można powtarzać; zamiast "
                     "--baza i --serwer (domyślnie żadna).", show_default=False),
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
    if named and (db is not None or server is not None):
        raise UsageError("--bazy NAZWA=FOLDER zastępuje --baza i --serwer – podaj jedno albo drugie.")
    watched = watched_folders(watch or [], named)
    settings = {"processes": processes or default_processes(), "token_file": token_file,
                "trusted_proxy": trusted_proxy, "audit": audit, "bases": named or None,
                "accounts_file": accounts_file.absolute() if accounts_file else None}
    if not watched:
        serve(db, model, server, host, port, token, **settings)
        return
    from ..serving.shared_index import BaseLocation

    watchers: dict[str, BackgroundWatch] = {}
    try:
        for name, folders in watched.items():
            watchers[name] = start_watching(folders, named[name] if name else BaseLocation(db, server), model,
                                            polling)
        status = ((lambda: {name: each.state.to_json() for name, each in watchers.items()}) if named
                  else watchers[""].state.to_json)
        serve(db, model, server, host, port, token, status=status, **settings)
    finally:
        for each in watchers.values():
            each.stop()


def named_bases(given: list[str]) -> dict[str, BaseLocation]:
    """``--bazy NAZWA=FOLDER`` albo ``NAZWA=URL`` (serwer Chromy) → nazwa → miejsce bazy (folder bezwzględny:
    procesy robocze nie dziedziczą katalogu)."""
    from ..serving.accounts import check_base_name
    from ..serving.shared_index import BaseLocation

    bases: dict[str, BaseLocation] = {}
    for item in given:
        name, equals, place = (part.strip() for part in item.partition("="))
        if not equals or not place:
            raise UsageError(f"--bazy „{item}”: podaj NAZWA=FOLDER albo NAZWA=URL serwera Chromy, np. --bazy "
                             "umowy=/srv/umowy/chroma_db.")
        if check_base_name(name) in bases:
            raise UsageError(f"--bazy: nazwa „{name}” powtarza się – każda baza potrzebuje własnej.")
        server = place if place.startswith(("http://", "https://")) else None
        location = BaseLocation(None if server else Path(place).expanduser().absolute(), server)
        same = next((other for other, known in bases.items() if known.place() == location.place()), None)
        if same is not None:
            where = "ten sam serwer Chromy" if server else "ten sam folder"
            raise UsageError(f"--bazy: „{same}” i „{name}” wskazują {where}, a tam jest jedna baza – podaj każdej "
                             "bazie własne miejsce.")
        bases[name] = location
    return bases


def watched_folders(given: list[str], bases: dict[str, BaseLocation]) -> dict[str, list[Path]]:
    """Obserwowane foldery każdej bazy: przy ``--bazy`` z ``--obserwuj NAZWA=FOLDER``, bez nich – wszystkie
    ``--obserwuj FOLDER`` jednej bazy (nazwa pusta)."""
    found: dict[str, list[Path]] = {}
    for item in given:
        name, equals, folder = item.partition("=") if bases else ("", "=", item)
        if not equals or not folder.strip():
            raise UsageError("Przy --bazy podaj bazę obserwowanego folderu: --obserwuj NAZWA=FOLDER, np. --obserwuj "
                             "umowy=/srv/umowy/dokumenty.")
        if name.strip() not in (bases or {"": None}):
            raise UsageError(f"--obserwuj „{item}”: nie ma bazy „{name.strip()}” w --bazy – są: {', '.join(bases)}.")
        found.setdefault(name.strip(), []).append(Path(folder.strip()).expanduser().absolute())
    not_folders = [str(folder) for folders in found.values() for folder in folders if not folder.is_dir()]
    if not_folders:
        raise UsageError(f"--obserwuj działa tylko na folderach, a to nie są foldery: {', '.join(not_folders)}.")
    return found


def start_watching(folders: list[Path], location: BaseLocation, model: str | None,
                   polling: bool) -> BackgroundWatch:
    """Obserwator folderów jednej bazy w tle, z własnym indeksem (zapis nie trzyma blokady czytelników); baza, której
    jeszcze nie ma, powstaje z pierwszego indeksowania."""
    from ..indexing.watch import BackgroundWatch
    from .options import open_index

    writer = open_index(location.folder, model, server=location.server)
    if not writer.store.exists():  # the server needs a database to open
        err.print("Pierwsze indeksowanie obserwowanych folderów…")
        writer.add(folders, prune=True)
    watcher = BackgroundWatch(folders, lambda progress: writer.add(folders, prune=True, progress=progress),
                              polling or None,
                              ignore=[writer.store.path])
    watcher.start()
    return watcher


def mcp_command(db: DbOption = None, model: ModelOption = None, server: ServerOption = None) -> None:
    """Narzędzia MCP (szukaj, pokaz_jednostke, lista_plikow) przez stdio – dla Claude Desktop i innych klientów."""
    from ..serving.run import serve_stdio
    from ..serving.shared_index import SharedIndex

    serve_stdio(SharedIndex(db, model=model, server=server))
