"""Odpowiedzi z cytatami: fragmenty z wyszukiwania → prompt → model czatu → sprawdzenie cytatów.

Wyszukiwanie jest wstrzykiwane (``retrieve``), więc ten moduł nie zna magazynu ani progów – dostaje
fragmenty już przefiltrowane i przycięte progiem trafności, najlepszy pierwszy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, NamedTuple

from ..errors import FiltersMatchNothing, Surface, UserError
from ..filters import normalize_article
from ..llm import ChatClient, LlmSettings, Usage
from ..models import Hit, Plan, distinct_names, stored_path
from .conversation import DEFAULT_LIMITS, ConversationLimits, Turn, history_messages, standalone_question

NOT_FOUND = "Nie ma tego w dokumentach."

SYSTEM_PROMPT = f"""Jesteś asystentem, który odpowiada na pytania o treść polskich aktów prawnych i innych \
dokumentów. Użytkownik podaje fragmenty dokumentów i pytanie.

Zasady:
1. Odpowiadaj po polsku wyłącznie na podstawie podanych fragmentów. Nie korzystaj z własnej wiedzy \
ani z innych źródeł.
2. Każde stwierdzenie opatrz cytatem w nawiasach kwadratowych w postaci [plik, art. N] – dokładnie \
tak, jak w nagłówku fragmentu, z którego pochodzi (dla paragrafów [plik, § N], dla dokumentów bez \
artykułów [plik, s. N]). Nie cytuj niczego, czego nie ma we fragmentach.
3. Jeśli fragmenty nie zawierają odpowiedzi na pytanie, odpowiedz dokładnie: {NOT_FOUND}
4. Odpowiadaj zwięźle i rzeczowo."""

_BRACKET = re.compile(r"\[([^\[\]\n]+)\]")
# "art. 385^1" and "art. 385¹" (as printed in the text) are article 385^1, not 385
_UNIT = re.compile(r"(art\.|§|str\.|s\.)\s*(\d+[a-z]*(?:\s?\^\s?\d+|[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?)", re.IGNORECASE)


class Citation(NamedTuple):
    """Cytat ``[plik, jednostka]``; jednostka w postaci kanonicznej: „art. 5”, „§ 3” albo „s. 2”."""

    file: str
    unit: str

    def __str__(self) -> str:
        return f"[{self.file}, {self.unit}]"


@dataclass
class Answer:
    """Odpowiedź modelu; ``hits`` to fragmenty przekazane modelowi, najlepszy pierwszy."""

    text: str
    hits: list[Hit]
    usage: Usage = field(default_factory=Usage)
    model: str | None = None  # None: model nie był pytany
    invalid_citations: list[Citation] = field(default_factory=list)
    reason: str | None = None  # like SearchResult.reason: "filtry" or "prog" when no fragment was given
    plan: Plan | None = None  # the query plan retrieval used (``SearchResult.plan``)
    standalone: str | None = None  # in a conversation: the question as searched, without the earlier turns
    earlier_turns: int = 0  # in a conversation: how many earlier turns the model got
    dropped_turns: int = 0  # ...and how many older ones the limits left out
    conversation_note: str | None = None  # ...said to the user when some were left out (``ConversationLimits.note``)

    @property
    def found(self) -> bool:
        return self.reason is None and self.text.strip() != NOT_FOUND

    def message(self, surface: Surface = "cli") -> str:
        """Tekst odpowiedzi dla powierzchni: gdy filtry nic nie wybrały, zdanie o tym jej językiem."""
        return FiltersMatchNothing().message(surface) if self.reason == "filtry" else self.text

    def to_json(self, surface: Surface = "cli") -> dict[str, Any]:
        return {
            "odpowiedz": self.message(surface),
            "fragmenty": [hit.to_json() for hit in self.hits],
            "uzycie": self.usage.to_json(),
            "model": self.model,
            "niepasujace_cytaty": [str(c) for c in self.invalid_citations],
            "plan": self.plan.to_json(surface) if self.plan is not None else None,
            "powod": self.reason,
            "pytanie_samodzielne": self.standalone,
            "tury_dla_modelu": self.earlier_turns,
            "pominiete_tury": self.dropped_turns,
            "uwaga_rozmowy": self.conversation_note,
        }


def ask(
    question: str,
    retrieve: Callable[[str, list[Turn]], list[Hit]],
    *,
    settings: LlmSettings | None = None,
    on_token: Callable[[str], None] | None = None,
    client: ChatClient | None = None,
    surface: Surface = "cli",
    history: list[Turn] | None = None,
    dropped_turns: int = 0,
    limits: ConversationLimits = DEFAULT_LIMITS,
    planned: bool = False,
) -> Answer:
    """Odpowiada na ``question`` z fragmentów zwróconych przez ``retrieve(pytanie, tury)`` (najlepszy pierwszy;
    wynik ``SearchResult`` wnosi też plan zapytania). ``history``: wcześniejsze tury rozmowy (już przycięte
    ``limits``; ``dropped_turns`` – ile pominięto) – wtedy wyszukiwanie dostaje pytanie samodzielne napisane
    przez model, a model odpowiadający także te tury. ``planned``: ``retrieve`` planuje wyszukiwanie i dostaje
    tury – pytanie samodzielne przychodzi w planie, z tego samego zapytania czatu; inaczej (także gdy plan się nie
    udał – wtedy ``retrieve`` szuka dalej bez planu) pisze je osobne zapytanie i ``retrieve`` dostaje pytanie już
    samodzielne.

    Bez fragmentów zwraca „Nie ma tego w dokumentach.” bez zapytania do modelu. ``on_token``
    dostaje odpowiedź kawałkami w miarę jej nadchodzenia (także odpowiedź bez modelu, w całości – zdanie
    o filtrach językiem ``surface``).
    """
    question = question.strip()
    if not question:
        raise UserError("Pytanie jest puste.")
    client = client or ChatClient(settings or LlmSettings.from_env())
    history = history or []
    rewritten = bool(history) and not planned
    standalone, spent = standalone_question(question, history, client) if rewritten else (None, Usage())
    hits = retrieve(standalone or question, [] if rewritten else history)
    plan = getattr(hits, "plan", None)
    if planned and searched_again(hits, history):
        standalone, spent = standalone_question(question, history, client)
        hits = retrieve(standalone, [])
    standalone = standalone or (plan.standalone if plan is not None else None)
    conversation = {"standalone": standalone, "earlier_turns": len(history), "dropped_turns": dropped_turns,
                    "conversation_note": limits.note(len(history), len(history) + dropped_turns) if dropped_turns
                    else None}
    if not hits:
        answer = Answer(NOT_FOUND, [], spent, None, [], getattr(hits, "reason", None), plan, **conversation)
        if answer.reason == "filtry":
            answer.text = answer.message("cli")
        if on_token is not None:
            on_token(answer.message(surface))
        return answer
    completion = client.complete(build_messages(question, hits, history, standalone), on_token)
    spent += completion.usage
    return Answer(
        text=completion.text,
        hits=list(hits),
        usage=spent,
        model=completion.model,
        invalid_citations=invalid_citations(completion.text, hits),
        plan=plan,
        **conversation,
    )


def searched_again(found: object, earlier: list[Turn]) -> bool:
    """Czy ``ask`` szuka dopytania jeszcze raz: plan, który miał przynieść pytanie samodzielne, się nie udał,
    a samo dopytanie („a czy może z niej zrezygnować?”) nie niesie rozmowy – pisze je wtedy osobne zapytanie."""
    return bool(earlier) and bool(getattr(found, "plan_failed", False))


def build_messages(question: str, hits: list[Hit], history: list[Turn] | None = None,
                   standalone: str | None = None) -> list[dict[str, str]]:
    """Wiadomości dla modelu: reguły, wcześniejsze tury rozmowy, potem fragmenty od najmniej do najbardziej
    trafnego (``hits`` przychodzą najlepszy pierwszy) i na końcu pytanie (z jego samodzielną postacią, której
    szukano) – model najlepiej pamięta to, co tuż przed nim. Nagłówki „=== … ===” nie mylą się z nagłówkami
    Markdown w samych dokumentach."""
    names = citation_names(hits)
    blocks = [
        f"=== Fragment {number}: {citation_label(hit, names)}, strona {hit.page} ===\n{hit.text}"
        for number, hit in enumerate(reversed(hits), start=1)
    ]
    user = (
        "Fragmenty dokumentów (od najmniej do najbardziej trafnego):\n\n"
        + "\n\n".join(blocks)
        + f"\n\nPytanie: {question}"
        + (f"\n(Samodzielnie: {standalone})" if standalone and standalone != question else "")
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, *history_messages(history or []),
            {"role": "user", "content": user}]


def citation_label(hit: Hit, names: dict[str, str] | None = None) -> str:
    """Cytat, którego model ma użyć dla fragmentu, np. ``[ustawa.pdf, art. 5]``; ``names`` z ``citation_names``
    tych samych fragmentów rozróżnia pliki o tej samej nazwie."""
    unit = hit.cited_unit or _hit_units(hit)[0]  # "art. 505 k.p.c.": the checker reads the unit before the act
    return f"[{(names or {}).get(_path(hit), hit.file)}, {unit}]"


def citation_names(hits: list[Hit], indexed_paths: Iterable[str] = ()) -> dict[str, str]:
    """Ścieżka → nazwa pliku w cytacie: sama nazwa, a gdy ta sama nazwa przychodzi z kilku folderów – z tyloma
    folderami nad nią, ile trzeba, żeby je rozróżnić („kadry/regulamin.txt”, „it/regulamin.txt”).

    ``indexed_paths``: ścieżki wszystkich plików indeksu – wtedy rozróżnia też plik, którego imiennik z innego
    folderu nie trafił do wyników (cytat ma dać się otworzyć sam, bez wyników obok)."""
    shown = {_path(hit) for hit in hits}
    names = {stored_path(path).name for path in shown}
    return distinct_names([*shown, *(p for p in indexed_paths if stored_path(p).name in names)])


def find_citations(text: str) -> list[Citation]:
    """Cytaty w odpowiedzi: ``[plik, art. 5]``, ``[plik, art. 5 ust. 2; plik2, § 3]``,
    ``[plik, art. 1, art. 2]``.

    Z „art. 148 § 1” liczy się tylko artykuł (§ jest tu jego częścią)."""
    found: list[Citation] = []
    for bracket in _BRACKET.finditer(text):
        for part in bracket.group(1).split(";"):
            file, comma, units = part.partition(",")
            if not comma or not file.strip():
                continue
            for segment in units.split(","):
                match = _UNIT.search(segment)
                if match:
                    found.append(Citation(file.strip(), _canonical_unit(match)))
    return list(dict.fromkeys(found))


def invalid_citations(text: str, hits: list[Hit]) -> list[Citation]:
    """Cytaty z odpowiedzi, którym nie odpowiada żaden z podanych fragmentów."""
    names = citation_names(hits)
    given = {(_file_key(names[_path(hit)]), unit) for hit in hits for unit in _hit_units(hit)}
    return [c for c in find_citations(text) if (_file_key(c.file), c.unit) not in given]


def _hit_units(hit: Hit) -> list[str]:
    """Jednostki, którymi wolno zacytować fragment: jego artykuł/paragraf (jeśli ma) i strona."""
    page = f"s. {hit.page}"
    return [hit.unit, page] if hit.unit else [page]


def _canonical_unit(match: re.Match[str]) -> str:
    kind = match.group(1).lower()
    if kind in ("str.", "s."):
        return f"s. {match.group(2).lower()}"
    return f"{kind} {normalize_article(match.group(2))}"


def _path(hit: Hit) -> str:
    return str(hit.metadata.get("sciezka") or hit.file)


def _file_key(name: str) -> str:
    # Models often drop the extension or change case; the stem (with the folders a same-named file is cited
    # with) still identifies the file.
    path = PurePath(name.strip().lower())
    return str(path.parent / path.stem)
