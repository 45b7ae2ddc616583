"""Polecenia wyszukiwania: szukaj, pokaz i ocena – fragmenty, całe jednostki i jakość wyszukiwania – z ich
wypisywaniem."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from .. import plural
from ..plural import QUESTION
from .options import (
    ActsOption,
    ArticlesOption,
    CountOption,
    DbOption,
    DimensionsOption,
    FilesOption,
    FreshPlanOption,
    JsonOption,
    ModelOption,
    ModeOption,
    PlanOption,
    ServerOption,
    ThresholdOption,
    TypesOption,
    YearFromOption,
    YearOption,
    YearToOption,
    count_setting,
    open_index,
    planning_choice,
    search_filters,
    threshold_setting,
)
from .output import err, out, page_range, print_json, shorten

if TYPE_CHECKING:
    from ..models import Hit


def print_plan(plan) -> None:
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


def search_command(
    question: Annotated[str, typer.Argument(metavar="PYTANIE", help="Pytanie lub szukana fraza.", show_default=False)],
    count: CountOption = None,
    files: FilesOption = None,
    acts: ActsOption = None,
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
    filters = search_filters(files, types, year, year_from, year_to, articles, acts)
    planned, settings = planning_choice(rewrite)
    index = open_index(db, model, dimensions, server)
    hits = index.search(
        question, k=count_setting(count), filters=filters, mode=mode, threshold=threshold_setting(threshold),
        rewrite=planned, fresh_plan=fresh_plan, settings=settings,
    )
    if as_json:
        print_json(hits.to_json())
        return
    print_plan(hits.plan)
    if not hits and hits.reason == "filtry":
        from ..filters import FILTERS_MATCH_NOTHING

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
    # a name of several files in the index, even if only one of them is found, is shown by its path
    names = [info.name for info in index.files()]
    shared = {name for name in names if names.count(name) > 1}
    for rank, hit in enumerate(hits, start=1):
        _print_hit(rank, hit, top, show_path=hit.file in shared)
    _print_unit_hint(hits, shared)


SNIPPET_CHARS = 400

def relevance_label(hit: Hit, top: float) -> str:
    """Liczba zgodna z kolejnością: wynik fuzji względem pierwszego wyniku (samo podobieństwo kosinusowe
    skakałoby w górę i w dół listy)."""
    return f"trafność {hit.score / top:.2f}" if hit.score else ""  # vector mode: the similarity is the order


def _print_hit(rank: int, hit: Hit, top: float, show_path: bool = False) -> None:
    """Wynik jako nagłówek (plik, jednostka, strony, trafność), wcięte podobieństwo z rozdziałem i fragment –
    czytelne także w wąskim terminalu, w którym tabela łamała nazwy plików w połowie."""
    from rich.padding import Padding

    meta = hit.metadata
    name = str(meta.get("sciezka")) if show_path else hit.file
    parts = [p for p in (_unit_part(hit), f"str. {page_range(meta)}", relevance_label(hit, top)) if p]
    first, *rest = header_lines(rank, name, parts, max(out.width - 3, 20))
    out.print(first)
    for line in rest:
        out.print(Padding(line, (0, 0, 0, 3)))
    # the similarity decides the threshold, so it stays visible beside the order's own number
    chapter = str(meta.get("rozdzial") or "")
    context = f"podobieństwo {hit.similarity:.3f}" + (f" · {chapter}" if chapter else "")
    out.print(Padding(Text(context, style="dim"), (0, 0, 0, 3)))
    out.print(Padding(Text(shorten(hit.text, SNIPPET_CHARS)), (0, 0, 1, 3)))


def header_lines(rank: int, name: str, parts: list[str], width: int) -> list[Text]:
    """Nagłówek wyniku w wierszach o szerokości ``width``: numer i nazwa pliku, potem części („art. 12 u.w.l.”,
    „str. 1”, „trafność 1.00”) po „ · ”. Za długi łamie się między częściami, nigdy wewnątrz jednej; kolejne wiersze
    wcina wołający. Nazwa dłuższa niż wiersz zostaje cała z częściami za nią, składana przez terminal (kopiowana,
    szukana grepem)."""
    header = Text(f"{rank}. ", style="bold")
    header.append(name, style="bold cyan")
    if header.cell_len > width:
        header.append("".join(f" · {part}" for part in parts))
        return [header]
    lines = [header]
    for part in parts:
        if lines[-1].cell_len + len(" · ") + cell_len(part) <= width:
            lines[-1].append(f" · {part}")
        else:
            lines.append(Text(part))
    return lines


def _unit_part(hit: Hit) -> str:
    """„art. 23”, a dla części długiej jednostki „art. 23, część 2/3” (bez liczby części w starszych bazach)."""
    part, parts = int(hit.metadata.get("fragment") or 1), hit.metadata.get("czesci")
    if part == 1 and not (parts and parts > 1):
        return hit.cited_unit
    label = f"część {part}/{parts}" if parts else f"część {part}"
    return f"{hit.cited_unit}, {label}" if hit.unit else label


def _print_unit_hint(hits: list[Hit], shared: set[str]) -> None:
    import shlex

    first = next((hit for hit in hits if hit.unit), None)
    if first is not None:
        # a name of several files cannot show one unit: the path can
        file = str(first.metadata.get("sciezka")) if first.file in shared else first.file
        command = f"chroma-rag pokaz {shlex.quote(file)} {shlex.quote(first.art)}"
        # one line even at 80 columns: a command wrapped inside a file name cannot be copied
        out.print(f"Całą jednostkę pokaże: {command}", style="dim", markup=False, highlight=False, soft_wrap=True)


def show_unit_command(
    file: Annotated[str, typer.Argument(
        metavar="PLIK", show_default=False,
        help="Nazwa pliku, jak w `chroma-rag lista` (pełna ścieżka, gdy ta sama nazwa jest w kilku folderach).",
    )],
    art: Annotated[list[str], typer.Argument(
        metavar="ART", show_default=False,
        help="Artykuł lub paragraf, np. 23, 385^1, '§ 6', art. 148 § 1 (cały artykuł).",
    )],
    as_json: JsonOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
) -> None:
    """Pokazuje całą jednostkę (artykuł, paragraf): wszystkie części, rozdział, strony, oba brzmienia."""
    from rich.padding import Padding

    from ..retrieval.units import VERSION_LABELS

    unit = open_index(db, model, server=server).unit(file, " ".join(art))  # "pokaz kpc art. 747": three words
    if as_json:
        print_json(unit.to_json())
        return
    header = Text(unit.file, style="bold cyan")
    header.append(f" · {unit.cited_label} · str. {page_range({'strona': unit.page_from, 'strona_do': unit.page_to})}")
    if unit.repealed:
        header.append(" · uchylony")
    out.print(header)
    for version in unit.versions:
        if version.heading:
            out.print(Padding(Text(version.heading, style="dim"), (0, 0, 0, 3)))
        if len(unit.versions) > 1:
            label = VERSION_LABELS.get(version.version or "", "")
            pages = page_range({"strona": version.page_from, "strona_do": version.page_to})
            out.print(Padding(Text(f"{label} str. {pages}", style="bold"), (0, 0, 0, 3)))
        out.print(Padding(Text(version.text), (0, 0, 1, 3)))


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
    index = open_index(db, model, dimensions, server)
    planned, settings = planning_choice(rewrite)
    result = index.evaluate(
        questions, k=count, mode=mode, threshold=threshold_setting(threshold),
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
        print_json(result)
        return
    _print_evaluation(result)


def _print_evaluation(result: dict) -> None:
    from ..models import unit_label

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
