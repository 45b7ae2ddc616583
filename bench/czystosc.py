"""Skan czystości fragmentów 11 wspólnych PDF-ów (bez embeddingu): ślady nagłówków/stopek, krzaki starego
fontu, odnośniki przyklejone do numerów, spacja przed ą/ę/ń i rozbite wyrazy.

Rozbite wyrazy liczy reguła niezależna od naprawy w ``cleaning`` (tam słownik Morfeusz): para „a b”, gdzie
„ab” zna słownik simplemma, a „a” albo „b” nie. Znane fałszywe alarmy (wyliczenia liter po „lit.”, skrót
egzaminu „PES z wynikiem”) są wypisywane osobno. Uruchomienie: `python -m bench.czystosc [--zapisz]`
(z `--zapisz` tabela trafia do docs/BENCHMARKS.md, sekcja „czystość”).
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter

import simplemma

from bench.common import USTAWY, machine, write_section
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document

KINDS = {
    "nagłówki/stopki stron (`©Kancelaria Sejmu`, `s. 12/235`, `Dziennik Ustaw – 3 – Poz.`, daty)": re.compile(
        r"©|Kancelaria Sejmu|Dziennik Ustaw\s*(Nr \d+\s*)?[–—-]\s*\d+\s*[–—-]|\b(19|20)\d\d-\d\d-\d\d\b"
        r"|\bs\.\s*\d+\s*/\s*\d+\b"
    ),
    "krzaki starego fontu (`∏ ´ ˝ Ê ƒ ¸`, `à`/`ç` w słowie)": re.compile(
        r"[∏´˝Êƒ¸\ufffd\ue000\ue001]|[a-zżźćńółęąś][àç]"
    ),
    "odnośniki przyklejone do numerów (`Art. 5.4)`, `(uchylony).3)`)": re.compile(
        r"(?:Art\.|§) ?\d+[a-z]?\.\d{1,3}\)|\)\.\d{1,3}\)"
    ),
    "spacja przed ą/ę/ń w środku słowa (`prac ę`, `s ą`)": re.compile(r"[^\W\d_] [ąęń]"),
}
SPLIT = "rozbite słowa wg simplemma (para „a b”: „ab” jest słowem, „a” lub „b” nie)"
_PAIR = re.compile(r"(?<!\w)([^\W\d_]+) (?=([^\W\d_]+))")
# known false alarms: a letter listed after "lit." ("lit. g ust. 1" → "gust", "lit. c lub d" → "club"),
# the exam acronym "PES" ("złożył PES z wynikiem" → "pesz")
_LETTER_LIST = re.compile(r"lit\.\s?(?:[a-z]{1,2}\s?(?:[,–-]|i|oraz|lub|albo)\s?)*$")
_ACRONYMS = frozenset({"PES"})


def known(word: str) -> bool:
    return simplemma.is_known(word.lower(), lang="pl")


def split_words(text: str) -> tuple[list[str], list[str]]:
    """(rozbicia, fałszywe alarmy) w tekście fragmentu."""
    real, false = [], []
    for m in _PAIR.finditer(text):
        left, right = m.group(1), m.group(2)
        if known(left + right) and not (known(left) and known(right)):
            pair = f"{left} {right}"
            before = text[max(0, m.start() - 30) : m.start()]
            # a lone letter opening a chunk continues a "lit." list cut by the overlap ("c lub d ustawy")
            alarm = left in _ACRONYMS or _LETTER_LIST.search(before) or (len(left) == 1 and not before)
            (false if alarm else real).append(pair)
    return real, false


def scan() -> tuple[Counter[str], Counter[str], Counter[str], int, float]:
    counts: Counter[str] = Counter()
    splits: Counter[str] = Counter()
    alarms: Counter[str] = Counter()
    chunks = 0
    started = time.process_time()
    for path in sorted(USTAWY.glob("*.pdf")):
        for chunk in chunk_document(load_document(path)):
            chunks += 1
            for kind, pattern in KINDS.items():
                counts[kind] += len(pattern.findall(chunk.text))
            real, false = split_words(chunk.text)
            splits.update(real)
            alarms.update(false)
    return counts, splits, alarms, chunks, time.process_time() - started


def main() -> None:
    counts, splits, alarms, chunks, cpu = scan()
    rows = "\n".join(f"| {kind} | {counts[kind]} |" for kind in KINDS)
    rest = ", ".join(f"`{p}` ×{n}" for p, n in splits.most_common()) or "brak"
    false = ", ".join(f"`{p}` ×{n}" for p, n in alarms.most_common()) or "brak"
    body = f"""| co | trafienia |
|---|---:|
{rows}
| {SPLIT} | {sum(splits.values())} |
| fałszywe alarmy tej reguły (litery po „lit.”, skrót „PES”) | {sum(alarms.values())} |

Maszyna: {machine()}. Skan: `make bench-czystosc` (`python -m bench.czystosc --zapisz`): {chunks} fragmentów,
wczytanie i cięcie {cpu:.1f} s czasu procesora.
Pozostałe rozbicia: {rest}. Fałszywe alarmy: {false}.
"""
    print(body)
    if "--zapisz" in sys.argv:
        write_section("czystość", body)


if __name__ == "__main__":
    main()
