"""Rozmowa: kolejne pytania z odpowiedziami, zapisane w folderze danych bazy (``rozmowy/<id>.json``).

Pytanie dopowiadające („a jeśli umowa była ustna?”) model przepisuje na pytanie samodzielne – to ono idzie do
wyszukiwania, a model odpowiadający dostaje też wcześniejsze tury. Przy wyszukiwaniu planowanym pytanie samodzielne
przychodzi w planie (to samo zapytanie czatu, ``retrieval.planning``); bez planu pisze je ``standalone_question``.
Ile tur idzie do modelu, mówi ``ConversationLimits``; każda tura trzyma własne źródła, więc zapisana rozmowa
pokazuje się bez pytania modelu."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import UsageError, UserError
from ..llm import ChatClient, Usage
from ..plural import CHARACTER, TOKEN, TURN, count

CONVERSATIONS_FOLDER = "rozmowy"
USERS_FOLDER = "uzytkownicy"  # inside it one folder per user of the server, named as the user (accounts._NAME)
# 96 random bits: the id is the link to a conversation (/?rozmowa=ID), so it must not be guessable
_ID = re.compile(r"^[a-f0-9]{24}$")


@dataclass(frozen=True)
class ConversationLimits:
    """Ile wcześniejszej rozmowy dostaje model. Nie strojone: 4 tury to zwykła długość dopytywania o jeden
    przepis, 6000 znaków (~1500 tokenów) to mniej niż pięć fragmentów, które i tak idą z każdym pytaniem."""

    turns: int = 4
    chars: int = 6000

    def note(self, seen: int, every: int) -> str:
        """Zdanie dla użytkownika, gdy model dostał tylko ``seen`` z ``every`` wcześniejszych tur."""
        # ~4 characters a token: what OpenAI's tokenizers give for Polish prose, the user's unit of a model's limit
        tokens = count(self.chars // 4, TOKEN)
        return (f"Model dostał tylko ostatnie tury rozmowy ({seen} z {every}) – limit to {count(self.turns, TURN)} "
                f"i {count(self.chars, CHARACTER)} (ok. {tokens}); starsze pominięto.")


DEFAULT_LIMITS = ConversationLimits()

STANDALONE_PROMPT = (
    "Dostajesz rozmowę o dokumentach prawnych i ostatnie pytanie użytkownika. Przepisz ostatnie pytanie tak, "
    "żeby było zrozumiałe bez rozmowy: dopisz, o czym mowa (akt, przepis, sytuację), nie dodawaj nic od siebie "
    "i nie odpowiadaj na nie. Odpowiedz samym pytaniem, po polsku, w jednym zdaniu."
)


@dataclass
class Turn:
    """Jedna tura: pytanie, jak je zadano, pytanie samodzielne (to, którego szukano), odpowiedź, jej fragmenty
    (jak w ``pytaj --json``) i cytaty, których nie było wśród fragmentów."""

    question: str
    standalone: str
    answer: str
    sources: list[dict[str, Any]] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    at: str = ""
    documents: str = ""  # the index's change marker when answered ("" – unknown): later, were the files changed?

    def to_json(self) -> dict[str, Any]:
        return {"pytanie": self.question, "pytanie_samodzielne": self.standalone, "odpowiedz": self.answer,
                "zrodla": self.sources, "niepasujace_cytaty": self.invented, "czas": self.at,
                "wersja_dokumentow": self.documents}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        return cls(question=str(data["pytanie"]), standalone=str(data.get("pytanie_samodzielne", data["pytanie"])),
                   answer=str(data["odpowiedz"]), sources=list(data.get("zrodla", [])),
                   invented=list(data.get("niepasujace_cytaty", [])), at=str(data.get("czas", "")),
                   documents=str(data.get("wersja_dokumentow", "")))


@dataclass
class Conversation:
    """Rozmowa o ``id`` (24 znaki szesnastkowe) z turami od najstarszej; ``owner`` – użytkownik serwera, który ją
    zaczął (``None``: bez kont użytkowników, z CLI albo ze wspólnym tokenem)."""

    id: str
    turns: list[Turn] = field(default_factory=list)
    owner: str | None = None

    def history(self, limits: ConversationLimits = DEFAULT_LIMITS) -> tuple[list[Turn], int]:
        """Tury dla modelu – najnowsze, najwyżej ``limits.turns`` i ``limits.chars`` znaków pytań i odpowiedzi –
        i liczba pominiętych starszych."""
        kept: list[Turn] = []
        left = limits.chars
        for turn in reversed(self.turns[-limits.turns:] if limits.turns else []):
            size = len(turn.question) + len(turn.answer)
            if size > left:
                if kept:
                    break
                # the newest turn alone is over the limit: the follow-up continues it, so it goes with its answer cut
                turn = replace(turn, answer=turn.answer[:max(left - len(turn.question), 0)] + "…")
            kept.insert(0, turn)
            left -= size
        return kept, len(self.turns) - len(kept)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def rewind(self, number: int) -> None:
        """Cofa rozmowę do tury ``number`` (od 1): ta i dalsze znikają, a następna odpowiedź zajmie jej miejsce –
        ponowienie odpowiedzi albo poprawione pytanie (dalsze tury wynikały z tej, więc nie pasowałyby)."""
        if not 1 <= number <= len(self.turns):
            raise UnknownTurn(number, len(self.turns))
        del self.turns[number - 1:]

    def to_json(self, documents: str | None = None) -> dict[str, Any]:
        """Zapis rozmowy; z ``documents`` (bieżący znacznik zmiany indeksu) także ``dokumenty_zmienione`` – czy
        od którejś odpowiedzi pliki indeksu się zmieniły (odpowiedź mogłaby dziś brzmieć inaczej)."""
        saved: dict[str, Any] = {"rozmowa": self.id, "tury": [turn.to_json() for turn in self.turns]}
        if documents is not None:
            saved["dokumenty_zmienione"] = any(t.documents and t.documents != documents for t in self.turns)
        return saved

    def summary(self) -> dict[str, Any]:
        """Rozmowa na liście rozmów: pierwsze i ostatnie pytanie, początek ostatniej odpowiedzi, liczba tur, czas."""
        first, last = self.turns[0], self.turns[-1]
        answer = last.answer if len(last.answer) <= SUMMARY_CHARS else last.answer[:SUMMARY_CHARS].rstrip() + "…"
        return {"rozmowa": self.id, "pytanie": first.question, "ostatnie_pytanie": last.question,
                "odpowiedz": answer, "tury": len(self.turns), "czas": last.at}


SUMMARY_CHARS = 300  # an answer's beginning on the list of conversations: two or three lines of the page


class UnknownConversation(UserError):
    """Rozmowy o tym identyfikatorze nie ma (albo identyfikator nie ma właściwej postaci); w CLI zła wartość
    ``--rozmowa`` (kod 2). Także cudza rozmowa, którą ktoś chce usunąć: nie dowie się, że istnieje."""

    exit_code = 2
    kind = "nieznana_rozmowa"

    def __init__(self, conversation_id: str) -> None:
        said = f"Nie ma zapisanej rozmowy „{conversation_id[:40]}”"
        super().__init__(f"{said} – zacznij nową rozmowę: chroma-rag pytaj PYTANIE (bez --rozmowa).",
                         web=f"{said} – mogła zostać usunięta; zacznij nową rozmowę.")


class UnknownTurn(UsageError):
    """Numer tury do ponowienia spoza rozmowy."""

    def __init__(self, number: int, turns: int) -> None:
        super().__init__(f"Rozmowa nie ma tury {number} – ma ich {turns}; podaj numer od 1 do {turns}.")


class ConversationStore:
    """Rozmowy jako pliki JSON: bez właściciela w ``folder``, rozmowy użytkownika ``NAZWA`` serwera w
    ``folder/uzytkownicy/NAZWA`` – jego lista i „usuń wszystkie” czytają tylko jego folder, a link (sam
    identyfikator) otwiera rozmowę w każdym. Zapis atomowy: plik tymczasowy, potem zamiana."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def new(self, owner: str | None = None) -> Conversation:
        return Conversation(id=secrets.token_hex(12), owner=owner)

    def load(self, conversation_id: str) -> Conversation:
        path = self._path(conversation_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Conversation(id=conversation_id, turns=[Turn.from_json(t) for t in data["tury"]],
                                owner=None if path.parent == self.folder else path.parent.name)
        except FileNotFoundError:
            raise UnknownConversation(conversation_id) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"Zapis rozmowy „{conversation_id}” jest uszkodzony – zacznij nową rozmowę.") from exc

    def continued(self, conversation_id: str, owner: str | None) -> Conversation:
        """Rozmowa, którą ``owner`` dopytuje: jego własna albo – gdy dostał link do cudzej – jej kopia z nowym
        identyfikatorem, już jego (cudza zostaje, jaka była: link do niej jest tylko do czytania)."""
        found = self.load(conversation_id)
        if found.owner == owner:
            return found
        copy = self.new(owner)
        copy.turns = list(found.turns)
        return copy

    def last(self) -> Conversation | None:
        """Ostatnio zmieniona rozmowa bez właściciela (``pytaj --dalej``)."""
        found = self._files(self.folder)
        return self.load(max(found, key=lambda p: p.stat().st_mtime).stem) if found else None

    def owned(self, owner: str) -> list[Conversation]:
        """Rozmowy użytkownika ``owner``, ostatnio zmieniona pierwsza."""
        found = sorted(self._files(self._folder(owner)), key=lambda p: p.stat().st_mtime, reverse=True)
        listed = []
        for path in found:
            with contextlib.suppress(UserError):  # deleted meanwhile, or damaged: the rest of the list still shows
                listed.append(self.load(path.stem))
        return listed

    def delete(self, conversation_id: str, owner: str | None = None) -> None:
        """Usuwa rozmowę ``owner`` (nieznana albo cudza – ``UnknownConversation``)."""
        path = self._path(conversation_id)
        if path.parent != self._folder(owner):
            raise UnknownConversation(conversation_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise UnknownConversation(conversation_id) from None

    def delete_owned(self, owner: str) -> int:
        """Usuwa wszystkie rozmowy użytkownika ``owner``; ile ich było."""
        found = self._files(self._folder(owner))
        for path in found:
            path.unlink(missing_ok=True)
        return len(found)

    def delete_listed(self, ids: list[str], owner: str | None) -> int:
        """Usuwa te z rozmów ``ids``, które są rozmowami ``owner``; nieznane i cudze pomija. Ile usunął."""
        deleted = 0
        for conversation_id in dict.fromkeys(ids):
            with contextlib.suppress(UnknownConversation):  # already gone, or not the caller's to delete
                self.delete(conversation_id, owner)
                deleted += 1
        return deleted

    def save(self, conversation: Conversation) -> None:
        folder = self._folder(conversation.owner)
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".zapis-", suffix=".json")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(conversation.to_json(), file, ensure_ascii=False, indent=1)
            os.replace(temporary, folder / f"{conversation.id}.json")
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _folder(self, owner: str | None) -> Path:
        return self.folder if owner is None else self.folder / USERS_FOLDER / owner

    def _path(self, conversation_id: str) -> Path:
        """Plik rozmowy – bez właściciela albo w folderze któregoś użytkownika (ten, gdzie jest, albo ten, gdzie
        byłaby bez właściciela, gdy jej nie ma)."""
        if not _ID.match(conversation_id):
            raise UnknownConversation(conversation_id)
        name = f"{conversation_id}.json"
        unowned = self.folder / name
        if unowned.is_file():
            return unowned
        return next((self.folder / USERS_FOLDER).glob(f"*/{name}"), unowned)

    @staticmethod
    def _files(folder: Path) -> list[Path]:
        """Zapisane rozmowy w ``folder`` (bez plików tymczasowych niedokończonego zapisu)."""
        return [p for p in folder.glob("*.json") if _ID.match(p.stem)] if folder.is_dir() else []


def standalone_question(question: str, history: list[Turn], client: ChatClient) -> tuple[str, Usage]:
    """Pytanie dopowiadające przepisane przez model czatu na samodzielne i zużycie tego zapytania (bez
    historii – to samo pytanie, bez zapytania)."""
    if not history:
        return question, Usage()
    lines = [f"Użytkownik: {turn.question}\nAsystent: {turn.answer}" for turn in history]
    user = "Rozmowa:\n\n" + "\n\n".join(lines) + f"\n\nOstatnie pytanie: {question}"
    completion = client.complete([{"role": "system", "content": STANDALONE_PROMPT},
                                  {"role": "user", "content": user}])
    return " ".join(completion.text.split())[:2000] or question, completion.usage


def history_messages(history: list[Turn]) -> list[dict[str, str]]:
    """Wcześniejsze tury jako wiadomości czatu (pytanie użytkownika, odpowiedź asystenta)."""
    messages = []
    for turn in history:
        messages += [{"role": "user", "content": turn.question}, {"role": "assistant", "content": turn.answer}]
    return messages


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


