"""Akt tak, jak go pokazać człowiekowi i modelowi planującemu: „Kodeks postępowania cywilnego (k.p.c.)”,
„Ustawa o własności lokali (u.w.l.)”, „Rozporządzenie Ministra Zdrowia w sprawie …”; dokument użytkownika – jego
tytuł (pierwszy wiersz). Wspólne dla ``lista``, ``/api/pliki`` (strona liczy to samo w przeglądarce) i listy
dokumentów w prośbie o plan. Nazwę i skrót daje ``ingest.acts``."""

from __future__ import annotations

import re

from ..ingest.acts import act_name, short_name

_BEFORE_DATE = re.compile(r"^(.*?)\s+z\s+dnia\s", re.IGNORECASE)
_CONSTITUTION = "konstytucja rzeczypospolitej polskiej"


def act_label(title: str) -> str:
    """Nazwa aktu z jego rodzajem, bez daty: „Kodeks pracy”, „Ustawa o własności lokali”, „Konstytucja
    Rzeczypospolitej Polskiej”; tytuł bez zmian (w jednym wierszu), gdy nie jest tytułem aktu."""
    text = " ".join(title.split())
    name = act_name(text)
    if not name:
        return text
    if name.lower().startswith(_CONSTITUTION):
        return "Konstytucja Rzeczypospolitej Polskiej" + name[len(_CONSTITUTION):]
    if name[:1].isupper():
        return name
    # "o własności lokali", "w sprawie …": the act's kind and issuer come before its date
    found = _BEFORE_DATE.match(text)
    kind = found.group(1).strip(" -–—") if found else ""
    if kind.isupper():  # "ROZPORZĄDZENIE MINISTRA ZDROWIA" in a print's title block
        kind = " ".join(word.capitalize() for word in kind.split())
    return f"{kind} {name}" if kind else name


def labelled(title: str, limit: int | None = None) -> str:
    """Nazwa aktu ze skrótem w nawiasie („Kodeks postępowania cywilnego (k.p.c.)”), najwyżej ``limit`` znaków –
    nazwa ucięta na granicy słowa, skrót zostaje cały."""
    label, short = act_label(title), short_name(title)
    suffix = f" ({short})" if short else ""
    if limit is not None and len(label) + len(suffix) > limit:
        room = max(limit - len(suffix) - 1, 1)
        cut = label[: room + 1]
        label = (cut.rsplit(" ", 1)[0] if " " in cut.strip() else label[:room]).rstrip(" ,;:–-") + "…"
    return label + suffix
