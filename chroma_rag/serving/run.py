"""Uruchomienie: serwer HTTP (uvicorn; jeden proces albo kilka za jednym gniazdem) z limitami połączeń albo MCP
przez stdio."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..api import Index
from ..errors import UserError
from .accounts import ACCOUNTS_FILE, Accounts
from .audit import AuditLog
from .security import Sharing, resolve_token
from .shared_index import BaseLocation
from .workers import WorkerApp, published_status

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

    from .transport import TransportLimits

KEEP_ALIVE_SECONDS = 5
WORKER_PING_SECONDS = 120


def serve(db: Path | None, model: str | None, server: str | None, host: str, port: int, token: str | None, *,
          processes: int = 1, status: Callable[[], dict[str, object]] | None = None, token_file: Path | None = None,
          trusted_proxy: str | None = None, audit: AuditLog | None = None,
          bases: dict[str, BaseLocation] | None = None, accounts_file: Path | None = None) -> None:
    """Strona, API i MCP na ``host:port`` nad bazą ``db``; poza pętlą zwrotną tylko z tokenem albo użytkownikami
    (``accounts.py``; inaczej ``UserError``); ``processes`` > 1 – tyle procesów roboczych za jednym gniazdem
    (``workers.py``); ``trusted_proxy`` – adres pośrednika TLS, któremu wolno ustawić ``X-Forwarded-Proto``/``-For``;
    ``audit`` – dziennik zapytań; ``bases`` – kilka baz (nazwa → folder albo serwer Chromy) zamiast ``db``, każda pod
    ``/b/NAZWA/`` (``status`` zwraca wtedy stan obserwowania każdej obserwowanej bazy po nazwie);
    ``accounts_file`` – lista użytkowników (domyślnie w folderze bazy, przy kilku – pierwszej)."""
    import uvicorn

    from .shared_index import SharedIndex

    indexes = {name: location.open(model) for name, location in (bases or {}).items()}
    index = next(iter(indexes.values())) if indexes else SharedIndex(db, model=model, server=server)
    accounts_file = accounts_file or index.store.work_dir / ACCOUNTS_FILE
    accounts = Accounts(accounts_file)
    accounts.exist()  # a broken list of users stops the start with its sentence, not every request later
    token = resolve_token(host, token, token_file, accounts)
    for each in indexes.values() or [index]:
        each.store.require_existing()
    if audit is not None:
        audit.check_writable()
    _check_free(host, port)
    shown = f"[{host}]" if ":" in host else host
    workers = f", procesów: {processes}" if processes > 1 else ""
    print(f"chroma-rag: strona http://{shown}:{port}/ , MCP http://{shown}:{port}/mcp"
          f"{' (z tokenem)' if token else ''}{workers}; Ctrl-C kończy.", file=sys.stderr, flush=True)
    if processes == 1:
        from .app import build_app, build_bases_app

        app = (build_bases_app(indexes, host=host, token=token, accounts=accounts, audit=audit, status=status)
               if indexes else
               build_app(index, host=host, token=token, status=status, accounts=accounts, audit=audit))
        uvicorn.Server(server_config(app, host, port, trusted_proxy)).run()
        return
    from uvicorn.supervisors import Multiprocess

    with published_status(status) as status_file:
        recipe = WorkerApp(db, model, server, host, token, Sharing(os.urandom(32), processes), status_file,
                           accounts_file, audit, tuple((bases or {}).items()))
        config = server_config(recipe, host, port, trusted_proxy, processes)
        Multiprocess(config, sockets=[config.bind_socket()]).run()


def server_config(app: ASGIApp | WorkerApp, host: str, port: int, trusted_proxy: str | None = None,
                  processes: int = 1, limits: TransportLimits | None = None) -> uvicorn.Config:
    """Ustawienia uvicorn serwera: parser h11 z limitem nagłówków i czasu (``transport.GuardedH11Protocol``);
    limit połączeń sprawdza ten protokół, zapytań – ``limits.RequestLimits``. Nagłówki ``X-Forwarded-*``
    tylko od ``trusted_proxy``: od kogokolwiek innego na tym komputerze ustawiałyby adres klienta (limit
    błędnych tokenów) i schemat (ciasteczko ``Secure``). Przy ``processes`` > 1 ``app`` to przepis
    ``WorkerApp``, z którego każdy proces buduje własną aplikację; ``limits`` – limity połączeń (inne niż domyślne)."""
    import uvicorn

    from .transport import MAX_HEADER_BYTES, TRANSPORT_LIMITS, GuardedH11Protocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=GuardedH11Protocol.limited(limits or TRANSPORT_LIMITS),  # httptools would ignore the header size limit
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=trusted_proxy is not None,
        forwarded_allow_ips=trusted_proxy,
        server_header=False,
        log_level="warning",
        workers=processes,
        factory=processes > 1,
        # the supervisor kills a worker that does not answer its ping in time; a cold worker building the
        # snapshot of a large collection may hold its interpreter for longer than uvicorn's default 5 s
        timeout_worker_healthcheck=WORKER_PING_SECONDS,
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
