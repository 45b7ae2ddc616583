"""Mała pamięć ostatnich wyników (maski filtrów migawki, dozwolone pozycje indeksu słów), wspólna dla wątków."""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()


def remember(memo: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """Wpis do małej pamięci (``limit`` wpisów, najstarszy wypada); wątki serwera piszą do niej naraz."""
    with _LOCK:
        if len(memo) >= limit:
            memo.pop(next(iter(memo)))
        memo[key] = value
