"""Opcje wspólne poleceniom CLI (baza, model, filtry, -k, próg, plan) i ich zamiana na argumenty API."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import DEFAULT_COUNT, DEFAULT_THRESHOLD
from ..errors import UserError
from .completion import complete_indexed_files

if TYPE_CHECKING:
    from ..api import Index
    from ..llm import LlmSettings

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
ActsOption = Annotated[
    list[str] | None,
    typer.Option("--akt", metavar="AKT", help="Tylko ten akt: skrót albo nazwa, np. kpc, k.p.c., 'Kodeks pracy', "
                 "'ustawa o własności lokali' (można powtarzać; domyślnie wszystkie).", show_default=False),
]
TypesOption = Annotated[
    list[str] | None,
    typer.Option("--typ", metavar="RODZAJ", help="Rodzaj: ustawa, kodeks, rozporzadzenie, konstytucja, "
                 "nowelizacja, umowa, regulamin, dokument (można powtarzać; domyślnie wszystkie).", show_default=False),
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


def open_index(
    db: Path | None, model: str | None = None, dimensions: int | None = None, server: str | None = None
) -> Index:
    """Indeks z opcji polecenia; import API dopiero tu, żeby pomoc i --version nie ładowały Chromy."""
    from ..api import Index

    return Index(db, model=model, dimensions=dimensions, server=server)


def planning_choice(requested: bool | None) -> tuple[bool, LlmSettings]:
    """Czy planować (opcja, a bez niej ``CHROMA_RAG_PRZEPISZ`` przy skonfigurowanym modelu czatu) i ustawienia
    modelu czatu."""
    from ..llm import LlmSettings

    settings = LlmSettings.from_env()
    if requested is None:
        requested = bool(settings.planning) and settings.configured
    return requested, settings


def threshold_setting(value: float | None) -> float | None:
    """Próg z --prog, albo z CHROMA_RAG_PROG (środowisko lub plik ustawień), albo skalibrowany; 0 wyłącza."""
    if value is None:
        value = number_setting("CHROMA_RAG_PROG", float, DEFAULT_THRESHOLD)
    return value or None  # a value outside 0–1 is rejected by the API (validation.check_threshold)


def count_setting(value: int | None) -> int:
    """-k z opcji, albo z CHROMA_RAG_K, albo domyślne."""
    return number_setting("CHROMA_RAG_K", int, DEFAULT_COUNT) if value is None else value


def number_setting(key: str, kind: type, default: float) -> Any:
    """Liczba z ustawienia ``key`` (środowisko lub plik ustawień); zła wartość to jedno zdanie z radą."""
    raw = os.environ.get(key, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise UserError(f"Ustawienie {key} musi być liczbą, a ma wartość „{raw}” – popraw je w środowisku albo "
                        "w pliku ustawień (chroma-rag konfiguracja pokazuje, skąd pochodzi).") from None


def search_filters(
    files: list[str] | None,
    types: list[str] | None,
    year: int | None,
    year_from: int | None,
    year_to: int | None,
    articles: list[str] | None,
    acts: list[str] | None = None,
):
    from ..filters import SearchFilters

    return SearchFilters(
        files=files or [],
        types=types or [],
        year=year,
        year_from=year_from,
        year_to=year_to,
        articles=articles or [],
        acts=acts or [],
    )
