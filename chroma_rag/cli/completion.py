"""Uzupełnianie w powłoce (bash, zsh, fish): skrypt, instalacja i podpowiedzi nazw zaindeksowanych plików.

Samo uzupełnianie robi typer: powłoka woła ``chroma-rag`` ze zmienną ``_CHROMA_RAG_COMPLETE``; skrypt dla
powłoki i jego instalację też bierzemy z typer, komunikaty są nasze."""

from __future__ import annotations

from typing import Annotated

import typer

PROG = "chroma-rag"
COMPLETE_VAR = "_CHROMA_RAG_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


def complete_indexed_files(ctx: typer.Context, incomplete: str) -> list[str]:
    """Nazwy plików z indeksu (``--baza``/``--serwer`` już wpisane w wierszu albo z ustawień)."""
    from ..api import Index

    try:
        infos = Index(ctx.params.get("db"), server=ctx.params.get("server")).files()
    except Exception:  # no DB yet, server down: no suggestions rather than an error inside the shell
        return []
    return sorted({info.name for info in infos if info.name.startswith(incomplete)})


def add_completion_command(app: typer.Typer) -> None:
    @app.command("uzupelnianie")
    def completion_command(
        shell: Annotated[
            str | None,
            typer.Argument(metavar="POWŁOKA", help="bash, zsh albo fish (domyślnie powłoka, z której uruchomiono).",
                           show_default=False),
        ] = None,
        install: Annotated[
            bool, typer.Option("--instaluj", help="Dopisz skrypt do plików startowych powłoki (domyślnie tylko "
                               "go wypisz).")
        ] = False,
    ) -> None:
        """Uzupełnianie poleceń, opcji i nazw plików (--plik, usun) w bash, zsh i fish.

        Przykład: chroma-rag uzupelnianie bash --instaluj, albo eval "$(chroma-rag uzupelnianie bash)".
        """
        from typer._completion_shared import get_completion_script
        from typer._completion_shared import install as install_script

        from ..errors import UsageError

        shell = shell or _detected_shell()
        if shell not in SHELLS:
            raise UsageError(f"Nieobsługiwana powłoka „{shell}”; obsługiwane: {', '.join(SHELLS)}.")
        if not install:
            typer.echo(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell))
            return
        _, path = install_script(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
        typer.echo(f"Uzupełnianie dla {shell} zapisane w {path}; zadziała w nowym oknie terminala.")


def _detected_shell() -> str:
    import shellingham

    try:
        return shellingham.detect_shell()[0]
    except shellingham.ShellDetectionFailure:
        return "nieznana (podaj ją: bash, zsh albo fish)"
