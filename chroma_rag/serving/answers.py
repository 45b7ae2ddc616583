"""Odpowiedź modelu czatu jako zdarzenia: kawałki tekstu na bieżąco, na końcu obiekt ``pytaj --json`` albo błąd.

``Index.ask`` jest synchroniczne i oddaje tekst przez ``on_token``; działa w osobnym wątku, a kawałki przechodzą
do pętli zdarzeń przez kolejkę. Gdy klient się rozłączy, następny kawałek przerywa generowanie."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from ..api import Index
from ..errors import UserError
from ..models import SearchResult
from .documents import team_names
from .limits import MAX_QUESTIONS
from .params import Query
from .security import error_status

log = logging.getLogger("chroma_rag.serwuj")
# one thread per question the limits let in: asyncio's default pool has cpu_count + 4 threads (6 on 2 cores), so the
# 7th question waiting for a slow model would wait for a thread instead, holding its place and its client
_QUESTION_THREADS = ThreadPoolExecutor(MAX_QUESTIONS, thread_name_prefix="chroma-rag-pytanie")
UNEXPECTED = "Nieoczekiwany błąd przy odpowiedzi – szczegóły są w dzienniku serwera; zgłoś go razem z pytaniem."


class AnswerEvent(NamedTuple):
    """Jedno zdarzenie odpowiedzi; ``status`` to kod HTTP, gdy odpowiedź idzie jako sam obiekt JSON."""

    kind: str
    data: dict[str, Any]
    status: int = 200


class _ClientGone(Exception):
    """Klient zamknął połączenie: nie ma komu wysyłać dalszej odpowiedzi."""


async def answer_events(index: Index, query: Query, owner: str | None = None,
                        gone: threading.Event | None = None) -> AsyncIterator[AnswerEvent]:
    """Zdarzenia: ``zrodla`` (``{"fragmenty": […], "plan": …}`` – znalezione fragmenty, zanim model zacznie
    pisać), ``tekst`` (``{"tekst": …}``)…, potem ``wynik`` (``answer.to_json()`` z identyfikatorem zapisanej
    rozmowy ``rozmowa``, którą dalsze pytanie może kontynuować) albo ``blad`` (``{"blad": …}``).

    ``owner``: użytkownik, który pyta – nowa rozmowa jest jego, a cudza (z linku) ciągnie się w jego kopii.
    ``query.turn``: odpowiedź od nowa na tę turę; rozmowa zmienia się dopiero z nową odpowiedzią, więc błąd
    modelu w pół tury zostawia ją, jaka była. ``gone`` – klient się rozłączył (ustawia je też zamknięcie tego
    strumienia): model nie dostaje już dalszych wywołań."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[AnswerEvent] = asyncio.Queue()
    gone = gone or threading.Event()

    def put(kind: str, data: dict[str, Any], status: int = 200) -> None:
        if loop.is_closed():  # the question's time ran out and the server has since stopped: nobody to tell
            raise _ClientGone
        loop.call_soon_threadsafe(queue.put_nowait, AnswerEvent(kind, data, status))

    def on_token(text: str) -> None:
        if gone.is_set():
            raise _ClientGone
        put("tekst", {"tekst": text})

    def on_sources(found: SearchResult) -> None:
        if gone.is_set():  # the client left during the search (or its plan): the answer is not asked for
            raise _ClientGone
        if found:
            put("zrodla", {"fragmenty": team_names(index).hits(hit.to_json() for hit in found),
                           "plan": found.plan.to_json("web") if found.plan is not None else None})

    def work() -> None:
        try:
            conversations = index.conversations
            conversation = (conversations.continued(query.conversation, owner) if query.conversation
                            else conversations.new(owner))
            if query.turn is not None:
                conversation.rewind(query.turn)
            answer = index.ask(query.question, k=query.k, filters=query.filters, mode=query.mode, on_token=on_token,
                               on_sources=on_sources, surface="web", conversation=conversation)
            index.remember(conversation, query.question, answer)
            shown = answer.to_json("web")
            shown["fragmenty"] = team_names(index).hits(shown["fragmenty"])
            put("wynik", {**shown, "rozmowa": conversation.id})
        except _ClientGone:
            log.warning("Pytanie porzucone po rozłączeniu klienta – bez dalszych wywołań modelu.")
        except UserError as exc:
            put("blad", {"blad": exc.message("web")}, error_status(exc))
        except Exception:
            log.exception("Nieoczekiwany błąd przy odpowiedzi na pytanie")
            put("blad", {"blad": UNEXPECTED}, 500)

    worker = loop.run_in_executor(_QUESTION_THREADS, work)
    try:
        while True:
            event = await queue.get()
            yield event
            if event.kind not in ("tekst", "zrodla"):
                break
        await worker
    finally:
        gone.set()


def sse(kind: str, data: dict[str, Any]) -> str:
    """Jedno zdarzenie Server-Sent Events."""
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
