"""Ekrany pomocy po polsku: nagłówki, wiersz „Użycie”, nazwy wartości opcji, `-h`, `help POLECENIE`.

Typer 0.29 rysuje pomoc w ``typer.rich_utils`` i bierze napisy z własnej kopii click (``typer._click``) przez
``gettext`` bez tłumaczeń. Napisy paneli to stałe modułu czytane przy każdym rysowaniu – podmieniamy je raz.
Resztę (wiersz użycia, opis opcji pomocy, typy w rodzaju ``<list[str]>`` i ``<float range> [x>=0]``) dają
metody komend i parametrów, więc ``PolishTyper`` tworzy komendy i parametry z nadpisanymi metodami. Pomoc
rysowana jest do ``sys.stdout`` podmienionego na ``TrimmedLines``, bo rich dopełnia jej wiersze spacjami do
szerokości."""

from __future__ import annotations

import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import typer
from typer._click import Context, HelpFormatter  # pinned typer; its public API does not export these
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from .output import TrimmedLines

# Typer 0.29 has no public API for these texts: ``rich_help_panel`` names a panel per parameter, but not the
# default panels, "[default: …]", "[required]" or "Aborted.". Every write into Typer's internals is in
# ``_localize_rich_help`` and ``_polish_params``, and
# tests/test_cli_conventions.py checks that each patched name still exists in the pinned Typer.
RICH_TEXTS = {
    "DEFAULT_STRING": "[domyślnie: {}]",
    "REQUIRED_LONG_STRING": "[wymagany]",
    "ENVVAR_STRING": "[zmienna: {}]",
    "DEPRECATED_STRING": "(przestarzałe) ",
    "ARGUMENTS_PANEL_TITLE": "Argumenty",
    "OPTIONS_PANEL_TITLE": "Opcje",
    "COMMANDS_PANEL_TITLE": "Polecenia",
    "ERRORS_PANEL_TITLE": "Błąd",
    "ABORTED_TEXT": "Przerwano.",
}
_localized = False


def _localize_rich_help() -> None:
    """Napisy pomocy rich po polsku. Dopiero przed rysowaniem pomocy: ``typer.rich_utils`` ciągnie za sobą
    rich.markdown i rich.traceback (~0,1 s), a zwykłe polecenie pomocy nie rysuje."""
    global _localized
    if _localized:
        return
    from typer import rich_utils

    for name, text in RICH_TEXTS.items():
        setattr(rich_utils, name, text)
    _localized = True


USAGE_PREFIX = "Użycie: "
OPTIONS_METAVAR = "[OPCJE]"
SUBCOMMAND_METAVAR = "POLECENIE [ARGUMENTY]..."
HELP_OPTION_HELP = "Pokaż tę pomoc i zakończ."
HELP_OPTION_NAMES = ["-h", "--help"]
# What the value of an option is, by its Python type, where the option does not name it itself (metavar).
_VALUE_NAMES = {int: "LICZBA", float: "LICZBA", str: "TEKST", Path: "ŚCIEŻKA"}


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: Context) -> str | None:
        return None  # the argument's name (PYTANIE, PLIK) already says what it is

    def _usage_display_name(self) -> str:
        name = self.display_name_raw + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"

    def _get_number_range_help_str(self) -> str | None:
        return None


class _Option(TyperOption):
    def display_type_rich(self, ctx: Context) -> str | None:
        if self.is_flag:
            return None
        if self.metavar is not None:
            return self.metavar
        annotation = self.type_descriptor.annotation
        element = getattr(annotation, "__args__", (annotation,))[0]  # list[str] → str
        return _VALUE_NAMES.get(element, "WARTOŚĆ")

    def _get_number_range_help_str(self) -> str | None:
        return None  # the help text states the allowed values in words


def _polish_params(command: Any) -> None:
    """Parametry komendy z polskimi nazwami wartości: Typer tworzy je sam (``get_click_param``) i nie daje
    wybrać ich klasy, więc zmieniamy klasę gotowego obiektu na podklasę z nadpisanymi metodami."""
    for param in command.params:
        if type(param) is TyperArgument:
            param.__class__ = _Argument
        elif type(param) is TyperOption:
            param.__class__ = _Option


class _PolishHelp:
    """Wiersz użycia i opcja pomocy po polsku; wspólne dla komendy i grupy."""

    def format_usage(self, ctx: Context, formatter: HelpFormatter) -> None:
        pieces = self.collect_usage_pieces(ctx)  # type: ignore[attr-defined]
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=USAGE_PREFIX)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        _localize_rich_help()
        # Typer's help console has no file of its own, so rich writes to the sys.stdout of the moment: help piped
        # to grep or a file gets no padding at line ends.
        trimmed = TrimmedLines(sys.stdout)
        with redirect_stdout(trimmed):
            super().format_help(ctx, formatter)  # type: ignore[misc]
            trimmed.flush()

    def get_help_option(self, ctx: Context) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.help = HELP_OPTION_HELP
            option.__class__ = _Option
        return option


class PolishCommand(_PolishHelp, TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _polish_params(self)


class PolishGroup(_PolishHelp, TyperGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _polish_params(self)

    def _main_shell_completion(self, ctx_args: Any, prog_name: str, complete_var: str | None = None) -> None:
        from typer._completion_classes import completion_init

        completion_init()  # typer registers its bash/zsh/fish classes only with add_completion=True
        super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            print_help(self, ctx)  # bare `chroma-rag` asks for help: not a usage error
            ctx.exit(0)
        return super().parse_args(ctx, args)


class PolishTyper(typer.Typer):
    """``typer.Typer``, którego grupa i każda komenda (także dodane później) mają pomoc po polsku."""

    def __init__(self, **kwargs: Any) -> None:
        settings = {"help_option_names": HELP_OPTION_NAMES, **kwargs.pop("context_settings", {})}
        super().__init__(
            cls=PolishGroup, context_settings=settings, options_metavar=OPTIONS_METAVAR,
            subcommand_metavar=SUBCOMMAND_METAVAR, **kwargs,
        )

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(name, cls=cls or PolishCommand, **kwargs)


def print_help(command: Any, ctx: Context) -> None:
    """Pomoc komendy na stdout, dokładnie jak po ``--help`` (rich rysuje ją sam, ``get_help`` zwraca resztę)."""
    typer.echo(command.get_help(ctx))


def add_help_command(app: typer.Typer) -> None:
    """``chroma-rag help [POLECENIE]`` – to samo co ``chroma-rag POLECENIE --help`` (jak w git i gh)."""

    @app.command("help")
    def help_command(
        ctx: typer.Context,
        command: list[str] | None = typer.Argument(  # noqa: B008 – typer's declaration style
            None, metavar="POLECENIE", help="Polecenie, którego pomoc pokazać (bez niego: lista poleceń).",
            show_default=False,
        ),
    ) -> None:
        """Pokazuje pomoc polecenia, np. chroma-rag help szukaj."""
        group_ctx = ctx.parent
        assert group_ctx is not None
        group = group_ctx.command
        if not command:
            print_help(group, group_ctx)
            return
        name, sub, _ = group.resolve_command(group_ctx, command[:1])  # type: ignore[attr-defined]
        with sub.make_context(name, [], parent=group_ctx, resilient_parsing=True) as sub_ctx:
            print_help(sub, sub_ctx)


def show_version(value: bool) -> None:
    """``--version``: wersja i koniec (opcja „chciwa”, więc działa przed sprawdzeniem reszty wywołania)."""
    if value:
        from .. import __version__

        typer.echo(f"chroma-rag {__version__}")
        raise typer.Exit()
