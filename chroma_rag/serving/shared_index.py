"""Indeks dzielony przez wątki serwera: wyszukiwanie i odczyty po jednym naraz (buforowane wyszukiwarki, indeks
słów i model embeddingów nie są pisane pod równoległe wątki); odpowiedź modelu czatu płynie bez blokady."""

from __future__ import annotations

import threading
from typing import Any

from ..api import FileInfo, Index
from ..models import SearchResult
from ..retrieval.units import Unit


class SharedIndex(Index):
    """``Index``, którego odczyty magazynu są szeregowane; ``ask`` woła ``search`` przez tę samą blokadę."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()

    def search(self, *args: Any, **kwargs: Any) -> SearchResult:
        with self._lock:
            return super().search(*args, **kwargs)

    def unit(self, file: str, art: str) -> Unit:
        with self._lock:
            return super().unit(file, art)

    def files(self) -> list[FileInfo]:
        with self._lock:
            return super().files()
