"""Wiersz poleceń ``chroma-rag`` – cienka warstwa nad ``chroma_rag.api`` (bez importu chromadb)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import plural
from .cli_completion import add_completion_command, complete_indexed_files
from .cli_help import PolishTyper, add_help_command, show_version
from .cli_output import OutputConsole, TrimmedLines, discard_stdout, shorten
from .config import DEFAULT_COUNT, DEFAULT_THRESHOLD
from .errors import UserError
from .plural import FILE, FRAGMENT, ORPHAN, QUESTION, TOKEN, count

if TYPE_CHECKING:
    from .answering import Answer
    from .models import Hit

app = PolishTyper(
    help="Pytania do własnych dokumentów (ustawy, rozporządzenia, regulaminy) z cytowaniem pliku i artykułu.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
out = OutputConsole(file=TrimmedLines())
err = Console(stderr=True, soft_wrap=True)


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", help="Pokaż wersję i zakończ.", callback=show_version, is_eager=True)
    ] = False,
) -> None:
    """Pytania do własnych dokumentów (ustawy, rozporządzenia, regulaminy) z cytowaniem pliku i artykułu."""

DbOption = Annotated[
    Path | None,
    typer.Option("--baza", metavar="FOLDER", help="Folder bazy Chromy (domyślnie $CHROMA_RAG_BAZA albo "
                 "./chroma_db).", show_default=False),
]
ServerOption = Annotated[
    str | None,
    typer.Option("--serwer", metavar="URL", help="Adres serwera Chromy (chroma run), np. http://127.0.0.1:8000, "
                 "zamiast folderu (domyślnie $CHROMA_RAG_SERWER, bez niego folder; token: $CHROMA_RAG_SERWER_TOKEN).",
                 show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Wynik jako JSON (domyślnie tekst).")]
FilesOption = Annotated[
    list[str] | None,
    typer.Option("--plik", metavar="NAZWA", help="Tylko ten plik (można powtarzać; domyślnie wszystkie).",
                 show_default=False, autocompletion=complete_indexed_files),
]
TypesOption = Annotated[
    list[str] | None,
    typer.Option("--typ", metavar="RODZAJ", help="Rodzaj: ustawa, kodeks, rozporzadzenie, konstytucja, "
                 "nowelizacja, dokument (można powtarzać; domyślnie wszystkie).", show_default=False),
]
YearOption = Annotated[
    int | None, typer.Option("--rok", metavar="ROK", help="Rok Dziennika Ustaw (domyślnie każdy).", show_default=False)
]
YearFromOption = Annotated[
    int | None, typer.Option("--od-roku", metavar="ROK", help="Rok od (włącznie; domyślnie bez dolnej granicy).",
                             show_default=False)
]
YearToOption = Annotated[
    int | None, typer.Option("--do-roku", metavar="ROK", help="Rok do (włącznie; domyślnie bez górnej granicy).",
                             show_default=False)
]
ArticlesOption = Annotated[
    list[str] | None,
    typer.Option("--art", metavar="JEDNOSTKA", help="Artykuł lub paragraf, np. 23, 178a, 385^1, '§ 6' (można "
                 "powtarzać; domyślnie wszystkie).", show_default=False),
]
CountOption = Annotated[
    int | None,
    typer.Option("-k", "--ile", metavar="LICZBA", help=f"Ile fragmentów pokazać (domyślnie {DEFAULT_COUNT} albo "
                 "$CHROMA_RAG_K).", show_default=False),
]
AskCountOption = Annotated[
    int | None,
    typer.Option("-k", "--ile", metavar="LICZBA", help="Ile najlepszych fragmentów dać modelowi jako jedyne źródło "
                 f"odpowiedzi (domyślnie {DEFAULT_COUNT} albo $CHROMA_RAG_K).", show_default=False),
]
ModelOption = Annotated[
    str | None,
    typer.Option("--model", metavar="MODEL", help="Model embeddingów: lokalny, ollama:NAZWA, openai:NAZWA (domyślnie "
                 "$CHROMA_RAG_MODEL albo model, którym zbudowano bazę; patrz docs/MODELE.md).", show_default=False),
]
DimensionsOption = Annotated[
    int | None,
    typer.Option("--wymiary", metavar="LICZBA", help="Liczba wymiarów dla modeli, które ją przyjmują (np. "
                 "text-embedding-3; domyślnie pełna liczba wymiarów modelu).", show_default=False),
]

ModeOption = Annotated[
    str,
    typer.Option("--tryb", metavar="TRYB", help="Wyszukiwanie: hybryda (wektory + słowa), wektor albo slowa."),
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
    typer.Option("--prog", metavar="LICZBA", help="Próg pewności od 0 do 1 (podobieństwo najlepszego wyniku); "
                 f"poniżej – „nic trafnego”; 0 wyłącza (domyślnie {DEFAULT_THRESHOLD}, skalibrowany poleceniem "
                 "ocena, albo $CHROMA_RAG_PROG).", show_default=False),
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
    """Próg z --prog, albo z CHROMA_RAG_PROG (środowisko lub plik ustawień), albo skalibrowany; 0 wyłącza."""
    if value is None:
        value = _setting_number("CHROMA_RAG_PROG", float, DEFAULT_THRESHOLD)
    return value or None  # a value outside 0–1 is rejected by the API (validation.check_threshold)


def _count(value: int | None) -> int:
    """-k z opcji, albo z CHROMA_RAG_K, albo domyślne."""
    return _setting_number("CHROMA_RAG_K", int, DEFAULT_COUNT) if value is None else value


def _setting_number(key: str, kind: type, default: float) -> Any:
    raw = os.environ.get(key, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise UserError(f"Ustawienie {key} musi być liczbą, a ma wartość „{raw}” – popraw je w środowisku albo "
                        "w pliku ustawień (chroma-rag konfiguracja pokazuje, skąd pochodzi).") from None


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


WaitOption = Annotated[
    float,
    typer.Option("--czekaj", metavar="SEKUNDY", help="Ile sekund (co najmniej 0) czekać, gdy bazę blokuje inny proces.",
                 min=0),
]

# Exit codes of `indeksuj`: all fine / some files skipped / nothing could be indexed.
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130


@app.command("indeksuj")
def index_command(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="SCIEZKI", help="Pliki lub foldery (PDF, DOCX, TXT, MD).", show_default=False),
    ],
    doc_type: Annotated[
        str | None,
        typer.Option("--typ", metavar="RODZAJ", help="Wymuś rodzaj dokumentu dla wszystkich plików (domyślnie "
                     "rozpoznawany z nazwy i treści każdego pliku).", show_default=False),
    ] = None,
    prune: Annotated[
        bool, typer.Option("--usun-brakujace", help="Usuń z indeksu pliki, których nie ma już w podanych folderach.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--wymus", help="Z --usun-brakujace: pozwól usunąć wszystko z pustego folderu.")
    ] = False,
    wait: WaitOption = 120.0,
    quiet: Annotated[bool, typer.Option("--cicho", help="Bez postępu na stderr (domyślnie postęp widać).")] = False,
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
    from .cli_progress import progress_for

    with progress_for(err, quiet) as progress:
        report = index.add(
            paths, doc_type=doc_type, progress=progress, prune=prune, force=force, wait=wait,
            on_wait=lambda message: err.print(f"[yellow]{message}[/]"),
        )
    for path, reason in report.skipped.items():
        reason = reason.removeprefix(f"{Path(path).name}: ")  # readers' messages start with the file name
        err.print(f"[yellow]Pominięto[/] {escape(path)}: {escape(reason)}")
    for note in report.notes:
        err.print(f"[yellow]Uwaga:[/] {note}")
    if report.indexed:
        table = Table(title="Zaindeksowano")
        for column in ("Plik", "Fragmenty"):
            table.add_column(column, overflow="fold")
        for path, count in report.indexed.items():
            table.add_row(Path(path).name, str(count))
        out.print(table)
    for old, new in report.moved.items():
        out.print(f"Przeniesiony: {old} → {new}")
    for path, owner in report.same_document.items():
        out.print(f"Ten sam dokument co {owner}: {path} (zapisany jako druga ścieżka, bez nowych fragmentów)")
    for path in report.removed:
        out.print(f"Usunięto z indeksu (brak pliku): {path}")
    if report.orphans_removed:
        out.print(f"Usunięto {count(report.orphans_removed, ORPHAN)} po przerwanym wcześniej zapisie.")
    out.print(
        f"Zaindeksowano: {len(report.indexed)} (fragmentów: {report.chunks}, nowych wektorów: {report.embedded}, "
        f"użytych ponownie: {report.reused}), bez zmian: {len(report.unchanged)}, "
        f"pominięto: {len(report.skipped)}, usunięto: {len(report.removed)}, "
        f"{f'drugich ścieżek tych samych dokumentów: {len(report.same_document)}, ' if report.same_document else ''}"
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
            out.print(f"Brak na dysku: {path} (usuń z indeksu: chroma-rag indeksuj FOLDER --usun-brakujace)")
        if report.old_chunker:
            old = count(len(report.old_chunker), FILE)
            err.print(f"[yellow]Uwaga:[/] {old} pocięto starą wersją – zaindeksuj ponownie.")
        out.print(
            f"Plików: {report.files}, fragmentów: {report.chunks}, sierot: {len(report.orphans)}, "
            f"niepełnych plików: {len(report.incomplete)}, nieodnajdywalnych fragmentów: {len(report.unfindable)}, "
            f"brak na dysku: {len(report.missing_on_disk)}."
        )
    if not report.ok:
        raise UserError("Baza jest niespójna – uruchom: chroma-rag sprawdz --napraw, potem indeksuj ponownie.")
    if not as_json:
        out.print("[green]Baza jest spójna.[/]")


@app.command("szukaj")
def search_command(
    question: Annotated[str, typer.Argument(metavar="PYTANIE", help="Pytanie lub szukana fraza.", show_default=False)],
    count: CountOption = None,
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
        question, k=_count(count), filters=filters, mode=mode, threshold=_threshold(threshold),
        rewrite=planned, fresh_plan=fresh_plan, settings=settings,
    )
    if as_json:
        _print_json(hits.to_json())
        return
    _print_plan(hits.plan)
    if not hits and hits.reason == "filtry":
        from .filters import FILTERS_MATCH_NOTHING

        out.print(FILTERS_MATCH_NOTHING)
        return
    if not hits:
        if hits.reason == "prog":
            out.print("Nie znaleziono nic trafnego – żaden fragment nie pasuje do pytania wystarczająco dobrze. "
                      "Spróbuj innych słów, zdejmij filtry albo obniż próg (--prog).")
        else:  # no threshold refused anything (e.g. --prog 0): lowering it cannot help
            out.print("Nie znaleziono nic trafnego. Spróbuj innych słów albo zdejmij filtry.")
        return
    top = hits[0].score or 1.0
    paths_by_name: dict[str, set[str]] = {}
    for hit in hits:
        paths_by_name.setdefault(hit.file, set()).add(str(hit.metadata.get("sciezka", "")))
    for rank, hit in enumerate(hits, start=1):  # same-named files from two folders are shown by their paths
        _print_hit(rank, hit, top, show_path=len(paths_by_name[hit.file]) > 1)
    _print_unit_hint(hits)


SNIPPET_CHARS = 400


def _relevance(hit: Hit, top: float) -> str:
    """Liczba zgodna z kolejnością: wynik fuzji względem pierwszego wyniku (samo podobieństwo kosinusowe
    skakałoby w górę i w dół listy)."""
    return f"trafność {hit.score / top:.2f}" if hit.score else ""  # vector mode: the similarity is the order


def _pages(meta: dict) -> str:
    """Strony fragmentu: „12” albo „12–14”."""
    first, last = meta.get("strona_od", meta.get("strona")), meta.get("strona_do", meta.get("strona"))
    return f"{first}–{last}" if last != first else str(first)


def _print_hit(rank: int, hit: Hit, top: float, show_path: bool = False) -> None:
    """Wynik jako nagłówek (plik, jednostka, strony, trafność), wcięte podobieństwo z rozdziałem i fragment –
    czytelne także w wąskim terminalu, w którym tabela łamała nazwy plików w połowie."""
    from rich.padding import Padding
    from rich.text import Text

    meta = hit.metadata
    header = Text(f"{rank}. ", style="bold")
    header.append(str(meta.get("sciezka")) if show_path else hit.file, style="bold cyan")
    for part in (_unit_part(hit), f"str. {_pages(meta)}", _relevance(hit, top)):
        if part:
            header.append(f" · {part}")
    out.print(header)
    # the similarity decides the threshold, so it stays visible beside the order's own number
    chapter = str(meta.get("rozdzial") or "")
    context = f"podobieństwo {hit.similarity:.3f}" + (f" · {chapter}" if chapter else "")
    out.print(Padding(Text(context, style="dim"), (0, 0, 0, 3)))
    out.print(Padding(Text(shorten(hit.text, SNIPPET_CHARS)), (0, 0, 1, 3)))


def _unit_part(hit: Hit) -> str:
    """„art. 23”, a dla części długiej jednostki „art. 23, część 2/3” (bez liczby części w starszych bazach)."""
    part, parts = int(hit.metadata.get("fragment") or 1), hit.metadata.get("czesci")
    if part == 1 and not (parts and parts > 1):
        return hit.unit
    label = f"część {part}/{parts}" if parts else f"część {part}"
    return f"{hit.unit}, {label}" if hit.unit else label


def _print_unit_hint(hits: list[Hit]) -> None:
    import shlex

    first = next((hit for hit in hits if hit.unit), None)
    if first is not None:
        command = f"chroma-rag pokaz {shlex.quote(first.file)} {shlex.quote(first.art)}"
        # one line even at 80 columns: a command wrapped inside a file name cannot be copied
        out.print(f"Całą jednostkę pokaże: {command}", style="dim", markup=False, highlight=False, soft_wrap=True)


@app.command("pokaz")
def show_unit_command(
    file: Annotated[str, typer.Argument(metavar="PLIK", help="Nazwa pliku, jak w `chroma-rag lista`.",
                                        show_default=False)],
    art: Annotated[str, typer.Argument(metavar="ART", help="Artykuł lub paragraf, np. 23, 385^1, '§ 6'.",
                                       show_default=False)],
    as_json: JsonOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
) -> None:
    """Pokazuje całą jednostkę (artykuł, paragraf): wszystkie części, rozdział, strony, oba brzmienia."""
    from rich.padding import Padding
    from rich.text import Text

    from .units import VERSION_LABELS

    unit = _index(db, model, server=server).unit(file, art)
    if as_json:
        _print_json(unit.to_json())
        return
    header = Text(unit.file, style="bold cyan")
    header.append(f" · {unit.label} · str. {_pages({'strona_od': unit.page_from, 'strona_do': unit.page_to})}")
    if unit.repealed:
        header.append(" · uchylony")
    out.print(header)
    for version in unit.versions:
        if version.heading:
            out.print(Padding(Text(version.heading, style="dim"), (0, 0, 0, 3)))
        if len(unit.versions) > 1:
            label = VERSION_LABELS.get(version.version or "", "")
            pages = _pages({"strona_od": version.page_from, "strona_do": version.page_to})
            out.print(Padding(Text(f"{label} str. {pages}", style="bold"), (0, 0, 0, 3)))
        out.print(Padding(Text(version.text), (0, 0, 1, 3)))


@app.command("pytaj")
def ask_command(
    question: Annotated[str, typer.Argument(metavar="PYTANIE", help="Pytanie do dokumentów.", show_default=False)],
    count: AskCountOption = None,
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
        hits = index.search(question, k=_count(count), filters=filters, mode=mode, threshold=_threshold(threshold))
        planning = index.planning_messages(question, filters, mode) if planned else None
        _print_prompt(question, hits, planning, as_json)
        return
    streaming = not (no_stream or as_json)
    answer = index.ask(
        question,
        k=_count(count),
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
        tokens = f"{count(usage.prompt_tokens, TOKEN)} wejścia, {usage.completion_tokens} wyjścia"
        err.print(
            f"Model {answer.model}: {tokens}{cost}.",
            style="dim",
            markup=False,
        )


@app.command("ocena")
def evaluate_command(
    questions: Annotated[
        Path,
        typer.Argument(metavar="PYTANIA", help="Pytania JSONL (format pytania-dev.jsonl).", show_default=False),
    ],
    count: Annotated[int, typer.Option("-k", "--ile", metavar="LICZBA", help="Ile wyników brać pod uwagę.")] = 10,
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
    skipped = result["pominiete"]
    if skipped["pytania"]:
        err.print(
            f"[yellow]Uwaga:[/] pominięto {plural.count(skipped['pytania'], QUESTION)} o pliki, których nie ma w "
            "indeksie: "
            f"{', '.join(skipped['pliki'])}."
        )
    if as_json:
        _print_json(result)
        return
    _print_evaluation(result)


def _print_evaluation(result: dict) -> None:
    from .models import unit_label

    columns = ("n", "hit@1", "hit@3", "hit@5", "hit@10", "mrr")
    table = Table(title=f"Ocena wyszukiwania ({result['czas_s']} s)")
    for column in ("Grupa", *columns):
        table.add_column(column, justify="left" if column == "Grupa" else "right", overflow="fold")
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
            f"{first['plik']} {unit_label(first['art']) or '–'}" if first else "brak wyników"
        )
        expected = miss["oczekiwane"]
        units = ", ".join(unit_label(art) for art in expected["art"])
        wanted = f"{expected['plik']} {units}".strip() if expected["plik"] else "odmowa"
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
        table.add_column(column, overflow="fold")  # a long name wraps instead of losing its end to "…"
    for info in infos:
        name = "\n".join([info.name, *(f"= {Path(p).parent.name}/{Path(p).name}" for p in info.other_paths)])
        table.add_row(name, info.type, str(info.year), str(info.chunks), ", ".join(info.models))
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
    table = Table(title=f"{path.name}: {count(len(rows), FRAGMENT)}")
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
        table.add_row(row["art"] or "–", _pages(row), str(row["fragment"]), row["rozdzial"][-60:], notes,
                      shorten(row["tekst"], 120))
    out.print(table)


@app.command("usun")
def remove_command(
    name: Annotated[
        str, typer.Argument(metavar="NAZWA", help="Nazwa pliku, jak w `chroma-rag lista`.", show_default=False,
                            autocompletion=complete_indexed_files)
    ],
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Usuwa z indeksu wszystkie fragmenty jednego pliku."""
    removed = _index(db, server=server).remove(name)
    if removed:
        out.print(f"Usunięto {count(removed, FRAGMENT)} pliku {name}.")
    else:
        out.print(f"Usunięto z indeksu ścieżkę {name}; ten sam dokument zostaje pod inną ścieżką (chroma-rag lista).")


@app.command("konfiguracja")
def config_command(as_json: JsonOption = False) -> None:
    """Pokazuje skuteczne ustawienia i skąd pochodzą (zmienna środowiska, plik, domyślne); klucze zamaskowane."""
    from . import config

    settings = config.resolve().values()
    if as_json:
        _print_json([{"klucz": s.key, "wartosc": s.shown, "zrodlo": s.source} for s in settings])
        return
    files = config.config_files()
    out.print("Pliki ustawień: " + (", ".join(str(path) for path in files) if files else
              f"brak (szukane: .env i {config.CONFIG_NAME} tu i wyżej, {config.user_config_file()})"),
              markup=False, highlight=False)
    table = Table(title="Ustawienia (opcje w wierszu poleceń mają pierwszeństwo przed nimi)")
    for column in ("Klucz", "Wartość", "Źródło"):
        table.add_column(column, overflow="fold")
    for setting in settings:
        table.add_row(setting.key, setting.shown, setting.source)
    out.print(table)


add_completion_command(app)
add_help_command(app)


@app.command("serwuj")
def serve_command(
    host: Annotated[str, typer.Option("--host", help="Adres nasłuchu; inny niż 127.0.0.1 wymaga --token.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port HTTP.", min=1, max=65535)] = 8080,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Token dostępu do strony, API i MCP (domyślnie $CHROMA_RAG_TOKEN).",
                     show_default=False),
    ] = None,
    db: DbOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
) -> None:
    """Strona dla zespołu, JSON API i narzędzia MCP (/mcp) z jednego lokalnego serwera, tylko do odczytu."""
    from .serving.run import serve
    from .serving.shared_index import SharedIndex

    serve(SharedIndex(db, model=model, server=server), host, port, token)


@app.command("mcp")
def mcp_command(db: DbOption = None, model: ModelOption = None, server: ServerOption = None) -> None:
    """Narzędzia MCP (szukaj, pokaz_jednostke, lista_plikow) przez stdio – dla Claude Desktop i innych klientów."""
    from .serving.run import serve_stdio
    from .serving.shared_index import SharedIndex

    serve_stdio(SharedIndex(db, model=model, server=server))


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    """Punkt wejścia: błędy użytkownika jako jedno zdanie po polsku, bez tracebacku."""
    from . import config

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
        from .errors import os_error_message

        err.print(f"[red]Błąd:[/] {escape(os_error_message(exc))}", highlight=False)
        sys.exit(1)
    except Exception as exc:
        from .usage import is_usage_error, usage_message

        if is_usage_error(exc):
            err.print(f"[red]Błąd:[/] {escape(usage_message(exc))}", highlight=False)
            sys.exit(2)
        err.print(f"[red]Nieoczekiwany błąd:[/] {type(exc).__name__}: {exc} – zgłoś go razem z poleceniem.")
        sys.exit(1)
