"""Planowanie zapytania modelem czatu: pytanie potoczne → zapytania językiem ustaw, akt i jednostka.

Jedno zapytanie czatu na pytanie; odpowiedź to obiekt JSON ``{"zapytania", "dokumenty", "jednostki"}``,
sprawdzany z indeksem (nieznane pliki i jednostki odpadają). W rozmowie to samo zapytanie niesie wcześniejsze
tury, a model dopisuje ``"pytanie_samodzielne"`` – pytanie dopowiadające zrozumiałe bez rozmowy, którego się
potem szuka (bez osobnego zapytania o przepisanie). Plany są zapamiętywane na dysku, więc
powtórzona ``ocena --przepisz`` nie pyta modelu. Planowanie nigdy nie psuje wyszukiwania: zła odpowiedź,
przekroczony czas albo błąd serwera dają plan z ``error`` i wyszukiwanie bez planu.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ..errors import UserError
from ..filters import normalize_article
from ..llm import ChatClient, Usage
from ..models import Exchange, Plan
from .act_labels import labelled

# 2: documents listed by the act's name and abbreviation ("Kodeks postępowania cywilnego (k.p.c.)"), not the title
PROMPT_VERSION = 2
LISTED_DOCUMENTS = 30  # with more files, list those the unplanned search ranks highest
TITLE_CHARS = 120  # an act's name in the list, at most (a prompt of 30 documents stays ~1500 tokens)
MAX_QUERIES = 3

PLAN_PROMPT = """Jesteś asystentem wyszukiwarki polskich aktów prawnych i innych dokumentów. Nie odpowiadasz \
na pytanie – przygotowujesz plan wyszukiwania w podanych dokumentach.

Zwróć dokładnie jeden obiekt JSON, bez komentarzy:
{"zapytania": [...], "dokumenty": [...], "jednostki": [...]}
- "zapytania": 1–3 krótkie zapytania językiem przepisów (terminy, jakimi posługują się ustawy \
i rozporządzenia), które znajdą fragment z odpowiedzią;
- "dokumenty": nazwy plików z listy, które najpewniej zawierają odpowiedź; [] gdy żaden z nich jej nie zawiera;
- "jednostki": numery artykułów lub paragrafów z odpowiedzią, np. "art. 394", "§ 6" – tylko gdy masz pewność; \
inaczej []."""

# Added to PLAN_PROMPT only for a follow-up, so a question without a conversation gets the very same request as
# before (stored plans, dev plans replay and measured prompts stay valid).
FOLLOW_UP_RULE = """

Pytanie jest dalszym ciągiem rozmowy podanej przed listą dokumentów. Dodaj do obiektu pole \
"pytanie_samodzielne": ostatnie pytanie przepisane tak, żeby było zrozumiałe bez rozmowy – dopisz, o czym mowa \
(akt, przepis, sytuację), nie dodawaj nic od siebie i nie odpowiadaj na nie; po polsku, w jednym zdaniu. \
Zapytania, dokumenty i jednostki dobierz do tego pytania samodzielnego."""
STANDALONE_CHARS = 2000  # as long as a question may be (serwuj's MAX_QUESTION_CHARS)


@dataclass(frozen=True)
class DocumentEntry:
    """Zaindeksowany dokument tak, jak go widzi model planujący: plik, tytuł aktu (z fragmentów), rodzaj, rok."""

    name: str
    title: str = ""
    type: str = ""
    year: int | None = None

    def line(self) -> str:
        """„kodeks-postepowania-cywilnego-DU-1964-296.txt | Kodeks postępowania cywilnego (k.p.c.) | kodeks |
        1964”: akt nazwą, pod jaką się go cytuje, ze zwyczajowym skrótem, bez daty uchwalenia; dokument, który nie
        jest aktem – swoim tytułem; najwyżej ``TITLE_CHARS`` znaków."""
        title = labelled(self.title, TITLE_CHARS)
        return " | ".join([self.name, title or "–", self.type or "–", str(self.year or "–")])


@dataclass
class Catalog:
    """Dokumenty indeksu (kolejność: najpierw najlepiej pasujące do pytania) i ich jednostki (plik →
    ``normalize_article``: „27”, „§ 3”) – do listy w prompcie i do sprawdzenia planu."""

    documents: list[DocumentEntry]
    units: dict[str, set[str]] = field(default_factory=dict)

    def listed(self) -> tuple[list[DocumentEntry], int]:
        """Dokumenty do promptu i liczba pominiętych."""
        return self.documents[:LISTED_DOCUMENTS], max(len(self.documents) - LISTED_DOCUMENTS, 0)


@dataclass
class PlanningStats:
    """Koszt planowania w ``ocena --przepisz``: zapytania do modelu, plany z pamięci, błędy, tokeny."""

    requests: int = 0
    cache_hits: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)

    def to_json(self) -> dict[str, Any]:
        return {
            "zapytania_do_modelu": self.requests,
            "z_pamieci": self.cache_hits,
            "bledy": self.errors,
            **self.usage.to_json(),
        }


def plan_messages(question: str, catalog: Catalog, earlier: Sequence[Exchange] = ()) -> list[dict[str, str]]:
    """Wiadomości planowania: reguły, wcześniejsze tury rozmowy (``earlier``, już przycięte limitami rozmowy),
    lista dokumentów (plik | tytuł (skrót) | rodzaj | rok) i pytanie dosłownie."""
    listed, more = catalog.listed()
    lines = [f"- {entry.line()}" for entry in listed]
    if more:
        lines.append(f"- … i {more} więcej (niewymienione, mniej pasujące do pytania)")
    turns = [f"Użytkownik: {turn.question}\nAsystent: {turn.answer}" for turn in earlier]
    user = (
        ("Rozmowa (od najstarszej tury):\n\n" + "\n\n".join(turns) + "\n\n" if turns else "")
        + "Dokumenty w indeksie (plik | tytuł (skrót) | rodzaj | rok):\n"
        + "\n".join(lines)
        + f"\n\nPytanie: {question}"
    )
    system = PLAN_PROMPT + (FOLLOW_UP_RULE if turns else "")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_plan(text: str, catalog: Catalog, follow_up: bool = False) -> Plan:
    """Plan z odpowiedzi modelu (obiekt JSON także w ```json …``` albo wśród tekstu); pliki spoza indeksu
    i jednostki, których nie ma w żadnym ze wskazanych plików, odpadają. ``follow_up``: pytanie w rozmowie – plan
    niesie też pytanie samodzielne (gdy go brak, szuka się pytania, jak je zadano). ``ValueError``, gdy
    w odpowiedzi nie ma poprawnego planu."""
    raw = _json_object(text)
    queries = _strings(raw, "zapytania")
    documents = _strings(raw, "dokumenty")
    units = _strings(raw, "jednostki")
    if queries is None and documents is None:
        raise ValueError("brak pól „zapytania” i „dokumenty”")
    names = _known_names(catalog)
    chosen = list(dict.fromkeys(n for n in (names.get(_name_key(d)) for d in documents or []) if n))
    kept_units = []
    for unit in units or []:
        canonical = _canonical_unit(unit)
        if canonical and any(normalize_article(canonical) in catalog.units.get(name, ()) for name in chosen):
            kept_units.append(canonical)
    standalone = raw.get("pytanie_samodzielne") if follow_up else None
    standalone = " ".join(standalone.split())[:STANDALONE_CHARS] if isinstance(standalone, str) else ""
    return Plan(
        queries=list(dict.fromkeys(q.strip() for q in queries or [] if q.strip()))[:MAX_QUERIES],
        documents=chosen,
        units=list(dict.fromkeys(kept_units)),
        standalone=standalone or None,
    )


def _json_object(text: str) -> dict[str, Any]:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start in (m.start() for m in re.finditer(r"\{", candidate)):
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    raise ValueError("odpowiedź nie zawiera obiektu JSON")


def _strings(raw: dict[str, Any], key: str) -> list[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"pole „{key}” nie jest listą")
    return [str(item) for item in value if isinstance(item, str | int | float)]


def _name_key(name: str) -> str:
    # Models drop the extension or change case; the stem still names the file.
    return PurePath(name.strip().lower()).stem


def _known_names(catalog: Catalog) -> dict[str, str]:
    names = {_name_key(entry.name): entry.name for entry in catalog.documents}
    names.update({_name_key(name): name for name in catalog.units})
    return names


def _canonical_unit(raw: str) -> str:
    """„art. 144”, „§ 6”, „Art. 385^1” → postać do wyświetlenia: „art. 144”, „§ 6”, „art. 385^1”."""
    text = raw.strip()
    if not re.search(r"\d", text):
        return ""
    unit = normalize_article(text)
    return unit if unit.startswith("§") else f"art. {unit}"


class Planner:
    """Planuje pytania jednym zapytaniem czatu; plany zapamiętuje w ``cache_dir`` (``None``: bez pamięci)."""

    def __init__(self, client: ChatClient, cache_dir: Path | None, use_cache: bool = True) -> None:
        self.client = client
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.stats = PlanningStats()

    def plan(self, question: str, catalog: Catalog, earlier: Sequence[Exchange] = ()) -> Plan:
        """Plan pytania (``earlier``: wcześniejsze tury rozmowy – plan niesie wtedy pytanie samodzielne); nigdy
        nie zgłasza błędu – błąd trafia do ``Plan.error``."""
        messages = plan_messages(question, catalog, earlier)
        path = self._cache_path(question, catalog, earlier)
        follow_up = bool(earlier)
        if self.use_cache and path is not None and path.is_file():
            try:
                plan = parse_plan(path.read_text(encoding="utf-8"), catalog, follow_up)
                plan.cached = True
                self.stats.cache_hits += 1
                return plan
            except (OSError, ValueError):
                pass  # a damaged cache entry is just asked again
        self.stats.requests += 1
        try:
            completion = self.client.complete(messages, json_object=True)
        except UserError as exc:
            self.stats.errors += 1
            return Plan(error=str(exc), team_error=exc.message("web"))
        except Exception as exc:  # planning is optional: whatever the transport throws, search goes on
            self.stats.errors += 1
            return Plan(error=f"nieoczekiwana odpowiedź serwera modelu ({type(exc).__name__})")
        self.stats.usage += completion.usage
        try:
            plan = parse_plan(completion.text, catalog, follow_up)
        except ValueError as exc:
            self.stats.errors += 1
            return Plan(error=f"model zwrócił niepoprawny plan ({exc})")
        if path is not None:
            _write_atomically(path, completion.text)
        return plan

    def _cache_path(self, question: str, catalog: Catalog, earlier: Sequence[Exchange] = ()) -> Path | None:
        if self.cache_dir is None:
            return None
        listed = [entry.line() for entry in catalog.listed()[0]]
        parts: list[Any] = [self.client.settings.model, PROMPT_VERSION, question, listed]
        if earlier:  # a follow-up's plan depends on the conversation; a lone question's key stays as it was
            parts.append([list(turn) for turn in earlier])
        key = json.dumps(parts, ensure_ascii=False)
        return self.cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def _write_atomically(path: Path, text: str) -> None:
    """Zapis przez plik tymczasowy i ``os.replace``: równoległy odczyt nie zobaczy połowy planu. Pamięć
    planów jest tylko przyspieszeniem, więc nieudany zapis (np. baza tylko do odczytu) niczego nie psuje."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


def catalog_from(
    titles: dict[str, str], types: dict[str, str], years: dict[str, int], units: dict[str, set[str]],
    ranked_files: Sequence[str] = (),
) -> Catalog:
    """Katalog z kolumn indeksu; ``ranked_files`` (pliki w kolejności wyszukiwania bez planu) idą na początek."""
    order = {name: position for position, name in enumerate(dict.fromkeys(ranked_files))}
    names = sorted(titles, key=lambda name: (order.get(name, len(order)), name))
    documents = [DocumentEntry(name, titles[name], types.get(name, ""), years.get(name)) for name in names]
    return Catalog(documents, units)
