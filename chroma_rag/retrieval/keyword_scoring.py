"""Rzadkie liczenie BM25: tylko fragmenty z listami wystąpień słów pytania, bez tablic długości całej kolekcji.

Wynik jest ten sam co przy gęstym liczeniu (suma po słowach pytania, słowo wieloznaczne – najlepszym
odczytaniem, kolejność: wynik malejąco, potem pozycja rosnąco), ale koszt zależy od długości list wystąpień,
a nie od liczby fragmentów (przy 1 mln gęsta tablica float64 to 8 MB na każde odczytanie słowa).

Dwa skróty dają te same bity co pełna suma (słowa dodawane w kolejności pytania, od zera):
- ``restricted`` – wąski filtr liczy tylko swoje pozycje, bisekcją w listach wystąpień;
- ``pruned`` – bez filtra albo przy szerokim: listy najczęstszych lematów (przy 1 mln po kilkaset tysięcy
  pozycji) czytane tylko dla kandydatów z rzadszych słów, gdy górne ograniczenie wkładu częstych słów nie
  sięga ``k``-tego wyniku (MaxScore); inaczej ``None`` i pełna suma.
"""

from __future__ import annotations

import numpy as np

# Touched entries at least 1/DENSE_SHARE of the index: sum on a dense array instead of sorting the lists.
DENSE_SHARE = 16
# A lemma in at least 1/FREQUENT_SHARE of the index is "frequent": ``pruned`` reads its list only for candidates.
FREQUENT_SHARE = 64
# Float sums in another order differ in the last bits: bounds get this relative slack, so pruning never drops
# a document that the exact sum would rank.
SLACK = 1e-9
Postings = tuple[np.ndarray, np.ndarray]  # (pozycje fragmentów, wyniki BM25 float64)


def column_postings(matrix: dict[str, np.ndarray], column: int) -> Postings:
    """Lista wystąpień lematu z macierzy CSC ``bm25s`` (``scores``): wiersze kolumny (rosnąco) i ich wyniki – widoki
    mapowanej macierzy, bez kopii: lista częstego lematu bywa czytana tylko w kilku miejscach (``restricted``)."""
    start, end = int(matrix["indptr"][column]), int(matrix["indptr"][column + 1])
    return matrix["indices"][start:end], matrix["data"][start:end]


def column_ceilings(matrix: dict[str, np.ndarray]) -> np.ndarray:
    """Najwyższy wynik każdej kolumny macierzy CSC (0 w pustej)."""
    starts, ends = np.asarray(matrix["indptr"][:-1]), np.asarray(matrix["indptr"][1:])
    ceilings = np.zeros(len(starts), dtype=np.float32)
    filled = ends > starts
    if filled.any():
        ceilings[filled] = np.maximum.reduceat(np.asarray(matrix["data"]), starts[filled])
    return ceilings


def best_reading(readings: list[Postings], size: int) -> Postings:
    """Słowo wieloznaczne liczy się raz: dla każdego fragmentu najlepsze z jego odczytań (``size`` – liczba
    pozycji indeksu; długie listy przez gęstą tablicę zamiast sortowania ich sumy)."""
    if len(readings) == 1:  # a column holds each chunk once
        return readings[0]
    if sum(len(d) for d, _ in readings) * DENSE_SHARE >= size:
        best = np.zeros(size)
        for docs, scores in readings:
            best[docs] = np.maximum(best[docs], scores)
        docs = np.flatnonzero(best)
        return docs, best[docs]
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


def restricted(words: list[Postings], positions: np.ndarray) -> Postings:
    """Suma po słowach tylko w ``positions`` (rosnąco, bez powtórzeń): krótsza strona szukana bisekcją w dłuższej,
    więc wąski filtr nie czyta całych list częstych lematów. Zwraca pozycje z wynikiem > 0."""
    total = np.zeros(len(positions))
    if len(positions):
        for docs, scores in words:
            if not len(docs):
                continue
            if len(docs) <= len(positions):
                at = np.minimum(np.searchsorted(positions, docs), len(positions) - 1)
                hit = positions[at] == docs
                total[at[hit]] += scores[hit]
            else:
                # needles in the list's own type: a mapped int32 list is not copied into int64
                at = np.minimum(np.searchsorted(docs, positions.astype(docs.dtype, copy=False)), len(docs) - 1)
                hit = docs[at] == positions
                total[hit] += scores[at[hit]]
    kept = np.flatnonzero(total)
    return positions[kept], total[kept]


def pruned(words: list[Postings], bounds: list[float], k: int, size: int,
           usable: np.ndarray | None) -> Postings | None:
    """Pełna suma tylko tam, gdzie może być wśród ``k`` najlepszych (``bounds`` – górne ograniczenie wyniku
    każdego słowa, ``usable`` – mapa bitów dozwolonych pozycji albo ``None``). Kandydaci to fragmenty rzadszych
    słów; fragment bez nich ma najwyżej sumę ograniczeń częstych słów i odpada, gdy ta suma jest poniżej
    dokładnego wyniku ``k`` kandydatów. ``None``: ograniczenie nic nie przesądza – trzeba pełnej sumy."""
    frequent = [len(docs) * FREQUENT_SHARE >= size for docs, _ in words]
    if not any(frequent) or all(frequent) or k < 1:
        return None
    rare = [w for w, f in zip(words, frequent, strict=True) if not f]
    docs, partial = summed([(np.asarray(d, dtype=np.int64), s) for d, s in rare], size)
    if usable is not None:
        keep = usable[docs]
        docs, partial = docs[keep], partial[keep]
    if len(docs) < k:
        return None
    ceiling = sum(b for b, f in zip(bounds, frequent, strict=True) if f) * (1 + SLACK)
    leaders = np.sort(docs[np.argpartition(-partial, k - 1)[:k]])
    threshold = float(restricted(words, leaders)[1].min(initial=np.inf)) if len(leaders) else 0.0
    if not ceiling < threshold * (1 - SLACK):
        return None
    return restricted(words, docs[partial + ceiling >= threshold * (1 - SLACK)])


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
