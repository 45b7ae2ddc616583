"""Wiersz poleceń ``chroma-rag`` – cienka warstwa nad ``chroma_rag.api`` (bez importu chromadb)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from .errors import UserError

app = typer.Typer(
    help="Pytania do własnych dokumentów (ustawy, rozporządzenia, regulaminy) z cytowaniem pliku i artykułu.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True, soft_wrap=True)

DbOption = Annotated[
    Path | None,
    typer.Option("--baza", help="Folder bazy Chromy (domyślnie $CHROMA_RAG_BAZA albo ./chroma_db).",
                 show_default=False),
]
ServerOption = Annotated[
    str | None,
    typer.Option("--serwer", help="Adres serwera Chromy (chroma run), np. http://127.0.0.1:8000, zamiast folderu "
                 "(domyślnie $CHROMA_RAG_SERWER; token: $CHROMA_RAG_SERWER_TOKEN).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Wynik jako JSON.")]
FilesOption = Annotated[
    list[str] | None, typer.Option("--plik", help="Tylko ten plik (można powtarzać).", show_default=False)
]
TypesOption = Annotated[
    list[str] | None,
    typer.Option("--typ", help="Rodzaj: ustawa, kodeks, rozporzadzenie, konstytucja, nowelizacja, dokument.",
                 show_default=False),
]
YearOption = Annotated[int | None, typer.Option("--rok", help="Rok Dziennika Ustaw.", show_default=False)]
YearFromOption = Annotated[int | None, typer.Option("--od-roku", help="Rok od (włącznie).", show_default=False)]
YearToOption = Annotated[int | None, typer.Option("--do-roku", help="Rok do (włącznie).", show_default=False)]
ArticlesOption = Annotated[
    list[str] | None,
    typer.Option("--art", help="Artykuł lub paragraf, np. 23, 178a, 385^1, '§ 6' (można powtarzać).",
                 show_default=False),
]
CountOption = Annotated[int, typer.Option("-k", "--ile", help="Ile fragmentów pokazać.")]


def _index(db: Path | None, server: str | None = None):
    from .api import Index

    return Index(db, server=server)


def _filters(
    files: list[str] | None,
    types: list[str] | None,
    year: int | None,
    year_from: int | None,
    year_to: int | None,
    articles: list[str] | None,
):
    from .filters import SearchFilters

    return SearchFilters(
        files=files or [],
        types=types or [],
        year=year,
        year_from=year_from,
        year_to=year_to,
        articles=articles or [],
    )


class _BarProgress:
    """Pasek postępu rich w liczbie fragmentów bieżącego pliku."""

    def __init__(self, progress: RichProgress) -> None:
        self._progress = progress
        self._task = progress.add_task("", total=None)

    def start_file(self, path: Path, chunks: int) -> None:
        self._progress.update(self._task, description=path.name, completed=0, total=chunks)

    def advance(self, chunks: int) -> None:
        self._progress.advance(self._task, chunks)


@app.command("indeksuj")
def index_command(
    paths: Annotated[list[Path], typer.Argument(help="Pliki lub foldery (PDF, TXT, MD).", show_default=False)],
    doc_type: Annotated[
        str | None, typer.Option("--typ", help="Wymuś rodzaj dokumentu dla wszystkich plików.", show_default=False)
    ] = None,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Indeksuje dokumenty: tnie na artykuły/paragrafy, liczy wektory i zapisuje w bazie."""
    started = time.perf_counter()
    index = _index(db, server)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with RichProgress(*columns, console=err, transient=True) as progress:
        report = index.add(paths, doc_type=doc_type, progress=_BarProgress(progress))
    for path, reason in report.skipped.items():
        err.print(f"[yellow]Pominięto[/] {path}: {reason}")
    table = Table(title="Zaindeksowano")
    for column in ("Plik", "Fragmenty"):
        table.add_column(column)
    for path, count in report.indexed.items():
        table.add_row(Path(path).name, str(count))
    out.print(table)
    out.print(
        f"Plików: {len(report.indexed)}, fragmentów: {report.chunks}, pominiętych: {len(report.skipped)}, "
        f"czas: {time.perf_counter() - started:.1f} s"
    )
    if not report.indexed:
        raise UserError("Nie udało się zaindeksować żadnego pliku – powody są wypisane wyżej.")


@app.command("szukaj")
def search_command(
    question: Annotated[str, typer.Argument(help="Pytanie lub szukana fraza.", show_default=False)],
    count: CountOption = 5,
    files: FilesOption = None,
    types: TypesOption = None,
    year: YearOption = None,
    year_from: YearFromOption = None,
    year_to: YearToOption = None,
    articles: ArticlesOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Pokazuje fragmenty najbardziej pasujące do pytania (filtry działają przed podobieństwem)."""
    filters = _filters(files, types, year, year_from, year_to, articles)
    hits = _index(db, server).search(question, k=count, filters=filters)
    if as_json:
        _print_json([hit.to_json() for hit in hits])
        return
    if not hits:
        out.print("Nie znaleziono pasujących fragmentów.")
        return
    table = Table(show_lines=True)
    for column in ("#", "Plik", "Art.", "Str.", "Podobieństwo", "Fragment"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        table.add_row(
            str(rank), hit.file, hit.art or "–", str(hit.page), f"{hit.similarity:.3f}",
            snippet[:300] + ("…" if len(snippet) > 300 else ""),
        )
    out.print(table)


@app.command("lista")
def list_command(as_json: JsonOption = False, db: DbOption = None, server: ServerOption = None) -> None:
    """Wypisuje zaindeksowane pliki z liczbą fragmentów, rodzajem, rokiem i modelem."""
    infos = _index(db, server).files()
    if as_json:
        _print_json([info.to_json() for info in infos])
        return
    table = Table(title="Zaindeksowane pliki")
    for column in ("Plik", "Typ", "Rok", "Fragmenty", "Modele"):
        table.add_column(column)
    for info in infos:
        table.add_row(info.name, info.type, str(info.year), str(info.chunks), ", ".join(info.models))
    out.print(table)


@app.command("usun")
def remove_command(
    name: Annotated[str, typer.Argument(help="Nazwa pliku, jak w `chroma-rag lista`.", show_default=False)],
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Usuwa z indeksu wszystkie fragmenty jednego pliku."""
    removed = _index(db, server).remove(name)
    out.print(f"Usunięto {removed} fragmentów pliku {name}.")


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    """Punkt wejścia: błędy użytkownika jako jedno zdanie po polsku, bez tracebacku."""
    try:
        app(args=argv, standalone_mode=False)
    except UserError as exc:
        err.print(f"[red]Błąd:[/] {exc}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("[yellow]Przerwano (Ctrl-C).[/]")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            err.print("[yellow]Przerwano.[/]")
            sys.exit(130)
        err.print(f"[red]Nieoczekiwany błąd:[/] {type(exc).__name__}: {exc} – zgłoś go razem z poleceniem.")
        sys.exit(1)
