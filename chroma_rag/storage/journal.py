"""Dziennik zmian kolekcji (tryb folderu): łańcuch wpisów „znacznik przed → znacznik po: te id”, zapisywany przez
``ChunkCollection`` przed każdą zmianą danych, i pliki treści zapisów obok (``journal_pages``). Z niego indeks
pochodny (``chroma_rag.derived``: migawka wektorów i indeks słów) dociąga tylko zmienione fragmenty, zamiast
porównywać albo pobierać całą kolekcję.

Plik ``dziennik.jsonl`` leży w folderze danych pochodnych kolekcji (``migawka-<kolekcja>/``). Wpis powstaje przed
zmianą danych: przerwany zapis zostawia wpis bez następcy, a kolejny zapis dopisuje drugi wpis z tym samym
``przed`` – rozwidlenie, po którym czytelnik buduje wszystko od zera."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import journal_pages

JOURNAL = "dziennik.jsonl"


@dataclass(frozen=True)
class JournalLimits:
    """Ile miejsca zajmuje dziennik: czytelnik dalej w tyle niż zachowana część buduje indeks pochodny od zera."""

    # the journal is halved beyond this size; chosen, not measured: every reader reads it whole in milliseconds
    entries_bytes: int = 8 * 2**20
    # ~18 thousand chunks of dimension 384 with their text: a reader that missed that much fetches the rest from
    # Chroma (one get for all of them), as without these files
    pages_bytes: int = 64 * 2**20


DEFAULT_LIMITS = JournalLimits()


def derived_saved(root: Path | None) -> bool:
    """Czy w ``root`` jest jakaś zapisana wersja migawki (także nieaktualna) – czytelnik, który dociągnie zmiany
    z dziennika; bez niej (pierwsze indeksowanie folderu) pierwszy czytelnik zbuduje migawkę od zera i plików
    treści zapisów nie przeczyta."""
    if root is None:
        return False
    try:
        return any(e.is_dir() and not e.name.startswith(".") for e in root.iterdir())
    except OSError:
        return False


def journal(root: Path, before: str, after: str, ids: list[str], removal: bool = False,
            limit: int = DEFAULT_LIMITS.entries_bytes) -> None:
    """Wpis dziennika zmian: zmiana kolekcji ze znacznika ``before`` na ``after`` dotyka ``ids`` (``removal``: usuwa
    je – czytelnik nie musi ich pobierać z Chromy, a w trybie folderu każdy ``get`` wczytuje cały HNSW, przy
    milionie fragmentów ~3 s; wstawione czytelnik bierze z pliku treści zapisu, ``journal_pages``).

    Tylko w trybie folderu, gdzie zapisy idą po kolei pod blokadą wyłączną, więc wpisy tworzą łańcuch. Wpis
    powstaje przed zmianą danych: przerwany zapis zostawia wpis bez następcy, a kolejny zapis dopisuje drugi
    wpis z tym samym ``before`` – rozwidlenie, po którym czytelnik buduje migawkę od zera."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / JOURNAL
    entry = {"przed": before, "po": after, "id": ids, **({"usuniete": True} if removal else {})}
    with path.open("a", encoding="utf-8") as entries:
        entries.write(json.dumps(entry, ensure_ascii=False) + "\n")
    if path.stat().st_size > limit:  # readers further behind than the kept half rebuild from scratch
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        staging = root / f"{JOURNAL}.{os.getpid()}"
        staging.write_text("".join(lines[len(lines) // 2 :]), encoding="utf-8")
        os.replace(staging, path)
        journal_pages.remove(root, [e["po"] for e in _entries(lines[: len(lines) // 2])])


def forget_pages(root: Path, marker: str) -> None:
    """Usuwa pliki treści zapisów prowadzących do wersji ``marker``: po jej pełnej budowie przydałyby się tylko
    czytelnikom starszych wersji trzymanych w pamięci, a ci pobiorą brakujące fragmenty z Chromy."""
    try:
        lines = (root / JOURNAL).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    before = {e["po"]: e["przed"] for e in _entries(lines)}
    chain: list[str] = []
    while marker in before and len(chain) < len(before):
        chain.append(marker)
        marker = before[marker]
    journal_pages.remove(root, chain)


def changed_since(root: Path, old: str, new: str) -> set[str] | None:
    """Id zmienione między wersjami ``old`` i ``new`` według dziennika; ``None``, gdy łańcuch wpisów się
    urywa albo rozwidla (wtedy migawkę trzeba zbudować od zera)."""
    found = changes_between(root, old, new)
    return None if found is None else set(found)


def changes_between(root: Path, old: str, new: str) -> dict[str, str | None] | None:
    """Id zmienione między wersjami ``old`` i ``new`` według dziennika → znacznik po zapisie, który je ostatnio
    wstawił (nazwa jego pliku treści, ``journal_pages``), albo ``None``, gdy ostatnia zmiana je usunęła.
    ``None`` zamiast słownika, gdy łańcuch wpisów się urywa albo rozwidla (wtedy migawkę trzeba zbudować od
    zera)."""
    try:
        lines = (root / JOURNAL).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    following: dict[str, list[dict[str, Any]]] = {}
    for entry in _entries(lines):
        following.setdefault(entry["przed"], []).append(entry)
    changed: dict[str, str | None] = {}
    current = old
    for _ in range(len(lines)):
        if current == new:
            return changed
        entries = following.get(current, [])
        if len(entries) != 1:
            return None
        after = entries[0]["po"]
        changed.update(dict.fromkeys(entries[0]["id"], None if entries[0].get("usuniete") else after))
        current = after
    return changed if current == new else None


def _entries(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:  # a line being appended right now
            continue


