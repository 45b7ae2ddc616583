"""``chroma-rag lista``: zaindeksowane pliki pogrupowane według rodzaju (konstytucja, kodeksy, ustawy,
rozporządzenia, nowelizacje, potem dokumenty użytkownika), z nazwą aktu i jego skrótem.

Nazwa pliku nie jest nigdy ucinana (kopiuje się ją do ``--plik`` i ``grep``): tabela, gdy nazwy mieszczą się
w niej obok nazwy aktu, inaczej nazwa w osobnym wierszu, a pod nią akt, rok i liczba fragmentów. Ucinana jest
tylko nazwa aktu – do szerokości terminala (w potoku 80 kolumn)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from ..models import distinct_names
from ..plural import FRAGMENT, count
from .output import out, printable, shorten

if TYPE_CHECKING:
    from ..api import FileInfo

# Acts first, from the highest; then the user's own documents.
GROUPS = {
    "konstytucja": "Konstytucja",
    "kodeks": "Kodeksy",
    "ustawa": "Ustawy",
    "rozporzadzenie": "Rozporządzenia",
    "nowelizacja": "Nowelizacje",
    "umowa": "Umowy",
    "regulamin": "Regulaminy",
    "dokument": "Dokumenty",
}
MIN_ACT_WIDTH = 24  # narrower than this, the act's name goes under the file name instead of beside it
SEPARATOR = " · "


def grouped(infos: Sequence[FileInfo]) -> list[tuple[str, list[FileInfo]]]:
    """Pliki w grupach rodzajów w kolejności ``GROUPS`` (nieznane rodzaje na końcu, alfabetycznie)."""
    order = list(GROUPS)
    kinds = sorted({info.type for info in infos}, key=lambda t: (order.index(t) if t in order else len(order), t))
    return [(GROUPS.get(kind) or (kind or "bez rodzaju").capitalize(), [i for i in infos if i.type == kind])
            for kind in kinds]


def _name_lines(info: FileInfo) -> list[str]:
    return [info.name, *(f"= {Path(p).parent.name}/{Path(p).name}" for p in info.other_paths)]


def print_files(infos: Sequence[FileInfo]) -> None:
    """Tabela (albo wiersze) plików pogrupowanych według rodzaju; imienniki z różnych folderów z folderem, jak
    w cytacie i w ``--plik`` („it/regulamin.md”)."""
    shown = distinct_names(info.path for info in infos)
    infos = [replace(info, name=printable(shown[info.path]), title=printable(info.title),
                     other_paths=[printable(path) for path in info.other_paths]) for info in infos]
    models = sorted({model for info in infos for model in info.models})
    same_model = len({tuple(info.models) for info in infos}) <= 1
    summary = f"Zaindeksowane pliki: {len(infos)}"
    if same_model and models:
        summary += f" (model: {', '.join(models)})"
    out.print(escape(summary), soft_wrap=True, highlight=False)
    if not infos:
        return
    room = _act_room(infos, same_model)
    widths = _widths(infos, same_model)  # the same columns in every group's table
    for heading, members in grouped(infos):
        out.print()
        out.print(f"[bold]{escape(heading)}[/] ({len(members)})", highlight=False)
        if room is not None:
            out.print(_table(members, room, widths, same_model))
        else:
            _lines(members, same_model)


def _year(info: FileInfo) -> str:
    return str(info.year) if info.year else "–"


def _widths(infos: Sequence[FileInfo], same_model: bool) -> list[int]:
    """Szerokości kolumn poza kolumną aktu: plik, skrót, rok, fragmenty (i modele, gdy różne)."""
    columns = [
        max(len(line) for info in infos for line in _name_lines(info)),
        max([len("Skrót"), *(len(info.short) for info in infos)]),
        max([len("Rok"), *(len(_year(info)) for info in infos)]),
        max([len("Fragmenty"), *(len(str(info.chunks)) for info in infos)]),
    ]
    if not same_model:
        columns.append(max(len(", ".join(info.models)) for info in infos))
    return columns


def _act_room(infos: Sequence[FileInfo], same_model: bool) -> int | None:
    """Szerokość kolumny aktu w tabeli, gdy ta mieści się w terminalu (``None``: tabela się nie mieści)."""
    widths = _widths(infos, same_model)
    columns = len(widths) + 1
    borders = 3 * columns + 1  # "│ " before every cell, " " after it, the closing "│"
    longest = max(len(info.label) for info in infos)
    room = min(out.width - borders - sum(widths), max(longest, len("Akt")))
    return room if room >= min(MIN_ACT_WIDTH, max(longest, len("Akt"))) else None


def _table(infos: Sequence[FileInfo], room: int, widths: list[int], same_model: bool) -> Table:
    table = Table()
    name, short, year, chunks, *models = widths
    table.add_column("Plik", no_wrap=True, min_width=name)
    table.add_column("Akt", no_wrap=True, min_width=room, max_width=room)
    table.add_column("Skrót", no_wrap=True, min_width=short)
    table.add_column("Rok", no_wrap=True, justify="right", min_width=year)
    table.add_column("Fragmenty", no_wrap=True, justify="right", min_width=chunks)
    if models:
        table.add_column("Modele", no_wrap=True, min_width=models[0])
    for info in infos:
        row = ["\n".join(escape(line) for line in _name_lines(info)), escape(shorten(info.label, room)),
               escape(info.short), _year(info), str(info.chunks)]
        if not same_model:
            row.append(escape(", ".join(info.models)))
        table.add_row(*row)
    return table


def _lines(infos: Sequence[FileInfo], same_model: bool) -> None:
    """Plik w wierszu (cały, choćby dłuższy niż terminal), pod nim: akt (ucięty do szerokości), rok, fragmenty."""
    for info in infos:
        out.print(escape(info.name), soft_wrap=True, highlight=False)
        for other in info.other_paths:
            out.print(f"  = {escape(Path(other).parent.name)}/{escape(Path(other).name)}", soft_wrap=True,
                      highlight=False)
        facts = [*([str(info.year)] if info.year else []), count(info.chunks, FRAGMENT)]
        if not same_model:
            facts.append(", ".join(info.models))
        tail = SEPARATOR.join(facts)
        if info.label:
            suffix = f" ({info.short})" if info.short else ""
            room = max(out.width - 2 - len(SEPARATOR) - len(tail) - len(suffix), 12)
            tail = shorten(info.label, room) + suffix + SEPARATOR + tail
        out.print(f"  {escape(tail)}", soft_wrap=True, highlight=False)
