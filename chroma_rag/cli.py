"""Wiersz poleceń ``chroma-rag`` – cienka warstwa nad ``chroma_rag.api`` (bez importu chromadb)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from .errors import UserError

if TYPE_CHECKING:
    from .answering import Answer
    from .models import Hit

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
ModelOption = Annotated[
    str | None,
    typer.Option("--model", help="Model embeddingów: lokalny, ollama:NAZWA, openai:NAZWA (domyślnie "
                 "$CHROMA_RAG_MODEL albo model, którym zbudowano bazę; patrz docs/MODELE.md).", show_default=False),
]
DimensionsOption = Annotated[
    int | None,
    typer.Option("--wymiary", help="Liczba wymiarów dla modeli, które ją przyjmują (np. text-embedding-3).",
                 show_default=False),
]

ModeOption = Annotated[
    str,
    typer.Option("--tryb", help="Wyszukiwanie: hybryda (wektory + słowa), wektor albo slowa."),
]
PlanOption = Annotated[
    bool | None,
    typer.Option("--przepisz", help="Najpierw plan zapytania od modelu czatu: zapytania językiem ustaw, akt "
                 "i jednostka (domyślnie $CHROMA_RAG_PRZEPISZ).", show_default=False),
]
FreshPlanOption = Annotated[
    bool, typer.Option("--nowy-plan", help="Nie używaj planów zapamiętanych na dysku – zapytaj model od nowa.")
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--prog", help="Próg pewności (podobieństwo najlepszego wyniku); poniżej – „nic trafnego”. "
                 "Domyślnie skalibrowany poleceniem ocena; 0 wyłącza.", show_default=False),
]


def _index(
    db: Path | None, model: str | None = None, dimensions: int | None = None, server: str | None = None
):
    from .api import Index

    return Index(db, model=model, dimensions=dimensions, server=server)


def _planning(requested: bool | None):
    """Czy planować (opcja, a bez niej ``CHROMA_RAG_PRZEPISZ`` przy skonfigurowanym modelu czatu) i ustawienia
    modelu czatu."""
    from .llm import LlmSettings

    settings = LlmSettings.from_env()
    if requested is None:
        requested = bool(settings.planning) and settings.configured
    return requested, settings


def _print_plan(plan) -> None:
    """Plan w jednym wierszu (stderr, żeby wynik na stdout dało się dalej przetwarzać)."""
    if plan is None:
        return
    if plan.error:
        err.print(f"Uwaga: wyszukiwanie bez planu – {plan.error}", style="yellow", markup=False, highlight=False)
        return
    queries = "; ".join(f"„{q}”" for q in plan.queries) or "–"
    documents = ", ".join(plan.documents) or "żaden z indeksu"
    units = f"; jednostki: {', '.join(plan.units)}" if plan.units else ""
    cached = " (z pamięci)" if plan.cached else ""
    err.print(f"Plan{cached}: {queries}; dokumenty: {documents}{units}", style="dim", markup=False, highlight=False)


def _threshold(value: float | None) -> float | None:
    from .search import DEFAULT_THRESHOLD

    if value is None:
        return DEFAULT_THRESHOLD
    return value or None


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


WaitOption = Annotated[
    float, typer.Option("--czekaj", help="Ile sekund czekać, gdy bazę blokuje inny proces.", min=0)
]

# Exit codes of `indeksuj`: all fine / some files skipped / nothing could be indexed.
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130


@app.command("indeksuj")
def index_command(
    paths: Annotated[
        list[Path], typer.Argument(metavar="SCIEZKI", help="Pliki lub foldery (PDF, TXT, MD).", show_default=False)
    ],
    doc_type: Annotated[
        str | None, typer.Option("--typ", help="Wymuś rodzaj dokumentu dla wszystkich plików.", show_default=False)
    ] = None,
    prune: Annotated[
        bool, typer.Option("--usun-brakujace", help="Usuń z indeksu pliki, których nie ma już w podanych folderach.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--wymus", help="Z --usun-brakujace: pozwól usunąć wszystko z pustego folderu.")
    ] = False,
    wait: WaitOption = 120.0,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Synchronizuje indeks z plikami: nowe i zmienione indeksuje, niezmienione pomija (po hashu).

    Kod wyjścia: 0 – wszystko w porządku, 3 – część plików pominięto, 1 – nic nie dało się zaindeksować.
    """
    started = time.perf_counter()
    index = _index(db, model, dimensions, server)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with RichProgress(*columns, console=err, transient=True) as progress:
        report = index.add(
            paths, doc_type=doc_type, progress=_BarProgress(progress), prune=prune, force=force, wait=wait,
            on_wait=lambda message: err.print(f"[yellow]{message}[/]"),
        )
    for path, reason in report.skipped.items():
        err.print(f"[yellow]Pominięto[/] {path}: {reason}")
    for note in report.notes:
        err.print(f"[yellow]Uwaga:[/] {note}")
    if report.indexed:
        table = Table(title="Zaindeksowano")
        for column in ("Plik", "Fragmenty"):
            table.add_column(column)
        for path, count in report.indexed.items():
            table.add_row(Path(path).name, str(count))
        out.print(table)
    for old, new in report.moved.items():
        out.print(f"Przeniesiony: {old} → {new}")
    for path in report.removed:
        out.print(f"Usunięto z indeksu (brak pliku): {path}")
    if report.orphans_removed:
        out.print(f"Usunięto {report.orphans_removed} fragmentów-sierot po przerwanym wcześniej zapisie.")
    out.print(
        f"Zaindeksowano: {len(report.indexed)} (fragmentów: {report.chunks}, nowych wektorów: {report.embedded}, "
        f"użytych ponownie: {report.reused}), bez zmian: {len(report.unchanged)}, "
        f"pominięto: {len(report.skipped)}, usunięto: {len(report.removed)}, "
        f"czas: {time.perf_counter() - started:.1f} s"
    )
    if report.skipped and not (report.indexed or report.unchanged):
        raise UserError("Nie udało się zaindeksować żadnego pliku – powody są wypisane wyżej.")
    if report.skipped:
        raise typer.Exit(EXIT_PARTIAL)


@app.command("sprawdz")
def check_command(
    repair: Annotated[bool, typer.Option("--napraw", help="Napraw, co się da (sieroty, niepełne pliki).")] = False,
    wait: WaitOption = 120.0,
    as_json: JsonOption = False,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Sprawdza spójność bazy: rejestr plików a fragmenty, każdy fragment odnajdywalny po własnym wektorze."""
    report = _index(db, server=server).check(repair=repair, wait=wait)
    if as_json:
        _print_json({
            "ok": report.ok, "pliki": report.files, "fragmenty": report.chunks, "sieroty": len(report.orphans),
            "niepelne": report.incomplete, "nieodnajdywalne": report.unfindable,
            "brak_na_dysku": report.missing_on_disk, "stara_wersja_ciecia": report.old_chunker,
            "naprawiono": report.repaired,
        })
    else:
        for action in report.repaired:
            out.print(f"Naprawa: {action}")
        for path in report.missing_on_disk:
            err.print(f"[yellow]Uwaga:[/] pliku {path} nie ma już na dysku (usuń: indeksuj FOLDER --usun-brakujace).")
        if report.old_chunker:
            err.print(f"[yellow]Uwaga:[/] {len(report.old_chunker)} plików pocięto starą wersją – zaindeksuj ponownie.")
        out.print(
            f"Plików: {report.files}, fragmentów: {report.chunks}, sierot: {len(report.orphans)}, "
            f"niepełnych plików: {len(report.incomplete)}, nieodnajdywalnych fragmentów: {len(report.unfindable)}."
        )
    if not report.ok:
        raise UserError("Baza jest niespójna – uruchom: chroma-rag sprawdz --napraw, potem indeksuj ponownie.")
    if not as_json:
        out.print("[green]Baza jest spójna.[/]")


@app.command("szukaj")
def search_command(
    question: Annotated[str, typer.Argument(metavar="PYTANIE", help="Pytanie lub szukana fraza.", show_default=False)],
    count: CountOption = 5,
    files: FilesOption = None,
    types: TypesOption = None,
    year: YearOption = None,
    year_from: YearFromOption = None,
    year_to: YearToOption = None,
    articles: ArticlesOption = None,
    mode: ModeOption = "hybryda",
    threshold: ThresholdOption = None,
    rewrite: PlanOption = None,
    fresh_plan: FreshPlanOption = False,
    as_json: JsonOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Pokazuje fragmenty najbardziej pasujące do pytania (filtry działają przed wyszukiwaniem)."""
    filters = _filters(files, types, year, year_from, year_to, articles)
    planned, settings = _planning(rewrite)
    hits = _index(db, model, dimensions, server).search(
        question, k=count, filters=filters, mode=mode, threshold=_threshold(threshold),
        rewrite=planned, fresh_plan=fresh_plan, settings=settings,
    )
    if as_json:
        _print_json(hits.to_json())
        return
    _print_plan(hits.plan)
    if not hits:
        if hits.reason == "prog":
            out.print("Nie znaleziono nic trafnego – żaden fragment nie pasuje do pytania wystarczająco dobrze. "
                      "Spróbuj innych słów, zdejmij filtry albo obniż próg (--prog).")
        else:  # no threshold refused anything (e.g. --prog 0): lowering it cannot help
            out.print("Nie znaleziono nic trafnego. Spróbuj innych słów albo zdejmij filtry.")
        return
    top = hits[0].score or 1.0
    for rank, hit in enumerate(hits, start=1):
        _print_hit(rank, hit, top)


SNIPPET_CHARS = 400


def _relevance(hit: Hit, top: float) -> str:
    """Liczba zgodna z kolejnością: wynik fuzji względem pierwszego wyniku (samo podobieństwo kosinusowe
    skakałoby w górę i w dół listy)."""
    return f"trafność {hit.score / top:.2f}"


def _pages(meta: dict) -> str:
    """Strony fragmentu: „12” albo „12–14”."""
    first, last = meta.get("strona_od", meta.get("strona")), meta.get("strona_do", meta.get("strona"))
    return f"{first}–{last}" if last != first else str(first)


def _print_hit(rank: int, hit: Hit, top: float) -> None:
    """Wynik jako nagłówek (plik, jednostka, strony, trafność), wcięte podobieństwo z rozdziałem i fragment –
    czytelne także w wąskim terminalu, w którym tabela łamała nazwy plików w połowie."""
    from rich.padding import Padding
    from rich.text import Text

    meta = hit.metadata
    header = Text(f"{rank}. ", style="bold")
    header.append(hit.file, style="bold cyan")
    for part in (hit.unit, f"str. {_pages(meta)}", _relevance(hit, top)):
        if part:
            header.append(f" · {part}")
    out.print(header)
    # the similarity decides the threshold, so it stays visible beside the order's own number
    chapter = str(meta.get("rozdzial") or "")
    context = f"podobieństwo {hit.similarity:.3f}" + (f" · {chapter}" if chapter else "")
    out.print(Padding(Text(context, style="dim"), (0, 0, 0, 3)))
    snippet = " ".join(hit.text.split())
    snippet = snippet[:SNIPPET_CHARS] + ("…" if len(snippet) > SNIPPET_CHARS else "")
    out.print(Padding(Text(snippet), (0, 0, 1, 3)))


@app.command("pytaj")
def ask_command(
    question: Annotated[str, typer.Argument(metavar="PYTANIE", help="Pytanie do dokumentów.", show_default=False)],
    count: CountOption = 5,
    files: FilesOption = None,
    types: TypesOption = None,
    year: YearOption = None,
    year_from: YearFromOption = None,
    year_to: YearToOption = None,
    articles: ArticlesOption = None,
    rewrite: Annotated[
        bool | None,
        typer.Option("--przepisz/--bez-planu", help="Plan zapytania od modelu czatu przed wyszukiwaniem (domyślnie "
                     "tak; $CHROMA_RAG_PRZEPISZ=0 zmienia domyślną).", show_default=False),
    ] = None,
    fresh_plan: FreshPlanOption = False,
    show_prompt: Annotated[
        bool, typer.Option("--pokaz-prompt", help="Pokaż wiadomości dla modelu i zakończ bez pytania go.")
    ] = False,
    no_stream: Annotated[
        bool, typer.Option("--bez-strumienia", help="Poczekaj na całą odpowiedź zamiast wypisywać ją na bieżąco.")
    ] = False,
    mode: ModeOption = "hybryda",
    threshold: ThresholdOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Odpowiada na pytanie modelem czatu wyłącznie na podstawie znalezionych fragmentów, z cytatami."""
    filters = _filters(files, types, year, year_from, year_to, articles)
    index = _index(db, model, dimensions, server)
    from .llm import LlmSettings

    settings = LlmSettings.from_env()
    planned = rewrite if rewrite is not None else settings.planning is not False
    if show_prompt:
        hits = index.search(question, k=count, filters=filters, mode=mode, threshold=_threshold(threshold))
        planning = index.planning_messages(question, filters, mode) if planned else None
        _print_prompt(question, hits, planning, as_json)
        return
    streaming = not (no_stream or as_json)
    answer = index.ask(
        question,
        k=count,
        filters=filters,
        threshold=_threshold(threshold),
        mode=mode,
        rewrite=planned,
        fresh_plan=fresh_plan,
        settings=settings,
        on_token=_write if streaming else None,
        on_plan=None if as_json else _print_plan,
    )
    if as_json:
        _print_json(answer.to_json())
        return
    _write(("" if streaming else answer.text) + "\n")
    _print_sources(answer)


def _write(text: str) -> None:
    # Plain stdout, not rich: the answer's [plik, art. N] would be taken for markup.
    sys.stdout.write(text)
    sys.stdout.flush()


def _print_prompt(question: str, hits: list[Hit], planning: list[dict[str, str]] | None, as_json: bool) -> None:
    from .answering import NOT_FOUND, build_messages

    if as_json:
        _print_json({"planowanie": planning, "wiadomosci": build_messages(question, hits) if hits else None})
        return
    if planning is not None:
        out.print("Zapytanie 1 – plan wyszukiwania (zapytania językiem ustaw, dokumenty, jednostki):", style="bold")
        _print_messages(planning)
        out.print(
            "Zapytanie 2 – odpowiedź (poniżej z fragmentami wyszukiwania bez planu; z planem mogą być inne):",
            style="bold",
        )
    if not hits:
        out.print(f"Brak pasujących fragmentów – odpowiedź „{NOT_FOUND}” bez pytania modelu.")
        return
    _print_messages(build_messages(question, hits))


def _print_messages(messages: list[dict[str, str]]) -> None:
    for message in messages:
        out.rule(message["role"])
        _write(message["content"] + "\n")


def _print_sources(answer: Answer) -> None:
    from .answering import citation_label

    if answer.hits:
        out.print("Źródła:", style="bold")
        top = answer.hits[0].score or 1.0
        for rank, hit in enumerate(answer.hits, start=1):
            line = f"  {rank}. {citation_label(hit)}, strona {hit.page}, {_relevance(hit, top)}"
            out.print(line, markup=False, highlight=False)
    if answer.invalid_citations:
        cited = ", ".join(str(c) for c in answer.invalid_citations)
        err.print(f"Uwaga: cytaty niepasujące do żadnego podanego fragmentu: {cited}", style="yellow", markup=False)
    if answer.model:
        usage = answer.usage
        cost = f", koszt {usage.cost:.6f} USD" if usage.cost is not None else ""
        err.print(
            f"Model {answer.model}: {usage.prompt_tokens} tokenów wejścia, {usage.completion_tokens} wyjścia{cost}.",
            style="dim",
            markup=False,
        )


@app.command("ocena")
def evaluate_command(
    questions: Annotated[
        Path,
        typer.Argument(metavar="PYTANIA", help="Pytania JSONL (format pytania-dev.jsonl).", show_default=False),
    ],
    count: Annotated[int, typer.Option("-k", "--ile", help="Ile wyników brać pod uwagę.")] = 10,
    mode: ModeOption = "hybryda",
    threshold: ThresholdOption = None,
    rewrite: PlanOption = None,
    fresh_plan: FreshPlanOption = False,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Mierzy jakość wyszukiwania: hit@1/3/5/10, MRR, odmowy progu, pudła (z --przepisz także koszt planowania)."""
    index = _index(db, model, dimensions, server)
    planned, settings = _planning(rewrite)
    result = index.evaluate(
        questions, k=count, mode=mode, threshold=_threshold(threshold),
        rewrite=planned, fresh_plan=fresh_plan, settings=settings,
    )
    if as_json:
        _print_json(result)
        return
    _print_evaluation(result)


def _print_evaluation(result: dict) -> None:
    columns = ("n", "hit@1", "hit@3", "hit@5", "hit@10", "mrr")
    table = Table(title=f"Ocena wyszukiwania ({result['czas_s']} s)")
    for column in ("Grupa", *columns):
        table.add_column(column, justify="left" if column == "Grupa" else "right")
    table.add_row("wszystkie", *(_cell(result[c]) for c in columns), end_section=True)
    for group in ("per_rodzaj", "per_plik"):
        for name, values in result[group].items():
            table.add_row(name, *(_cell(values[c]) for c in columns))
        table.rows[-1].end_section = True
    out.print(table)
    refusals = result["odmowy"]
    out.print(
        f"Pytania spoza dokumentów: {refusals['poprawne']}/{refusals['spoza']} poprawnie odrzucone progiem; "
        f"pytania z odpowiedzią odrzucone przez próg: {refusals['utracone_trafienia']}."
    )
    for miss in result["pudla"]:
        first = miss["pierwszy"]
        got = "odmowa (poniżej progu)" if miss["odmowa"] else (
            f"{first['plik']} art. {first['art'] or '–'}" if first else "brak wyników"
        )
        expected = miss["oczekiwane"]
        wanted = f"{expected['plik']} art. {', '.join(expected['art'])}" if expected["plik"] else "odmowa"
        out.print(f"[red]Pudło:[/] {miss['pytanie']}\n  oczekiwano: {wanted}; pierwsze: {got}")
    planning = result.get("planowanie")
    if planning:
        cost = f", koszt {planning['koszt']:.6f} USD" if planning["koszt"] is not None else ""
        out.print(
            f"Planowanie: zapytań do modelu {planning['zapytania_do_modelu']}, planów z pamięci "
            f"{planning['z_pamieci']}, błędów {planning['bledy']}; tokenów wejścia {planning['tokeny_wejscia']}, "
            f"wyjścia {planning['tokeny_wyjscia']}{cost}."
        )


def _cell(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.3f}"


@app.command("lista")
def list_command(as_json: JsonOption = False, db: DbOption = None, server: ServerOption = None) -> None:
    """Wypisuje zaindeksowane pliki z liczbą fragmentów, rodzajem, rokiem i modelem."""
    infos = _index(db, server=server).files()
    if as_json:
        _print_json([info.to_json() for info in infos])
        return
    table = Table(title="Zaindeksowane pliki")
    for column in ("Plik", "Typ", "Rok", "Fragmenty", "Modele"):
        table.add_column(column)
    for info in infos:
        table.add_row(info.name, info.type, str(info.year), str(info.chunks), ", ".join(info.models))
    out.print(table)


@app.command("podglad")
def preview_command(
    path: Annotated[Path, typer.Argument(metavar="PLIK", help="Plik PDF, DOCX, TXT lub MD.", show_default=False)],
    as_json: JsonOption = False,
) -> None:
    """Pokazuje, jak plik zostanie pocięty (bez embeddingu i bez bazy)."""
    from .preview import preview

    rows = preview(path)
    if as_json:
        _print_json(rows)
        return
    table = Table(title=f"{path.name}: {len(rows)} fragmentów")
    for column in ("Art.", "Strony", "Część", "Rozdział", "Uwagi", "Tekst"):
        table.add_column(column, overflow="fold")
    for row in rows:
        notes = ", ".join(
            note
            for note in (
                "uchylony" if row.get("uchylony") else "",
                f"wersja {row['wersja']}" if row.get("wersja") else "",
                f"zmienia: {row['akt_zmieniany']}" if row.get("akt_zmieniany") else "",
                f"załącznik {row['zalacznik']}" if row.get("zalacznik") else "",
            )
            if note
        )
        text = " ".join(row["tekst"].split())
        table.add_row(row["art"] or "–", _pages(row), str(row["fragment"]), row["rozdzial"][-60:], notes,
                      text[:120] + ("…" if len(text) > 120 else ""))
    out.print(table)


@app.command("usun")
def remove_command(
    name: Annotated[
        str, typer.Argument(metavar="NAZWA", help="Nazwa pliku, jak w `chroma-rag lista`.", show_default=False)
    ],
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Usuwa z indeksu wszystkie fragmenty jednego pliku."""
    removed = _index(db, server=server).remove(name)
    out.print(f"Usunięto {removed} fragmentów pliku {name}.")


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    """Punkt wejścia: błędy użytkownika jako jedno zdanie po polsku, bez tracebacku."""
    try:
        code = app(args=argv, standalone_mode=False)
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
    except Exception as exc:
        from rich.markup import escape

        from .usage import is_usage_error, usage_message

        if is_usage_error(exc):
            err.print(f"[red]Błąd:[/] {escape(usage_message(exc))}", highlight=False)
            sys.exit(2)
        err.print(f"[red]Nieoczekiwany błąd:[/] {type(exc).__name__}: {exc} – zgłoś go razem z poleceniem.")
        sys.exit(1)
