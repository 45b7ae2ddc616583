"""Lokalna migawka kolekcji do wyszukiwania z filtrem: wektory float32 (znormalizowane, mapowane z dysku),
id i kolumny metadanych, po których filtrujemy.

Pobranie z Chromy wektorów i metadanych pasujących fragmentów kosztuje ok. 0,1–0,3 ms na fragment (przy
filtrze na 1 % ze 100 tys. – setki ms), a maska numpy na kolumnach i iloczyny skalarne na pasujących
wierszach – pojedyncze ms. Migawka to dane pochodne: katalog ``<znacznik zmiany kolekcji>/`` w
``Store.work_dir``; inny znacznik w kolekcji znaczy „nieaktualna”, więc budujemy nową (stronicowane odczyty)
obok, a katalog pojawia się pod ostateczną nazwą jednym ``os.rename``. Uszkodzona albo niepełna migawka
jest usuwana i budowana od nowa.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .where import FIELD_OPERATORS, MISSING

FORMAT_VERSION = 2
# Keys `filters.build_where` filters on, plus `hash` (keyword index sync) and `tytul` (act names in questions).
COLUMNS = ("plik", "typ", "rok", "art", "uchylony", "hash", "tytul")
DESCRIPTION = "opis.json"
JOURNAL = "dziennik.jsonl"
JOURNAL_LIMIT = 8 * 2**20
STALE_BUILD_SECONDS = 3600  # a build folder this old belongs to a process that died mid-build


class Snapshot:
    """Migawka jednej wersji kolekcji: ``ids[r]``, ``vectors[r]`` i kody kolumn wiersza ``r``."""

    def __init__(self, marker: str, ids: np.ndarray, vectors: np.ndarray, codes: np.ndarray,
                 values: dict[str, list[Any]]) -> None:
        self.marker = marker
        self.ids = ids  # sorted utf-8 bytes (numpy "S"): row order is id order, a row is found by bisection
        self.vectors = vectors
        self.codes = codes  # (len(COLUMNS), n) int32, -1 = no such key in the metadata
        self.values = values

    def __len__(self) -> int:
        return len(self.ids)

    def covers(self, where: dict[str, Any] | None) -> bool:
        """Czy filtr dotyczy tylko kolumn migawki (inne idą starą ścieżką przez Chromę)."""
        if where is None:
            return True
        for key, condition in where.items():
            if key in ("$and", "$or"):
                if not all(self.covers(c) for c in condition):
                    return False
            elif key not in COLUMNS or (isinstance(condition, dict) and not set(condition) <= set(FIELD_OPERATORS)):
                return False
        return True

    def mask(self, where: dict[str, Any] | None) -> np.ndarray:
        """Wiersze spełniające ``where``: warunek liczony raz na każdą wartość kolumny, potem jedno
        indeksowanie numpy (ta sama semantyka co ``where.matches_where``)."""
        if where is None:
            return np.ones(len(self), dtype=bool)
        result = np.ones(len(self), dtype=bool)
        for key, condition in where.items():
            if key == "$and":
                part = np.ones(len(self), dtype=bool)
                for c in condition:
                    part &= self.mask(c)
            elif key == "$or":
                part = np.zeros(len(self), dtype=bool)
                for c in condition:
                    part |= self.mask(c)
            else:
                ops = condition if isinstance(condition, dict) else {"$eq": condition}
                column = COLUMNS.index(key)
                known = [*self.values[key], MISSING]  # code -1 indexes the last entry: key missing
                allowed = np.array(
                    [all(FIELD_OPERATORS[op](v, operand) for op, operand in ops.items()) for v in known], dtype=bool
                )
                part = allowed[self.codes[column]]
            result &= part
        return result

    def top(self, query: np.ndarray, rows: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Dokładnie ``k`` najpodobniejszych spośród ``rows`` (najlepszy pierwszy, remisy według id)."""
        if len(rows) == 0:
            return []
        unit = np.asarray(query, dtype=np.float32) / max(float(np.linalg.norm(query)), 1e-12)
        # Gathering rows copies them: for most of the collection one pass over the whole matrix is cheaper.
        if 3 * len(rows) > len(self):
            similarities = np.asarray(self.vectors @ unit)[rows]
        else:
            similarities = np.asarray(self.vectors[rows] @ unit)
        if len(rows) > k:
            threshold = np.partition(similarities, len(rows) - k)[len(rows) - k]
            keep = np.flatnonzero(similarities >= threshold)
            rows, similarities = rows[keep], similarities[keep]
        order = np.lexsort((rows, -similarities))[:k]  # rows are in id order
        return [(self.ids[rows[j]].decode(), float(similarities[j])) for j in order]

    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        """Wiersze fragmentów (-1 dla nieznanych) – wyszukiwanie binarne w posortowanych id."""
        if not len(self):
            return np.full(len(chunk_ids), -1)
        encoded = [i.encode() for i in chunk_ids]
        fits = np.array([len(e) <= self.ids.itemsize for e in encoded], dtype=bool)  # longer would be cut
        wanted = np.array(encoded, dtype=self.ids.dtype)
        found = np.minimum(np.searchsorted(self.ids, wanted), len(self) - 1)
        return np.where(fits & (self.ids[found] == wanted), found, -1)

    def id_list(self, rows: np.ndarray | None = None) -> list[str]:
        selected = self.ids if rows is None else self.ids[rows]
        return [i.decode() for i in selected]

    def column(self, key: str, default: Any) -> dict[str, Any]:
        """Id → wartość kolumny (``default``, gdy fragment jej nie ma)."""
        known = [*self.values[key], default]
        return {i: known[c] for i, c in zip(self.id_list(), self.codes[COLUMNS.index(key)].tolist(), strict=True)}

    def pairs(self, first: str, second: str) -> set[tuple[Any, Any]]:
        """Różne pary wartości dwóch kolumn (np. plik → tytuł aktu), bez przeglądania wierszy w Pythonie."""
        a, b = self.codes[COLUMNS.index(first)], self.codes[COLUMNS.index(second)]
        width = len(self.values[second]) + 1
        found = np.unique((a.astype(np.int64) + 1) * width + (b + 1))
        known_a, known_b = [None, *self.values[first]], [None, *self.values[second]]
        return {(known_a[int(x) // width], known_b[int(x) % width]) for x in found}


def latest(root: Path, marker: str) -> Snapshot | None:
    """Poprzednia zapisana wersja (inna niż ``marker``), od której można zacząć aktualizację."""
    try:
        older = [e for e in root.iterdir() if e.is_dir() and not e.name.startswith(".") and e.name != marker]
    except OSError:
        return None
    for entry in sorted(older, key=lambda e: e.stat().st_mtime, reverse=True):
        found = load(root, entry.name)
        if found is not None:
            return found
    return None


def journal(root: Path, before: str, after: str, ids: list[str]) -> None:
    """Wpis dziennika zmian: zmiana kolekcji ze znacznika ``before`` na ``after`` dotyka ``ids``.

    Tylko w trybie folderu, gdzie zapisy idą po kolei pod blokadą wyłączną, więc wpisy tworzą łańcuch. Wpis
    powstaje przed zmianą danych: przerwany zapis zostawia wpis bez następcy, a kolejny zapis dopisuje drugi
    wpis z tym samym ``before`` – rozwidlenie, po którym czytelnik buduje migawkę od zera."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / JOURNAL
    with path.open("a", encoding="utf-8") as entries:
        entries.write(json.dumps({"przed": before, "po": after, "id": ids}, ensure_ascii=False) + "\n")
    if path.stat().st_size > JOURNAL_LIMIT:  # readers further behind than the kept half rebuild from scratch
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        staging = root / f"{JOURNAL}.{os.getpid()}"
        staging.write_text("".join(lines[len(lines) // 2 :]), encoding="utf-8")
        os.replace(staging, path)


def changed_since(root: Path, old: str, new: str) -> set[str] | None:
    """Id zmienione między wersjami ``old`` i ``new`` według dziennika; ``None``, gdy łańcuch wpisów się
    urywa albo rozwidla (wtedy migawkę trzeba zbudować od zera)."""
    try:
        lines = (root / JOURNAL).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    following: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:  # a line being appended right now
            continue
        following.setdefault(entry["przed"], []).append(entry)
    changed: set[str] = set()
    current = old
    for _ in range(len(lines)):
        if current == new:
            return changed
        entries = following.get(current, [])
        if len(entries) != 1:
            return None
        changed.update(entries[0]["id"])
        current = entries[0]["po"]
    return changed if current == new else None


def load(root: Path, marker: str) -> Snapshot | None:
    """Migawka danej wersji z dysku; ``None``, gdy jej nie ma albo jest uszkodzona (wtedy ją usuwa)."""
    folder = root / marker
    if not (folder / DESCRIPTION).exists():
        return None
    try:
        description = json.loads((folder / DESCRIPTION).read_text(encoding="utf-8"))
        if description["wersja_formatu"] != FORMAT_VERSION or description["znacznik"] != marker:
            raise ValueError("inny format")
        n, dim = int(description["fragmenty"]), int(description["wymiar"])
        ids = np.load(folder / "id.npy", mmap_mode="r")
        vectors = np.load(folder / "wektory.npy", mmap_mode="r")
        codes = np.load(folder / "kody.npy")
        values = {key: description["wartosci"][key] for key in COLUMNS}
        if ids.shape != (n,) or vectors.shape != (n, dim) or vectors.dtype != np.float32 or codes.shape != (
            len(COLUMNS), n
        ) or any(int(codes[c].max(initial=-1)) >= len(values[key]) for c, key in enumerate(COLUMNS)):
            raise ValueError("niezgodne rozmiary")
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return Snapshot(marker, ids, vectors, codes, values)


def build(root: Path, marker: str, dim: int, pages: Iterable[dict[str, Any]]) -> Snapshot:
    """Nowa migawka ze stronicowanych wyników ``get`` (id, wektory, metadane), zapisana pod ``root/marker``.

    Gdy dwa procesy budują tę samą wersję naraz, zostaje katalog tego, który zdążył pierwszy."""
    ids, vectors, raw = _collect(pages, dim)
    # sorted by id; an id seen twice (paging shifted under a concurrent write) keeps its last copy
    last = {i: r for r, i in enumerate(ids)}
    keep = [last[i] for i in sorted(last, key=str.encode)]
    values: dict[str, list[Any]] = {key: [] for key in COLUMNS}
    codes = _encode([[col[r] for r in keep] for col in raw], values)
    snapshot = Snapshot(marker, _id_array([ids[r] for r in keep]), vectors[keep], codes, values)
    _save(root, snapshot, dim)
    return snapshot


def update(old: Snapshot, root: Path, marker: str, dim: int, changed: set[str],
           pages: Iterable[dict[str, Any]]) -> Snapshot:
    """Nowa wersja z poprzedniej: wiersze ``changed`` wypadają, ``pages`` (ich obecny stan w kolekcji;
    usuniętych tam już nie ma) dochodzą. Kody kolumn pozostałych wierszy zostają, nowe wartości dopisujemy
    na końcu słowników."""
    dropped = old.rows(sorted(changed))
    keep = np.ones(len(old), dtype=bool)
    keep[dropped[dropped >= 0]] = False
    new_ids, new_vectors, raw = _collect(pages, dim)
    values = {key: list(old.values[key]) for key in COLUMNS}
    ids = np.concatenate([old.ids[keep], _id_array(new_ids)])
    order = np.argsort(ids, kind="stable")
    snapshot = Snapshot(
        marker,
        ids[order],
        np.concatenate([old.vectors[keep], new_vectors])[order],
        np.concatenate([old.codes[:, keep], _encode(raw, values)], axis=1)[:, order],
        values,
    )
    _save(root, snapshot, dim)
    return snapshot


def _collect(pages: Iterable[dict[str, Any]], dim: int) -> tuple[list[str], np.ndarray, list[list[Any]]]:
    """Id, znormalizowane wektory i surowe wartości kolumn ze stron wyników ``get``."""
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    raw: list[list[Any]] = [[] for _ in COLUMNS]
    for page in pages:
        ids.extend(page["ids"])
        if page["ids"]:
            blocks.append(np.asarray(page["embeddings"], dtype=np.float32).reshape(len(page["ids"]), dim))
        for meta in page["metadatas"]:
            meta = meta or {}
            for column, key in zip(raw, COLUMNS, strict=True):
                value = meta.get(key, MISSING)
                if value is not MISSING and not isinstance(value, str | int | float):
                    raise TypeError(f"kolumna {key}: wartość {type(value).__name__} poza migawką")
                column.append(value)
    vectors = np.concatenate(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return ids, vectors, raw


def _id_array(ids: list[str]) -> np.ndarray:
    return np.array([i.encode() for i in ids], dtype=bytes).reshape(len(ids))


def _encode(raw: list[list[Any]], values: dict[str, list[Any]]) -> np.ndarray:
    """Kody wartości kolumn, dopisując nowe wartości do ``values``; ``True`` i ``1`` (albo ``2009``
    i ``2009.0``) to różne wartości."""
    codes = np.full((len(COLUMNS), len(raw[0])), -1, dtype=np.int32)
    for c, (key, column) in enumerate(zip(COLUMNS, raw, strict=True)):
        known = {(type(value), value): n for n, value in enumerate(values[key])}
        for r, value in enumerate(column):
            if value is not MISSING:
                code = known.setdefault((type(value), value), len(known))
                if code == len(values[key]):
                    values[key].append(value)
                codes[c, r] = code
    return codes


def _save(root: Path, snapshot: Snapshot, dim: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".budowa-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        np.save(staging / "id.npy", snapshot.ids)
        np.save(staging / "wektory.npy", snapshot.vectors)
        np.save(staging / "kody.npy", snapshot.codes)
        description = {"wersja_formatu": FORMAT_VERSION, "znacznik": snapshot.marker, "fragmenty": len(snapshot),
                       "wymiar": dim, "wartosci": snapshot.values}
        (staging / DESCRIPTION).write_text(json.dumps(description, ensure_ascii=False), encoding="utf-8")
        staging.rename(root / snapshot.marker)
    except OSError:  # another process published this version first (or the disk is full): theirs stays
        shutil.rmtree(staging, ignore_errors=True)
    _remove_old(root, keep=snapshot.marker)


def _remove_old(root: Path, keep: str) -> None:
    """Starsze wersje znikają (otwarte mapowania innych procesów działają do ich zamknięcia)."""
    now = time.time()
    for entry in root.iterdir():
        building = entry.name.startswith(".budowa-")
        if not entry.is_dir() or entry.name == keep:
            continue
        if not building or now - entry.stat().st_mtime > STALE_BUILD_SECONDS:
            shutil.rmtree(entry, ignore_errors=True)
