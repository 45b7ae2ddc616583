"""Sesje logowania zakończone przed czasem (``POST /wylogowanie``): skopiowane ciasteczko wylogowanej sesji przestaje
działać od razu, a nie po ``SESSION_SECONDS``.

Wszystkie procesy robocze jednego serwera (``--procesy N``) widzą to samo, więc lista leży w pliku obok listy
użytkowników, nie w pamięci procesu. Zapis jest rzadki (jedno wylogowanie) i idzie pod blokadą pliku: odczyt,
bez wpisów, którym i tak minął czas, nowy wpis, atomowa podmiana. Odczyt przy zapytaniu z ciasteczkiem to jedno
``stat`` – plik czytany na nowo tylko po zmianie."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from ..errors import UserError, os_reason

ENDED_SESSIONS_FILE = "sesje-zakonczone.json"
LOCK_SUFFIX = ".blokada"


class EndedSessions:
    """Identyfikatory zakończonych sesji z czasem, do którego ich ciasteczko byłoby ważne; ``path`` – plik
    wspólny dla procesów (``None``: tylko ten proces, np. serwer bez listy użytkowników w teście)."""

    def __init__(self, path: Path | None, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._ended: dict[str, int] = {}

    def end(self, session: str, expires: int) -> None:
        """Kończy sesję ``session`` (ważną do ``expires``, sekundy od 1970) we wszystkich procesach."""
        with self._lock:
            if self.path is None:
                self._ended = self._alive({**self._ended, session: expires})
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with FileLock(self.path.with_name(self.path.name + LOCK_SUFFIX)):
                    self._write(self._alive({**self._read(), session: expires}))
            except OSError as exc:
                raise UserError(
                    f"Nie da się zapisać wylogowania w „{self.path}” ({os_reason(exc)}) – sprawdź prawo zapisu do "
                    "folderu listy użytkowników.",
                    web="Wylogowanie nie zostało zapisane na serwerze, więc sesja jest nadal ważna – spróbuj ponownie "
                        "za chwilę albo powiadom administratora.",
                    kind="blad_zapisu_serwera") from exc

    def ended(self, session: str) -> bool:
        with self._lock:
            return session in (self._read() if self.path is not None else self._ended)

    def _alive(self, sessions: dict[str, int]) -> dict[str, int]:
        """Bez sesji, których ciasteczko i tak już wygasło: plik nie rośnie z każdym wylogowaniem."""
        now = self._clock()
        return {session: expires for session, expires in sessions.items() if expires >= now}

    def _read(self) -> dict[str, int]:
        assert self.path is not None
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._ended = None, {}
            return self._ended
        seen = (found.st_mtime_ns, found.st_size, found.st_ino)
        if seen != self._seen:
            try:
                sessions = json.loads(self.path.read_text(encoding="utf-8"))["sesje"]
                self._ended = {str(s): int(e) for s, e in sessions.items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                # unreadable: nothing is known to have ended; the next logout writes the file anew
                self._ended = {}
            self._seen = seen
        return self._ended

    def _write(self, sessions: dict[str, int]) -> None:
        assert self.path is not None
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".sesje-", suffix=".json")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp: readable by the owner only
                json.dump({"sesje": sessions}, file)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
