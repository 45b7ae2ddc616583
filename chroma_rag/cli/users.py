"""Polecenia ``chroma-rag uzytkownicy``: osobiste tokeny dostępu do ``serwuj`` (dodaj, usun, lista).

Lista leży w folderze bazy (``uzytkownicy.json``, same skróty tokenów); działający serwer widzi zmiany od razu."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .help import PolishTyper
from .options import DbOption, JsonOption, ServerOption, open_index
from .output import err, out, print_json

users_app = PolishTyper(
    help="Osobiste tokeny dostępu do serwuj: każdy użytkownik loguje się własnym tokenem, a usunięty traci dostęp "
         "od razu, bez restartu serwera.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

NameArgument = Annotated[str, typer.Argument(metavar="NAZWA", help="Nazwa użytkownika, np. anna.nowak.",
                                             show_default=False)]


def _accounts(db, server):
    from ..serving.accounts import ACCOUNTS_FILE, Accounts

    index = open_index(db, server=server)
    index.store.require_existing()
    return Accounts(index.store.work_dir / ACCOUNTS_FILE)


@users_app.command("dodaj")
def add_user(name: NameArgument, db: DbOption = None, server: ServerOption = None) -> None:
    """Dodaje użytkownika i wypisuje jego token – jedyny raz: zapisany jest tylko skrót."""
    token = _accounts(db, server).add(name)
    err.print(f"Dodano użytkownika „{name}”. Przekaż mu token (nie da się go później odczytać); "
              "loguje się nim na stronie albo wysyła w nagłówku Authorization: Bearer.", markup=False,
              highlight=False)
    out.print(token, markup=False, highlight=False, soft_wrap=True)


@users_app.command("usun")
def remove_user(name: NameArgument, db: DbOption = None, server: ServerOption = None) -> None:
    """Usuwa użytkownika: jego token i zalogowane strony przestają działać przy następnym zapytaniu."""
    _accounts(db, server).remove(name)
    err.print(f"Usunięto użytkownika „{name}”.", markup=False, highlight=False)


@users_app.command("lista")
def list_users(as_json: JsonOption = False, db: DbOption = None, server: ServerOption = None) -> None:
    """Użytkownicy z osobistym tokenem (bez tokenów)."""
    accounts = _accounts(db, server).accounts()
    if as_json:
        print_json([{"nazwa": a.name, "dodano": a.created} for a in accounts])
        return
    if not accounts:
        err.print("Nie ma użytkowników – dodaj pierwszego: chroma-rag uzytkownicy dodaj NAZWA.", markup=False,
                  highlight=False)
        return
    table = Table(title="Użytkownicy serwuj")
    table.add_column("Nazwa", overflow="fold")
    table.add_column("Dodano")
    for account in accounts:
        table.add_row(account.name, account.created)
    out.print(table)
