"""Rzadkie liczenie BM25: tylko fragmenty z listami wystąpień słów pytania, bez tablic długości całej kolekcji.

Wynik jest ten sam co przy gęstym liczeniu (suma po słowach pytania, słowo wieloznaczne – najlepszym
odczytaniem, kolejność: wynik malejąco, potem pozycja rosnąco), ale koszt zależy od długości list wystąpień,
a nie od liczby fragmentów (przy 1 mln gęsta tablica float64 to 8 MB na każde odczytanie słowa).

Dwa skróty dają te same bity co pełna suma (słowa dodawane w kolejności pytania, od zera):
- ``restricted`` – wąski filtr liczy tylko swoje pozycje, bisekcją w listach wystąpień;
- ``pruned`` – bez filtra albo przy szerokim: listy najczęstszych lematów (przy 1 mln po kilkaset tysięcy
  pozycji) czytane tylko dla kandydatów z rzadszych słów, gdy najwyższe możliwe wyniki częstych słów razem nie
  sięgają ``k``-tego wyniku (MaxScore); inaczej ``None`` i pełna suma.
"""

from __future__ import annotations

import numpy as np

from .params import KeywordParams

# Float sums in another order differ in the last bits: bounds get this relative slack, so pruning never drops
# a document that the exact sum would rank.
SLACK = 1e-9
Postings = tuple[np.ndarray, np.ndarray]  # (pozycje fragmentów rosnąco, wyniki BM25)
Word = list[Postings]  # lists of a word's readings (an ambiguous word has several)


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


def best_reading(readings: list[Postings], size: int, dense_share: int) -> Postings:
    """Słowo wieloznaczne liczy się raz: dla każdego fragmentu najlepsze z jego odczytań (``size`` – liczba
    pozycji indeksu; długie listy przez gęstą tablicę zamiast sortowania ich sumy)."""
    if len(readings) == 1:  # a column holds each chunk once
        return readings[0]
    if sum(len(d) for d, _ in readings) * dense_share >= size:
        best = np.zeros(size)
        for docs, scores in readings:
            best[docs] = np.maximum(best[docs], scores)
        docs = np.flatnonzero(best != 0)  # via bool: nonzero on float64 is 6 times slower (10 ms at 1M)
        return docs, best[docs]
    docs = np.concatenate([d for d, _ in readings])
    scores = np.concatenate([s for _, s in readings])
    order = np.argsort(docs, kind="stable")
    docs, scores = docs[order], scores[order]
    starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
    return docs[starts], np.maximum.reduceat(scores, starts)


def summed(words: list[Word], size: int, dense_share: int) -> Postings:
    """Suma po słowach (każde najlepszym odczytaniem) na sumie ich list (``size`` – liczba pozycji indeksu);
    dodawanie w kolejności słów, jak w gęstej sumie – te same bity, od nich zależą remisy."""
    best = [best_reading(readings, size, dense_share) for readings in words]
    if not best:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if len(best) == 1:
        return best[0]
    docs = np.concatenate([d for d, _ in best])
    scores = np.concatenate([s for _, s in best])
    if len(docs) * dense_share >= size:
        # long lists: one pass over a dense array is cheaper than sorting them; bincount adds in input order
        total = np.bincount(docs, weights=scores, minlength=size)
        touched = np.flatnonzero(total != 0)  # via bool, as in best_reading
        return touched, total[touched]
    touched, where = np.unique(docs, return_inverse=True)
    return touched, np.bincount(where, weights=scores, minlength=len(touched))


def restricted(words: list[Word], positions: np.ndarray) -> Postings:
    """Suma po słowach tylko w ``positions`` (rosnąco, bez powtórzeń): krótsza strona szukana bisekcją w dłuższej,
    więc wąski filtr nie czyta całych list częstych lematów. Zwraca pozycje z wynikiem > 0."""
    total = np.zeros(len(positions))
    for readings in words:
        total += word_scores(readings, positions)  # adding 0.0 where the word is absent keeps the full sum's bits
    kept = np.flatnonzero(total)
    return positions[kept], total[kept]


def word_scores(readings: Word, positions: np.ndarray) -> np.ndarray:
    """Wynik słowa w każdej z ``positions`` (rosnąco; 0, gdy go tam nie ma) – najlepszym odczytaniem, bez
    łączenia całych list."""
    best = np.zeros(len(positions))
    if not len(positions):
        return best
    for docs, scores in readings:
        if len(docs) <= len(positions):
            at = np.minimum(np.searchsorted(positions, docs), len(positions) - 1)
            hit = positions[at] == docs
            best[at[hit]] = np.maximum(best[at[hit]], scores[hit])
        elif len(docs):
            # needles in the list's own type: a mapped int32 list is not copied into int64
            at = np.minimum(np.searchsorted(docs, positions.astype(docs.dtype, copy=False)), len(docs) - 1)
            hit = docs[at] == positions
            best[hit] = np.maximum(best[hit], scores[at[hit]])
    return best


def pruned(words: list[Word], bounds: list[float], k: int, size: int,
           usable: np.ndarray | None, params: KeywordParams) -> Postings | None:
    """Pełna suma tylko tam, gdzie może być wśród ``k`` najlepszych (MaxScore; ``bounds`` – najwyższy wynik
    każdego słowa, ``usable`` – mapa bitów dozwolonych pozycji albo ``None``). ``None``: ograniczenie nic nie
    przesądza – trzeba pełnej sumy.

    Próg: dokładny wynik ``k`` najlepszych kandydatów najrzadszych słów (krótkie listy) – ``k``-ty wynik całości
    nie jest niższy. Słowa o najniższych maksimach, które razem nie sięgają progu, są „częste”: fragment bez
    pozostałych słów odpada, a ich listy (przy milionie fragmentów po kilkaset tysięcy pozycji) są czytane tylko
    dla kandydatów, bisekcją."""
    if k < 1 or len(words) < 2:
        return None
    lengths = [sum(len(d) for d, _ in readings) for readings in words]
    by_bound = sorted(range(len(words)), key=lambda w: (bounds[w], -lengths[w]))
    seeds: list[int] = []
    for w in reversed(by_bound):  # rarest first, while their lists stay short
        if seeds and (sum(lengths[s] for s in seeds) + lengths[w]) * params.dense_share > size:
            break
        seeds.append(w)
    docs, partial = _allowed_only(summed([words[w] for w in seeds], size, params.dense_share), usable)
    if len(docs) < k:
        return None
    threshold = _kth_exact(words, docs, partial, k, params.leaders_per_k)
    frequent, ceiling = set(), 0.0
    for w in by_bound:
        if (ceiling + bounds[w]) * (1 + SLACK) >= threshold:
            break
        frequent.add(w)
        ceiling += bounds[w]
    if not frequent:
        return None
    essential = [w for w in range(len(words)) if w not in frequent]
    if set(essential) != set(seeds):  # else the seeds' sums are already these
        docs, partial = _allowed_only(summed([words[w] for w in essential], size, params.dense_share), usable)
    if len(docs) > k:  # the best by the other words: their exact scores usually raise the threshold a lot
        threshold = max(threshold, _kth_exact(words, docs, partial, k, params.leaders_per_k))
    keep = partial + ceiling * (1 + SLACK) >= threshold
    docs, partial = docs[keep], partial[keep]
    if len(docs) * params.lookup_cost > sum(lengths):
        return None  # bisecting that many candidates costs more than summing the lists
    for w in sorted(frequent, key=lambda w: -bounds[w]):  # each frequent word read at fewer candidates
        partial = partial + word_scores(words[w], docs)
        ceiling -= bounds[w]
        keep = partial + max(ceiling, 0.0) * (1 + SLACK) >= threshold
        docs, partial = docs[keep], partial[keep]
    return restricted(words, docs)


def _kth_exact(words: list[Word], docs: np.ndarray, partial: np.ndarray, k: int, leaders_per_k: int) -> float:
    """Dolne ograniczenie ``k``-tego wyniku całości: ``k``-ty dokładny wynik wśród ``leaders_per_k`` · ``k``
    kandydatów o najwyższej sumie części słów (pomniejszony o luz zaokrągleń)."""
    count = min(len(docs), leaders_per_k * k)
    leaders = np.sort(docs[np.argpartition(-partial, count - 1)[:count]])
    exact = restricted(words, leaders)[1]
    if len(exact) < k:
        return 0.0
    return float(-np.partition(-exact, k - 1)[k - 1]) * (1 - SLACK)


def _allowed_only(found: Postings, usable: np.ndarray | None) -> Postings:
    docs, scores = found
    if usable is None:
        return docs, scores
    keep = usable[docs]
    return docs[keep], scores[keep]


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
