"""Naprawa tekstu wyciągniętego z PDF: krzaki starych fontów, przeniesienia wyrazów, spacje w środku
wyrazów, zawijanie linii. Wykrywane z samego tekstu; rozbite wyrazy rozstrzyga słownik Morfeusz 2."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import pairwise

from .. import morphology

# Legacy Polish fonts in some Dziennik Ustaw prints map glyphs through Mac Central European, and pypdf
# decodes them as Mac Roman: "∏" is really "ł", "´" is "ę", "˝" is "ż", "à" is "ą".
_MOJIBAKE_MARKERS = frozenset("∏´˝Êƒ¸")
_POLISH = frozenset("ąęłżśćńźĄĘŁŻŚĆŃŹ")
_WORD = re.compile(r"[^\W\d_]+")
_FUNCTION_WORDS = frozenset(
    {"w", "z", "i", "a", "o", "u", "że", "na", "do", "od", "po", "za", "ze", "we", "nie", "się", "to"}
    | {"oraz", "lub", "albo", "jest", "są", "by", "bo", "ani", "już", "jak", "czy", "tylko", "także"}
    | {"nad", "pod", "przed", "przez", "przy", "dla", "bez", "ku", "przeciw", "wobec", "między"}
    | {"skoro", "gdy", "jeśli", "jeżeli", "aby", "ale", "lecz", "niż"}
)
# indeclinable acronyms get every case at once ("MO", "RP"); as a word in a statute such a piece is a fragment
_ACRONYM_CASES = "nom.gen.dat.acc.inst.loc.voc"
_WORD_RUN = re.compile(r"(?<![\w-])[^\W\d_]+(?:-[^\W\d_]+)*(?: [^\W\d_]+(?:-[^\W\d_]+)*)+")
# Polish words never begin with ą, ę, ń, so a space before them is always a broken word ("prac ę")
_SPACE_BEFORE_OGONEK = re.compile(r"(?<=[^\W\d_]) (?=[ąęń])")
# letters enumerated after "lit." ("lit. a i b", "lit. g ust. 1") and units after a number ("100 m od")
# are legit one-letter words
_LONE_LETTER_CONTEXT = re.compile(r"(?:lit\.\s?(?:[a-z]{1,2}\s?(?:[,–-]|i|oraz|lub|albo)\s?)*|\d\s?)$")
# Polish one- and two-letter words that a statute uses; any other short piece ("us ług", "mo że") outside
# a "lit." list is a piece of a broken word
_SHORT_WORDS = frozenset(
    {
        "a", "i", "o", "u", "w", "z", "na", "do", "od", "po", "za", "ze", "we", "to", "ta", "te", "ty", "tę",
        "tą", "my", "wy", "on", "go", "mu", "mi", "ci", "je", "ją", "co", "bo", "by", "że", "aż", "iż", "ni",
        "no", "ku", "tu", "ów", "ad", "ex", "ma", "są", "ja", "im", "oń",
    }
)
# dated or dialect readings ("wej", "li") do not make a piece a word of a modern statute
_DATED = re.compile(r"daw\.|przest\.|gwar\.")
_FRAGMENT, _DATED_WORD, _RARE_WORD = 3, 2, 1
_DATED_COMMON = 10
_DATED_PIECE_MAX = 8
_ROMAN = frozenset("IVXLCDM")
_MAX_PIECES = 3
_WEAK_COST = 10.0
_FUNCTION_WORD_COST = 2.0
SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_BREAK_KEPT = re.compile(r"^(?:§\s*\d|Art\.|\d+[a-z]?[.)]|[a-z]\)|[–—-]\s|„|\[|<)")


def _mac_table() -> dict[int, str]:
    table = {}
    for code in range(0x80, 0x100):
        wrong = bytes([code]).decode("mac_roman")
        right = bytes([code]).decode("mac_latin2")
        if wrong != right:
            table[ord(wrong)] = right
    return table


_MAC_TABLE = _mac_table()


def has_mojibake(text: str) -> bool:
    """Czy tekst wygląda na polski złożony starym fontem (dużo „∏”, „´”, „˝”, mało prawdziwych ą, ł…)."""
    markers = sum(1 for ch in text if ch in _MOJIBAKE_MARKERS)
    native = sum(1 for ch in text if ch in _POLISH)
    return markers >= 20 and markers > 3 * native


def repair_mojibake(text: str) -> str:
    return text.translate(_MAC_TABLE)


class Vocabulary:
    """Słowa dokumentu i pary sąsiednich słów: rozstrzygają przeniesienia („społeczno-” + „gospodarczy”
    zachowuje łącznik) i rozbicia dwóch słownikowych słów („us ług”: „us” żyje tylko w tej parze)."""

    def __init__(self, text: str) -> None:
        self.counts = Counter(w.lower() for w in _WORD.findall(text))
        self.pairs = Counter(
            (left.lower(), right.lower()) for left, right in re.findall(r"([^\W\d_]+) (?=([^\W\d_]+))", text)
        )

    def proves_split(self, left: str, right: str) -> bool:
        """Dwa słownikowe kawałki są jednym wyrazem, gdy całość występuje w dokumencie, a jeden
        z kawałków nigdzie poza tą parą (słowa funkcyjne „za rządów” nigdy się nie kwalifikują)."""
        low_l, low_r = left.lower(), right.lower()
        if low_l in _FUNCTION_WORDS or low_r in _FUNCTION_WORDS or not self.counts[low_l + low_r]:
            return False
        together = self.pairs[(low_l, low_r)]
        return self.counts[low_l] <= together or self.counts[low_r] <= together

    def is_weak(self, piece: str) -> bool:
        """Czy kawałek w tym dokumencie wygląda raczej na część rozbitego wyrazu niż na słowo."""
        weakness = _weakness(piece)
        if weakness in (_DATED_WORD, _RARE_WORD):  # a long or common one is a real word ("ubezpieczyciela")
            return len(piece) <= _DATED_PIECE_MAX and self.counts[piece.lower()] < _DATED_COMMON
        return weakness == _FRAGMENT

    def join_hyphenated(self, left: str, right: str) -> str:
        """„społeczno-” + „gospodarczym” zostaje z łącznikiem, „praw-” + „nej” sklejamy."""
        joined = left + right
        if self.counts[joined.lower()]:
            return joined
        if self.counts[f"{left}-{right}".lower()] or (left.endswith("o") and self.counts[right.lower()] > 1):
            return f"{left}-{right}"
        return joined


def fix_hyphenation(text: str, vocab: Vocabulary) -> str:
    def repl(m: re.Match[str]) -> str:
        return vocab.join_hyphenated(m.group(1), m.group(2)) + "\n"

    return re.sub(r"([^\W\d_]+)-[ \t]*\n[ \t]*([^\W\d_]+)[ \t]*", repl, text)


def fix_split_words(text: str, vocab: Vocabulary) -> str:
    """„nini ejszy”, „ta jemnica”, „mo że” → jeden wyraz, gdy słownik (Morfeusz) zna całość, a nie zna
    któregoś kawałka; „prac ę” zawsze (żaden polski wyraz nie zaczyna się od ą, ę, ń)."""
    text = _SPACE_BEFORE_OGONEK.sub("", text)

    def repl(m: re.Match[str]) -> str:
        return _join_run(m.group(0).split(" "), text[max(0, m.start() - 24) : m.start()], vocab)

    return _WORD_RUN.sub(repl, text)


def _join_run(pieces: list[str], before: str, vocab: Vocabulary) -> str:
    """Najlepszy podział ciągu kawałków na wyrazy (programowanie dynamiczne): kawałek nieznany słownikowi
    zostawiony osobno kosztuje dużo, każde sklejenie trochę zyskuje, sklejenie słowa funkcyjnego
    („nie mo że” → „niemo że”) kosztuje, więc wygrywa „nie może”."""
    if not any(vocab.is_weak(p) for p in pieces) and not any(vocab.proves_split(*p) for p in pairwise(pieces)):
        return " ".join(pieces)
    best: list[tuple[float, list[str]]] = [(0.0, [])]
    for end in range(1, len(pieces) + 1):
        options = []
        for size in range(1, min(_MAX_PIECES, end) + 1):
            group = pieces[end - size : end]
            scored = _score_group(group, before + " ".join([*pieces[: end - size], ""]), vocab)
            if scored is not None:
                cost, word = scored
                options.append((best[end - size][0] + cost, [*best[end - size][1], word]))
        best.append(min(options, key=lambda o: o[0]))
    return " ".join(best[-1][1])


def _score_group(group: list[str], before: str, vocab: Vocabulary) -> tuple[float, str] | None:
    """(koszt, wyraz) uznania kawałków za jeden wyraz; None, gdy sklejenie jest niedozwolone."""
    if len(group) == 1:
        return (_WEAK_COST if vocab.is_weak(group[0]) else 0.0), group[0]
    if not _case_fits(group):
        return None
    if not any(vocab.is_weak(p) for p in group) and not (len(group) == 2 and vocab.proves_split(*group)):
        return None
    word = "".join(group)
    plain = word.replace("-", "")
    # "odp łatno-ścią" hides a line-end hyphen; "spo łeczno-zawodowych" keeps its real one
    if plain != word and _is_known(plain) and (vocab.counts[plain.lower()] or not _is_known(word)):
        word = plain
    if not _is_known(word):
        return None
    # "lit. g ust. 1", "lit. c i d", "100 m od", "Dział X dodaje" – but "2/3 g łosów" is broken
    lone_letter = len(group[0]) == 1 and (group[0] in _ROMAN or _LONE_LETTER_CONTEXT.search(before))
    if lone_letter and (len(group[1]) < 3 or not (vocab.is_weak(group[1]) or vocab.counts[word.lower()])):
        return None
    glued_function_words = sum(p.lower() in _FUNCTION_WORDS for p in group)
    # a rare word after a preposition is a word ("na wale", "od akapitu"), a dated one is not ("z najdują")
    if glued_function_words and all(_weakness(p) == _RARE_WORD for p in group if vocab.is_weak(p)):
        return None
    # ties go to the word the document uses more: "tylko wówczas" beats "tylkowów czas", "nie może" beats
    # "niemo że" ("niemo" occurs only as a piece of "niemo żliwość")
    seen = vocab.counts[word.lower()]
    return -(len(group) - 1) + _FUNCTION_WORD_COST * glued_function_words - seen / (seen + 3), word


def _case_fits(group: list[str]) -> bool:
    first, rest = group[0], "".join(group[1:])
    if rest.isupper():
        return first.isupper()
    return rest.islower() and (first.islower() or first.istitle())


@lru_cache(maxsize=300_000)
def _weakness(piece: str) -> int:
    """_FRAGMENT: kawałek nieznany Morfeuszowi albo znany mu tylko jako skrót czy skrótowiec („mo” to MO,
    „g” to „g.”); _DATED_WORD: słowo tylko dawne czy gwarowe („wej”, „li”, „suje”); _RARE_WORD: tylko
    w znaczeniu specjalistycznym („archiwal”); 0: zwykłe słowo."""
    if len(piece) <= 2:
        return 0 if piece.lower() in _SHORT_WORDS else _FRAGMENT
    readings = _readings(piece.lower())
    if any(tag == "ign" for tag, _ in readings) or all(_is_abbreviation(tag) for tag, _ in readings):
        return _FRAGMENT
    if all(_is_abbreviation(tag) or _DATED.search(quals) for tag, quals in readings):
        return _DATED_WORD
    return _RARE_WORD if all(_is_abbreviation(tag) or quals for tag, quals in readings) else 0


def _is_known(word: str) -> bool:
    """Czy Morfeusz zna wyraz jako zwykłe słowo (cały wyraz może mieć kwalifikator: „ubezpieczyciela”)."""
    readings = _readings(word.lower())
    if any(tag == "ign" for tag, _ in readings):
        return False
    return not all(_is_abbreviation(tag) for tag, _ in readings)


def _is_abbreviation(tag: str) -> bool:
    return tag.startswith(("brev", "romandig")) or _ACRONYM_CASES in tag


@lru_cache(maxsize=300_000)
def _readings(word: str) -> list[tuple[str, str]]:
    native = morphology.analyser()
    return [(found.getTag(native), " ".join(found.getLabels(native))) for found in morphology.interpretations(word)]


def reflow(text: str) -> str:
    """Łączy zawinięte linie w akapity; nowa linia zostaje przed „§ 2.”, „1.”, „1)”, „a)”, „–”."""
    out: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if out and not _BREAK_KEPT.match(line):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
    return "\n".join(re.sub(r"[ \t]{2,}", " ", ln) for ln in out)


def superscripts(text: str) -> str:
    """„22^1” → „22¹” w tekście pokazywanym użytkownikowi."""
    return re.sub(r"(\d)\^(\d+)", lambda m: m.group(1) + m.group(2).translate(SUPERSCRIPT_DIGITS), text)


def clean_text(text: str, vocab: Vocabulary) -> str:
    """Pełne czyszczenie fragmentu: przeniesienia, rozbite wyrazy, akapity, indeksy górne."""
    return superscripts(fix_split_words(reflow(fix_hyphenation(text, vocab)), vocab))
