"""Polecenie pytaj: odpowiedź modelu czatu z samych fragmentów (na bieżąco albo jako JSON), prompt bez pytania
modelu i źródła odpowiedzi."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..plural import TOKEN, count
from .options import (
    ActsOption,
    ArticlesOption,
    AskCountOption,
    DbOption,
    DimensionsOption,
    FilesOption,
    FreshPlanOption,
    JsonOption,
    ModelOption,
    ModeOption,
    ServerOption,
    ThresholdOption,
    TypesOption,
    YearFromOption,
    YearOption,
    YearToOption,
    count_setting,
    open_index,
    search_filters,
    threshold_setting,
)
from .output import err, out, print_json
from .search import print_plan, relevance_label

if TYPE_CHECKING:
    from ..answering.answer import Answer
    from ..answering.conversation import Conversation, Turn
    from ..api import Index
    from ..models import Hit


# pytaj and rozmowa: which saved conversation the questions continue (Conversation, _chosen_conversation)
FollowUpOption = Annotated[
    bool, typer.Option("--dalej", help="Dopytaj w ostatniej rozmowie (model zna jej wcześniejsze pytania; "
                       "domyślnie nowa rozmowa).")
]
ConversationOption = Annotated[
    str | None, typer.Option("--rozmowa", metavar="ID", help="Dopytaj w tej zapisanej rozmowie (domyślnie nowa "
                             "rozmowa, z --dalej ostatnia).", show_default=False)
]


def ask_command(
    question: Annotated[
        str | None, typer.Argument(metavar="PYTANIE", help="Pytanie do dokumentów (z --ponow – poprawione ostatnie "
                                   "pytanie rozmowy).", show_default=False)
    ] = None,
    count: AskCountOption = None,
    files: FilesOption = None,
    acts: ActsOption = None,
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
    follow_up: FollowUpOption = False,
    conversation_id: ConversationOption = None,
    again: Annotated[
        bool, typer.Option("--ponow", help="Odpowiedz od nowa na ostatnie pytanie rozmowy (ostatniej albo --rozmowa "
                           "ID); z PYTANIEM – na nie zamiast tamtego. Odpowiedź zastępuje poprzednią.")
    ] = False,
    mode: ModeOption = "hybryda",
    threshold: ThresholdOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Odpowiada na pytanie modelem czatu wyłącznie na podstawie znalezionych fragmentów, z cytatami. Każda
    odpowiedź trafia do zapisanej rozmowy; --dalej dopytuje w ostatniej, --ponow odpowiada od nowa."""
    if question is None and not again:
        from ..errors import UsageError

        raise UsageError('Brakuje pytania – np. chroma-rag pytaj "Ile dni urlopu?" (albo --ponow, żeby odpowiedzieć '
                         "od nowa na ostatnie pytanie rozmowy).")
    filters = search_filters(files, types, year, year_from, year_to, articles, acts)
    index = open_index(db, model, dimensions, server)
    from ..llm import LlmSettings

    settings = LlmSettings.from_env()
    planned = rewrite if rewrite is not None else settings.planning is not False
    question, conversation = _asked(index, question, conversation_id, follow_up, again)
    if show_prompt:
        hits = index.search(
            question, k=count_setting(count), filters=filters, mode=mode, threshold=threshold_setting(threshold)
        )
        history = conversation.history()[0]
        planning = index.planning_messages(question, filters, mode, history) if planned else None
        _print_prompt(question, hits, planning, as_json, history)
        return
    _answer(index, question, conversation, dict(
        k=count_setting(count), filters=filters, threshold=threshold_setting(threshold), mode=mode,
        rewrite=planned, fresh_plan=fresh_plan, settings=settings,
    ), streaming=not (no_stream or as_json), as_json=as_json)


def conversation_command(
    follow_up: FollowUpOption = False,
    conversation_id: ConversationOption = None,
    count: AskCountOption = None,
    files: FilesOption = None,
    acts: ActsOption = None,
    types: TypesOption = None,
    year: YearOption = None,
    year_from: YearFromOption = None,
    year_to: YearToOption = None,
    articles: ArticlesOption = None,
    mode: ModeOption = "hybryda",
    threshold: ThresholdOption = None,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Rozmowa z dokumentami: kolejne pytania z wejścia (wiersz po wierszu), każde dopytuje w tej samej
    rozmowie; pusty wiersz albo koniec wejścia (Ctrl-D) kończy."""
    filters = search_filters(files, types, year, year_from, year_to, articles, acts)
    index = open_index(db, model, dimensions, server)
    from ..llm import LlmSettings

    settings = LlmSettings.from_env()
    conversation = _chosen_conversation(index, conversation_id, follow_up)
    options = dict(k=count_setting(count), filters=filters, threshold=threshold_setting(threshold), mode=mode,
                   settings=settings)
    interactive = sys.stdin.isatty()
    if interactive:
        err.print("Pytaj o dokumenty; pusty wiersz albo Ctrl-D kończy.", style="dim")
    while True:
        try:
            question = input("Pytanie: " if interactive else "").strip()
        except EOFError:
            break
        if not question:
            break
        if not interactive:
            out.print(f"Pytanie: {question}", markup=False, highlight=False)
        _answer(index, question, conversation, options, streaming=True, as_json=False)


def _asked(index: Index, question: str | None, conversation_id: str | None, follow_up: bool,
           again: bool) -> tuple[str, Conversation]:
    """Pytanie i rozmowa, w której padnie; z ``again`` (--ponow) rozmowa cofnięta o ostatnią turę, a pytanie –
    podane albo tamtej tury. Rozmowa zapisuje się dopiero z nową odpowiedzią, więc błąd modelu niczego nie psuje."""
    if not again:
        return str(question), _chosen_conversation(index, conversation_id, follow_up)
    conversation = _chosen_conversation(index, conversation_id, follow_up=True)
    if not conversation.turns:
        from ..errors import UsageError

        raise UsageError('Nie ma jeszcze rozmowy, w której można odpowiedzieć od nowa – zadaj pytanie: '
                         'chroma-rag pytaj "PYTANIE".')
    asked = question or conversation.turns[-1].question
    conversation.rewind(len(conversation.turns))
    return asked, conversation


def _chosen_conversation(index: Index, conversation_id: str | None, follow_up: bool) -> Conversation:
    """Rozmowa z --rozmowa, ostatnia z --dalej, inaczej nowa."""
    conversations = index.conversations
    if conversation_id is not None:
        return conversations.load(conversation_id.strip())
    return (conversations.last() if follow_up else None) or conversations.new()


def _answer(index: Index, question: str, conversation: Conversation, options: dict[str, Any], *, streaming: bool,
            as_json: bool) -> None:
    """Jedna odpowiedź w rozmowie: na bieżąco (albo JSON), źródła, zapis tury."""
    answer = index.ask(question, on_token=_write if streaming else None, on_plan=None if as_json else print_plan,
                       conversation=conversation, **options)
    index.remember(conversation, question, answer)
    if as_json:
        print_json({**answer.to_json(), "rozmowa": conversation.id})
        return
    _write(("" if streaming else answer.text) + "\n")
    _print_sources(answer)
    _print_conversation(answer, conversation.id)


def _print_conversation(answer: Answer, conversation_id: str) -> None:
    if answer.standalone:
        err.print(f"Szukano pytania: „{answer.standalone}”.", style="dim", markup=False, highlight=False)
    if answer.conversation_note:
        err.print(f"Uwaga: {answer.conversation_note}", style="yellow", markup=False, highlight=False)
    err.print(f'Rozmowa {conversation_id} – dopytaj: chroma-rag pytaj --dalej "…"', style="dim", markup=False,
              highlight=False)


def _write(text: str) -> None:
    # Plain stdout, not rich: the answer's [plik, art. N] would be taken for markup.
    sys.stdout.write(text)
    sys.stdout.flush()


def _print_prompt(question: str, hits: list[Hit], planning: list[dict[str, str]] | None, as_json: bool,
                  history: list[Turn]) -> None:
    from ..answering.answer import NOT_FOUND, build_messages

    if as_json:
        print_json({"planowanie": planning, "wiadomosci": build_messages(question, hits, history) if hits else None})
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
    _print_messages(build_messages(question, hits, history))


def _print_messages(messages: list[dict[str, str]]) -> None:
    for message in messages:
        out.rule(message["role"])
        _write(message["content"] + "\n")


def _print_sources(answer: Answer) -> None:
    from ..answering.answer import citation_label, citation_names

    if answer.hits:
        out.print("Źródła:", style="bold")
        top = answer.hits[0].score or 1.0
        names = citation_names(answer.hits)
        for rank, hit in enumerate(answer.hits, start=1):
            line = f"  {rank}. {citation_label(hit, names)}, strona {hit.page}, {relevance_label(hit, top)}"
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
