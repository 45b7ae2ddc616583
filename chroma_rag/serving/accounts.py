"""Osobiste dostępy do ``serwuj``: użytkownicy z własnymi tokenami w pliku ``uzytkownicy.json`` w folderze bazy.

Token widzi tylko ten, komu go dano (``chroma-rag uzytkownicy dodaj``); plik trzyma jego skrót SHA-256. Token to
256 losowych bitów, więc szybki skrót wystarcza (słownikowe zgadywanie nie ma tu czego zgadywać), a sprawdzenie
przy każdym zapytaniu API kosztuje mikrosekundy. Serwer czyta plik od nowa, gdy się zmienił: dodany użytkownik
loguje się bez restartu, a usunięty traci dostęp przy następnym zapytaniu (także jego zalogowana strona)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import UsageError, UserError

ACCOUNTS_FILE = "uzytkownicy.json"
USER_STATE = "uzytkownik"  # who sent a request (scope["state"]): an account's name, SHARED_TOKEN or OPEN
SHARED_TOKEN = "(wspólny token)"
OPEN = "(bez logowania)"
UNKNOWN = "(nieznany)"  # a request the guard did not let in (a wrong token): written so in the audit log
FORMAT = 1
# names go into the login cookie and the audit log: letters (Polish too), digits and . _ - only
_NAME = re.compile(r"^[^\W_][\w.-]{0,39}$")


def account_name(scope: Mapping[str, Any]) -> str | None:
    """Nazwa użytkownika z osobistym tokenem, który wysłał zapytanie (``scope`` ASGI); ``None`` – serwer bez
    logowania albo wspólny token (wtedy nie wiadomo, kto to)."""
    user = scope.get("state", {}).get(USER_STATE)
    return None if user in (None, OPEN, SHARED_TOKEN) else str(user)


@dataclass(frozen=True)
class Account:
    """Użytkownik: nazwa, skrót tokenu (``digest``: podpis jego sesji – nowy token albo usunięcie kończy je), kiedy
    go dodano i które bazy może czytać."""

    name: str
    digest: str
    created: str
    bases: tuple[str, ...] | None = None  # the bases of a server with several (serwuj --bazy) it may read; None: all

    def reads(self, base: str) -> bool:
        return self.bases is None or base in self.bases


def check_base_name(name: str) -> str:
    """Nazwa bazy serwera z kilkoma bazami: część adresu (``/b/NAZWA/``), więc tylko litery, cyfry, . _ -."""
    if not _NAME.match(name):
        raise UsageError(f"Nazwa bazy „{name[:40]}” jest niedozwolona – użyj liter, cyfr, kropek, myślników "
                         "i podkreśleń (do 40 znaków), np. umowy-2024.")
    return name


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Accounts:
    """Użytkownicy z pliku ``path``; odczyt zapamiętany do zmiany pliku (czas, rozmiar, i-węzeł), zapis atomowy."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._by_digest: dict[str, Account] = {}

    def accounts(self) -> list[Account]:
        """Wszyscy użytkownicy, po nazwie."""
        return sorted(self._current().values(), key=lambda account: account.name)

    def exist(self) -> bool:
        """Czy jest choć jeden użytkownik (wtedy serwer wymaga logowania także na pętli zwrotnej)."""
        return bool(self._current())

    def who(self, token: str) -> Account | None:
        """Użytkownik o tym tokenie albo ``None``."""
        return self._current().get(token_digest(token))

    def named(self, name: str) -> Account | None:
        return next((a for a in self._current().values() if a.name == name), None)

    def add(self, name: str, bases: list[str] | None = None) -> str:
        """Dodaje użytkownika (``bases``: tylko te bazy serwera z kilkoma bazami; ``None`` – wszystkie) i zwraca jego
        nowy token (pokazywany raz: plik ma tylko skrót)."""
        if not _NAME.match(name):
            raise UsageError(f"Nazwa użytkownika „{name[:40]}” jest niedozwolona – użyj liter, cyfr, kropek, "
                             "myślników i podkreśleń (do 40 znaków), np. anna.nowak.")
        for base in bases or []:
            check_base_name(base)
        token = secrets.token_urlsafe(32)
        with self._lock:
            accounts = list(self._read().values())
            if any(a.name == name for a in accounts):
                raise UsageError(f"Użytkownik „{name}” już jest – nowy token: usuń go (chroma-rag uzytkownicy usun "
                                 f"{name}) i dodaj ponownie.")
            created = datetime.now(UTC).isoformat(timespec="seconds")
            self._write([*accounts, Account(name, token_digest(token), created,
                                            tuple(dict.fromkeys(bases)) if bases is not None else None)])
        return token

    def remove(self, name: str) -> None:
        with self._lock:
            accounts = list(self._read().values())
            if not any(a.name == name for a in accounts):
                known = ", ".join(sorted(a.name for a in accounts)) or "żadnego"
                raise UsageError(f"Nie ma użytkownika „{name[:40]}” – są: {known}.")
            self._write([a for a in accounts if a.name != name])

    def _current(self) -> dict[str, Account]:
        with self._lock:
            return self._read()

    def _read(self) -> dict[str, Account]:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._by_digest = None, {}
            return self._by_digest
        except OSError as exc:
            raise UserError(f"Nie da się odczytać pliku użytkowników „{self.path}” ({exc.strerror}).",
                            web="Nie da się odczytać listy użytkowników serwera – powiedz o tym osobie, która "
                                "prowadzi ten serwer.", kind="konfiguracja_serwera") from exc
        seen = (found.st_mtime_ns, found.st_size, found.st_ino)
        if seen != self._seen:
            try:
                rows = json.loads(self.path.read_text(encoding="utf-8"))["uzytkownicy"]
                accounts = [Account(r["nazwa"], r["skrot"], r.get("dodano", ""),
                                    tuple(r["bazy"]) if r.get("bazy") is not None else None) for r in rows]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise UserError(f"Plik użytkowników „{self.path}” jest uszkodzony – popraw go albo usuń i dodaj "
                                "użytkowników ponownie (chroma-rag uzytkownicy dodaj NAZWA).",
                                web="Lista użytkowników serwera jest uszkodzona – powiedz o tym osobie, która "
                                    "prowadzi ten serwer.", kind="konfiguracja_serwera") from exc
            self._seen, self._by_digest = seen, {a.digest: a for a in accounts}
        return self._by_digest

    def _write(self, accounts: list[Account]) -> None:
        rows = [{"nazwa": a.name, "skrot": a.digest, "dodano": a.created,
                 **({"bazy": list(a.bases)} if a.bases is not None else {})} for a in accounts]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".uzytkownicy-", suffix=".json")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp: readable by the owner only
                json.dump({"format": FORMAT, "uzytkownicy": rows}, file, ensure_ascii=False, indent=1)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._seen = None
