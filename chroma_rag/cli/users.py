"""Polecenia ``chroma-rag uzytkownicy``: osobiste tokeny dostępu do ``serwuj`` (dodaj, usun, lista).

Lista leży w folderze bazy (``uzytkownicy.json``, same skróty tokenów); działający serwer widzi zmiany od razu."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from .help import PolishTyper
from .options import DbOption, JsonOption, ServerOption, open_index
from .output import err, out, print_json

if TYPE_CHECKING:
    from ..serving.accounts import Accounts

users_app = PolishTyper(
    help="Osobiste tokeny dostępu do serwuj: każdy użytkownik loguje się własnym tokenem, a usunięty traci dostęp "
         "od razu, bez restartu serwera.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

NameArgument = Annotated[str, typer.Argument(metavar="NAZWA", help="Nazwa użytkownika, np. anna.nowak.",
                                             show_default=False)]
AccountsOption = Annotated[
    Path | None,
    typer.Option("--uzytkownicy", metavar="PLIK", help="Plik listy użytkowników, jak serwuj --uzytkownicy "
                 "(domyślnie uzytkownicy.json w folderze bazy).", show_default=False),
]


def _accounts(accounts_file: Path | None, db: Path | None, server: str | None) -> Accounts:
    from ..serving.accounts import ACCOUNTS_FILE, Accounts

    if accounts_file is not None:
        return Accounts(accounts_file)
    index = open_index(db, server=server)
    index.store.require_existing()
    return Accounts(index.store.work_dir / ACCOUNTS_FILE)


@users_app.command("dodaj")
def add_user(
    name: NameArgument,
    only: Annotated[
        list[str] | None,
        typer.Option("--tylko", metavar="BAZA", help="Tylko ta baza serwera z kilkoma bazami (serwuj --bazy "
                     "NAZWA=FOLDER); można powtarzać (domyślnie wszystkie).", show_default=False),
    ] = None,
    accounts_file: AccountsOption = None,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Dodaje użytkownika i wypisuje jego token – jedyny raz: zapisany jest tylko skrót."""
    token = _accounts(accounts_file, db, server).add(name, only or None)
    err.print(f"Dodano użytkownika „{name}”. Przekaż mu token (nie da się go później odczytać); "
              "loguje się nim na stronie albo wysyła w nagłówku Authorization: Bearer.", markup=False,
              highlight=False)
    out.print(token, markup=False, highlight=False, soft_wrap=True)


@users_app.command("usun")
def remove_user(name: NameArgument, accounts_file: AccountsOption = None, db: DbOption = None,
                server: ServerOption = None) -> None:
    """Usuwa użytkownika: jego token i zalogowane strony przestają działać przy następnym zapytaniu."""
    _accounts(accounts_file, db, server).remove(name)
    err.print(f"Usunięto użytkownika „{name}”.", markup=False, highlight=False)


@users_app.command("lista")
def list_users(as_json: JsonOption = False, accounts_file: AccountsOption = None, db: DbOption = None,
               server: ServerOption = None) -> None:
    """Użytkownicy z osobistym tokenem (bez tokenów) i bazy, które mogą czytać."""
    accounts = _accounts(accounts_file, db, server).accounts()
    if as_json:
        print_json([{"nazwa": a.name, "dodano": a.created, "bazy": list(a.bases) if a.bases is not None else None}
                    for a in accounts])
        return
    if not accounts:
        err.print("Nie ma użytkowników – dodaj pierwszego: chroma-rag uzytkownicy dodaj NAZWA.", markup=False,
                  highlight=False)
        return
    table = Table(title="Użytkownicy serwuj")
    table.add_column("Nazwa", overflow="fold")
    table.add_column("Dodano")
    table.add_column("Bazy", overflow="fold")
    for account in accounts:
        table.add_row(account.name, account.created, ", ".join(account.bases) if account.bases is not None else
                      "wszystkie")
    out.print(table)
