"""Błędy wywołania (brak argumentu, nieznana opcja, zła wartość) po polsku, jednym zdaniem.

Typer 0.29 ma własną kopię click (``typer._click``) i jej komunikaty są po angielsku; tłumaczymy je po typie
wyjątku i jego polach, a nie po tekście, tam gdzie pola to umożliwiają."""

from __future__ import annotations

import difflib
import re
from typing import Any

from typer._click import exceptions as click_errors  # pinned typer; public API does not export these

HELP_HINT = "Składnię pokazuje: chroma-rag{command} --help."
_NO_COMMAND = re.compile(r"No such command '([^']*)'")
_EXTRA_ARGS = re.compile(r"unexpected extra arguments?(?:\(s\))? \((.*)\)")
_BOUND = re.compile(r"Input should be (greater|less) than( or equal to)? (\S+)")
_BOUND_WORDS = {("greater", True): "co najmniej", ("greater", False): "większa niż",
                ("less", True): "co najwyżej", ("less", False): "mniejsza niż"}
_EXPECTED = {"integer": "liczby całkowitej", "number": "liczby", "boolean": "tak/nie (true/false)"}


def is_usage_error(exc: BaseException) -> bool:
    return isinstance(exc, click_errors.UsageError)


def usage_message(exc: Any) -> str:
    """Jedno zdanie po polsku z podpowiedzią, gdzie sprawdzić składnię."""
    command = _command_name(exc)
    hint = HELP_HINT.format(command=f" {command}" if command else "")
    if isinstance(exc, click_errors.MissingParameter) and exc.param is not None:
        return f"Brakuje argumentu {_param_label(exc.param)}. {hint}"
    if isinstance(exc, click_errors.BadParameter) and exc.param is not None:
        expected = next((pl for en, pl in _EXPECTED.items() if en in exc.message), None)
        bound = _BOUND.search(exc.message)
        if bound:
            what = f": musi być {_BOUND_WORDS[bound.group(1), bool(bound.group(2))]} {bound.group(3)}"
        else:
            what = f": oczekiwano {expected}" if expected else f" ({exc.message})"
        return f"Zła wartość {_param_label(exc.param)}{what}. {hint}"
    if isinstance(exc, click_errors.NoSuchOption):
        close = f" Może chodziło o: {', '.join(exc.possibilities)}?" if exc.possibilities else ""
        return f"Nieznana opcja {exc.option_name}.{close} {hint}"
    if isinstance(exc, click_errors.BadOptionUsage) and "requires an argument" in exc.message:
        return f"Opcja {exc.option_name} wymaga wartości, np. {exc.option_name} WARTOŚĆ. {hint}"
    if match := _NO_COMMAND.search(exc.message):
        return f"Nie ma polecenia „{match.group(1)}”.{_command_suggestion(exc, match.group(1))} {hint}"
    if match := _EXTRA_ARGS.search(exc.message):
        return (
            f"Za dużo argumentów: {match.group(1)}. Pytanie z kilkoma słowami ujmij w cudzysłów, "
            f'np. chroma-rag szukaj "urlop wypoczynkowy".'
        )
    return f"Niepoprawne wywołanie ({exc.message}). {hint}"


def _command_name(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    return ctx.info_name if ctx is not None and ctx.parent is not None else ""


def _param_label(param: Any) -> str:
    if param.param_type_name == "argument":
        return (param.metavar or param.name).upper()
    return "opcji " + "/".join(param.opts)


def _command_suggestion(exc: Any, name: str) -> str:
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return ""
    close = difflib.get_close_matches(name, ctx.command.list_commands(ctx), n=2, cutoff=0.5)
    return f" Może chodziło o: {', '.join(close)}?" if close else ""
