"""``ocena``: jakość wyszukiwania na pytaniach z odpowiedziami (format ``pytania-dev.jsonl``).

Trafienie na pozycji r: wynik ma oczekiwany plik i jedną z wymienionych jednostek (numery porównywane
bez spacji i ``§``). Pytania ``spoza`` (``plik`` null) sprawdzają próg „nic trafnego”.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError, os_reason
from ..filters import SearchFilters, article_key
from ..models import Hit

CUTOFFS = (1, 3, 5, 10)
MRR_DEPTH = 10


@dataclass
class Question:
    """Jedno pytanie zbioru oceny."""

    text: str
    file: str | None
    articles: list[str]
    filters: SearchFilters = field(default_factory=SearchFilters)
    kind: str = ""

    @property
    def answerable(self) -> bool:
        return self.file is not None


def load_questions(path: Path) -> list[Question]:
    """Pytania z pliku JSONL; błędny wiersz to błąd użytkownika z numerem wiersza."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"Nie można odczytać pliku pytań „{path}”: {os_reason(exc)}.") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"Plik pytań „{path}” nie jest tekstem UTF-8 (JSONL) – zapisz go w UTF-8.") from exc
    questions = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            questions.append(_question(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise UserError(
                f"Wiersz {number} pliku „{path}” nie jest poprawnym JSON-em (znak {exc.colno}) – każdy wiersz to "
                'jeden obiekt, np. {"pytanie": "…", "plik": "…", "art": ["5"]}.'
            ) from exc
        except KeyError as exc:
            raise UserError(f"Wiersz {number} pliku „{path}” nie ma pola {exc} – wymagane jest „pytanie”.") from exc
        except (ValueError, TypeError, AttributeError) as exc:
            raise UserError(
                f"Wiersz {number} pliku „{path}” nie jest poprawnym pytaniem (zły typ pola: {type(exc).__name__})."
            ) from exc
    if not questions:
        raise UserError(f"Plik „{path}” nie zawiera żadnych pytań.")
    return questions


def _question(row: dict[str, Any]) -> Question:
    raw_filter = row.get("filtr") or {}
    files = raw_filter.get("plik")
    types = raw_filter.get("typ")
    filters = SearchFilters(
        files=[files] if isinstance(files, str) else list(files or []),
        types=[types] if isinstance(types, str) else list(types or []),
        year=raw_filter.get("rok"),
    )
    return Question(
        text=str(row["pytanie"]),
        file=row.get("plik"),
        articles=[str(a) for a in row.get("art") or []],
        filters=filters,
        kind=str(row.get("rodzaj") or ""),
    )


def split_by_index(questions: Sequence[Question], indexed: set[str]) -> tuple[list[Question], list[str]]:
    """Pytania o pliki z indeksu i lista plików, których w nim nie ma (ich pytania się pomija: indeks
    częściowy to nie błąd oceny). Wszystkie pominięte – błąd z listą brakujących plików."""
    def files(question: Question) -> set[str]:
        return ({question.file} if question.file else set()) | set(question.filters.files)

    kept = [q for q in questions if files(q) <= indexed]
    missing = sorted(set().union(*(files(q) for q in questions)) - indexed)
    if not kept:
        raise UserError(
            f"Żadne pytanie nie dotyczy plików z indeksu – brakuje: {', '.join(missing[:5])}"
            f"{' …' if len(missing) > 5 else ''}; zaindeksuj je (chroma-rag indeksuj) albo wskaż inną bazę."
        )
    return kept, missing


def is_hit(hit: Hit, question: Question) -> bool:
    expected = {article_key(a) for a in question.articles}
    return hit.file == question.file and bool(hit.art) and article_key(hit.art) in expected


def first_hit_rank(hits: Sequence[Hit], question: Question) -> int | None:
    """Pozycja (od 1) pierwszego trafienia albo ``None``."""
    return next((rank for rank, hit in enumerate(hits, start=1) if is_hit(hit, question)), None)


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    """hit@k (odsetek pytań z trafieniem na pozycji ≤ k) i MRR@10 z pozycji pierwszych trafień."""
    n = len(ranks)
    if not n:
        return {**{f"hit@{c}": 0.0 for c in CUTOFFS}, "mrr": 0.0}
    result = {f"hit@{c}": sum(1 for r in ranks if r is not None and r <= c) / n for c in CUTOFFS}
    result["mrr"] = sum(1 / r for r in ranks if r is not None and r <= MRR_DEPTH) / n
    return result


@dataclass
class Outcome:
    """Wynik jednego pytania: pozycja trafienia, czy próg odmówił, co było pierwsze."""

    question: Question
    rank: int | None
    refused: bool
    first: Hit | None


Ranker = Callable[[Question], list[Hit]]
Refuses = Callable[[Question, list[Hit]], bool]


def run(questions: Iterable[Question], ranker: Ranker, refuses: Refuses) -> list[Outcome]:
    """Zadaje każde pytanie (ranking bez progu) i osobno sprawdza próg, by odróżnić pudło rankingu
    od odmowy progu."""
    outcomes = []
    for question in questions:
        hits = ranker(question)
        refused = refuses(question, hits)
        rank = None if refused else first_hit_rank(hits, question)
        outcomes.append(Outcome(question, rank, refused, hits[0] if hits else None))
    return outcomes


def report(outcomes: Sequence[Outcome], seconds: float = 0.0) -> dict[str, Any]:
    """Podsumowanie w kształcie ``ocena --json``."""
    answerable = [o for o in outcomes if o.question.answerable]
    outside = [o for o in outcomes if not o.question.answerable]
    result: dict[str, Any] = {"n": len(answerable), **_rounded(metrics([o.rank for o in answerable]))}
    result["per_rodzaj"] = _grouped(answerable, lambda o: o.question.kind or "–")
    result["per_plik"] = _grouped(answerable, lambda o: str(o.question.file))
    result["odmowy"] = {
        "spoza": len(outside),
        "poprawne": sum(o.refused for o in outside),
        "utracone_trafienia": sum(o.refused for o in answerable),
    }
    result["pudla"] = [_miss(o) for o in answerable if o.rank is None]
    result["pudla"] += [_miss(o) for o in outside if not o.refused]
    result["czas_s"] = round(seconds, 2)
    return result


def _grouped(outcomes: Sequence[Outcome], key: Callable[[Outcome], str]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[int | None]] = {}
    for outcome in outcomes:
        groups.setdefault(key(outcome), []).append(outcome.rank)
    return {name: {"n": len(ranks), **_rounded(metrics(ranks))} for name, ranks in sorted(groups.items())}


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in values.items()}


def _miss(outcome: Outcome) -> dict[str, Any]:
    question, first = outcome.question, outcome.first
    return {
        "pytanie": question.text,
        "oczekiwane": {"plik": question.file, "art": question.articles},
        "odmowa": outcome.refused,
        "pierwszy": None if outcome.refused or first is None else {"plik": first.file, "art": first.art},
    }


def evaluate(questions: Sequence[Question], ranker: Ranker, refuses: Refuses) -> dict[str, Any]:
    started = time.perf_counter()
    outcomes = run(questions, ranker, refuses)
    return report(outcomes, time.perf_counter() - started)
