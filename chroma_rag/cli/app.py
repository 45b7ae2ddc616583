"""Wiersz poleceń ``chroma-rag`` – cienka warstwa nad ``chroma_rag.api`` (bez importu chromadb).

Tu aplikacja, kolejność poleceń i punkt wejścia; same polecenia są w modułach ``cli_*``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import UserError
from .ask import ask_command, conversation_command
from .completion import add_completion_command
from .help import PolishTyper, add_help_command, show_version
from .indexing import check_command, index_command, list_command, preview_command, remove_command
from .options import JsonOption
from .output import discard_stdout, err, out, print_json
from .search import evaluate_command, search_command, show_unit_command
from .serve import mcp_command, serve_command
from .users import users_app

app = PolishTyper(
    help="Pytania do własnych dokumentów (ustawy, rozporządzenia, regulaminy) z cytowaniem pliku i artykułu.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", help="Pokaż wersję i zakończ.", callback=show_version, is_eager=True)
    ] = False,
) -> None:
    """Pytania do własnych dokumentów (ustawy, rozporządzenia, regulaminy) z cytowaniem pliku i artykułu."""


# registered here rather than by decorators in their modules: this order is the order `--help` lists them in
app.command("indeksuj")(index_command)
app.command("sprawdz")(check_command)
app.command("szukaj")(search_command)
app.command("pokaz")(show_unit_command)
app.command("pytaj")(ask_command)
app.command("rozmowa")(conversation_command)
app.command("ocena")(evaluate_command)
app.command("lista")(list_command)
app.command("podglad")(preview_command)
app.command("usun")(remove_command)


@app.command("konfiguracja")
def config_command(as_json: JsonOption = False) -> None:
    """Pokazuje wszystkie ustawienia: wartość i skąd pochodzi (zmienna środowiska, plik, domyślna), opcję, która
    je zastępuje, i co ustawiają; klucze zamaskowane."""
    from .. import config

    settings = config.resolve().values()
    if as_json:
        print_json([{"klucz": s.key, "wartosc": s.shown, "zrodlo": s.source, "opcja": config.KEYS[s.key].option,
                     "opis": config.KEYS[s.key].meaning} for s in settings])
        return
    files = config.config_files()
    out.print("Pliki ustawień: " + (", ".join(str(path) for path in files) if files else
              f"brak (szukane: .env i {config.CONFIG_NAME} tu i wyżej, {config.user_config_file()})"),
              markup=False, highlight=False)
    # one setting in two lines rather than a five-column table: readable in any terminal width
    out.print("Ustawienia (opcje w wierszu poleceń mają pierwszeństwo przed nimi):", markup=False, highlight=False)
    for setting in settings:
        key = config.KEYS[setting.key]
        out.print(f"{setting.key} = {setting.shown}  ({setting.source})", markup=False, highlight=False, soft_wrap=True)
        out.print(f"    {key.meaning}" + (f"; opcja {key.option}" if key.option else ""), style="dim",
                  markup=False, highlight=False)


add_completion_command(app)
add_help_command(app)

app.command("serwuj")(serve_command)
app.command("mcp")(mcp_command)
app.add_typer(users_app, name="uzytkownicy")

EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> None:
    """Punkt wejścia: błędy użytkownika jako jedno zdanie po polsku, bez tracebacku."""
    from .. import config

    try:
        with config.applied():
            code = app(args=argv, prog_name="chroma-rag", standalone_mode=False)
        if code == EXIT_INTERRUPTED:  # typer turns Ctrl-C inside a command into this return value
            raise KeyboardInterrupt
        if isinstance(code, int) and code:  # typer.Exit(n) inside a command comes back as a return value
            sys.exit(code)
    except UserError as exc:
        err.print(f"[red]Błąd:[/] {exc}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print(
            "[yellow]Przerwano (Ctrl-C).[/] Baza jest spójna; przerwane indeksowanie dokończy ponowne "
            "„chroma-rag indeksuj” (pliki zapisane do tej chwili zostają)."
        )
        sys.exit(EXIT_INTERRUPTED)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("[yellow]Przerwano.[/]")
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # `chroma-rag szukaj … | head -1`: the reader has what it wanted
        discard_stdout()
        sys.exit(0)
    except OSError as exc:  # at the edge: a folder or file the OS refused, as one Polish sentence with the path
        from ..errors import os_error_message

        err.print(f"[red]Błąd:[/] {escape(os_error_message(exc))}", highlight=False)
        sys.exit(1)
    except Exception as exc:
        from .usage import is_usage_error, usage_message

        if is_usage_error(exc):
            err.print(f"[red]Błąd:[/] {escape(usage_message(exc))}", highlight=False)
            sys.exit(2)
        err.print(f"[red]Nieoczekiwany błąd:[/] {type(exc).__name__}: {exc} – zgłoś go razem z poleceniem.")
        sys.exit(1)
