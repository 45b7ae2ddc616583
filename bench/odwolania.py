"""Zbiór odwołań (issue 37): przepisy zapisane tak, jak je piszą prawnicy, do aktów z biblioteki i spoza niej,
w formacie ``ocena`` – ``bench/odwolania-dev.jsonl``.

    python -m bench.odwolania            # tworzy zbiór od nowa (deterministycznie) z plików ../shared/dane

Dla każdego aktu o nazwie z tytułu (kodeksy, ustawy, Konstytucja; bez rozporządzeń i nowelizacji) kilka
istniejących, nieuchylonych artykułów wybranych losowo ze stałym ziarnem, każdy w innym zapisie (``rodzaj``):
skrót bez kropek, z kropkami, wielkimi literami, z paragrafem, w pytaniu, nazwa aktu w dopełniaczu
(„kodeksu cywilnego”, „ustawy o własności lokali”, „Prawa bankowego”, „ustawy – Prawo bankowe”), numer
z indeksem górnym. Po nich każdy akt dostaje jeszcze jedno odwołanie w zapisie złożonym (``FORMS``): zakres
(„art. 10–11”), „w zw. z”, kilka numerów kwalifikatora („§ 1 i 2”, „ust. 1–3”), nazwa bez polskich znaków, data
ustawy cyframi; rozporządzenia – paragraf z nazwą („§ 10 rozporządzenia w sprawie …”); potem jeszcze jedno
w zapisie z notatek (``NOTE_FORMS``): akt przed przepisem („k.p.c. art. 505”) albo sama data ustawy („art. 5
ustawy z dnia 24 czerwca 1994 r.”), a kodeks – jeszcze jedno z nazwą skróconą słowami („art. 5 kodeksu post. cyw.”,
``CODE_WORDS``), na końcu po jednym zapisanym bez spacji, jak pisze się szybko („art.415kc”, „art.10ust.1uwl”,
``GLUED``), a potem jeszcze jedno: ustawa z samym rokiem przed nazwą („art. 5 ustawy z 1994 r. o własności lokali”),
a kodeks i Konstytucja – dwa przepisy połączone spójnikiem („art. 5 § 1 i art. 7 k.c.”, ``JOINED``), a na koniec
akt nazwą, jakiej używają prawnicy zamiast tytułu („art. 5 ustawy o adwokaturze” dla Prawa o adwokaturze, „ustawy
antymonopolowej”, ``CUSTOMARY``), a po nich jeszcze po jednym: kwalifikator przed numerem („§ 1 art. 5 k.c.”,
„ust. 1 art. 5 u.w.l.”), indeks górny wklejony z PDF-u jako spacja i cyfry („art. 505 1 kpc”, ``AHEAD``) i dalsze
nazwy zwyczajowe („ustawy o zagospodarowaniu przestrzennym”). Odwołania do
aktów spoza biblioteki (``plik: null``, ``rodzaj: odwolanie-spoza``) powinny skończyć się zdaniem, że aktu nie ma
w dokumentach – ``ocena`` liczy je jako odmowy.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from bench.common import REPO
from chroma_rag.filters import fold
from chroma_rag.ingest.acts import act_name, known_act
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.metadata import detect_title, detect_type

DANE = REPO.parent / "shared" / "dane"
OUT = REPO / "bench" / "odwolania-dev.jsonl"
PER_ACT = 4
KINDS = ("skrot", "skrot-kropki", "skrot-wielkie", "paragraf", "pytanie", "nazwa", "nazwa-ustawy", "indeks-gorny")
FORMS = ("zakres", "w-zwiazku", "kwalifikator", "bez-znakow", "data-cyframi")
# written as in notes, added after FORMS (so the rows before them stayed as they were): the act before the article,
# a statute by its date alone (only a date no other act of the library has)
NOTE_FORMS = ("akt-przed", "sama-data")
# a code named in shortened words, as lawyers abbreviate them (Kodeks pracy has none in use), added after NOTE_FORMS
CODE_WORDS = {"k.c.": "cyw.", "k.k.": "karn.", "k.w.": "wykr.", "k.r.o.": "rodz. i opiek.", "k.k.s.": "karn. skarb.",
              "k.k.w.": "karn. wyk.", "k.p.a.": "post. adm.", "k.p.c.": "post. cyw.", "k.p.k.": "post. karn.",
              "k.s.h.": "sp. handl.", "k. wyb.": "wyb."}
# typed without spaces, added after CODE_WORDS: the number glued to the abbreviation, or to a qualifier and then it
GLUED = ("art.{number}{bare}", "art.{number}{qualifier}{bare}")
# added after GLUED: two provisions joined by a conjunction, the act named after the second
JOINED = ("art. {first} {qualifier} i art. {second} {short}", "art. {first} {qualifier}, art. {second} {short}",
          "art. {first} oraz art. {second} {short}")
# added after JOINED: the name lawyers use instead of the title – "ustawy o adwokaturze" for "Prawo o adwokaturze",
# and the customary names of a few statutes ("ustawy antymonopolowej", "prawa autorskiego")
CUSTOMARY = "odwolanie-nazwa-zwyczajowa"
# added after CUSTOMARY: a qualifier before the article's number, a superscript pasted as a space and its digits
AHEAD = "odwolanie-kwalifikator-przed"
PASTED = "odwolanie-indeks-wklejony"
MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
          "października", "listopada", "grudnia")
OUTSIDE = [
    "art. 5 k.m.", "Art. 45 kpw", "art. 12 ustawy o ochronie przyrody", "art. 5 ustawy o drogach publicznych",
    "Co stanowi art. 15 Prawa energetycznego?", "art. 20 ustawy o podatku akcyzowym", "art. 44 Prawa wodnego",
    "art. 8 ustawy o ochronie zwierząt", "art. 2 kodeksu morskiego", "art. 100 ustawy o transporcie drogowym",
    "art. 3 u.z.n.k.", "k.m. art. 5", "art. 5 ustawy z dnia 1 stycznia 1990 r.", "art. 5 ustawy o prokuraturze",
]
# a statute's date in its title: "z dnia 24 czerwca 1994 r."
TITLE_DATE = re.compile(r"z dnia (\d{1,2}) (\w+) (\d{4}) r\.")
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def genitive(name: str) -> str:
    """Nazwa aktu w dopełniaczu, jak po „art. 5 …”: „kodeksu cywilnego”, „Prawa bankowego”, „Konstytucji RP”."""
    words = name.split()
    head = words[0].lower()
    if head == "kodeks":
        # the adjectives decline ("cywilny" → "cywilnego"), a noun already in the genitive stays ("Kodeks pracy")
        return " ".join(["kodeksu", *(w[:-1] + "ego" if w.endswith("y") and w != "pracy" else w for w in words[1:])])
    if head == "prawo":
        rest, adjectives = [], True
        for word in words[1:]:
            adjectives = adjectives and word.endswith("e")
            rest.append(word[:-1] + "ego" if adjectives else word)
        return " ".join(["Prawa", *rest])
    if head == "konstytucja":
        return "Konstytucji RP"
    if head == "ordynacja":
        return "Ordynacji podatkowej"
    if head == "karta":
        return "Karty Nauczyciela"
    return f"ustawy {name}"  # "o własności lokali"


def customary_genitive(name: str) -> str:
    """Nazwa zwyczajowa w dopełniaczu: „ustawa antymonopolowa” → „ustawy antymonopolowej”, „prawo autorskie” →
    „prawa autorskiego”, „ustawa o vat” → „ustawy o VAT”."""
    head, *rest = name.split()
    declined = [{"ustawa": "ustawy", "prawo": "prawa"}[head]]
    for n, word in enumerate(rest):
        if word == "o":
            declined += [w.upper() if len(w) == 3 and w in ("vat", "pit", "cit") else w for w in rest[n:]]
            break
        if word.endswith("a"):  # "antymonopolowa" → "antymonopolowej", "lokatorska" → "lokatorskiej"
            declined.append(word[:-1] + ("iej" if word.endswith(("ka", "ga")) else "ej"))
        else:  # "autorskie" → "autorskiego"
            declined.append(word[:-1] + "ego" if word.endswith("ie") else word)
    return " ".join(declined)


def ahead_and_pasted(chosen: list[str], rng: random.Random, kind: str, short: str, cited: str,
                     other_names: tuple[str, ...], file: str) -> list[dict]:
    """Kwalifikator przed numerem („§ 1 art. 5 k.c.”); indeks górny wklejony jako spacja i cyfry („art. 505 1 kpc”),
    jeśli akt ma artykuły z indeksem; dalsze nazwy zwyczajowe aktu („ustawy o zagospodarowaniu przestrzennym”)."""
    art = rng.choice(chosen)
    found = [{"pytanie": f"{'§ 1' if kind == 'kodeks' else 'ust. 1'} art. {art} {cited}", "plik": file, "art": [art],
              "rodzaj": AHEAD}]
    superscripted = [a for a in chosen if "^" in a]
    if superscripted:
        art = rng.choice(superscripted)
        bare = re.sub(r"[\s.]", "", short).lower()
        found.append({"pytanie": f"art. {art.replace('^', ' ')} {bare}", "plik": file, "art": [art], "rodzaj": PASTED})
    for name in other_names[1:]:
        art = rng.choice(chosen)
        found.append({"pytanie": f"art. {art} {customary_genitive(name)}", "plik": file, "art": [art],
                      "rodzaj": CUSTOMARY})
    return found


def customary(chosen: list[str], rng: random.Random, name: str, other_names: tuple[str, ...], file: str) -> dict | None:
    """„ustawy o …” dla „Prawa o …”, inaczej pierwsza nazwa zwyczajowa aktu; ``None`` – akt nie ma żadnej."""
    if name.lower().startswith("prawo o "):
        cited = f"ustawy {name[6:]}"
    elif other_names:
        cited = customary_genitive(other_names[0])
    else:
        return None
    art = rng.choice(chosen)
    return {"pytanie": f"art. {art} {cited}", "plik": file, "art": [art], "rodzaj": CUSTOMARY}


def spelled(art: str, kind: str, name: str, short: str, date: str = "") -> str | None:
    bare = re.sub(r"[\s.]", "", short).lower()
    number = art.replace("^", "")  # lawyers type "art. 505^1" as 505^1, 505¹ or 505[1]
    if "^" in art:
        base, sup = art.split("^")
        number = f"{base}{sup.translate(_SUPERSCRIPT)}" if kind == "indeks-gorny" else f"{base}^{sup}"
    elif kind == "indeks-gorny":
        return None
    return {
        "skrot": f"art {number} {bare}",
        "skrot-kropki": f"art. {number} {short}",
        "skrot-wielkie": f"Art. {number} {bare.upper()}",
        "paragraf": f"art. {number} § 1 {short}",
        "pytanie": f"Co stanowi art. {number} {short}?",
        "nazwa": f"art. {number} {genitive(name)}",
        "nazwa-ustawy": None if not date else f"art. {number} ustawy {date} {name}" if name.startswith("o ")
        else f"art. {number} ustawy {date} – {name}",
        "indeks-gorny": f"art. {number} {short}",
    }[kind]


def units(path: Path, paragraphs: bool = False) -> list[str]:
    """Artykuły pliku (z ``paragraphs`` – paragrafy rozporządzenia), które występują w nim raz i nie są uchylone."""
    document = load_document(path)
    seen: dict[str, int] = {}
    repealed = set()
    for chunk in chunk_document(document):
        if chunk.art and chunk.part == 1 and chunk.art.startswith("§") == paragraphs:
            seen[chunk.art] = seen.get(chunk.art, 0) + 1
            if chunk.extra.get("uchylony") or re.search(r"\((uchylony|pominięty|skreślony)\)", chunk.text[:80]):
                repealed.add(chunk.art)
    return [art for art, count in seen.items() if count == 1 and art not in repealed]


def composed(form: str, chosen: list[str], rng: random.Random, kind: str, name: str, short: str,
             title: str) -> tuple[str, list[str]] | None:
    """Odwołanie w zapisie złożonym ``form`` i jednostki, z których pierwsza ma być pierwsza; ``None``, gdy akt
    takiego zapisu nie pozwala (brak sąsiednich artykułów, polskich znaków w nazwie, daty w tytule)."""
    plain = [a for a in chosen if a.isdigit()]
    art = rng.choice(plain or chosen)
    if form == "zakres":
        starts = [a for a in plain if str(int(a) + 1) in chosen]
        if not starts:
            return None
        first = rng.choice(starts)
        return f"art. {first}–{int(first) + 1} {short}", [first, str(int(first) + 1)]
    if form == "w-zwiazku":
        other = rng.choice([a for a in chosen if a != art])
        return f"art. {art} w zw. z art. {other} {short}", [art]
    if form == "kwalifikator":
        return f"art. {art} {'§ 1 i 2' if kind == 'kodeks' else 'ust. 1–3'} {short}", [art]
    if form == "bez-znakow":
        spelled = genitive(name)
        return (f"art. {art} {fold(spelled)}", [art]) if fold(spelled) != spelled.lower() else None
    date = TITLE_DATE.search(title)
    if kind == "konstytucja" or date is None or date.group(2) not in MONTHS:  # the Constitution is no "ustawa z dnia"
        return None
    digits = f"z dnia {int(date.group(1)):02d}.{MONTHS.index(date.group(2)) + 1:02d}.{date.group(3)} r."
    return f"art. {art} ustawy {digits} {name if name.startswith('o ') else f'– {name}'}", [art]


def noted(form: str, chosen: list[str], rng: random.Random, kind: str, short: str, title: str,
          shared_dates: set[str]) -> tuple[str, list[str]] | None:
    """Odwołanie zapisane jak w notatkach (``NOTE_FORMS``); ``None``, gdy akt takiego zapisu nie pozwala."""
    art = rng.choice(chosen)
    if form == "akt-przed":
        return f"{short} art. {art}", [art]
    date = TITLE_DATE.search(title)
    if kind == "konstytucja" or date is None or date.group(0) in shared_dates:
        return None
    return f"art. {art} ustawy {date.group(0)}", [art]


def year_or_joined(chosen: list[str], rng: random.Random, count: int, kind: str, name: str, short: str, title: str,
                   file: str) -> dict:
    """Ustawa (z datą w tytule): sam rok przed nazwą; kodeks i Konstytucja: dwa przepisy połączone spójnikiem."""
    first = rng.choice(chosen)
    date = TITLE_DATE.search(title)
    if kind == "ustawa" and date is not None:
        joined = name if name.startswith("o ") else f"– {name}"
        return {"pytanie": f"art. {first} ustawy z {date.group(3)} r. {joined}", "plik": file, "art": [first],
                "rodzaj": "odwolanie-sam-rok"}
    second = rng.choice([a for a in chosen if a != first])
    qualifier = "§ 1" if kind == "kodeks" else "ust. 1"
    return {"pytanie": JOINED[count % len(JOINED)].format(first=first, qualifier=qualifier, second=second, short=short),
            "plik": file, "art": [first], "rodzaj": "odwolanie-spojnik"}


def main() -> None:
    rows, later, notes, codes, glued, more, names, ahead = [], [], [], [], [], [], [], []
    files = sorted((DANE / "ustawy").glob("*.pdf")) + sorted((DANE / "biblioteka").glob("*.txt"))
    documents = {path: load_document(path) for path in files}
    titles = {path: detect_title(document.text) for path, document in documents.items()}
    dates = [found.group(0) for found in (TITLE_DATE.search(t) for t in titles.values())
             if found]
    shared_dates = {date for date in dates if dates.count(date) > 1}  # k.k., k.p.k. and k.k.w.: one day
    for path in files:
        document, title = documents[path], titles[path]
        kind = detect_type(title, document.text)
        name, act = act_name(title), known_act(title)
        if kind == "rozporzadzenie" and name:
            paragraph = random.Random(path.name).choice(units(path, paragraphs=True))
            later.append({"pytanie": f"{paragraph} ust. 1 rozporządzenia {name}", "plik": path.name,
                          "art": [paragraph], "rodzaj": "odwolanie-rozporzadzenie"})
        if kind in ("rozporzadzenie", "nowelizacja") or not name or act is None:
            continue
        chosen = units(path)
        for offset in range(len(FORMS)):  # the act's own composed form, the next one when it allows none
            form = FORMS[(len(later) + offset) % len(FORMS)]
            found = composed(form, chosen, random.Random(f"{path.name}/{form}"), kind, name, act.short, title)
            if found is not None:
                later.append({"pytanie": found[0], "plik": path.name, "art": found[1], "rodzaj": f"odwolanie-{form}"})
                break
        for offset in range(len(NOTE_FORMS)):
            form = NOTE_FORMS[(len(notes) + offset) % len(NOTE_FORMS)]
            found = noted(form, chosen, random.Random(f"{path.name}/{form}"), kind, act.short, title, shared_dates)
            if found is not None:
                notes.append({"pytanie": found[0], "plik": path.name, "art": found[1], "rodzaj": f"odwolanie-{form}"})
                break
        if act.short in CODE_WORDS:
            art = random.Random(f"{path.name}/kodeks-skrocony").choice(chosen)
            codes.append({"pytanie": f"art. {art} kodeksu {CODE_WORDS[act.short]}", "plik": path.name, "art": [art],
                          "rodzaj": "odwolanie-kodeks-skrocony"})
        plain = [a for a in chosen if a.isdigit()]
        if plain and kind != "konstytucja":  # "Konstytucja RP" is no abbreviation to glue
            art = random.Random(f"{path.name}/sklejony").choice(plain)
            glued.append({"pytanie": GLUED[len(glued) % len(GLUED)].format(
                number=art, qualifier="§1" if kind == "kodeks" else "ust.1", bare=re.sub(r"[\s.]", "", act.short)),
                "plik": path.name, "art": [art], "rodzaj": "odwolanie-sklejony"})
        more.append(year_or_joined(chosen, random.Random(f"{path.name}/rok-spojnik"), len(more), kind, name,
                                   act.cited or act.short, title, path.name))
        found = customary(chosen, random.Random(f"{path.name}/zwyczajowa"), name, act.other_names, path.name)
        if found is not None:
            names.append(found)
        ahead += ahead_and_pasted(chosen, random.Random(f"{path.name}/przed"), kind, act.short, act.cited or act.short,
                                  act.other_names, path.name)
        rng = random.Random(path.name)
        superscripted = [a for a in chosen if "^" in a]
        picks = rng.sample(chosen, min(PER_ACT, len(chosen)))
        if superscripted:
            picks.append(rng.choice(superscripted))
        for n, art in enumerate(picks):
            kinds = ["indeks-gorny"] if "^" in art and n == len(picks) - 1 and superscripted else \
                [KINDS[(n + len(rows)) % (len(KINDS) - 1)]]
            date = TITLE_DATE.search(title)
            for variant in kinds:
                text = spelled(art, variant, name, act.short, date.group(0) if date else "")
                if text is None:
                    variant = "skrot-kropki"
                    text = spelled(art, variant, name, act.short)
                rows.append({"pytanie": text, "plik": path.name, "art": [art], "rodzaj": f"odwolanie-{variant}"})
    rows += later  # after the simple spellings, so that adding these kept every earlier row as it was
    rows += notes  # and these after both
    rows += codes  # and these after them
    rows += glued  # and these after them
    rows += more  # and these after them
    rows += names  # and these after them
    rows += ahead  # and these last
    rows += [{"pytanie": text, "plik": None, "art": [], "rodzaj": "odwolanie-spoza"} for text in OUTSIDE]
    OUT.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} odwołań → {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
