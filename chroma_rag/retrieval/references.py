"""Bezpośrednie odwołania w pytaniu: numery jednostek (``art. 23``, ``§ 6``), przepisy z aktem, jak je piszą
prawnicy (``art 90 kc``, ``art. 148 § 1 KK``, ``art. 5 ustawy o własności lokali``, ``art. 23 Konstytucji``),
i same nazwy aktów („Kodeksem karnym”, „ustawa o prawach pacjenta”, „prawo cywilne”).

Akt rozpoznaje się po jego nazwie z tytułu (``ingest.acts.cited_name``; także regulamin albo umowa zespołu)
porównanej słowo po słowie na lematach, więc odmiana nie przeszkadza, a „Kodeks karny” nie myli się
z „Kodeksem karnym skarbowym” (wygrywa najdłuższa pasująca nazwa), oraz po zwyczajowym skrócie
(``ingest.acts.KNOWN_ACTS``) pisanym z kropkami lub bez, dowolną wielkością liter."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from .. import morphology
from ..derived import DEFAULT_LEMMATIZER, STOPWORDS, lemmatizer, tokenize, words
from ..errors import UnknownAct
from ..filters import PASTED_SUPERSCRIPT, SUPERSCRIPT_PATTERN, fold, normalize_article
from ..ingest.acts import (
    KNOWN_ACTS,
    TEAM_DOCUMENT_WORDS,
    KnownAct,
    abbreviation_key,
    act_date,
    cited_name,
    known_act,
)

_NUMBER = r"\d+[a-z]?(?:" + SUPERSCRIPT_PATTERN + r")?"
_ARTICLE = re.compile(r"\b(?:art\.?|artykuł\w*)\s*(" + _NUMBER + r")(?![\w])", re.IGNORECASE)
_PARAGRAPH = re.compile(r"(?:§|\bpar\.|\bparagraf\w*)\s*(\d+[a-z]?)(?![\w])", re.IGNORECASE)
# "art. 5, 6 i 7a", "art. 415 oraz art. 444": more numbers of the same reference
_MORE_NUMBERS = re.compile(r"\s*(?:,|\bi\b|\boraz\b|\blub\b|\bi\s+art\.?|,\s*art\.?)\s*(" + _NUMBER + r")(?![\w])",
                           re.IGNORECASE)
# "§ 10 i 11": more paragraphs of one regulation ("§ 10 i art. 5" is not "§ 5")
_MORE_PARAGRAPHS = re.compile(r"\s*(?:,|\bi\b|\boraz\b|\blub\b)\s*(\d+[a-z]?)(?![\w])", re.IGNORECASE)
# "art. 10–12", "art. 10-12": a range of units (a hyphen or a dash, with or without spaces)
_RANGE = re.compile(r"\s*[-–—]\s*(\d+)(?![\w])")
# a longer range is a span of a code ("art. 1–400 k.c."), not units to show one by one: only its ends are cited
MAX_RANGE_UNITS = 20
# what may stand between the number and the act: "§ 1", "ust. 2", "pkt 3", "zd. 2", "lit. a", "in fine", "i nast.";
# a qualifier's number may be a list or a range ("§ 1 i 2", "ust. 1–3")
# "zdanie drugie", "zd. pierwsze": a sentence of a paragraph by its ordinal
_SENTENCE_ORDINALS = r"pierwsze|drugie|trzecie|czwarte|piąte|ostatnie"
_QUALIFIER_NUMBER = r"\d+[a-z]?(?:\s*(?:,|\bi\b|\boraz\b|\blub\b|[-–—])\s*\d+[a-z]?(?![\w.]))*"
# one qualifier, each kind in its own group: "§ 1 i 2", "ust. 2", "pkt 3", "zd. 2", "lit. a", "in fine", "i nast."
_QUALIFIER = (r"(?:(?:§|par\.?|paragraf\w*)\s*(?P<par>" + _QUALIFIER_NUMBER + r")|ust\.?\s*(?P<ust>" + _QUALIFIER_NUMBER
              + r")|pkt\.?\s*(?P<pkt>" + _QUALIFIER_NUMBER + r")|zd(?:anie)?\.?\s*(?P<zd>\d+|" + _SENTENCE_ORDINALS
              + r")|lit\.\s*(?P<lit>[a-z])\)?|(?P<in_fine>in\s+fine)|(?P<ab_initio>ab\s+initio)"
              r"|(?P<further>i\s+(?:nast|n)(?=\.)|i\s+następne))(?:\b|(?<=\)))\.?")
_QUALIFIERS = re.compile(
    # "Art. 10. § 1": the number written as it heads the article in the statute, then its qualifiers
    r"(?:\.(?=\s*(?:§|(?:ust|pkt|par|paragraf\w*|zd|zdanie|lit)\b)))?(?:\s*" + _QUALIFIER + r")*",
    re.IGNORECASE,
)
_ONE_QUALIFIER = re.compile(_QUALIFIER, re.IGNORECASE)
# "art. 10 w zw. z art. 12 k.k.", "art. 10 § 1 i art. 12 k.k.": the act named at the end covers the numbers before
# it too
_IN_CONNECTION = re.compile(r"\s*(?:w\s+(?:zw\.|związku)\s+z|,|i|oraz|lub)\s*$", re.IGNORECASE)
# how a citation writes each qualifier: "§ 1 i 2", "ust. 1–3", "pkt 2", "zd. 2", "lit. a"
_QUALIFIER_FORMS = {"par": "§ {}", "ust": "ust. {}", "pkt": "pkt {}", "zd": "zd. {}", "lit": "lit. {}",
                    "in_fine": "in fine", "ab_initio": "ab initio", "further": "i nast."}


def _abbreviation_pattern(spelling: str) -> str:
    # "k.p.c." matches "kpc", "k.p.c.", "k. p. c.", "KPC"; "pr. bank." matches "pr.bank." and "prbank"
    groups = [g for g in re.split(r"[\s.]+", spelling) if g]
    return r"\.?\s*".join(re.escape(g) for g in groups) + r"\.?"


_SPELLINGS = sorted(((s, act) for act in KNOWN_ACTS for s in (act.short, *act.spellings)),
                    key=lambda pair: -len(re.sub(r"[\s.]", "", pair[0])))
_ANY_ABBREVIATION = "|".join(_abbreviation_pattern(s) for s, _ in _SPELLINGS)
# where an abbreviation ends: not followed by a letter, nor by one more dotted letter group: "p.o.p." is not "p.o"
# with ".p." after it
_ABBREVIATION_END = r"(?!\w|\.[^\W\d_]{1,7}\.)"
_ABBREVIATION_AT = re.compile(
    r"\s*(" + "|".join(f"(?P<a{n}>{_abbreviation_pattern(s)})" for n, (s, _) in enumerate(_SPELLINGS))
    + r")" + _ABBREVIATION_END,
    re.IGNORECASE,
)
# "KK art. 148", "k.w., art. 10": an abbreviation right before an article (what may stand between: _BEFORE_ARTICLE)
_BEFORE_ARTICLE = re.compile(r"\s*[,:–-]?\s*")
_ABBREVIATION_BEFORE = re.compile(
    r"(?<![\w.])(" + _ANY_ABBREVIATION + r")\s*[,:–-]?\s*$", re.IGNORECASE)
# "415 kc", "148 § 1 KK": a number and a code's abbreviation, "art." left out as in quick notes – only codes, whose
# abbreviations no unit of measure shares ("20 kW", "5 op.", "100 KM"), and not after a qualifier ("ust. 2 kc")
_BARE_CODES = ("k.c.", "k.p.c.", "k.k.", "k.p.k.", "k.k.w.", "k.k.s.", "k.p.", "k.p.a.", "k.r.o.", "k.s.h.")
_BARE_ARTICLE = re.compile(
    r"(?<![\w.,§/^(\[–—-])(" + _NUMBER + r")\s*(?:§\s*\d+[a-z]?\s*)?(?=(?:"
    + "|".join(_abbreviation_pattern(s) for s in _BARE_CODES) + r")" + _ABBREVIATION_END + ")",
    re.IGNORECASE,
)
# typed without spaces ("art.148§1kk", "art.10ust.2 uwl", "art.415kc"): a number glued to the qualifier or the
# abbreviation after it gets its space; a letter right after the number stays part of it ("art.178akk") unless the
# letters after the digits are a qualifier or an abbreviation themselves
_GLUED = re.compile(r"(\d[a-z]??)(?=(?:ust|pkt|par|zd)\.?\s*\d|lit\.\s*[a-z]\b|(?:" + _ANY_ABBREVIATION + r")"
                    + _ABBREVIATION_END + ")", re.IGNORECASE)
# "art. 449 1 kc": a superscript pasted from a PDF as a space and its digits, right before a qualifier or an act's
# abbreviation (two numbers with nothing between them are no list: "art. 5 i 7")
_PASTED_SUPERSCRIPT = re.compile(
    r"(\b(?:art\.?|artykuł\w*)\s*\d+[a-z]?)\s+(" + PASTED_SUPERSCRIPT + r")(?=\s*(?:§|(?:ust|pkt|par|zd)\b|lit\.|(?:"
    + _ANY_ABBREVIATION + r")" + _ABBREVIATION_END + "))",
    re.IGNORECASE)
# "§ 1 art. 148 kk", "pkt 2 § 1 art. 10 kw": qualifiers written before the article's number, smallest first
_QUALIFIERS_AHEAD = re.compile(r"(?<![\w.])((?:" + _QUALIFIER + r"\s*)+)$", re.IGNORECASE)
_QUALIFIER_BEFORE = re.compile(r"(?:§|\b(?:art|ust|pkt|par|lit|zd|nr|poz|str|s)\.?)\s*$", re.IGNORECASE)
# An abbreviation anywhere in a question, not right after an article: only written with dots ("wg k.c.")
_DOTTED_ABBREVIATION = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(s) for s, _ in _SPELLINGS if s.count(".") >= 2) + r")(?![\w])",
    re.IGNORECASE,
)
# words an act's name starts with, as written in a question (declined)
_ACT_START = re.compile(
    r"\b(?:kodeks\w*|konstytucj\w*|ustaw\w*|praw[aoe]?\b|prawie|prawem|ordynacj\w*|rozporządze\w*|kart\w*\s+nauczyciel\w*"
    r"|regulamin\w*|umow\w*|statut\w*|polityk\w*|instrukcj\w*|procedur\w*)",
    re.IGNORECASE,
)
_STATUTE_WORD = re.compile(r"^(?:ustaw\w*)$", re.IGNORECASE)
# a statute's date after "ustawy": "z dnia 24 czerwca 1994 r.", "z 24 czerwca 1994 r.", "z dnia 24.06.1994 r.", or
# its year alone before its name: "z 1994 r. o własności lokali"
_DATE_TEXT = r"z\s+(?:dnia\s+)?(?:\d{1,2}\s+\w+\s+\d{4}|\d{1,2}\.\d{1,2}\.\d{4}|\d{4}(?=\s*r\b))(?:\s*r\b\.?)?"
_DATE = re.compile(r"^\s*" + _DATE_TEXT, re.IGNORECASE)
_YEAR = re.compile(r"^z\s+(?:dnia\s+)?(\d{4})\s*r\b", re.IGNORECASE)
# colloquial names of branches of law: "prawo karne" means the criminal code
_BRANCHES = {"karny": "kodeks karny", "cywilny": "kodeks cywilny", "rodzinny": "kodeks rodzinny i opiekuńczy",
             "wykroczenie": "kodeks wykroczeń", "pracy": "kodeks pracy", "praca": "kodeks pracy"}
_COMMON_WORDS = frozenset({"po", "pr", "km", "na", "do", "od", "no", "ku"})
# right after a provision, an abbreviation that names no known act is one we do not hold: dotted ("u.p.d.o.p.",
# "pr. o prok.") or capitals ("RODO", "TFUE"; three letters at least – "OK" is a word)
_UNKNOWN_ABBREVIATION = re.compile(
    r"\s*(pr\.\s*o\s+(?:[^\W\d_]{1,7}\.\s?)+|(?:[^\W\d_]{1,7}\.\s?){2,}|(?=[^\W\d_]*[A-ZĄĆĘŁŃÓŚŹŻ][^\W\d_]*[A-ZĄĆĘŁŃÓŚŹŻ])[A-ZĄĆĘŁŃÓŚŹŻ][^\W\d_]{2,7})"
    r"(?![\w])")
_ORDINARY_DOTTED = frozenset({"min", "tj", "dzu", "jw", "ww", "pne", "ne", "npm"})  # m.in., t.j., Dz. U. …
# a known abbreviation followed by one more abbreviated word is the beginning of a longer one ("pr. energ."),
# unless that word is an ordinary abbreviation of the sentence ("k.c. tzw. …", "k.p. itd.")
_ABBREVIATION_GOES_ON = re.compile(r"\s*([^\W\d_]{3,})\.")
_ORDINARY_ABBREVIATIONS = frozenset({"tzw", "itd", "itp", "art", "ust", "pkt", "por", "zob", "np", "dot"})
_NAME_WINDOW = 14  # words after the start of an act's name that a name may take


@dataclass
class UnitReference:
    """Przepis wskazany z aktem: jednostki (``normalize_article``), akt tak, jak go napisano, i pliki tego aktu."""

    articles: list[str]
    act: str
    files: list[str]
    subunit: str = ""  # "§ 1 pkt 2", "ust. 3" when the reference named them (shown in its citation, not a unit)


@dataclass
class References:
    """Co pytanie wskazuje wprost: numery jednostek, pliki aktów, których nazwy padły, przepisy z aktem
    (``units``) i akty nazwane przy przepisie, których nie ma w indeksie (``unknown``)."""

    articles: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    units: list[UnitReference] = field(default_factory=list)
    unknown: list[tuple[str, KnownAct | None]] = field(default_factory=list)
    alone: bool = False  # the question is its references and nothing more ("Co mówi art. 19 ustawy o VAT?")

    def __bool__(self) -> bool:
        return bool(self.articles or self.files or self.units)


def _numbers(text: str, first: re.Match[str], more_numbers: re.Pattern[str] = _MORE_NUMBERS) -> tuple[list[str], int]:
    """Numery jednego odwołania od ``first`` („art. 5”, „§ 10”): kolejne („, 6 i 7a”) i zakresy („–12”, rosnące) –
    oraz koniec ich zapisu w tekście."""
    numbers, position = [first.group(1)], first.end()
    while True:
        span = _RANGE.match(text, position)
        if span is not None and numbers[-1].isdigit() and int(span.group(1)) > int(numbers[-1]):
            start, stop = int(numbers[-1]), int(span.group(1))
            if stop - start < MAX_RANGE_UNITS:
                numbers.extend(str(n) for n in range(start + 1, stop + 1))
            else:
                numbers.append(span.group(1))
            position = span.end()
        more = more_numbers.match(text, position)
        if more is None:
            return numbers, position
        numbers.append(more.group(1))
        position = more.end()


@dataclass(frozen=True)
class _Act:
    """Zaindeksowany akt: lematy kolejnych słów jego nazwy i jego pliki."""

    words: tuple[frozenset[str], ...]
    files: tuple[str, ...]
    known: KnownAct | None


class ActCatalog:
    """Akty zaindeksowanych plików (``files``: nazwa pliku → tytuł) do rozpoznawania ich nazw i skrótów."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        by_name: dict[tuple[frozenset[str], ...], list[str]] = {}
        known: dict[tuple[frozenset[str], ...], KnownAct | None] = {}
        for name, title in files.items():
            phrase = cited_name(title)
            if not phrase:
                continue
            key = _phrase_lemmas(phrase)
            by_name.setdefault(key, []).append(name)
            known[key] = known_act(title)
        self.acts = [_Act(key, tuple(names), known[key]) for key, names in by_name.items()]
        # "ustawy z dnia 29 sierpnia 1997 r." without its name: the acts whose titles carry that date
        self.dated: dict[tuple[int, int, int], list[_Act]] = {}
        self.of_year: dict[int, list[_Act]] = {}  # "ustawy z 1997 r.": the acts of that year
        for act in self.acts:
            for date in {act_date(files[name]) for name in act.files} - {None}:
                self.dated.setdefault(date, []).append(act)
                self.of_year.setdefault(date[0], []).append(act)
        # acts not indexed, by their customary names: a reference to one of them is said to be missing
        indexed = {act.known for act in self.acts if act.known is not None}
        self.missing = [_Act(_phrase_lemmas(a.name), (), a) for a in KNOWN_ACTS if a not in indexed]
        # names an act's title does not give ("ustawa zasadnicza"): matched whole, before "ustawy" is read as the
        # beginning of "ustawy o …"
        self.other_names = [_Act(_phrase_lemmas(other), act.files, act.known) for act in (*self.acts, *self.missing)
                            if act.known is not None for other in act.known.other_names]
        # "ustawy o adwokaturze", "ustawy o ruchu drogowym": a statute titled "Prawo o …" is cited by the rest of
        # its name after "ustawy" too
        self.statute_names = [_Act(act.words[1:], act.files, act.known) for act in (*self.acts, *self.missing)
                              if len(act.words) > 2 and "prawo" in act.words[0] and "o" in act.words[1]]

    def _by_date(self, text: str, words_read: int) -> NameMatch:
        """Akt nazwany samą datą – a gdy tego dnia uchwalono kilka aktów indeksu (6 czerwca 1997 r.: k.k., k.p.k.,
        k.k.w.), jeden z nich: przepis szuka się w nich wszystkich; tak samo sam rok („ustawy z 1997 r.”) – akty
        indeksu z tego roku. Data, której nie ma żaden tytuł indeksu, to akt, którego indeks nie ma."""
        date, year = act_date(text), _YEAR.match(text.strip())
        acts = self.dated.get(date, []) if date else self.of_year.get(int(year.group(1)), []) if year else []
        if not acts:
            return NameMatch(words=words_read, unnamed=True)
        return NameMatch([f for act in acts for f in act.files], acts[0].known if len(acts) == 1 else None, words_read)

    def by_abbreviation(self, act: KnownAct) -> list[str]:
        return [f for found in self.acts if found.known == act for f in found.files]

    def by_name(self, text: str, after_statute: bool = False) -> NameMatch:
        """Akt, którego nazwa zaczyna ``text``: najdłuższa pasująca nazwa; skrócona nazwa („ustawy o kosztach
        sądowych”) tylko wtedy, gdy tak zaczyna się jeden akt (indeksu albo znany spoza niego); ``after_statute``
        – ``text`` stał po „ustawy”, więc „o adwokaturze” to też „Prawo o adwokaturze”."""
        readings = _text_lemmas(text)
        for act in self.other_names:
            if _matched_words(act.words, readings) == len(act.words):
                return NameMatch(list(act.files), act.known, len(act.words))
        if readings and _STATUTE_WORD.match(readings[0][0]):  # "ustawy o …", "ustawy – Prawo bankowe"
            rest = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
            date = _DATE.match(rest)
            found = self.by_name(rest[date.end():] if date else rest, after_statute=True)
            skipped = 1 + (len(words(date.group(0))) if date else 0)  # "ustawy", "z dnia 24 czerwca 1994 r."
            if date and not found.words:
                return self._by_date(date.group(0), skipped)
            return replace(found, words=found.words + skipped) if found.words else found
        best: tuple[int, bool] = (0, False)
        acts: list[_Act] = []
        for act in (*self.acts, *self.missing, *(self.statute_names if after_statute else ())):
            matched = _matched_words(act.words, readings)
            if not matched or not _meaningful(act.words[:matched]):
                continue
            rank = (matched, matched == len(act.words))
            if rank > best:
                best, acts = rank, [act]
            elif rank == best:
                acts.append(act)
        if not acts:
            return NameMatch()
        if not best[1] and len(readings) > best[0] and _qualifies(readings[best[0]][0]):
            # "ustawy o fundacjach politycznych" is not "o fundacji rodzinnej" cut short, "Prawa energetycznego"
            # none of the acts named "Prawo …": the name of an act this index does not know
            return NameMatch(words=best[0] + 1, unnamed=True)
        if len({a.words for a in acts}) > 1:
            return NameMatch(words=best[0], ambiguous=True)  # several acts start so: too general
        return NameMatch([f for a in acts for f in a.files], acts[0].known, best[0])


@dataclass(frozen=True)
class NameMatch:
    """Wynik ``ActCatalog.by_name``: pliki aktu (puste, gdy go nie ma w indeksie), znany akt o tej nazwie,
    liczba słów tekstu, które go nazwały (0: żaden akt), i czy nazwa pasuje do kilku aktów."""

    files: list[str] = field(default_factory=list)
    known: KnownAct | None = None
    words: int = 0
    ambiguous: bool = False
    unnamed: bool = False  # the text names an act by a name no act (indexed or known) has


def _matched_words(name: tuple[frozenset[str], ...], readings: list[tuple[str, frozenset[str]]]) -> int:
    """Ile pierwszych słów nazwy aktu zgadza się (lematem albo dosłownie) z kolejnymi słowami tekstu."""
    count = 0
    for wanted, (_, have) in zip(name, readings, strict=False):
        if not wanted & have:
            break
        count += 1
    return count


_VERB_TAGS = ("fin", "praet", "impt", "inf", "bedzie", "imps", "winien", "pred", "pcon", "pant")


@lru_cache(maxsize=4096)
def _tags(word: str) -> tuple[str, ...]:
    """Znaczniki Morfeusza wszystkich odczytań słowa (``ign`` – słowa nie ma w słowniku)."""
    return tuple(found.getTag(morphology.analyser()) for found in morphology.interpretations(word))


def _unknown_word(word: str) -> bool:
    return all(tag == "ign" for tag in _tags(word))


@lru_cache(maxsize=4096)
def _qualifies(word: str) -> bool:
    """Czy słowo po skróconej nazwie aktu dalej ją określa (rzeczownik albo przymiotnik, nie czasownik ani słowo
    funkcyjne): „ustawy o ochronie przyrody” to nazwa innego aktu, a nie skrót „o ochronie danych osobowych”,
    a „ustawa o prawach pacjenta mówi” – skrót."""
    if word in STOPWORDS:
        return False
    tags = _tags(word)
    return any(t.startswith(("adj", "subst", "depr")) for t in tags) and not any(t.startswith(_VERB_TAGS)
                                                                                  for t in tags)


def _abbreviated_word(word: str) -> bool:
    """Czy słowo z kropką po skrócie aktu to dalsza część jego skrótu („energ.”, „telekom.”), a nie zwykły skrót
    („tzw.”) ani słowo zdania („proszę.”): małą literą, nieznane słownikowi albo rzeczownik lub przymiotnik."""
    if not word.islower() or word in _ORDINARY_ABBREVIATIONS:
        return False
    return _unknown_word(word) or _qualifies(word)


_TEAM_KINDS = frozenset(TEAM_DOCUMENT_WORDS)


def _meaningful(words: tuple[frozenset[str], ...]) -> bool:
    # "o", "w sprawie" alone name nothing, nor does "umowy" alone ("§ 4 umowy o pracę" is not the team's lease):
    # a name begins with at least one content word that is not the kind of a team's document
    return any(not (alternatives <= STOPWORDS | {"sprawa"} or alternatives & _TEAM_KINDS) for alternatives in words)


@lru_cache(maxsize=4096)
def _phrase_lemmas(phrase: str) -> tuple[frozenset[str], ...]:
    """Słowa nazwy aktu: forma, jej lematy i – bez polskich znaków – każda forma tych lematów. Pytanie pisane bez
    nich („prawa oswiatowego”) ma słowa, których słownik nie zna; pasują do form nazwy w dowolnym przypadku."""
    lemmatize = lemmatizer(DEFAULT_LEMMATIZER)
    alternatives = []
    for word in words(phrase):
        lemmas = {word, *lemmatize(word)}
        folded = {fold(form) for lemma in lemmas for form in (lemma, *morphology.forms(lemma))}
        alternatives.append(frozenset(lemmas | folded))
    return tuple(alternatives)


_REPUBLIC = re.compile(r"\bRP\b")


def _text_lemmas(text: str) -> list[tuple[str, frozenset[str]]]:
    lemmatize = lemmatizer(DEFAULT_LEMMATIZER)
    text = _REPUBLIC.sub("Rzeczypospolitej Polskiej", text[:400])  # "Konstytucji RP"
    return [(w, frozenset({w, fold(w), *lemmatize(w)})) for w in words(text)[:_NAME_WINDOW]]


@lru_cache(maxsize=64)
def act_catalog(files: tuple[tuple[str, str], ...]) -> ActCatalog:
    return ActCatalog(dict(files))


def catalog_of(files: dict[str, str]) -> ActCatalog:
    """Katalog aktów dla plików (zapamiętany: wyszukiwarka pyta przy każdym pytaniu o te same pliki)."""
    return act_catalog(tuple(sorted(files.items())))


def resolve_act(spelled: str, files: dict[str, str]) -> list[str]:
    """Pliki aktu podanego nazwą albo skrótem (``--akt kpc``, ``--akt "ustawa o własności lokali"``); akt,
    którego nie ma w indeksie (albo nazwa pasująca do kilku aktów), to błąd ``UnknownAct``."""
    catalog = catalog_of(files)
    text = spelled.strip()
    act = _abbreviation_at(text, whole=True)
    if act is not None:
        found = catalog.by_abbreviation(act)
        if found:
            return found
        raise UnknownAct(text, act, in_filter=True)
    match = catalog.by_name(text)
    if match.files and match.words >= len(words(_DATE.sub("", text))):
        return match.files
    raise UnknownAct(text, match.known, ambiguous=match.ambiguous, in_filter=True)


def _abbreviation_at(text: str, whole: bool = False) -> KnownAct | None:
    """Znany akt, którego skrót stoi na początku ``text`` (``whole``: skrót to cały tekst). Skrót bez kropek,
    który jest zwykłym słowem („po”, „pr”), jest skrótem tylko wielkimi literami albo na końcu odwołania
    („art 133 po”, „Art. 218 PR”), a nie przed dalszymi słowami („art. 5 po zmianie”)."""
    found = _ABBREVIATION_AT.fullmatch(text) if whole else _ABBREVIATION_AT.match(text)
    if found is None:
        return None
    written = found.group(1)
    # "pr." with its dot only at the end is still the word's abbreviation: "pr. o adw." is "Prawo o adwokaturze"
    if "." not in written.strip().rstrip(".") and abbreviation_key(written) in _COMMON_WORDS:
        ends = not text[found.end():].strip(" \t?!.,;:)")
        if not (written.strip().isupper() or ends):
            return None
    group = next(name for name, value in found.groupdict().items() if value is not None)
    return _SPELLINGS[int(group[1:])][1]


def find_references(question: str, files: dict[str, str]) -> References:
    """Odwołania pytania do jednostek i do zaindeksowanych aktów (``files``: nazwa pliku → tytuł)."""
    catalog = catalog_of(files)
    question = _PASTED_SUPERSCRIPT.sub(r"\1^\2", _GLUED.sub(r"\1 ", question))
    refs = References()
    qualified: list[tuple[int, int]] = []  # "§ 1" in "art. 148 § 1 kk" is part of the article's reference
    connected: list[str] = []  # numbers before "w zw. z art. …", waiting for the act named after it
    written: list[tuple[int, int]] = []  # where each "art. …" reference stands, its numbers and qualifiers
    spans: list[tuple[int, int]] = []  # the other references ("415 kc", "§ 10 …"), to tell what else it says
    matches = list(_ARTICLE.finditer(question))
    read = 0  # the question up to here belongs to earlier references
    for position, match in enumerate(matches):
        if any(start <= match.start() < stop for start, stop in written):
            continue  # "art. 7" of "art. 5, art. 7 i art. 9 kc": read as one of the earlier reference's numbers
        numbers, end = _numbers(question, match)
        qualifiers = _QUALIFIERS.match(question, end)
        tail_start = qualifiers.end() if qualifiers else end
        ahead = _QUALIFIERS_AHEAD.search(question, read, match.start())
        if ahead and ahead.group(1).rstrip().endswith(".") and question[match.start()].isupper():
            ahead = None  # "… § 3. Art. 10 k.p.": the qualifier ends the sentence before, "Art." opens the next
        start = ahead.start() if ahead else match.start()
        qualified.extend([(start, match.start()), (end, tail_start)])
        written.append((start, tail_start))
        articles = list(dict.fromkeys(normalize_article(n) for n in numbers))
        refs.articles.extend(a for a in articles if a not in refs.articles)
        unknown_before = len(refs.unknown)
        unit = _unit_reference(question[tail_start:], catalog, refs)
        if unit is None and not connected and len(refs.unknown) == unknown_before:
            unit = _act_before(question[read:start], catalog, refs)
        read = tail_start
        if unit is not None:
            unit.articles = list(dict.fromkeys([*connected, *articles]))
            if not connected and len(articles) == 1:  # "§ 1" after several articles is the last one's
                unit.subunit = " ".join([*reversed(_qualifier_parts(question[start:match.start()])),
                                         *_qualifier_parts(question[end:tail_start])])
            refs.units.append(unit)
            connected = []
        elif (following := next((m for m in matches[position + 1:] if m.start() >= tail_start), None)) and \
                _IN_CONNECTION.match(question[tail_start:following.start()]):
            connected.extend(articles)
        else:
            connected = []
    for match in _BARE_ARTICLE.finditer(question):
        if any(start <= match.start() < stop for start, stop in written) or _QUALIFIER_BEFORE.search(
                question[:match.start()]):
            continue
        unit = _unit_reference(question[match.end():], catalog, refs)
        if unit is not None:
            unit.articles = [normalize_article(match.group(1))]
            unit.subunit = " ".join(_qualifier_parts(question[match.end(1):match.end()]))
            refs.articles.extend(a for a in unit.articles if a not in refs.articles)
            refs.units.append(unit)
            qualified.append((match.start(), match.end()))
            spans.append((match.start(), match.end()))
    for match in _PARAGRAPH.finditer(question):
        if any(start <= match.start() < stop for start, stop in qualified):
            continue
        # "§ 10 ust. 1 rozporządzenia w sprawie …": a regulation's unit is a paragraph
        numbers, end = _numbers(question, match, _MORE_PARAGRAPHS)
        qualifiers = _QUALIFIERS.match(question, end)
        paragraphs = list(dict.fromkeys("§ " + normalize_article(n) for n in numbers))
        refs.articles.extend(p for p in paragraphs if p not in refs.articles)
        unit = _unit_reference(question[qualifiers.end() if qualifiers else end:], catalog, refs)
        if unit is not None:
            unit.articles = paragraphs
            refs.units.append(unit)
            spans.append((match.start(), qualifiers.end() if qualifiers else end))
    refs.files = match_files(question, catalog)
    refs.alone = bool(refs.units) and _nothing_else(question, [*written, *spans], [unit.act for unit in refs.units])
    return refs


# what a question that only cites a provision says around it: "Co mówi …?", "Pokaż treść …"
_ASKING = frozenset({"co", "mówi", "stanowi", "brzmi", "brzmienie", "treść", "tekst", "pokaż", "przepis", "czego",
                     "dotyczy", "jak", "proszę", "przytocz", "zacytuj", "zgodnie", "według", "wg", "zw", "związku"})


def _nothing_else(question: str, spans: list[tuple[int, int]], acts: list[str]) -> bool:
    """Czy poza odwołaniami (numery, kwalifikatory, nazwy i skróty aktów) pytanie nie mówi nic."""
    kept = list(question)
    for start, stop in spans:
        kept[start:stop] = " " * (stop - start)
    rest = "".join(kept)
    for act in acts:
        rest = rest.replace(act, " ", 1)
    return all(word in STOPWORDS or word in _ASKING for word in words(rest))


def _unit_reference(tail: str, catalog: ActCatalog, refs: References) -> UnitReference | None:
    """Akt, który stoi zaraz po numerze przepisu (skrót albo nazwa); nieznany akt trafia do ``refs.unknown``."""
    act = _abbreviation_at(tail)
    if act is not None:
        written = _ABBREVIATION_AT.match(tail)
        spelled = written.group(1).strip() if written else act.short
        longer = _ABBREVIATION_GOES_ON.match(tail, written.end()) if written else None
        if longer is not None and _abbreviated_word(longer.group(1)):
            # "pr. energ." starts as "p.r." does: an act we do not know, not art. 3 of the one we do
            refs.unknown.append((tail[: longer.end()].strip(), None))
            return None
        found = catalog.by_abbreviation(act)
        if not found:
            refs.unknown.append((spelled, act))
            return None
        return UnitReference([], spelled, found)
    if not _ACT_START.match(tail, len(tail) - len(tail.lstrip())):
        unknown = _UNKNOWN_ABBREVIATION.match(tail)
        if unknown is not None and abbreviation_key(unknown.group(1)) not in _ORDINARY_DOTTED:
            refs.unknown.append((unknown.group(1).strip(), None))
        return None
    match = catalog.by_name(tail)
    spelled = _leading_words(tail, max(match.words, 1))
    if match.files:
        return UnitReference([], spelled, match.files)
    branch = _branch(tail.lstrip(), catalog)
    if branch:  # "art. 415 prawa cywilnego"
        return UnitReference([], _leading_words(tail, 2), branch)
    regulation = _LOOSE.match(tail.lstrip())
    if regulation is not None and regulation.group(2):  # "rozporządzenia w sprawie dokumentacji medycznej"
        files = _loose_match(tail.lstrip(), catalog)
        if files:
            return UnitReference([], regulation.group(0).strip(), files)
    if match.known is not None:  # a known act the index does not hold
        refs.unknown.append((spelled, match.known))
        return None
    shortened = _shortened_name(tail, catalog)
    if shortened is not None:
        # one act so named; none or several – no act, and no refusal: such a name may be any of them
        files, written = shortened
        return UnitReference([], written, files) if files else None
    if match.unnamed:
        refs.unknown.append((spelled, None))
    elif not match.ambiguous and re.match(r"\s*ustaw\w*\s+(?:" + _DATE_TEXT + r"\s*)?o\s+\w", tail, re.I):
        refs.unknown.append((_leading_words(tail, 4), None))
    return None


# "ustawy o wł. lok.", "ustawy o ks. wiecz. i hip.", "ustawy o k.w.h.", "ustawy o KRS": a statute's name shortened
# word by word, or to the initials of its words
_SHORTENED_NAME = re.compile(
    r"\s*(?:ustaw\w*\s+(?:" + _DATE_TEXT + r"\s*)?o|(?P<code>kodeks\w*))\s+(?P<name>(?:[^\W\d_]+\.?\s*){1,8})",
    re.IGNORECASE)
_SHORT_TOKEN = re.compile(r"[^\W\d_]+\.?")


def _shortened_name(tail: str, catalog: ActCatalog) -> tuple[list[str], str] | None:
    """Nazwa ustawy albo kodeksu skrócona słowo po słowie albo do inicjałów („ustawy o wł. lok.”, „o k.w.h.”,
    „o KRS”, „kodeksu post. cyw.”): pliki jedynego zaindeksowanego aktu („o …”, „Kodeks …”), którego nazwa tak się
    zaczyna (skrót to początek słowa nazwy, inicjały – początki kolejnych słów, słowa funkcyjne nazwy można pominąć;
    najdłuższa pasująca, a z równie długich ta, której nazwa na skrócie się kończy: „kodeksu karn.” to k.k., nie
    k.k.s.), pusta lista – żaden albo kilka, i skrócona nazwa, jak ją napisano; ``None`` – po „ustawy o”
    („kodeksu”) nie ma skróconego słowa."""
    found = _SHORTENED_NAME.match(tail)
    if found is None:
        return None
    tokens = list(_SHORT_TOKEN.finditer(tail, found.start("name"), found.end("name")))
    shortened = [_abbreviated(token, tail) for token in tokens]
    if not any(shortened):
        return None
    pieces: list[tuple[str, bool, int]] = []  # (folded word or its beginning, is a beginning, token)
    for n, (token, short) in enumerate(zip(tokens, shortened, strict=True)):
        word = token.group(0).rstrip(".")
        if short and word.isupper():
            pieces.extend((letter, True, n) for letter in fold(word.lower()))  # "KRS": three initials
        else:
            pieces.append((fold(word.lower()), token.group(0).endswith("."), n))
    # the name ends with its last shortened word at the earliest; the question may go on after it
    required = max(i for i, piece in enumerate(pieces) if shortened[piece[2]]) + 1
    kind = "kodeks" if found.group("code") else "o"
    read = {act: _pieces_read(act.words[1:], pieces, required) for act in catalog.acts
            if act.words and kind in act.words[0]}
    longest = max(read.values(), default=(0, False))
    acts = [act for act, rank in read.items() if rank[0] and rank == longest]
    written = tail[: tokens[pieces[max(longest[0], required) - 1][2]].end()].strip()
    return (list(acts[0].files) if len(acts) == 1 else []), written


def _abbreviated(token: re.Match[str], text: str) -> bool:
    """„wł.”, „k.” w „k.w.h.”, „KRS” – skrócone słowo albo inicjały; „lokali”, „i” i słowo z kropką na końcu zdania
    („… o ochronie przyrody. Czy …”) – nie."""
    word = token.group(0).rstrip(".")
    if len(word) >= 2 and word.isupper():
        return True
    if not token.group(0).endswith("."):
        return False
    if len(word) == 1 and (text[token.end():token.end() + 1].isalpha() or text[token.start() - 1:token.start()] == "."):
        return True  # one of dotted initials
    if word.lower() in STOPWORDS:
        return False
    after = text[token.end():].lstrip()
    if after and after[0].islower():
        return True
    return _unknown_word(word.lower())  # at a sentence's end only a word the dictionary does not know


def _pieces_read(words: tuple[frozenset[str], ...], pieces: list[tuple[str, bool, int]],
                 required: int) -> tuple[int, bool]:
    """Ile pierwszych kawałków skróconej nazwy pasuje po kolei do słów nazwy aktu (0: mniej niż ``required``)
    i czy przeczytały całą nazwę."""
    at = 0
    for n, (piece, beginning, _) in enumerate(pieces):
        while at < len(words) and not _fits(words[at], piece, beginning) and words[at] <= STOPWORDS:
            at += 1  # a function word of the name left out ("o k.w.h." – "i")
        if at >= len(words) or not _fits(words[at], piece, beginning):
            return (n, at >= len(words)) if n >= required else (0, False)
        at += 1
    return len(pieces), at >= len(words)


def _fits(word: frozenset[str], piece: str, beginning: bool) -> bool:
    # the word's forms without Polish letters are in it already (_phrase_lemmas), as a folded piece needs
    return any(form.startswith(piece) for form in word) if beginning else piece in word


def _act_before(head: str, catalog: ActCatalog, refs: References) -> UnitReference | None:
    """Akt napisany tuż przed przepisem, jak w notatkach: „KK art. 148 § 1”, „Kodeks wykroczeń, art. 10”,
    „Zgodnie z Kodeksem karnym art. 148” (skrót będący zwykłym słowem – „po art. 5” – tylko z kropkami)."""
    abbreviation = _ABBREVIATION_BEFORE.search(head)
    if abbreviation is not None:
        written = abbreviation.group(1)
        if "." in written or abbreviation_key(written) not in _COMMON_WORDS:
            act = _abbreviation_at(written, whole=True)
            if act is not None:
                return _named_unit(written.strip(), catalog.by_abbreviation(act), act, refs)
    for start in reversed([m.start() for m in _ACT_START.finditer(head)]):
        rest = head[start:]
        match = catalog.by_name(rest)
        spelled = _leading_words(rest, match.words) if match.words else ""
        if spelled and _BEFORE_ARTICLE.fullmatch(rest[len(spelled):]):
            return _named_unit(spelled, match.files, match.known, refs)
    return None


def _named_unit(spelled: str, files: list[str], known: KnownAct | None, refs: References) -> UnitReference | None:
    if files:
        return UnitReference([], spelled, files)
    if known is not None:
        refs.unknown.append((spelled, known))
    return None


def _qualifier_parts(qualifiers: str) -> list[str]:
    """Kwalifikatory odwołania po kolei, zapisane jak w cytacie: „§1 pkt. 2” → „§ 1”, „pkt 2”; „ust 1-3” →
    „ust. 1–3”."""
    parts = []
    for match in _ONE_QUALIFIER.finditer(qualifiers):
        kind, value = next((k, v) for k, v in match.groupdict().items() if v is not None)
        value = re.sub(r"\s*[-–—]\s*", "–", re.sub(r"\s*,\s*", ", ", " ".join(value.split())))
        parts.append(_QUALIFIER_FORMS[kind].format(value))
    return parts


def _leading_words(text: str, count: int) -> str:
    """Początek tekstu do końca ``count``-tego słowa, jak go napisano („ustawy – Prawo prasowe”)."""
    ends = [m.end() for m in re.finditer(r"[^\W_]+(?:(?<=\br)\.)?", text)]  # "1994 r." keeps its dot
    return text[: ends[min(count, len(ends)) - 1]].strip() if ends else ""


def match_files(question: str, catalog: ActCatalog) -> list[str]:
    """Pliki aktów nazwanych w pytaniu (z przepisem albo bez): nazwa aktu w dowolnej odmianie, skrót z kropkami
    („wg k.c.”), gałąź prawa („prawo karne”), skrócona nazwa ustawy lub rozporządzenia; nazwa pasująca do kilku
    aktów jest zbyt ogólna i nic nie wybiera."""
    chosen: list[str] = []
    for match in _DOTTED_ABBREVIATION.finditer(question):
        act = _abbreviation_at(match.group(1), whole=True)
        if act is not None:
            chosen.extend(catalog.by_abbreviation(act))
    for match in _ACT_START.finditer(question):
        text = question[match.start():]
        chosen.extend(catalog.by_name(text).files or _branch(text, catalog) or _loose_match(text, catalog))
    return list(dict.fromkeys(chosen))


def _branch(text: str, catalog: ActCatalog) -> list[str]:
    """„prawo karne”, „prawa pracy” → kodeks tej gałęzi, jeśli jest w indeksie."""
    readings = _text_lemmas(text)[:2]
    if len(readings) < 2 or "prawo" not in readings[0][1]:
        return []
    for lemma, code in _BRANCHES.items():
        if lemma in readings[1][1]:
            return catalog.by_name(code).files
    return []


_LOOSE = re.compile(
    r"^(?:ustaw\w*\s+o\s+((?:\w+\s*){1,3})|rozporządzeni\w*\s+(?:\w+\s+){0,6}?(?:w\s+sprawie|o)\s+((?:\w+\s*){1,3}))",
    re.IGNORECASE,
)


def _loose_match(text: str, catalog: ActCatalog) -> list[str]:
    """Skrócona nazwa ustawy lub rozporządzenia („rozporządzenie w sprawie dokumentacji medycznej”): dwa
    pierwsze słowa treściowe jej przedmiotu są w tytule albo nazwie pliku dokładnie jednego aktu."""
    found = _LOOSE.match(text)
    if found is None:
        return []
    lemmatize = lemmatizer(DEFAULT_LEMMATIZER)
    subject = found.group(1) or found.group(2)
    mention = [frozenset(lemmatize(w)) - STOPWORDS for w in words(subject) if w not in STOPWORDS]
    mention = [alts for alts in mention if alts][:2]
    if not mention:
        return []
    terms = {name: _title_terms(name, title) for name, title in catalog.files.items()}
    matching = [name for name, have in terms.items() if all(alts & have for alts in mention)]
    return matching if len(matching) == 1 else []


@lru_cache(maxsize=65_536)
def _title_terms(name: str, title: str) -> frozenset[str]:
    # every search checks every file's title: at a thousand files, tokenizing them anew cost ~100 ms a search
    return frozenset(tokenize(f"{title} {name.replace('-', ' ')}"))


def check_acts(refs: References) -> None:
    """Przepis z aktem, którego nie ma w indeksie, to błąd ``UnknownAct`` (jedno zdanie), a nie ranking
    jednostek o tym numerze z innych aktów."""
    if refs.unknown and not refs.units:
        spelled, act = refs.unknown[0]
        raise UnknownAct(spelled, act)
