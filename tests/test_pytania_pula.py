"""Issue 39: pytania do modelu czatu mają własną pulę z limitem czasu i część dla jednego adresu – wolny albo
zawieszony model nie zabiera miejsc wyszukiwaniom, a jeden klient nie zabiera wszystkich miejsc innym.

Zawieszony model to zastępczy serwer czatu, który odpowiada dopiero po zwolnieniu (``Reply.hold``); kolejność
zdarzeń wyznacza liczba zapytań, które do niego doszły, nie czas."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from llm_server import FakeLlm, Hold, Reply
from serving_support import chat_model, running_server

from chroma_rag.serving import limits

QUESTION = {"pytanie": "Ile dni urlopu przysługuje pracownikowi?"}


@pytest.fixture
def hung_model() -> Iterator[tuple[FakeLlm, threading.Event]]:
    """Model, który nie odpowiada, dopóki test nie ustawi zwróconego zdarzenia."""
    hold = Hold()
    with chat_model("Urlop [regulamin.md, art. 1].") as fake:
        fake.default = Reply(text="Urlop [regulamin.md, art. 1].", hold=hold)
        try:
            yield fake, hold.release
        finally:
            hold.release.set()


def from_address(address: str) -> httpx.Client:
    """Klient z innego adresu pętli zwrotnej (127.0.0.0/8 jest cały lokalny): inny klient dla serwera."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60)


def asking(client: httpx.Client, url: str, results: list[int]) -> threading.Thread:
    # each its own question: the same one would wait for the first one's plan instead of asking the model
    body = {"pytanie": f"{QUESTION['pytanie']} ({len(results)}, {threading.active_count()}, {time.monotonic_ns()})"}
    thread = threading.Thread(target=lambda: results.append(client.post(f"{url}/api/pytaj", json=body).status_code))
    thread.start()
    return thread


def wait_for(condition: Callable[[], bool], what: str) -> None:
    for _ in range(1200):  # a hang guard, not a speed check
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"nie doczekano się: {what}")


def test_one_address_gets_two_questions_at_once_and_searches_go_on(one_article_db: Path, hung_model) -> None:
    fake, release = hung_model
    results: list[int] = []
    with running_server(one_article_db) as url, from_address("127.0.0.1") as client, \
            from_address("127.0.0.2") as other:
        held = [asking(client, url, results) for _ in range(limits.MAX_CLIENT_QUESTIONS)]
        wait_for(lambda: len(fake.requests) >= limits.MAX_CLIENT_QUESTIONS, "oba pytania czekają na model")
        third = client.post(f"{url}/api/pytaj", json=QUESTION)
        assert third.status_code == 503 and "Z tego adresu trwa już za dużo zapytań" in third.json()["blad"]
        assert client.get(f"{url}/api/szukaj", params={"q": "urlop"}).status_code == 200
        held.append(asking(other, url, results))  # another address still gets a place
        wait_for(lambda: len(fake.requests) > limits.MAX_CLIENT_QUESTIONS, "pytanie z innego adresu doszło")
        release.set()
        for thread in held:
            thread.join()
    assert results.count(200) == len(results) == limits.MAX_CLIENT_QUESTIONS + 1


def test_a_hung_model_fills_only_the_question_pool(one_article_db: Path, hung_model) -> None:
    fake, release = hung_model
    results: list[int] = []
    clients = [from_address(f"127.0.0.{n}") for n in range(2, 2 + limits.MAX_QUESTIONS)]
    try:
        with running_server(one_article_db) as url:
            held = [asking(client, url, results) for client in clients]
            wait_for(lambda: len(fake.requests) >= limits.MAX_QUESTIONS, "pula pytań pełna")
            with from_address("127.0.0.99") as late:
                refused = late.post(f"{url}/api/pytaj", json=QUESTION)
                assert refused.status_code == 503 and "za dużo pytań naraz" in refused.json()["blad"]
                assert late.get(f"{url}/api/szukaj", params={"q": "urlop"}).status_code == 200
                assert late.get(f"{url}/api/pliki").status_code == 200
            release.set()
            for thread in held:
                thread.join()
    finally:
        for client in clients:
            client.close()
    assert results == [200] * limits.MAX_QUESTIONS


def test_a_question_over_its_time_limit_is_a_polish_503(one_article_db: Path, hung_model) -> None:
    with running_server(one_article_db, limits=limits.LimitSettings(question_seconds=0.5)) as url:
        response = httpx.post(f"{url}/api/pytaj", json=QUESTION, timeout=60)
    assert response.status_code == 503 and "dłużej niż" in response.json()["blad"]


class LoggedEvents(logging.Handler):
    """Zdarzenie na każdy z ``texts``: ustawione, gdy serwer zapisze w dzienniku wiersz z tym tekstem."""

    def __init__(self, *texts: str) -> None:
        super().__init__(logging.WARNING)
        self.seen = {text: threading.Event() for text in texts}

    def emit(self, record: logging.LogRecord) -> None:
        for text, event in self.seen.items():
            if text in record.getMessage():
                event.set()


@pytest.mark.parametrize("accept", ["text/event-stream", "application/json"])
def test_a_client_that_hung_up_gets_no_more_model_calls(one_article_db: Path, accept: str) -> None:
    hold = Hold()
    events = LoggedEvents("rozłączył się w trakcie pytania", "bez dalszych wywołań modelu")
    server_log = logging.getLogger("chroma_rag.serwuj")
    server_log.addHandler(events)
    try:
        with chat_model("Urlop [regulamin.md, art. 1].") as fake, running_server(one_article_db) as url:
            fake.enqueue(Reply(text="{}", hold=hold))  # the first call (the search plan) waits for the test
            port = int(url.rsplit(":", 1)[1])
            body = json.dumps(QUESTION).encode()
            with socket.create_connection(("127.0.0.1", port)) as connection:
                connection.sendall(f"POST /api/pytaj HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: {accept}\r\n"
                                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                                   + body)
                assert hold.arrived.wait(60)
            # the client has hung up while the model thinks
            wait_for(events.seen["rozłączył się w trakcie pytania"].is_set, "serwer zauważył rozłączenie")
            hold.release.set()
            wait_for(events.seen["bez dalszych wywołań modelu"].is_set, "pytanie porzucone")
            assert len(fake.requests) == 1, [request.body for request in fake.requests]
    finally:
        server_log.removeHandler(events)
