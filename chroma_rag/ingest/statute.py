"""Struktura polskiego aktu prawnego: jednostki (Art. N / § N), ścieżka nagłówków, wersje [obecna] i
<przyszła>, jednostki uchylone, artykuły cytowane w nowelizacji i załącznik z własną numeracją §."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cleaning import SUPERSCRIPT_DIGITS

_ART = re.compile(
    r"^[ \t]*(?P<ver>[\[<])?[ \t]*Art\.[ \t]?(?P<num>\d+(?:\^\d+)?[a-z]{0,4})"
    r"(?:[ \t]?[–—-][ \t]?(?P<to>\d+[a-z]{0,4}))?(?:\.(?P<rest>.*)|[ \t]*)$"
)
_PAR = re.compile(
    r"^[ \t]*(?P<ver>[\[<])?[ \t]*§[ \t]?(?P<num>\d+(?:\^\d+)?[a-z]{0,4})"
    r"(?:[ \t]?[–—-][ \t]?(?P<to>\d+[a-z]{0,4}))?\.(?P<rest>.*)$"
)
_LEVELS = {"księga": 0, "część": 1, "tytuł": 2, "dział": 3, "rozdział": 4, "oddział": 5}
_HEADING = re.compile(
    r"^[ \t]*[\[<]?(?P<kind>KSIĘGA|Księga|CZĘŚĆ|Część|TYTUŁ|Tytuł|DZIAŁ|Dział|ROZDZIAŁ|Rozdział|ODDZIAŁ|Oddział)"
    r"[ \t]+(?P<label>[IVXLC]+\d?|\d+[a-z]?|[A-ZĄĆĘŁŃÓŚŹŻ]+)\b\.?(?P<rest>.*)$"
)
# Markdown headings of everyday documents ("## Rozdział 2. Czas pracy") are headings, never unit text
_MD_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<title>.+?)[ \t#]*$")
_VERSION_OPEN = re.compile(r"(?:^|(?<=[\]>]))[ \t]*([\[<])", re.M)
_CAPS_TITLE = re.compile(r"^[ \t]*[A-ZĄĆĘŁŃÓŚŹŻ][A-ZĄĆĘŁŃÓŚŹŻ ,\-–]{4,120}[ \t]*$")
_ANNEX = re.compile(r"^[ \t]*(Załącznik|ZAŁĄCZNIK)i?\b")
_REPEALED = re.compile(
    r"^\s*\(?(uchylony|uchylona|uchylone|pominięty|pominięte|skreślony|skreślone)\)?", re.I
)
_FN_AFTER = re.compile(r"^\.?(\d{1,3})\)")
_POINT = re.compile(r"^[ \t]*(\d{1,3}[a-z]?)\)(?:[ \t]|$)")
_AMENDED_ART = re.compile(r"\bart\.\s?(\d+(?:\^\d+)?[a-z]{0,4})")
_AMENDED_ACT = re.compile(r"W ustawie z dnia [^–—]{5,60}r\.\s*[–—-]\s*(?P<name>[^(]{3,200}?)\s*\(")
_AMENDED_TITLE = re.compile(r"o zmianie ustawy\s*[–—-]?\s*(?P<name>.{3,200})", re.S)
_SPLIT_SUPERSCRIPT_MAX_JUMP = 20
# how a header's number is read given the previous unit's number key
_NumberResolver = Callable[[str, "tuple[int, int, str] | None"], str]


@dataclass
class Unit:
    """Jednostka redakcyjna: numer, zakres znaków w tekście całego dokumentu, nagłówki i metadane."""

    art: str | None
    start: int
    end: int
    heading: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    footnotes: list[str] = field(default_factory=list)
    text: str | None = None  # set when the unit is assembled from pieces (quoted amendments)
    future_heading: str = ""  # heading path in the future wording, when a heading has two versions


def number_key(art: str) -> tuple[int, int, str]:
    """Porządek numerów: 22 < 22a < 22^1 < 23."""
    m = re.match(r"(\d+)(?:\^(\d+))?([a-z]*)", art)
    if not m:
        return (0, 0, "")
    return (int(m.group(1)), int(m.group(2) or 0), m.group(3))


def parse_units(text: str, title: str = "", flattened_superscripts: bool = True) -> list[Unit]:
    """Jednostki dokumentu; pusta lista, gdy tekst nie ma struktury Art./§ (zwykły dokument).
    ``flattened_superscripts``: tekst z PDF-u, w którym „Art. 3851.” może być spłaszczonym art. 385¹;
    w pliku pisanym ręcznie (TXT, MD, DOCX) numer jest taki, jak go zapisano."""
    arts = sum(1 for _ in re.finditer(r"(?m)^[ \t]*[\[<]?[ \t]*Art\.[ \t]?\d", text))
    pars = sum(1 for _ in re.finditer(r"(?m)^[ \t]*[\[<]?[ \t]*§[ \t]?\d+[a-z]?\.", text))
    if arts >= 2:
        pattern, prefix = _ART, ""
    elif pars >= 2:
        pattern, prefix = _PAR, "§ "
    else:
        return []
    units = _scan(text, pattern, prefix, _resolve_superscript if flattened_superscripts else _as_written)
    return _expand_amendments(text, units, title)


def _scan(text: str, pattern: re.Pattern[str], prefix: str, resolve: _NumberResolver) -> list[Unit]:
    units: list[Unit] = []
    path: dict[int, str] = {}
    # "[Dział III. GWARANCJA JAKOŚCI]" followed by "<Dział III Gwarancja przy sprzedaży>": the second is the
    # future wording of the same heading, for units in the future version only
    future: dict[int, str] = {}
    twin_level: int | None = None  # level of the last "[…]" heading, whose "<…>" twin may follow
    pending_heading: tuple[dict[int, str], int] | None = None  # (path, level) waiting for its title
    quote_depth, amending = 0, False
    version: str | None = None  # "[" or "<" while a bracketed block of several units is open
    annex = 0
    previous: tuple[int, int, str] | None = None
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if not stripped:
            continue
        if amending and quote_depth > 0:  # quoted provisions of the amended act are not our units
            quote_depth = max(0, quote_depth + _quote_balance(line))
            continue
        header = pattern.match(line)
        if header and not _is_sequence_break(header, previous, resolve):
            _close(units, start)
            version = header.group("ver") or version
            current, upcoming = _heading(path), _heading({**path, **future})
            new = _open_units(
                header, prefix, resolve(header.group("num"), previous), start,
                upcoming if version == "<" else current, annex, version,
            )
            for unit in new:
                unit.future_heading = upcoming
            twin_level = None
            version = _version_after(line, version)
            units.extend(new)
            previous = number_key(new[-1].art.removeprefix("§ "))
            pending_heading = None
            amending = "wprowadza się następujące zmiany" in text[start : start + 800]
            quote_depth = max(0, _quote_balance(line))
            continue
        if units and _ANNEX.match(stripped) and len(stripped) < 100 and not stripped.endswith((",", ";")):
            _close(units, start)
            annex += 1
            previous, path, future = None, {}, {}
            units.append(
                Unit(
                    art=None,
                    start=start,
                    end=-1,
                    heading=stripped,
                    extra={"uchylony": False, "zalacznik": str(annex)},
                )
            )
            continue
        markdown = _MD_HEADING.match(line)
        heading = _HEADING.match(markdown.group("title") if markdown else line)
        if markdown and not heading:
            _close(units, start)
            path = {k: v for k, v in path.items() if k < 6}
            path[6] = markdown.group("title")
            pending_heading = None
            continue
        if heading:
            _close(units, start)
            level = _LEVELS[heading.group("kind").lower()]
            label = f"{heading.group('kind').capitalize()} {_roman_label(heading.group('label'))}"
            # "[Dział III. GWARANCJA JAKOŚCI206)]": a heading in two versions, with a glued footnote marker
            rest = re.sub(r"(?<=[^\W\d])\d{1,3}\)$", "", _strip_markers(heading.group("rest")).strip(" .]>"))
            if stripped.startswith("<") and twin_level == level:
                target = future
            else:
                path = {k: v for k, v in path.items() if k < level}
                future = {k: v for k, v in future.items() if k < level}
                target = path
            target[level] = f"{label}. {rest}" if rest else label
            twin_level = level if stripped.startswith("[") else None
            pending_heading = None if rest else (target, level)
            # "<Dział II1 …" opens a future-only block of whole new articles, closed by the last one's ">"
            version = _version_after(line, stripped[0] if stripped[0] in "[<" else version)
            continue
        if pending_heading is not None and len(stripped) < 200:
            target, level = pending_heading
            target[level] = f"{target[level]}. {_strip_markers(stripped).rstrip(']>')}"
            pending_heading = None
            version = _version_after(line, version)
            continue
        if units and _CAPS_TITLE.match(line) and len(stripped.split()) >= 2 and _looks_like_title(stripped):
            _close(units, start)
            path = {k: v for k, v in path.items() if k < 6}
            path[6] = stripped.capitalize()
            continue
        if amending:
            quote_depth = max(0, quote_depth + _quote_balance(line))
        version = _version_after(line, version)
    _close(units, len(text))
    return units


def _version_after(line: str, version: str | None) -> str | None:
    """Blok wersji „[…]” / „<…>” zamyka nawias na końcu linii (czasem po nim odnośnik)."""
    end = _strip_markers(line).rstrip(" .;")
    if (version == "[" and end.endswith("]")) or (version == "<" and end.endswith(">")):
        return None
    return version


def _looks_like_title(line: str) -> bool:
    # an all-caps line between articles ("ZASADY OGÓLNE") is a section title, not a shouted sentence
    return not line.endswith((",", ";", ":")) and len(line) <= 80


def _quote_balance(line: str) -> int:
    return line.count("„") - line.count("”")


def _close(units: list[Unit], end: int) -> None:
    if units and units[-1].end < 0:
        units[-1].end = end


def _roman_label(label: str) -> str:
    """„II1” to II z podniesioną jedynką, spłaszczoną przez pypdf (cyfra po rzymskiej liczbie nie ma innego
    sensu) → „II¹”, jak numery artykułów w tekście."""
    match = re.fullmatch(r"([IVXLC]+)(\d)", label)
    return f"{match.group(1)}{match.group(2).translate(SUPERSCRIPT_DIGITS)}" if match else label


def _heading(path: dict[int, str]) -> str:
    return " › ".join(path[k] for k in sorted(path))


def _is_sequence_break(
    header: re.Match[str], previous: tuple[int, int, str] | None, resolve: _NumberResolver
) -> bool:
    """Linia „Art. 12.” cofająca numerację to zawinięte odesłanie w tekście, nie nowa jednostka."""
    if previous is None or header.group("ver"):
        return False
    key = number_key(resolve(header.group("num"), previous))
    return key[0] < previous[0]


def _as_written(num: str, previous: tuple[int, int, str] | None) -> str:
    return num


def _resolve_superscript(num: str, previous: tuple[int, int, str] | None) -> str:
    """Gdy PDF nie pokazał indeksu górnego: „Art. 3851.” tuż po art. 385 to 385^1, nie 3851."""
    if previous is None or "^" in num or not num.isdigit():
        return num
    value = int(num)
    if value <= previous[0] + _SPLIT_SUPERSCRIPT_MAX_JUMP:
        return num
    for digits in (1, 2):
        base, sup = num[:-digits], num[-digits:]
        if base and previous[0] <= int(base) <= previous[0] + 1 and not sup.startswith("0"):
            return f"{base}^{sup}"
    return num


def _open_units(
    header: re.Match[str],
    prefix: str,
    num: str,
    start: int,
    heading: str,
    annex: int,
    version: str | None,
) -> list[Unit]:
    rest = header.group("rest") or ""
    extra: dict[str, Any] = {"uchylony": bool(_REPEALED.match(_strip_markers(rest)))}
    footnotes = []
    fn = _FN_AFTER.match(rest.strip()) or re.search(r"\)\.?(\d{1,3})\)\s*$", rest)
    if fn and extra["uchylony"]:
        footnotes.append(fn.group(1))
    if version:
        extra["wersja"] = "obecna" if version == "[" else "przyszla"
    if annex:
        extra["zalacznik"] = str(annex)
    numbers = [num]
    to = header.group("to")
    if to and num.isdigit() and to.isdigit() and 0 < int(to) - int(num) <= 50:
        numbers = [str(n) for n in range(int(num), int(to) + 1)]
    units = [
        Unit(
            art=prefix + n,
            start=start,
            end=start if i < len(numbers) - 1 else -1,
            heading=heading,
            extra=dict(extra),
            footnotes=list(footnotes),
        )
        for i, n in enumerate(numbers)
    ]
    for unit in units[:-1]:  # a range "Art. 55–60. (pominięte)" shares one line
        unit.text = header.group(0).strip()
    return units


def inline_versions(text: str) -> tuple[str, str] | None:
    """Tekst jednostki z ustępem w dwóch brzmieniach („[§ 2. obecne]” i „<§ 2. przyszłe>”, albo tylko
    „<1a. dodany>”) jako (obecna, przyszła); None, gdy jednostka ma jedno brzmienie. Nawias wersji
    otwiera linię (albo stoi tuż po zamkniętym nawiasie innej wersji), więc „alfabetu [a), b) …]” nim nie jest."""
    segments = []
    for m in _VERSION_OPEN.finditer(text):
        if segments and m.start() < segments[-1][2]:
            continue
        close = text.find("]" if m.group(1) == "[" else ">", m.end())
        if close < 0:
            return None
        segments.append((m.group(1), m.start(1), close + 1))
    if not segments:
        return None
    return _one_version(text, segments, keep="["), _one_version(text, segments, keep="<")


def _one_version(text: str, segments: list[tuple[str, int, int]], keep: str) -> str:
    out, pos = [], 0
    for kind, start, end in segments:
        out.append(text[pos:start])
        if kind == keep:
            out.append(text[start + 1 : end - 1])
        pos = end
    out.append(text[pos:])
    lines = (" ".join(line.split()) for line in "".join(out).split("\n"))
    return "\n".join(line for line in lines if line)


def _strip_markers(text: str) -> str:
    return re.sub("\ue000[^\ue001]*\ue001", "", text)


def _expand_amendments(text: str, units: list[Unit], title: str) -> list[Unit]:
    """Artykuł nowelizacji („W ustawie … wprowadza się następujące zmiany”) rozbijamy na cytowane
    artykuły zmienianej ustawy: każdy to osobna jednostka z ``akt_zmieniany``."""
    out: list[Unit] = []
    for unit in units:
        body = text[unit.start : unit.end]
        if "wprowadza się następujące zmiany" not in body[:600] or "„" not in body:
            out.append(unit)
            continue
        act = _amended_act(body, title)
        points = _points(body)
        intro_end = points[0][0] if points else len(body)
        out.append(
            Unit(
                art=unit.art,
                start=unit.start,
                end=unit.start + intro_end,
                heading=unit.heading,
                extra=dict(unit.extra),
            )
        )
        merged: dict[str, Unit] = {}
        for p_start, p_end in points:
            for art, a_start, a_end, piece in _quoted_articles(body[p_start:p_end]):
                start, end = unit.start + p_start + a_start, unit.start + p_start + a_end
                if art in merged:
                    merged[art].end = max(merged[art].end, end)
                    merged[art].text = f"{merged[art].text}\n{piece}"
                    continue
                repealed = piece.startswith("uchyla się art.")
                merged[art] = Unit(
                    art=art,
                    start=start,
                    end=end,
                    heading=unit.heading,
                    extra={"uchylony": repealed, "akt_zmieniany": act},
                    text=piece,
                )
        out.extend(merged.values())
    return out


def _amended_act(body: str, title: str) -> str:
    m = _AMENDED_ACT.search(body[:600])
    if m:
        return " ".join(m.group("name").split())
    m = _AMENDED_TITLE.search(title)
    return " ".join(m.group("name").split()) if m else "ustawa zmieniana"


def _points(body: str) -> list[tuple[int, int]]:
    """Punkty „1) w art. 3 …” poza cudzysłowami (w cytatach też są „1)”)."""
    starts, depth, pos = [], 0, 0
    for line in body.split("\n"):
        if depth == 0 and _POINT.match(line):
            starts.append(pos)
        depth = max(0, depth + _quote_balance(line))
        pos += len(line) + 1
    return [(s, starts[i + 1] if i + 1 < len(starts) else len(body)) for i, s in enumerate(starts)]


def _quoted_articles(point: str) -> list[tuple[str, int, int, str]]:
    """(numer zmienianego artykułu, początek, koniec, tekst) dla punktu nowelizacji."""
    first_quote = point.find("„")
    instruction = point if first_quote < 0 else point[:first_quote]
    whole = list(
        re.finditer(
            r"(?m)„\s*Art\.\s?(\d+(?:\^\d+)?[a-z]{0,4})\.|^\s*Art\.\s?(\d+(?:\^\d+)?[a-z]{0,4})\.", point
        )
    )
    if whole and first_quote >= 0 and point[first_quote:].lstrip("„ ").startswith("Art."):
        found = []
        for i, m in enumerate(whole):
            end = whole[i + 1].start() if i + 1 < len(whole) else len(point)
            piece = point[m.start() : end].strip().lstrip("„")
            piece = re.sub(r"”[;,.]?\s*$", "", piece.strip())
            found.append((m.group(1) or m.group(2), m.start(), end, piece))
        return found
    target = _AMENDED_ART.search(instruction)
    if not target:
        return []
    piece = re.sub(r"^\s*\d{1,3}[a-z]?\)\s*", "", point.strip())
    return [(target.group(1), 0, len(point), piece)]
