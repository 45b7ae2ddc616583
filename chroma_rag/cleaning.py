"""Naprawa tekstu wyciągniętego z PDF: krzaki starych fontów, przeniesienia wyrazów, spacje w środku
wyrazów, zawijanie linii. Wszystko wykrywane z samego tekstu (słownik budujemy z tego samego dokumentu)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

# Legacy Polish fonts in some Dziennik Ustaw prints map glyphs through Mac Central European, and pypdf
# decodes them as Mac Roman: "∏" is really "ł", "´" is "ę", "˝" is "ż", "à" is "ą".
_MOJIBAKE_MARKERS = frozenset("∏´˝Êƒ¸")
_POLISH = frozenset("ąęłżśćńźĄĘŁŻŚĆŃŹ")
_WORD = re.compile(r"[^\W\d_]+")
# Polish words never begin with these letters, so a space before them is always a broken word
_NEVER_INITIAL = frozenset("ąęńĄĘŃ")
# letters before which badly kerned PDFs insert a space ("mo żliwość", "niepodleg łość")
_DIACRITIC_INITIAL = frozenset("łżśćźó")
_DIACRITIC_SPLITS_MIN = 20
_SHORT_DIACRITIC_WORDS = frozenset({"żal", "źle", "łza", "ów", "łut", "łan", "łyk"})
_FUNCTION_WORDS = frozenset(
    {"w", "z", "i", "a", "o", "u", "że", "na", "do", "od", "po", "za", "ze", "we", "nie", "się", "to"}
    | {"oraz", "lub", "albo", "jest", "są", "by", "bo", "ani", "już", "jak", "czy"}
)
_SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
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
    """Słowa dokumentu i to, jak często fragment występuje tylko jako kawałek rozbitego wyrazu."""

    def __init__(self, text: str) -> None:
        self.counts = Counter(w.lower() for w in _WORD.findall(text))
        self._standalone = self._standalone_words(text)
        # badly kerned fonts put a space before every Polish letter; "prac ę" shows that for sure
        self.diacritic_splits = len(re.findall(r"[^\W\d_] [ąęń]", text)) >= _DIACRITIC_SPLITS_MIN
        self._as_left: Counter[str] = Counter()
        self._as_right: Counter[str] = Counter()
        self._left_of: defaultdict[str, set[str]] = defaultdict(set)
        for left, right in re.findall(r"([^\W\d_]+) (?=([^\W\d_]+))", text):
            self._left_of[right.lower()].add(left.lower())
            if self.counts[(left + right).lower()]:
                self._as_left[left.lower()] += 1
                self._as_right[right.lower()] += 1

    @staticmethod
    def _standalone_words(text: str) -> set[str]:
        """Wyrazy spotkane tam, gdzie rozbicie jest niemożliwe: na początku linii, po interpunkcji
        albo po krótkim wyrazie funkcyjnym – to na pewno samodzielne słowa, nie kawałki."""
        seen: set[str] = set()
        last_end, last_word = 0, ""
        for m in _WORD.finditer(text):
            gap = text[last_end : m.start()]
            if not gap.strip(" ") or gap.strip(" ") in ("-",):
                if last_word.lower() in _FUNCTION_WORDS or not last_word:
                    seen.add(m.group(0).lower())
            else:
                seen.add(m.group(0).lower())
            last_end, last_word = m.end(), m.group(0)
        return seen

    def is_fragment_pair(self, left: str, right: str) -> bool:
        """Czy „left right” to jeden wyraz rozbity spacją (znany w całości, a kawałek nie żyje osobno)."""
        if right[0] in _NEVER_INITIAL and right[0].islower():
            return True
        low_l, low_r = left.lower(), right.lower()
        if not right[0].islower() or low_r in _FUNCTION_WORDS:
            return False
        if self.counts[low_l + low_r] and (
            self._as_left[low_l] >= 0.6 * self.counts[low_l]
            or self._as_right[low_r] >= 0.6 * self.counts[low_r]
        ):
            return True
        if low_l in _FUNCTION_WORDS or not self.diacritic_splits or right[0] not in _DIACRITIC_INITIAL:
            return False
        if len(right) <= 3:
            return low_r not in _SHORT_DIACRITIC_WORDS
        # a fragment ("żliwość") always follows the same piece ("mo"); a real word has many neighbours
        return low_r not in self._standalone and len(self._left_of[low_r]) == 1 and self.counts[low_r] >= 2

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
    def repl(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(3)
        return left if vocab.is_fragment_pair(left, right) else left + m.group(2)

    # consume only the left word so every neighbouring pair is looked at ("mo ż liwo ść")
    return re.sub(r"([^\W\d_]+)( {1,2})(?=([^\W\d_]+))", repl, text)


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
    return re.sub(r"(\d)\^(\d+)", lambda m: m.group(1) + m.group(2).translate(_SUPERSCRIPT_DIGITS), text)


def clean_text(text: str, vocab: Vocabulary) -> str:
    """Pełne czyszczenie fragmentu: przeniesienia, rozbite wyrazy, akapity, indeksy górne."""
    return superscripts(fix_split_words(reflow(fix_hyphenation(text, vocab)), vocab))
