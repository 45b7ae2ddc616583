"""Pytanie i filtry z zapytania HTTP (parametry adresu albo treść JSON) – te same nazwy co opcje CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from ..filters import SearchFilters
from ..retrieval.search import DEFAULT_MODE

MAX_QUESTION_CHARS = 2000
MAX_RESULTS = 50
MAX_VALUES = 50  # a repeated filter (plik, typ, art) with more values than any real index has files
MAX_CONVERSATIONS = 200  # deleted at once: four times the page's own list (CONVERSATIONS_SIZE in app.js)


class BadRequest(UserError):
    """Niepoprawne zapytanie HTTP (brak pola, zła liczba); odpowiedź 400."""


@dataclass
class Query:
    question: str
    k: int
    filters: SearchFilters
    mode: str
    conversation: str | None = None  # /api/pytaj: the id of the saved conversation the question continues
    turn: int | None = None  # ...and the turn (from 1) answered anew: a regenerated answer or an edited question


def query_from_params(params: Any, question_key: str = "q") -> Query:
    """Z parametrów adresu (``QueryParams`` Starlette): ``?q=&plik=&plik=&rok=…``."""
    return _query(lambda key: params.get(key), lambda key: params.getlist(key), question_key)


def query_from_body(body: Any) -> Query:
    """Z treści JSON ``{"pytanie": …, "plik": [...] | "…", "rok": 2009, …}``."""
    if not isinstance(body, dict):
        raise BadRequest("Treść zapytania musi być obiektem JSON, np. {\"pytanie\": \"Ile dni urlopu?\"}.")

    def values(key: str) -> list[Any]:
        value = body.get(key)
        if value is None:
            return []
        return value if isinstance(value, list) else [value]

    query = _query(lambda key: body.get(key), values, "pytanie")
    conversation = body.get("rozmowa")
    if conversation is not None and not isinstance(conversation, str):
        raise BadRequest("Pole „rozmowa” musi być napisem – identyfikatorem rozmowy z poprzedniej odpowiedzi.")
    query.conversation = conversation or None
    query.turn = _number(body.get("tura"), "tura")
    if query.turn is not None and (query.conversation is None or query.turn < 1):
        raise BadRequest("Pole „tura” to numer tury rozmowy (od 1), na którą model ma odpowiedzieć od nowa – "
                         "podaj go razem z polem „rozmowa”.")
    return query


def conversation_ids(body: Any) -> list[str] | None:
    """Rozmowy do usunięcia z treści ``{"rozmowy": ["ID", …]}``; ``None``, gdy ich nie wymieniono (wszystkie)."""
    ids = body.get("rozmowy") if isinstance(body, dict) else None
    if ids is None:
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise BadRequest("Pole „rozmowy” to lista identyfikatorów rozmów, np. {\"rozmowy\": [\"…\"]}.")
    if len(ids) > MAX_CONVERSATIONS:
        raise BadRequest(f"Za dużo rozmów naraz (najwyżej {MAX_CONVERSATIONS}) – usuń je w kilku częściach.")
    return ids


def _query(one: Callable[[str], Any], many: Callable[[str], list[Any]], question_key: str) -> Query:
    question = one(question_key)
    if not isinstance(question, str) or not question.strip():
        raise BadRequest(f"Brakuje pytania – podaj je w polu „{question_key}”.")
    _encodable(question, question_key)
    if len(question) > MAX_QUESTION_CHARS:
        raise BadRequest(f"Pytanie jest za długie (ponad {MAX_QUESTION_CHARS} znaków) – skróć je.")
    mode = one("tryb") or DEFAULT_MODE
    if not isinstance(mode, str):
        raise BadRequest("Pole „tryb” musi być napisem: hybryda, wektor albo slowa.")
    _encodable(mode, "tryb")
    k = _number(one("k"), "k")
    k = 5 if k is None else k
    if not 1 <= k <= MAX_RESULTS:
        raise BadRequest(f"Liczba wyników „k” musi być od 1 do {MAX_RESULTS}.")
    filters = SearchFilters(
        files=_texts(many("plik"), "plik"),
        types=_texts(many("typ"), "typ"),
        year=_number(one("rok"), "rok"),
        year_from=_number(one("od_roku"), "od_roku"),
        year_to=_number(one("do_roku"), "do_roku"),
        articles=_texts(many("art"), "art"),
        acts=_texts(many("akt"), "akt"),
    )
    return Query(question.strip(), k, filters, mode)


def _texts(values: list[Any], key: str) -> list[str]:
    if len(values) > MAX_VALUES:
        raise BadRequest(f"Za dużo wartości filtra „{key}” (najwyżej {MAX_VALUES}).")
    texts = [str(v).strip() for v in values if isinstance(v, str | int) and not isinstance(v, bool)]
    if len(texts) != len(values):
        raise BadRequest(f"Filtr „{key}” przyjmuje napisy, np. \"{key}\": [\"…\"].")
    for text in texts:
        _encodable(text, key)
    return [t for t in texts if t]


def _encodable(text: str, key: str) -> None:
    """Napis zapisywalny w UTF-8: JSON (``"\\ud800"``) może nieść samotny surogat UTF-16, na którym wyłożyłoby się
    każde dalsze kodowanie (model, dziennik, odpowiedź)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"Pole „{key}” zawiera niepoprawne znaki (samotny surogat UTF-16) – wyślij tekst w UTF-8."
                         ) from None


def _number(value: Any, key: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        _encodable(value, key)  # before it is quoted in an error
    # JSON gives 1.5 and 1e400 (infinity) as floats; int() would silently round the one and fail on the other
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise BadRequest(f"Pole „{key}” musi być liczbą całkowitą, a ma wartość „{value}”.")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"Pole „{key}” musi być liczbą całkowitą, a ma wartość „{value}”.") from None
