"""Rzadkie liczenie BM25: tylko fragmenty z listami wystąpień słów pytania, bez tablic długości całej kolekcji.

Wynik jest ten sam co przy gęstym liczeniu (suma po słowach pytania, słowo wieloznaczne – najlepszym
odczytaniem, kolejność: wynik malejąco, potem pozycja rosnąco), ale koszt zależy od długości list wystąpień,
a nie od liczby fragmentów (przy 1 mln gęsta tablica float64 to 8 MB na każde odczytanie słowa).
"""

from __future__ import annotations

import numpy as np

# Touched entries at least 1/DENSE_SHARE of the index: sum on a dense array instead of sorting the lists.
DENSE_SHARE = 16
Postings = tuple[np.ndarray, np.ndarray]  # (pozycje fragmentów, wyniki BM25 float64)


def column_postings(matrix: dict[str, np.ndarray], column: int) -> Postings:
    """Lista wystąpień lematu z macierzy CSC ``bm25s`` (``scores``): wiersze kolumny i ich wyniki."""
    start, end = int(matrix["indptr"][column]), int(matrix["indptr"][column + 1])
    return np.asarray(matrix["indices"][start:end], dtype=np.int64), np.asarray(matrix["data"][start:end],
                                                                                dtype=np.float64)


def best_reading(readings: list[Postings]) -> Postings:
    """Słowo wieloznaczne liczy się raz: dla każdego fragmentu najlepsze z jego odczytań."""
    if len(readings) == 1:  # a column holds each chunk once
        return readings[0]
    docs = np.concatenate([d for d, _ in readings])
    scores = np.concatenate([s for _, s in readings])
    order = np.argsort(docs, kind="stable")
    docs, scores = docs[order], scores[order]
    starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
    return docs[starts], np.maximum.reduceat(scores, starts)


def summed(words: list[Postings], size: int) -> Postings:
    """Suma po słowach na sumie ich list (``size`` – liczba pozycji indeksu); dodawanie w kolejności słów,
    jak w gęstej sumie – te same bity, od nich zależą remisy."""
    if not words:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if len(words) == 1:
        return words[0]
    docs = np.concatenate([d for d, _ in words])
    scores = np.concatenate([s for _, s in words])
    if len(docs) * DENSE_SHARE >= size:
        # long lists: one pass over a dense array is cheaper than sorting them; bincount adds in input order
        total = np.bincount(docs, weights=scores, minlength=size)
        touched = np.flatnonzero(total)
        return touched, total[touched]
    touched, where = np.unique(docs, return_inverse=True)
    return touched, np.bincount(where, weights=scores, minlength=len(touched))


def top(docs: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Numery (w ``docs``) ``k`` najlepszych: wynik malejąco, przy remisie niższa pozycja. Remis na granicy
    ``k`` też rozstrzyga pozycja, nie przypadek selekcji."""
    if len(scores) > k > 0:
        threshold = -np.partition(-scores, k - 1)[k - 1]
        above = np.flatnonzero(scores > threshold)
        tied = np.flatnonzero(scores == threshold)
        tied = tied[np.argsort(docs[tied], kind="stable")[: k - len(above)]]
        chosen = np.concatenate([above, tied])
    else:
        chosen = np.arange(len(scores)) if k > 0 else np.zeros(0, dtype=np.int64)
    return chosen[np.lexsort((docs[chosen], -scores[chosen]))]
