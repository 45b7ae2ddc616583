"""Zwroty pytania w tekście fragmentu: ile par sąsiednich słów pytania (po lematach, bez słów funkcyjnych) stoi
w fragmencie obok siebie. Pytanie prawnika powtarza słowa przepisu („świadkami nie mogą być”, „organ egzekucyjny
zawiesza postępowanie z urzędu”), a BM25 widzi te same słowa rozsypane po całym akcie; para w tej samej kolejności
w jednym zdaniu wskazuje przepis, z którego pytanie wzięto."""

from __future__ import annotations

from collections.abc import Callable, Sequence

Reading = tuple[str, ...]  # the possible lemmas of one word (an ambiguous word has several)


def question_pairs(readings: Sequence[Reading], ignored: frozenset[str]) -> list[tuple[Reading, Reading]]:
    """Pary sąsiednich słów pytania. Słowo z ``ignored`` (lematy tytułu aktu, który pytanie nazwało: „Zgodnie
    z Kodeksem postępowania cywilnego”) rozdziela pytanie – nazwa aktu nie wskazuje przepisu w nim samym, a para
    ponad nią nie sąsiaduje w pytaniu."""
    pairs: list[tuple[Reading, Reading]] = []
    previous: Reading | None = None
    for reading in readings:
        if ignored.intersection(reading):
            previous = None
            continue
        if previous is not None:
            pairs.append((previous, reading))
        previous = reading
    return pairs


def phrase_score(pairs: Sequence[tuple[Reading, Reading]], weights: Sequence[float], tokens: Sequence[str],
                 window: int) -> float:
    """Suma wag par pytania, które stoją we fragmencie (``tokens``: jego lematy w kolejności) w tej kolejności
    najwyżej ``window`` lematów od siebie – odstęp dopuszcza drugi odczyt wieloznacznego słowa między nimi."""
    near = {(tokens[a], tokens[b]) for a in range(len(tokens)) for b in range(a + 1, min(a + 1 + window, len(tokens)))}
    return sum(weight for (first, second), weight in zip(pairs, weights, strict=True)
               if any((x, y) in near for x in first for y in second))


def pair_weights(pairs: Sequence[tuple[Reading, Reading]], word_weight: Callable[[Reading], float]) -> list[float]:
    """Waga pary: średnia wag jej słów (IDF) – para słów rzadkich w zbiorze mówi więcej niż „sąd może”."""
    return [(word_weight(first) + word_weight(second)) / 2 for first, second in pairs]
