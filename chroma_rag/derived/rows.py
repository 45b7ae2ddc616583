"""Wspólny, nieprzezroczysty typ wyboru fragmentów: ``RowSet`` – fragmenty spełniające filtr w jednej wersji
indeksu pochodnego.

Migawka daje wybór jako maskę swoich wierszy (bez pół miliona napisów dla filtra na pół miliona fragmentów),
ścieżka przez samą Chromę – jako listę id. Indeks słów i wyszukiwanie widzą jedno i drugie tak samo: id w kolejności
id (dekodowane dopiero przy odczycie) albo – indeks słów – numery wierszy w przestrzeni, która je nadała
(``RowSpace``), do mapy wiersz → pozycja liczonej raz na wersję przestrzeni."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any, Protocol

import numpy as np


class RowSpace(Protocol):
    """Numeracja wierszy jednej wersji fragmentów (migawka albo lista id z Chromy)."""

    def row_count(self) -> int:
        """Liczba wierszy numeracji (także martwych)."""

    def id_order(self) -> tuple[np.ndarray, np.ndarray]:
        """Żywe wiersze w kolejności id i ich id (utf-8, numpy "S")."""

    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        """Wiersze fragmentów (-1 dla nieznanych)."""

    def rows_in_id_order(self, mask: np.ndarray) -> np.ndarray:
        """Wiersze ``mask`` w kolejności id."""

    def id_list(self, rows: np.ndarray | None = None) -> list[str]:
        """Id wierszy ``rows`` (wszystkich żywych w kolejności id, gdy ``None``)."""


class ListedRows:
    """Numeracja listy id (ścieżka bez migawki): wiersz = miejsce id w kolejności id."""

    def __init__(self, chunk_ids: Sequence[str]) -> None:
        self._ids = np.array(sorted({i.encode() for i in chunk_ids}), dtype="S")

    def row_count(self) -> int:
        return len(self._ids)

    def id_order(self) -> tuple[np.ndarray, np.ndarray]:
        return np.arange(len(self._ids)), self._ids

    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        if not len(self._ids):
            return np.full(len(chunk_ids), -1)
        encoded = [i.encode() for i in chunk_ids]
        fits = np.array([len(e) <= self._ids.itemsize for e in encoded], dtype=bool)  # longer would be cut
        wanted = np.array(encoded, dtype=self._ids.dtype)
        found = np.minimum(np.searchsorted(self._ids, wanted), len(self._ids) - 1)
        return np.where(fits & (self._ids[found] == wanted), found, -1)

    def rows_in_id_order(self, mask: np.ndarray) -> np.ndarray:
        return np.flatnonzero(mask)

    def id_list(self, rows: np.ndarray | None = None) -> list[str]:
        return [i.decode() for i in (self._ids if rows is None else self._ids[rows])]


class RowSet(Sequence[str]):
    """Fragmenty wybrane w jednej numeracji (``space``), w kolejności id; napisy powstają dopiero przy odczycie.
    Indeks słów bierze wprost ``selected_rows`` – kolejność id (przy szerokim filtrze ~5 ms przy milionie
    fragmentów) liczy się dopiero przy odczycie id."""

    def __init__(self, space: RowSpace, mask: np.ndarray) -> None:
        self.space = space
        self._mask = mask

    @classmethod
    def listed(cls, chunk_ids: Sequence[str]) -> RowSet:
        """Wybór z listy id (bez migawki)."""
        space = ListedRows(chunk_ids)
        return cls(space, np.ones(space.row_count(), dtype=bool))

    @cached_property
    def _ordered(self) -> np.ndarray:
        return self.space.rows_in_id_order(self._mask)

    def selected_rows(self) -> np.ndarray:
        """Numery wybranych wierszy w ``space`` (rosnąco, nie w kolejności id)."""
        return np.flatnonzero(self._mask)

    def __len__(self) -> int:
        return int(np.count_nonzero(self._mask))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.space.id_list(self._ordered[index])
        return self.space.id_list(self._ordered[index : index + 1 or None])[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self.space.id_list(self._ordered))
