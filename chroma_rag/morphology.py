"""Morfeusz2 w jednym miejscu: jeden analizator na proces (słownik to kilkadziesiąt MB) dla cięcia tekstu
i lematyzatora indeksu słów, a jego wyniki czytane po indeksie z obiektu SWIG.

Po indeksie, nie iteracją po ``Morfeusz.analyse``: morfeusz2 i faiss to moduły SWIG ze wspólną tablicą typów
i iterator wyników potrafił wziąć klasę faiss – proces padał z segfaultem przy obu zaimportowanych, w dowolnej
kolejności. ``_morfeusz_obj`` to prywatne pole morfeusz2: przy jego aktualizacji trzeba to sprawdzić."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def analyser() -> Any:
    """Natywny analizator (obiekt SWIG) – potrzebny też do nazw znaczników (``getTag(analyser())``)."""
    import morfeusz2  # lazy: loading the dictionary takes a moment and plain search does not always need it

    return morfeusz2.Morfeusz(generate=False, expand_tags=False)._morfeusz_obj


def interpretations(word: str) -> list[Any]:
    """Interpretacje słowa (``lemma``, ``getTag``, ``getLabels``) jako zwykła lista."""
    found = analyser().analyse(word)
    return [found[n] for n in range(len(found))]


@lru_cache(maxsize=1)
def generator() -> Any:
    """Natywny generator form (osobny słownik, ok. 30 MB) – tylko do nazw aktów (``forms``)."""
    import morfeusz2

    return morfeusz2.Morfeusz(generate=True, analyse=False, expand_tags=False)._morfeusz_obj


def forms(lemma: str) -> list[str]:
    """Wszystkie formy lematu („oświatowy” → „oświatowego”, „oświatowej” …); nieznany słownikowi – pusta lista."""
    found = generator().generate(lemma)
    return [found[n].orth for n in range(len(found))]
