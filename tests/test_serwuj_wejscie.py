"""`chroma-rag serwuj`: wrogie wartości z zapytania (issue #39) – liczba ponad limit cyfr Pythona w ciasteczku
i w porcie nagłówka Host, samotny surogat UTF-16 w JSON-ie pytania – dają zwykłą odmowę, nie 500 z tracebackiem
w dzienniku. Prawdziwy uvicorn z ustawieniami `serwuj` na pętli zwrotnej."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from serving_support import running_server
from test_serwuj_bezpieczenstwo import raw_request

from chroma_rag.serving.security import COOKIE

TOKEN = "tajny-token"
HUGE = "9" * 4400  # over Python's 4300-digit limit of int(str)


@pytest.fixture(scope="module")
def db(one_article_db: Path) -> Path:
    return one_article_db


@pytest.fixture(scope="module")
def guarded(db: Path) -> Iterator[str]:
    with running_server(db, token=TOKEN, production=True) as url:
        yield url


@pytest.fixture(scope="module")
def open_url(db: Path) -> Iterator[str]:
    with running_server(db, production=True) as url:
        yield url


def assert_quiet_log(caplog: pytest.LogCaptureFixture, requests: int) -> None:
    """Najwyżej jedna krótka linia dziennika na zapytanie, bez tracebacku."""
    records = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]  # the test's own client
    assert len(records) <= requests, caplog.text[:2000]
    assert all(r.exc_info is None and len(r.getMessage()) < 300 for r in records), caplog.text[:2000]
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("cookie", [f"{HUGE}.x", HUGE, f"{HUGE}.{'a' * 64}", "١٢٣٤٥٦٧٨٩٠.x", "²³.x"])
def test_cookie_with_a_huge_or_odd_number_is_just_not_logged_in(guarded: str, caplog: pytest.LogCaptureFixture,
                                                                cookie: str) -> None:
    caplog.set_level(logging.INFO)
    sent = {"Host": urlsplit(guarded).netloc, "Cookie": f"{COOKIE}={cookie}".encode().decode("latin-1")}
    status, body = raw_request(guarded, "GET", "/api/pliki", sent)
    assert status == 401, body
    assert "Brak ważnego tokenu" in json.loads(body)["blad"]
    status, body = raw_request(guarded, "GET", "/", {**sent, "Accept": "text/html"})
    assert status == 303, body  # to the login form, as with any bad cookie
    assert_quiet_log(caplog, 2)
    right = httpx.get(f"{guarded}/api/pliki", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert right.status_code == 200


@pytest.mark.parametrize("port", ["9" * 5000, "٨٠", "²"])
def test_host_with_a_huge_or_odd_port_is_400(open_url: str, caplog: pytest.LogCaptureFixture, port: str) -> None:
    caplog.set_level(logging.INFO)
    status, body = raw_request(open_url, "GET", "/api/pliki", {"Host": f"127.0.0.1:{port}".encode().decode("latin-1")})
    assert status == 400, body
    assert "nazwa hosta" in body
    assert_quiet_log(caplog, 1)


ASK_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


@pytest.mark.parametrize(("content", "said"), [
    (b'{"pytanie": "\\ud800"}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop \\udfff w pracy"}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop", "plik": ["\\ud800.pdf"]}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop", "typ": "\\ud800"}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop", "art": ["\\ud800"]}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop", "tryb": "\\ud800"}', "niepoprawne znaki"),
    (b'{"pytanie": "urlop", "k": "\\ud800"}', "niepoprawne znaki"),  # not echoed back in „must be a number”
    (b'{"pytanie": "urlop", "rok": "20\\udc00"}', "niepoprawne znaki"),
    (b'{"pytanie": "\xed\xa0\x80"}', ""),  # the surrogate as raw (CESU-8) bytes
    (b'{"pytanie": "\xff"}', "poprawnym JSON-em"),
])
def test_lone_surrogate_in_a_question_is_400_with_a_sentence(open_url: str, caplog: pytest.LogCaptureFixture,
                                                             content: bytes, said: str) -> None:
    caplog.set_level(logging.INFO)
    response = httpx.post(f"{open_url}/api/pytaj", content=content, headers=ASK_HEADERS, timeout=60)
    assert response.status_code == 400, response.text
    message = response.json()["blad"]
    assert said in message and message.endswith("."), message
    assert_quiet_log(caplog, 1)


def test_search_with_the_same_characters_in_the_address_still_answers(open_url: str) -> None:
    # in the address the bytes are decoded with replacement characters, so they are an ordinary (odd) question
    response = httpx.get(f"{open_url}/api/szukaj?q=%ED%A0%80&tryb=slowa", timeout=60)
    assert response.status_code == 200, response.text
