"""Zwroty pytania w tekście fragmentu: ile par sąsiednich słów pytania (po lematach, bez słów funkcyjnych) stoi
w fragmencie obok siebie. Pytanie prawnika powtarza słowa przepisu („zabezpieczenie roszczeń pieniężnych”, „organ
egzekucyjny zawiesza postępowanie z urzędu”), a BM25 widzi te same słowa rozsypane po całym akcie; para w tej
samej kolejności w jednym zdaniu wskazuje przepis, z którego pytanie wzięto.

Cytat: najdłuższy ciąg kolejnych słów pytania – ze słowami funkcyjnymi – stojący w fragmencie słowo w słowo
(po lematach). „Świadkami nie mogą być” ma jedno słowo treściowe, więc żadnej pary, ale jako cytat wskazuje
art. 259 k.p.c., który tymi słowami się zaczyna."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

Reading = tuple[str, ...]  # the possible lemmas of one word (an ambiguous word has several)
Forms = frozenset[str]  # a word as written and its lemmas, function words included


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
    positions = _positions([(token,) for token in tokens], {lemma for pair in pairs for word in pair for lemma in word})
    total = 0.0
    for (first, second), weight in zip(pairs, weights, strict=True):
        within = {p + gap for lemma in first for p in positions.get(lemma, ()) for gap in range(1, window + 1)}
        if any(p in within for lemma in second for p in positions.get(lemma, ())):
            total += weight
    return total


def pair_weights(pairs: Sequence[tuple[Reading, Reading]], word_weight: Callable[[Reading], float]) -> list[float]:
    """Waga pary: średnia wag jej słów (IDF) – para słów rzadkich w zbiorze mówi więcej niż „sąd może”."""
    return [(word_weight(first) + word_weight(second)) / 2 for first, second in pairs]


def quoted_run(question: Sequence[Forms], weights: Sequence[float], fragment: Sequence[Forms], min_words: int) -> float:
    """Największa suma wag (``weights``: słowa pytania, funkcyjne 0) ciągu co najmniej ``min_words`` kolejnych
    słów pytania, które w ``fragment`` stoją kolejno, słowo w słowo (słowa pasują, gdy mają wspólną formę);
    0, gdy takiego ciągu nie ma albo składa się z samych słów funkcyjnych."""
    positions = _positions(fragment, set().union(*question))
    best = 0.0
    for start in range(len(question) - min_words + 1):
        ends = {p for form in question[start] for p in positions.get(form, ())}
        length = 1
        while ends and start + length < len(question):
            following = {p + 1 for p in ends if p + 1 < len(fragment) and fragment[p + 1] & question[start + length]}
            if not following:
                break
            ends, length = following, length + 1
        if length >= min_words:
            best = max(best, sum(weights[start : start + length]))
    return best


def _positions(words: Sequence[Iterable[str]], wanted: set[str]) -> dict[str, list[int]]:
    """Forma z ``wanted`` (formy pytania) → pozycje słów, które ją mają."""
    positions: dict[str, list[int]] = defaultdict(list)
    for position, forms in enumerate(words):
        for form in forms:
            if form in wanted:
                positions[form].append(position)
    return positions
