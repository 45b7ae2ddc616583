"""Lokalna migawka kolekcji do wyszukiwania z filtrem: wektory (float32 do dokładnych podobieństw i int8 do
szybkiego przeglądu, mapowane z dysku), id, kolumny metadanych, po których filtrujemy, i – przy dużych
kolekcjach – podział na skupiska (IVF), żeby zapytanie przeglądało tylko najbliższe skupiska.

Pobranie z Chromy wektorów i metadanych pasujących fragmentów kosztuje ok. 0,1–0,3 ms na fragment, a maska
numpy na kolumnach i iloczyny skalarne na pasujących wierszach – pojedyncze ms. Przy milionie fragmentów
same wektory float32 to 1,5 GiB: przeglądamy więc kopię int8 (384 MiB, skala osobna dla każdego wymiaru),
a dokładnie (float32, tylko czytane strony pliku trafiają do pamięci) przeliczamy najlepszych kandydatów.
Przy skupiskach i szerokim filtrze kandydatów do int8 wybiera jeszcze wcześniej faiss z kodów PQ najbliższych
skupisk (``coarse_index``).
HNSW Chromy nie jest potrzebny, więc nie ładuje się do pamięci procesu.

Migawka to dane pochodne: katalog ``<znacznik zmiany kolekcji>/`` w ``Store.work_dir``; inny znacznik
w kolekcji znaczy „nieaktualna”. Wektory leżą w niezmiennych segmentach: nowa wersja po dopisaniu pliku
dowiązuje (``os.link``) segmenty poprzedniej, dokłada mały segment z nowymi wierszami i przepisuje tylko
id, kody kolumn i maskę żywych wierszy (usunięte i zastąpione fragmenty to martwe wiersze). Gdy segmentów
jest za dużo, dopisane łączą się w jeden; gdy martwych i dopisanych wierszy jest dużo, wersja powstaje od nowa
jako jeden segment. Katalog pojawia się pod ostateczną
nazwą jednym ``os.rename``; uszkodzona albo niepełna migawka jest usuwana i budowana od nowa.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..storage import records as records_files
from ..storage.where import FIELD_OPERATORS, MISSING
from . import coarse_index
from .memo import remember
from .params import SnapshotParams

FORMAT_VERSION = 5
# Keys `filters.build_where` filters on, plus `hash` (keyword index sync) and `tytul` (act names in questions).
COLUMNS = ("plik", "typ", "rok", "art", "uchylony", "hash", "tytul")
DESCRIPTION = "opis.json"
STALE_BUILD_SECONDS = 3600  # a build folder this old belongs to a process that died mid-build


@dataclass
class Segment:
    """Niezmienny kawałek wektorów: globalne wiersze ``offset``…``offset+len``, ułożone skupiskami
    (wiersze skupiska ``c``: ``offset+starts[c]``…``offset+starts[c+1]``)."""

    name: str
    offset: int
    vectors: np.ndarray  # float32, normalized
    quantized: np.ndarray  # int8: round(vector / scale)
    starts: np.ndarray
    blob: np.ndarray  # text and metadata of the rows (storage.records), mapped
    record_starts: np.ndarray
    coarse: Any = None  # faiss index over the clusters (coarse_index); None without clusters or for a small segment

    def __len__(self) -> int:
        return len(self.vectors)


class Snapshot:
    """Migawka jednej wersji kolekcji: ``ids[r]``, wektor i kody kolumn wiersza ``r`` (tylko żywe wiersze,
    ``alive[r]``, należą do kolekcji)."""

    def __init__(self, marker: str, ids: np.ndarray, sorted_rows: np.ndarray, codes: np.ndarray,
                 alive: np.ndarray, values: dict[str, list[Any]], segments: list[Segment],
                 centroids: np.ndarray | None, scale: np.ndarray, params: SnapshotParams) -> None:
        self.marker = marker
        self.params = params
        self.ids = ids  # utf-8 bytes (numpy "S") in row order
        self.sorted_rows = sorted_rows  # alive rows in id order: a row is found by bisection
        self.sorted_ids = ids[sorted_rows]
        self.codes = codes  # (len(COLUMNS), rows) int32, -1 = no such key in the metadata
        self.alive = alive
        self.values = values
        self.segments = segments
        self.centroids = centroids  # (clusters, dim) or None: no clusters, every query scans all matching rows
        self._masks: dict[str, np.ndarray] = {}
        self._cluster_counts: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(mask) → (mask, matching rows)
        self._id_ranks: np.ndarray | None = None  # row → its place in id order (alive rows), made when needed
        self.scale = scale  # per-dimension int8 step

    def __len__(self) -> int:
        return len(self.sorted_rows)

    @property
    def dim(self) -> int:
        return len(self.scale)

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
        """Żywe wiersze spełniające ``where`` (ta sama semantyka co ``where.matches_where``); tylko do odczytu,
        zapamiętana dla ``params.masks`` ostatnich filtrów."""
        key = json.dumps(where, sort_keys=True)
        found = self._masks.get(key)
        if found is None:
            found = self.alive & self._mask(where) if where is not None else self.alive.copy()
            found.flags.writeable = False
            remember(self._masks, key, found, self.params.masks)
        return found

    def _mask(self, where: dict[str, Any]) -> np.ndarray:
        # a condition is evaluated once per distinct column value, then one numpy indexing
        result = np.ones(len(self.ids), dtype=bool)
        for key, condition in where.items():
            if key == "$and":
                part = np.ones(len(self.ids), dtype=bool)
                for c in condition:
                    part &= self._mask(c)
            elif key == "$or":
                part = np.zeros(len(self.ids), dtype=bool)
                for c in condition:
                    part |= self._mask(c)
            else:
                ops = condition if isinstance(condition, dict) else {"$eq": condition}
                column = COLUMNS.index(key)
                known = [*self.values[key], MISSING]  # code -1 indexes the last entry: key missing
                allowed = np.array(
                    [all(FIELD_OPERATORS[op](v, operand) for op, operand in ops.items()) for v in known], dtype=bool
                )
                part = _matching(self.codes[column], allowed, self.params.few_codes)
            result &= part
        return result

    def rows_in_id_order(self, mask: np.ndarray) -> np.ndarray:
        """Wiersze ``mask`` w kolejności id: wąski filtr przez rangi wierszy (bez przejścia po milionie
        ``sorted_rows`` – ~8 ms na każdy nowy filtr przy milionie fragmentów), szeroki – po ``sorted_rows``."""
        if np.count_nonzero(mask) * self.params.narrow_share > len(mask):
            return self.sorted_rows[mask[self.sorted_rows]]
        rows = np.flatnonzero(mask)
        if self._id_ranks is None:
            ranks = np.zeros(len(self.ids), dtype=np.int64)
            ranks[self.sorted_rows] = np.arange(len(self.sorted_rows))
            self._id_ranks = ranks
        return rows[np.argsort(self._id_ranks[rows], kind="stable")]

    def nearest(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[tuple[str, float]]:
        """``k`` najpodobniejszych wierszy spośród ``mask``: wszystkie pasujące albo – przy skupiskach
        i szerokim filtrze – kandydaci faiss z najbliższych skupisk (``_coarse_candidates``)."""
        unit = np.asarray(query, dtype=np.float32) / max(float(np.linalg.norm(query)), 1e-12)
        keep = max(self.params.rescore, self.params.rescore_per_k * k)
        matching = int(np.count_nonzero(mask))
        if self.centroids is None or matching <= keep:
            return self.top(unit, np.flatnonzero(mask), k)
        if matching <= self.params.narrow_rows:  # int8 codes of just the matching rows, not every list with the bitmap
            return self._best(unit, np.flatnonzero(mask), k)
        return self._best(unit, self._coarse_candidates(unit, mask, self._probes(unit, mask)), k)

    def _coarse_candidates(self, unit: np.ndarray, mask: np.ndarray, probes: int) -> np.ndarray:
        """Kandydaci spośród ``mask``: z każdego segmentu z indeksem ``params.coarse_candidates`` najlepszych
        według kodów PQ na ``probes`` najbliższych listach (filtr sprawdzany podczas przeglądu), z segmentu bez
        indeksu (mały, dopisany) – wszystkie pasujące."""
        allowed = np.packbits(mask, bitorder="little")
        return np.concatenate([
            segment.offset + np.flatnonzero(mask[segment.offset : segment.offset + len(segment)])
            if segment.coarse is None
            else coarse_index.search(segment.coarse, unit, allowed, probes, self.params.coarse_candidates)
            for segment in self.segments
        ])

    def _probes(self, unit: np.ndarray, mask: np.ndarray) -> int:
        """Ile najbliższych skupisk przejrzeć: ``params.probe_fraction`` (co najmniej ``params.nprobe``) i więcej,
        aż będzie w nich ``params.matched_min`` wierszy ``mask``."""
        assert self.centroids is not None
        order = np.argsort(-(self.centroids @ unit))
        counts = self._matching_per_cluster(mask)
        least = max(self.params.nprobe, math.ceil(self.params.probe_fraction * len(self.centroids)))
        return max(least, int(np.searchsorted(np.cumsum(counts[order]), self.params.matched_min)) + 1)

    def _matching_per_cluster(self, mask: np.ndarray) -> np.ndarray:
        """Ile wierszy ``mask`` jest w każdym skupisku (zapamiętane razem z zapamiętaną maską)."""
        found = self._cluster_counts.get(id(mask))
        if found is not None and found[0] is mask:
            return found[1]
        counts = np.zeros(len(self.centroids), dtype=np.int64)
        for segment in self.segments:
            running = np.concatenate([[0], np.cumsum(mask[segment.offset : segment.offset + len(segment)])])
            counts += running[segment.starts[1:]] - running[segment.starts[:-1]]
        # the mask kept: its id is not reused
        remember(self._cluster_counts, id(mask), (mask, counts), self.params.masks)
        return counts

    def top(self, unit: np.ndarray, rows: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Dokładnie ``k`` najpodobniejszych spośród ``rows`` (najlepszy pierwszy, remisy według id); przy
        wielu wierszach kandydaci z int8, przeliczeni dokładnie."""
        if len(rows) == 0 or k <= 0:
            return []
        if len(rows) > self.params.exact_rows:
            return self._best(unit, rows, k)
        return self._rescored(unit, rows, k)

    def _best(self, unit: np.ndarray, rows: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Najlepsze ``k`` spośród ``rows``: czołówka według kodów int8, przeliczona dokładnie."""
        keep = max(self.params.rescore, self.params.rescore_per_k * k)
        if len(rows) > keep:
            rows = rows[np.argpartition(-self._rough_similarities(rows, unit), keep - 1)[:keep]]
        return self._rescored(unit, rows, k)

    def _rescored(self, unit: np.ndarray, rows: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Dokładne (float32) podobieństwa ``rows`` i najlepsze ``k`` z nich."""
        if len(rows) == 0 or k <= 0:
            return []
        similarities = self.vectors_of(rows) @ unit
        if len(rows) > k:
            threshold = np.partition(similarities, len(rows) - k)[len(rows) - k]
            keep_rows = np.flatnonzero(similarities >= threshold)
            rows, similarities = rows[keep_rows], similarities[keep_rows]
        order = np.lexsort((self.ids[rows], -similarities))[:k]
        return [(self.ids[rows[j]].decode(), float(similarities[j])) for j in order]

    def _rough_similarities(self, rows: np.ndarray, unit: np.ndarray) -> np.ndarray:
        step = unit * self.scale
        out = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), self.params.scan_block):
            part = rows[start : start + self.params.scan_block]
            out[start : start + len(part)] = self._gather(part, "quantized").astype(np.float32) @ step
        return out

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        """Wektory float32 wierszy ``rows`` (z mapowanych segmentów: czytane są tylko ich strony)."""
        return self._gather(rows, "vectors")

    def records_of(self, rows: np.ndarray) -> list[bytes]:
        """Zakodowane rekordy (tekst i metadane, ``storage.records``) wierszy ``rows``, w tej kolejności."""
        rows = np.asarray(rows, dtype=np.int64)
        out: list[bytes] = [b""] * len(rows)
        for segment in self.segments:
            inside = np.flatnonzero((rows >= segment.offset) & (rows < segment.offset + len(segment)))
            found = records_files.read(segment.blob, segment.record_starts, rows[inside] - segment.offset)
            for position, record in zip(inside.tolist(), found, strict=True):
                out[position] = record
        return out

    def documents(self, rows: np.ndarray) -> list[tuple[str, dict[str, Any]]]:
        """Tekst i pełne metadane wierszy ``rows`` (czytane są tylko strony ich rekordów)."""
        return [records_files.decode(record) for record in self.records_of(rows)]

    def _gather(self, rows: np.ndarray, kind: str) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        # int8 codes (a quarter of the vectors' size) are read through the mapping: wide filters and the faiss
        # index keep them resident anyway, and a pread per row of a narrow filter is ~1000 system calls a query
        pread_rows = self.params.pread_rows
        pick = (lambda array, at: _pick(array, at, pread_rows)) if kind == "vectors" else (
            lambda array, at: np.asarray(array[at]))
        if len(self.segments) == 1:
            return pick(getattr(self.segments[0], kind), rows)
        out = np.empty((len(rows), self.dim), dtype=np.float32 if kind == "vectors" else np.int8)
        for segment in self.segments:
            inside = (rows >= segment.offset) & (rows < segment.offset + len(segment))
            out[inside] = pick(getattr(segment, kind), rows[inside] - segment.offset)
        return out


    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        """Żywe wiersze fragmentów (-1 dla nieznanych) – wyszukiwanie binarne w posortowanych id."""
        if not len(self):
            return np.full(len(chunk_ids), -1)
        encoded = [i.encode() for i in chunk_ids]
        fits = np.array([len(e) <= self.ids.itemsize for e in encoded], dtype=bool)  # longer would be cut
        wanted = np.array(encoded, dtype=self.ids.dtype)
        found = np.minimum(np.searchsorted(self.sorted_ids, wanted), len(self) - 1)
        return np.where(fits & (self.sorted_ids[found] == wanted), self.sorted_rows[found], -1)

    def row_count(self) -> int:
        """Wiersze numeracji (także martwe) – ``rows.RowSpace``."""
        return len(self.ids)

    def id_order(self) -> tuple[np.ndarray, np.ndarray]:
        """Żywe wiersze w kolejności id i ich id – ``rows.RowSpace``."""
        return self.sorted_rows, self.sorted_ids

    def id_list(self, rows: np.ndarray | None = None) -> list[str]:
        selected = self.sorted_ids if rows is None else self.ids[rows]
        return [i.decode() for i in selected]

    def column(self, key: str, default: Any) -> dict[str, Any]:
        """Id → wartość kolumny (``default``, gdy fragment jej nie ma)."""
        known = [*self.values[key], default]
        codes = self.codes[COLUMNS.index(key)][self.sorted_rows].tolist()
        return {i: known[c] for i, c in zip(self.id_list(), codes, strict=True)}

    def values_of(self, chunk_ids: list[str], key: str, default: Any) -> list[Any]:
        """Wartości kolumny ``key`` wskazanych fragmentów (``default``, gdy fragment jej nie ma; ``None``, gdy
        fragmentu nie ma w migawce)."""
        known = [*self.values[key], None, default]  # code -1: no such key (default), -2: no such chunk
        rows = self.rows(chunk_ids)
        codes = np.full(len(rows), -2, dtype=np.int64)
        codes[rows >= 0] = self.codes[COLUMNS.index(key)][rows[rows >= 0]]
        return [known[code if code >= 0 else len(known) + code] for code in codes.tolist()]

    def pairs(self, first: str, second: str) -> set[tuple[Any, Any]]:
        """Różne pary wartości dwóch kolumn (np. plik → tytuł aktu), bez przeglądania wierszy w Pythonie."""
        a, b = self.codes[COLUMNS.index(first)][self.alive], self.codes[COLUMNS.index(second)][self.alive]
        width = len(self.values[second]) + 1
        found = np.unique((a.astype(np.int64) + 1) * width + (b + 1))
        known_a, known_b = [None, *self.values[first]], [None, *self.values[second]]
        return {(known_a[int(x) // width], known_b[int(x) % width]) for x in found}


def latest(root: Path, marker: str, params: SnapshotParams) -> Snapshot | None:
    """Poprzednia zapisana wersja (inna niż ``marker``), od której można zacząć aktualizację."""
    try:
        older = [e for e in root.iterdir() if e.is_dir() and not e.name.startswith(".") and e.name != marker]
    except OSError:
        return None
    for entry in sorted(older, key=lambda e: e.stat().st_mtime, reverse=True):
        found = load(root, entry.name, params)
        if found is not None:
            return found
    return None


def load(root: Path, marker: str, params: SnapshotParams) -> Snapshot | None:
    """Migawka danej wersji z dysku; ``None``, gdy jej nie ma albo jest uszkodzona (wtedy ją usuwa)."""
    folder = root / marker
    if not (folder / DESCRIPTION).exists():
        return None
    try:
        description = json.loads((folder / DESCRIPTION).read_text(encoding="utf-8"))
        if description["wersja_formatu"] != FORMAT_VERSION or description["znacznik"] != marker:
            raise ValueError("inny format")
        n, dim = int(description["wiersze"]), int(description["wymiar"])
        ids = np.load(folder / "id.npy", mmap_mode="r")
        sorted_rows = np.load(folder / "porzadek.npy")
        codes = np.load(folder / "kody.npy")
        alive = np.load(folder / "zywe.npy")
        scale = np.load(folder / "skala.npy")
        centroids = np.load(folder / "centra.npy") if description["skupiska"] else None
        clusters = 1 if centroids is None else len(centroids)
        segments, offset = [], 0
        for entry in description["segmenty"]:
            name, size = str(entry["nazwa"]), int(entry["wiersze"])
            starts = np.asarray(entry["poczatki"], dtype=np.int64)
            vectors = np.load(folder / f"{name}.f32.npy", mmap_mode="r")
            quantized = np.load(folder / f"{name}.i8.npy", mmap_mode="r")
            blob, record_starts = records_files.load(folder, name, size)
            coarse = None if centroids is None else _coarse(folder / f"{name}{coarse_index.SUFFIX}", quantized,
                                                               scale, centroids, offset, params)
            if vectors.shape != (size, dim) or vectors.dtype != np.float32 or quantized.shape != (size, dim) or (
                quantized.dtype != np.int8 or starts.shape != (clusters + 1,) or starts[-1] != size
            ):
                raise ValueError("niezgodny segment")
            segments.append(Segment(name, offset, vectors, quantized, starts, blob, record_starts, coarse))
            offset += size
        values = {key: description["wartosci"][key] for key in COLUMNS}
        if offset != n or ids.shape != (n,) or codes.shape != (len(COLUMNS), n) or alive.shape != (n,) or (
            scale.shape != (dim,) or sorted_rows.shape != (int(alive.sum()),)
        ) or any(int(codes[c].max(initial=-1)) >= len(values[key]) for c, key in enumerate(COLUMNS)):
            raise ValueError("niezgodne rozmiary")
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return Snapshot(marker, ids, sorted_rows, codes, alive, values, segments, centroids, scale, params)


def _coarse(path: Path, quantized: np.ndarray, scale: np.ndarray, centroids: np.ndarray, offset: int,
            params: SnapshotParams) -> Any:
    """Mapowany indeks faiss segmentu (``None`` dla segmentu mniejszego niż ``params.coarse_min_rows``); brak
    pliku (segment sprzed niego, przerwany zapis) albo plik niezgodny – zbudowany od nowa z kodów segmentu
    i zapisany (bez prawa zapisu: zostaje w pamięci)."""
    if len(quantized) < params.coarse_min_rows:
        return None
    found = coarse_index.open_mapped(path)
    if found is not None and found.ntotal == len(quantized) and found.nlist == len(centroids):
        return found
    built = coarse_index.build(quantized, scale, centroids, offset, params)
    coarse_index.save(built, path)
    mapped = coarse_index.open_mapped(path)
    return built if mapped is None else mapped


def build(root: Path, marker: str, dim: int, pages: Iterable[dict[str, Any]], params: SnapshotParams) -> Snapshot:
    """Nowa migawka ze stronicowanych wyników ``get`` (id, wektory, teksty, metadane), zapisana pod
    ``root/marker``.

    Gdy dwa procesy budują tę samą wersję naraz, zostaje katalog tego, który zdążył pierwszy."""
    ids, vectors, raw, records = _collect(pages, dim)
    # an id seen twice (paging shifted under a concurrent write) keeps its last copy
    keep = sorted({i: r for r, i in enumerate(ids)}.values())
    values: dict[str, list[Any]] = {key: [] for key in COLUMNS}
    codes = _encode([[col[r] for r in keep] for col in raw], values)
    return _fresh(root, marker, _id_array([ids[r] for r in keep]), vectors[keep], codes, values, None,
                  [records[r] for r in keep], params)


def update(old: Snapshot, root: Path, marker: str, dim: int, changed: set[str],
           pages: Iterable[dict[str, Any]]) -> Snapshot:
    """Nowa wersja z poprzedniej: wiersze ``changed`` umierają, ``pages`` (ich obecny stan w kolekcji;
    usuniętych tam już nie ma) dochodzą jako nowy segment; segmenty poprzedniej wersji są dowiązywane, nie
    kopiowane. Kody kolumn pozostałych wierszy zostają, nowe wartości dopisujemy na końcu słowników.

    Przy ``params.max_segments`` segmentach dopisane segmenty (żywe wiersze) łączą się z nowymi wierszami w jeden,
    a bazowy zostaje dowiązany: przepisanie całej bazy kosztowało przy milionie fragmentów ~47 s co ósmy zapis.
    Od nowa, jako jeden segment, wersja powstaje dopiero, gdy martwych i dopisanych wierszy jest ponad
    ``params.compact_fraction`` żywych (``params`` – te, z którymi wczytano ``old``)."""
    dropped = old.rows(sorted(changed))
    alive = old.alive.copy()
    alive[dropped[dropped >= 0]] = False
    new_ids, new_vectors, raw, new_records = _collect(pages, dim)
    values = {key: list(old.values[key]) for key in COLUMNS}
    new_codes = _encode(raw, values)
    appended = sum(len(s) for s in old.segments[1:]) + len(new_ids)
    live = int(alive.sum()) + len(new_ids)
    params = old.params
    if (len(alive) - int(alive.sum())) + appended > params.compact_fraction * live:
        rows = np.flatnonzero(alive)
        return _fresh(root, marker, np.concatenate([old.ids[rows], _id_array(new_ids)]),
                      np.concatenate([old.vectors_of(rows), new_vectors]),
                      np.concatenate([old.codes[:, rows], new_codes], axis=1), values, old.centroids,
                      old.records_of(rows) + new_records, params)
    kept_segments = old.segments if len(old.segments) < params.max_segments else old.segments[:1]
    offset = kept_segments[-1].offset + len(kept_segments[-1])
    carried = offset + np.flatnonzero(alive[offset:])  # live rows of the appended segments being merged
    new_vectors = np.concatenate([old.vectors_of(carried), new_vectors])
    new_codes = np.concatenate([old.codes[:, carried], new_codes], axis=1)
    new_records = old.records_of(carried) + new_records
    order, starts, quantized = _layout(new_vectors, old.centroids, old.scale, params.scan_block)
    blob, record_starts = records_files.pack([new_records[r] for r in order.tolist()])
    added = np.concatenate([old.ids[carried], _id_array(new_ids)])[order]
    ids = np.concatenate([old.ids[:offset], added])
    kept = old.sorted_rows[(old.sorted_rows < offset) & alive[old.sorted_rows]]
    by_id = np.argsort(added, kind="stable")
    positions = np.searchsorted(ids[kept], added[by_id])
    segments = [*kept_segments, Segment(uuid.uuid4().hex, offset, new_vectors[order], quantized, starts, blob,
                                        record_starts)]
    snapshot = Snapshot(marker, ids, np.insert(kept, positions, offset + by_id),
                        np.concatenate([old.codes[:, :offset], new_codes[:, order]], axis=1),
                        np.concatenate([alive[:offset], np.ones(len(added), dtype=bool)]), values,
                        segments if len(added) else kept_segments, old.centroids, old.scale, params)
    return _save(root, snapshot, root / old.marker)


def _fresh(root: Path, marker: str, ids: np.ndarray, vectors: np.ndarray, codes: np.ndarray,
           values: dict[str, list[Any]], centroids: np.ndarray | None, records: list[bytes],
           params: SnapshotParams) -> Snapshot:
    """Wersja z jednym segmentem (od zera albo po zbyt wielu zmianach); skupiska od ``params.ivf_min_rows``."""
    dim = vectors.shape[1]
    scale = (np.abs(vectors).max(axis=0) if len(vectors) else np.ones(dim, dtype=np.float32)) / 127
    scale = np.maximum(scale, 1e-12).astype(np.float32)
    if centroids is None and len(vectors) >= params.ivf_min_rows:
        centroids = coarse_index.train(vectors, max(1, math.isqrt(len(vectors))), params)
    order, starts, quantized = _layout(vectors, centroids, scale, params.scan_block)
    ids = ids[order]
    blob, record_starts = records_files.pack([records[r] for r in order.tolist()])
    snapshot = Snapshot(marker, ids, np.argsort(ids, kind="stable"), codes[:, order],
                        np.ones(len(ids), dtype=bool), values,
                        [Segment(uuid.uuid4().hex, 0, vectors[order], quantized, starts, blob, record_starts)],
                        centroids, scale, params)
    return _save(root, snapshot, None)


def _assign(vectors: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    out = np.empty(len(vectors), dtype=np.int64)
    for start in range(0, len(vectors), 16_384):
        out[start : start + 16_384] = np.argmax(vectors[start : start + 16_384] @ centroids.T, axis=1)
    return out


def _layout(vectors: np.ndarray, centroids: np.ndarray | None, scale: np.ndarray,
            scan_block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kolejność wierszy segmentu (skupiskami), początki skupisk i wektory int8 w tej kolejności."""
    if centroids is None:
        order, starts = np.arange(len(vectors)), np.array([0, len(vectors)], dtype=np.int64)
    else:
        assigned = _assign(vectors, centroids)
        order = np.argsort(assigned, kind="stable")
        starts = np.searchsorted(assigned[order], np.arange(len(centroids) + 1)).astype(np.int64)
    quantized = np.empty(vectors.shape, dtype=np.int8)
    for start in range(0, len(order), scan_block):
        part = vectors[order[start : start + scan_block]] / scale
        quantized[start : start + len(part)] = np.clip(np.rint(part), -127, 127)
    return order, starts, quantized


def _collect(
    pages: Iterable[dict[str, Any]], dim: int
) -> tuple[list[str], np.ndarray, list[list[Any]], list[bytes]]:
    """Id, znormalizowane wektory, surowe wartości kolumn i rekordy treści ze stron wyników ``get``."""
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    raw: list[list[Any]] = [[] for _ in COLUMNS]
    records: list[bytes] = []
    for page in pages:
        ids.extend(page["ids"])
        if page["ids"]:
            blocks.append(np.asarray(page["embeddings"], dtype=np.float32).reshape(len(page["ids"]), dim))
        records.extend(records_files.encode(d, m) for d, m in zip(page["documents"], page["metadatas"], strict=True))
        for meta in page["metadatas"]:
            meta = meta or {}
            for column, key in zip(raw, COLUMNS, strict=True):
                value = meta.get(key, MISSING)
                if value is not MISSING and not isinstance(value, str | int | float):
                    raise TypeError(f"kolumna {key}: wartość {type(value).__name__} poza migawką")
                column.append(value)
    vectors = np.concatenate(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return ids, vectors, raw, records


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


def _save(root: Path, snapshot: Snapshot, previous: Path | None) -> Snapshot:
    """Zapis pod ``root/marker`` (segmenty poprzedniej wersji ``previous`` dowiązane); zwraca migawkę
    odczytaną z dysku, żeby wektory były mapowane, a nie trzymane w pamięci procesu."""
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".budowa-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        for name, array in (("id", snapshot.ids), ("porzadek", snapshot.sorted_rows), ("kody", snapshot.codes),
                            ("zywe", snapshot.alive), ("skala", snapshot.scale)):
            np.save(staging / f"{name}.npy", array)
        if snapshot.centroids is not None:
            np.save(staging / "centra.npy", snapshot.centroids)
        for segment in snapshot.segments:
            for suffix, array in ((".f32.npy", segment.vectors), (".i8.npy", segment.quantized),
                                  (records_files.BYTES_SUFFIX, segment.blob),
                                  (records_files.STARTS_SUFFIX, segment.record_starts)):
                target = staging / f"{segment.name}{suffix}"
                try:
                    if previous is None:
                        raise FileNotFoundError
                    os.link(previous / target.name, target)
                except OSError:  # new segment, or the previous version is gone: write it out
                    if suffix == records_files.BYTES_SUFFIX:
                        records_files.write(target, array)
                    else:
                        np.save(target, array)
            if previous is not None:  # the segment's faiss index (if it has one); a missing one is built on load
                with contextlib.suppress(OSError):
                    os.link(previous / f"{segment.name}{coarse_index.SUFFIX}",
                            staging / f"{segment.name}{coarse_index.SUFFIX}")
        description = {
            "wersja_formatu": FORMAT_VERSION, "znacznik": snapshot.marker, "wiersze": len(snapshot.ids),
            "wymiar": snapshot.dim, "skupiska": snapshot.centroids is not None, "wartosci": snapshot.values,
            "segmenty": [{"nazwa": s.name, "wiersze": len(s), "poczatki": s.starts.tolist()}
                         for s in snapshot.segments],
        }
        (staging / DESCRIPTION).write_text(json.dumps(description, ensure_ascii=False), encoding="utf-8")
        staging.rename(root / snapshot.marker)
    except OSError:  # another process published this version first (or the disk is full): theirs stays
        shutil.rmtree(staging, ignore_errors=True)
    _remove_old(root, keep=snapshot.marker)
    return load(root, snapshot.marker, snapshot.params) or snapshot


def _remove_old(root: Path, keep: str) -> None:
    """Starsze wersje znikają (otwarte mapowania innych procesów działają do ich zamknięcia)."""
    now = time.time()
    for entry in root.iterdir():
        building = entry.name.startswith(".budowa-")
        if not entry.is_dir() or entry.name == keep:
            continue
        if not building or now - entry.stat().st_mtime > STALE_BUILD_SECONDS:
            shutil.rmtree(entry, ignore_errors=True)


def _matching(codes: np.ndarray, allowed: np.ndarray, few_codes: int) -> np.ndarray:
    """Wiersze, których kod kolumny jest dozwolony (``allowed[c]``; ostatni – brak klucza, kod -1). Kilka
    dozwolonych albo kilka odrzuconych wartości – porównaniami (przy milionie wierszy ~0,2 ms każde) zamiast
    indeksowania tablicą kodów (~1–2 ms)."""
    code = np.arange(len(allowed))
    code[-1] = -1
    if allowed.all():
        return np.ones(len(codes), dtype=bool)
    if np.count_nonzero(allowed) <= few_codes:
        found = np.zeros(len(codes), dtype=bool)
        for c in code[allowed]:
            found |= codes == c
        return found
    if np.count_nonzero(~allowed) <= few_codes:
        found = np.ones(len(codes), dtype=bool)
        for c in code[~allowed]:
            found &= codes != c
        return found
    return np.take(allowed, codes)


def _pick(array: np.ndarray, rows: np.ndarray, pread_rows: int) -> np.ndarray:
    """Wiersze ``rows`` tablicy segmentu: kilka tysięcy – przez ``pread`` (``pread_rows``), więcej – z mapowania."""
    if not isinstance(array, np.memmap) or len(rows) > pread_rows:
        return np.asarray(array[rows])
    width = array.shape[1] * array.itemsize
    out = np.empty((len(rows), array.shape[1]), dtype=array.dtype)
    handle = os.open(array.filename, os.O_RDONLY)
    try:
        for position, row in enumerate(rows.tolist()):
            out[position] = np.frombuffer(os.pread(handle, width, array.offset + row * width), dtype=array.dtype)
    finally:
        os.close(handle)
    return out
