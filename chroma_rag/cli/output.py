"""Wyjście CLI: konsole stdout i stderr, JSON, strony fragmentu, wiersze bez spacji na końcu i skróty tekstu,
które nie tną słów ani nazw plików."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import IO

from rich.console import Console


class TrimmedLines:
    """Strumień, który zdejmuje spacje z końca wierszy. Rich dopełnia wiersze (wcięcia, pomoc) do szerokości
    konsoli, a w potoku – ``grep``, ``diff``, plik – te spacje są śmieciem. Bez ``stream`` pisze do bieżącego
    ``sys.stdout`` (sprawdzanego przy każdym zapisie, bo testy go podmieniają)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self._pending = ""

    @property
    def stream(self) -> IO[str]:
        return self._stream or sys.stdout

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._pending:  # a line without its end yet: written as it is, it may still continue
            self.stream.write(self._pending)
            self._pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


class OutputConsole(Console):
    """Konsola stdout: zamknięty potok (``chroma-rag szukaj … | head -1``) kończy program po cichu z kodem 0 –
    czytelnik dostał, czego chciał (rich domyślnie kończy wtedy z kodem 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        discard_stdout()
        raise SystemExit(0)


def discard_stdout() -> None:
    """Dalsze zapisy (także opróżnienie bufora przy wyjściu) idą do /dev/null, nie do zamkniętego potoku."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a descriptor (tests capture it in memory)
        pass


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Napis z dysku (nazwa pliku, tytuł z pierwszej linii) do terminala: znaki sterujące jako ``\x1b``, ``\n`` –
    nazwa pliku nie zmieni tytułu okna ani kolorów terminala i nie rozbije wiersza listy."""
    return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


def shorten(text: str, limit: int) -> str:
    """Tekst w jednym wierszu, najwyżej ``limit`` znaków, ucięty na granicy słowa, z „…” na końcu."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1]
    cut = cut.rsplit(" ", 1)[0] if " " in cut else text[:limit]
    return cut.rstrip(" ,;:–-") + "…"


out = OutputConsole(file=TrimmedLines())
err = Console(stderr=True, soft_wrap=True)


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def page_range(meta: dict) -> str:
    """Strony fragmentu: „12” albo „12–14”."""
    first, last = meta.get("strona_od", meta.get("strona")), meta.get("strona_do", meta.get("strona"))
    return f"{first}–{last}" if last != first else str(first)
