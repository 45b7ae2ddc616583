"""Bezpośrednie odwołania w pytaniu: numery jednostek (``art. 23``, ``§ 6``, ``art. 178a k.k.``) i nazwy
aktów („ustawa o prawach pacjenta”, „kodeks wykroczeń”, „Konstytucja”), dopasowywane do zaindeksowanych
plików po lematach ich tytułu i nazwy pliku."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from ..filters import normalize_article
from .keyword import DEFAULT_LEMMATIZER, STOPWORDS, lemmatizer, tokenize, words

_ARTICLE = re.compile(
    r"\b(?:art\.?|artykuł\w*)\s*(\d+[a-z]?(?:\s*(?:\^\s*\d+|\[\d+\]|[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?)(?![\w])",
    re.IGNORECASE,
)
_PARAGRAPH = re.compile(r"(?:§|\bpar\.|\bparagraf\w*)\s*(\d+[a-z]?)(?![\w])", re.IGNORECASE)

# Customary abbreviations of codes (as in "art. 178a k.k.") and colloquial names of branches of law.
ABBREVIATIONS = {
    "k.k.": "kodeks karny",
    "k.c.": "kodeks cywilny",
    "k.w.": "kodeks wykroczeń",
    "k.r.o.": "kodeks rodzinny opiekuńczy",
    "k.p.": "kodeks pracy",
    "k.p.a.": "kodeks postępowania administracyjnego",
    "k.p.c.": "kodeks postępowania cywilnego",
    "k.p.k.": "kodeks postępowania karnego",
    "p.p.s.a.": "prawo postępowaniu sądami administracyjnymi",
}
_ABBREVIATION = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(a) for a in sorted(ABBREVIATIONS, key=len, reverse=True)) + r")",
    re.IGNORECASE,
)
_ACT_NAME = re.compile(
    r"\b(?:(kodeks\w*\s+(?:postępowania\s+)?\w+)"
    r"|(konstytucj\w*)"
    r"|ustaw\w*\s+o\s+((?:\w+\s*){1,3})"
    r"|rozporządzeni\w*\s+(?:\w+\s+){0,6}?w\s+sprawie\s+((?:\w+\s*){1,3})"
    r"|praw\w*\s+(karn\w*|cywiln\w*|rodzinn\w*|wykroczeń))",
    re.IGNORECASE,
)


@dataclass
class References:
    """Co pytanie wskazuje wprost: numery jednostek i pliki aktów, których nazwy padły."""

    articles: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.articles or self.files)


def find_articles(question: str) -> list[str]:
    """Numery jednostek w postaci zapisanej w bazie: ``23``, ``178a``, ``385^1``, ``§ 6``."""
    found = [normalize_article(m.group(1)) for m in _ARTICLE.finditer(question)]
    found += ["§ " + normalize_article(m.group(1)) for m in _PARAGRAPH.finditer(question)]
    return list(dict.fromkeys(found))


Mention = list[frozenset[str]]


def act_mentions(question: str) -> list[Mention]:
    """Nazwy aktów z pytania: dla każdego słowa treściowego zbiór jego możliwych lematów."""
    mentions = [_word_lemmas(ABBREVIATIONS[m.group(1).lower()]) for m in _ABBREVIATION.finditer(question)]
    for match in _ACT_NAME.finditer(question):
        code, constitution, act_subject, regulation_subject, branch = match.groups()
        if code:
            mentions.append(_word_lemmas(code))
        elif constitution:
            mentions.append([frozenset({"konstytucja"})])
        elif branch:
            mentions.append([frozenset({"kodeks"}), *_word_lemmas(branch)])
        else:
            mentions.append(_word_lemmas(act_subject or regulation_subject)[:2])
    return [m for m in mentions if m]


def _word_lemmas(text: str) -> Mention:
    lemmatize = lemmatizer(DEFAULT_LEMMATIZER)
    alternatives = (frozenset(lemmatize(word)) - STOPWORDS for word in words(text) if word not in STOPWORDS)
    return [alt for alt in alternatives if alt]


@lru_cache(maxsize=65_536)
def _title_terms(name: str, title: str) -> frozenset[str]:
    # every search checks every file's title: at a thousand files, tokenizing them anew cost ~100 ms a search
    return frozenset(tokenize(f"{title} {name.replace('-', ' ')}"))


def match_files(mentions: Iterable[Mention], files: dict[str, str]) -> list[str]:
    """Pliki, których tytuł lub nazwa zawiera każde słowo wzmianki (``files``: nazwa → tytuł).
    Wzmianka pasująca do kilku plików jest zbyt ogólna i nic nie wybiera."""
    mentions = list(mentions)
    if not mentions:
        return []
    terms = {name: _title_terms(name, title) for name, title in files.items()}
    chosen: list[str] = []
    for mention in mentions:
        matching = [name for name, have in terms.items() if all(alts & have for alts in mention)]
        if len(matching) == 1:
            chosen.append(matching[0])
    return list(dict.fromkeys(chosen))


def find_references(question: str, files: dict[str, str]) -> References:
    """Odwołania pytania do jednostek i do zaindeksowanych aktów (``files``: nazwa pliku → tytuł)."""
    return References(articles=find_articles(question), files=match_files(act_mentions(question), files))
