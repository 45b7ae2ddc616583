"""Indeks dzielony przez wątki serwera: odczyty buforowanych wyszukiwarek po jednym naraz (wyszukiwarki, indeks
słów i model embeddingów nie są pisane pod równoległe wątki); plan od modelu czatu i odpowiedź modelu płyną
bez blokady, więc wolny model nie wstrzymuje innych wyszukiwań."""

from __future__ import annotations

import threading
from typing import Any

from ..api import FileInfo, Index
from ..retrieval.units import Unit


class SharedIndex(Index):
    """``Index``, którego odczyty magazynu są szeregowane jedną blokadą; ``Retrieval.search`` bierze ją tylko
    na lokalne kroki wyszukiwania, nie na pytanie modelu czatu o plan."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()
        self.retrieval.guard = self._lock

    def unit(self, file: str, art: str) -> Unit:
        with self._lock:
            return super().unit(file, art)

    def files(self) -> list[FileInfo]:
        with self._lock:
            return super().files()
