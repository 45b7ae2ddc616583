"""`chroma-rag serwuj` pod atakiem sąsiada z pętli zwrotnej (issue #22): podmienione pliki, obejście limitów
logowania, podrobiony nagłówek Host – na prawdziwym uvicorn."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import run_cli
from processes import start
from serving_support import running_server

from chroma_rag import Index
from chroma_rag.serving import limits
from chroma_rag.serving.limits import MAX_BODY_BYTES
from chroma_rag.serving.security import MAX_FAILURES
from chroma_rag.serving.transport import TransportLimits

SECRET = "root:x:0:0:sekret-sasiada\n"


@pytest.fixture(scope="module")
def swapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Serwer nad indeksem jednego pliku, który potem podmieniono na dowiązanie do cudzego sekretu."""
    root = tmp_path_factory.mktemp("podmiana")
    docs = root / "docs" / "sub"
    docs.mkdir(parents=True)
    indexed = docs / "sekret.md"
    indexed.write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n", encoding="utf-8")
    db = root / "db"
    Index(db).add([indexed])
    outside = root / "passwd"
    outside.write_text(SECRET, encoding="utf-8")
    with running_server(db) as url:
        yield url, indexed


def raw_request(base: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, str]:
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body or None)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def test_dokumenty_serves_the_indexed_file_itself(swapped: tuple[str, Path]) -> None:
    url, indexed = swapped
    response = httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30)
    assert response.status_code == 200 and "urlopu" in response.text


@pytest.mark.parametrize("link", ["file", "folder"])
def test_file_swapped_for_a_symlink_is_not_served(swapped: tuple[str, Path], link: str) -> None:
    url, indexed = swapped
    original = indexed.read_bytes()
    outside = indexed.parents[2] / "passwd"
    folder = indexed.parent
    try:
        if link == "file":
            indexed.unlink()
            indexed.symlink_to(outside)
        else:  # the folder on the indexed path now leads elsewhere, with a same-named file
            moved = folder.with_name("sub-stary")
            folder.rename(moved)
            elsewhere = folder.with_name("obcy")
            elsewhere.mkdir()
            (elsewhere / indexed.name).write_text(SECRET, encoding="utf-8")
            folder.symlink_to(elsewhere, target_is_directory=True)
        response = httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30)
        assert response.status_code == 404, response.text
        assert "root:" not in response.text
        assert "nie ma na dysku serwera" in response.json()["blad"]  # said to a team member: no command
    finally:
        if link == "file":
            indexed.unlink()
            indexed.write_bytes(original)
        else:
            folder.unlink()
            folder.with_name("sub-stary").rename(folder)
    assert httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30).status_code == 200


def test_login_body_over_the_limit_is_413_before_reading_it(guarded_url: str) -> None:
    field = "token=" + "x" * (5 * 1024 * 1024)
    response = httpx.post(f"{guarded_url}/logowanie", content=field.encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert response.status_code == 413
    assert "za duża" in response.json()["blad"]


def test_login_chunked_body_over_the_limit_is_413(guarded_url: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"token="
        for _ in range(4 * MAX_BODY_BYTES // 1024):
            yield b"x" * 1024

    response = httpx.post(f"{guarded_url}/logowanie", content=chunks(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert response.status_code == 413
    assert "za duża" in response.json()["blad"]


@pytest.fixture(scope="module")
def guarded_url(small_db: Path) -> Iterator[str]:
    with running_server(small_db, token="tajny-token", production=True) as url:
        yield url


@pytest.mark.parametrize("host", ["127.0.0.1:evil", "127.0.0.1:18080@evil.com", "localhost:80:80", "127.0.0.1:"])
def test_host_with_a_bad_port_is_refused(swapped: tuple[str, Path], host: str) -> None:
    url, _ = swapped
    status, body = raw_request(url, "GET", "/api/pliki", {"Host": host})
    assert status == 400, body
    assert "nazwa hosta" in json.loads(body)["blad"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8080", "[::1]:80"])
def test_loopback_host_with_a_port_is_accepted(swapped: tuple[str, Path], host: str) -> None:
    url, _ = swapped
    status, body = raw_request(url, "GET", "/api/pliki", {"Host": host})
    assert status == 200, body


# --- powolne i bezczynne połączenia (ustawienia uvicorn z `chroma-rag serwuj`, krótsze limity czasu) ---

SHORT_SECONDS = 1.5
FEW_CONNECTIONS = limits.MAX_REQUESTS + 32
FEW_PER_CLIENT = 32


@pytest.fixture(scope="module")
def small_db(one_article_db: Path) -> Path:
    """Limity transportu nie zależą od treści: wystarczy jeden artykuł."""
    return one_article_db


@pytest.fixture(scope="module")
def served(small_db: Path) -> Iterator[str]:
    short = TransportLimits(header_seconds=SHORT_SECONDS, connections=FEW_CONNECTIONS,
                            client_connections=FEW_PER_CLIENT)
    with running_server(small_db, production=True, limits=limits.LimitSettings(body_seconds=SHORT_SECONDS),
                        transport=short) as url:
        yield url


def connect(base: str, source: str | None = None) -> socket.socket:
    """Połączenie z serwerem; ``source`` – adres klienta na pętli zwrotnej (127.0.0.2 … to inni sąsiedzi)."""
    address = urlsplit(base)
    return socket.create_connection((address.hostname, address.port), timeout=30,
                                    source_address=(source, 0) if source else None)


def read_all(sock: socket.socket) -> bytes:
    """Wszystko, co serwer wyśle, aż zamknie połączenie (najwyżej 30 s ciszy)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def status_and_error(reply: bytes) -> tuple[int, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)["blad"]


def search_status(base: str) -> int:
    return httpx.get(f"{base}/api/szukaj", params={"q": "urlop", "tryb": "slowa"}, timeout=30).status_code


def test_unfinished_headers_get_a_polish_408_and_are_closed(served: str) -> None:
    with connect(served) as sock:
        sock.sendall(b"GET /api/pliki HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        status, message = status_and_error(read_all(sock))
    assert status == 408 and "Nagłówki zapytania nie nadeszły" in message


def test_headers_over_16_kib_are_refused_by_the_parser_in_use(served: str) -> None:
    with connect(served) as sock:
        sock.sendall(b"GET /api/pliki HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Duzy: " + b"a" * (64 * 1024) + b"\r\n\r\n")
        status, message = status_and_error(read_all(sock))
    assert status == 431 and "za duże nagłówki" in message


def test_invalid_http_gets_a_polish_sentence(served: str) -> None:
    with connect(served) as sock:
        sock.sendall(b"TO NIE JEST HTTP\r\n\r\n")
        reply = read_all(sock)
    status, message = status_and_error(reply)
    assert status == 400 and "niepoprawne" in message and b"Invalid" not in reply
    assert b"nosniff" in reply


def test_slow_bodies_hold_no_search_slot(served: str) -> None:
    slow = [connect(served, f"127.0.0.{2 + n % 4}") for n in range(limits.MAX_REQUESTS + 4)]  # neighbours
    try:
        for sock in slow:
            sock.sendall(b"POST /api/pytaj HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"pytanie\"")
        assert search_status(served) == 200
        replies = [status_and_error(read_all(sock)) for sock in slow]
    finally:
        for sock in slow:
            sock.close()
    assert {status for status, _ in replies} == {408}
    assert "Treść zapytania nie nadeszła" in replies[0][1]


def test_mcp_offers_no_idle_streams(served: str) -> None:
    """Serwer MCP jest bezstanowy (każde wywołanie to jedno POST), więc ``GET /mcp`` – strumień, którym nic by nie
    przyszło – dostaje od razu 405 (specyfikacja MCP na to pozwala) i nie trzyma żadnego miejsca."""
    opened = []
    try:
        for _ in range(limits.MAX_REQUESTS + 8):  # more than all the places: none of them is kept
            sock = connect(served)
            host = urlsplit(served).netloc.encode()
            sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: " + host + b"\r\nAccept: text/event-stream\r\n"
                         b"Connection: close\r\n\r\n")
            opened.append(sock)
        replies = [read_all(sock) for sock in opened]
        assert search_status(served) == 200
    finally:
        for sock in opened:
            sock.close()
    statuses = {status for status, _ in map(status_and_error, replies)}
    assert statuses == {405}
    _, message = status_and_error(replies[0])
    assert "POST" in message and "Method" not in message and b"\r\nallow: POST" in replies[0]


def test_connections_over_the_limit_get_a_polish_503(served: str) -> None:
    # from several neighbours, none over its own limit
    idle = [connect(served, f"127.0.0.{2 + n % 4}") for n in range(FEW_CONNECTIONS + 4)]
    try:
        for sock in idle[FEW_CONNECTIONS:]:
            status, message = status_and_error(read_all(sock))
            assert status == 503 and "za dużo otwartych połączeń" in message
    finally:
        for sock in idle:
            sock.close()


def test_one_client_cannot_hold_every_connection(served: str) -> None:
    """1100 bezczynnych gniazd jednego klienta zamykało serwer dla wszystkich (issue 39): jeden adres ma swój limit."""
    greedy = [connect(served, "127.0.0.2") for _ in range(FEW_PER_CLIENT + 4)]
    try:
        for sock in greedy[FEW_PER_CLIENT:]:
            status, message = status_and_error(read_all(sock))
            assert status == 503 and "Z tego adresu" in message
        assert search_status(served) == 200  # from another address, while the greedy client holds its share
    finally:
        for sock in greedy:
            sock.close()


# --- zerwane połączenia ---

DROPPED = 64


def drop_mid_body(base: str, path: str, content_type: str) -> None:
    """Zapytanie z obiecaną treścią 1000 bajtów, z której przychodzi 10, po czym klient znika."""
    with connect(base) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {urlsplit(base).netloc}\r\nContent-Type: {content_type}\r\n"
                     "Content-Length: 1000\r\n\r\ntoken=abcd".encode())


def wait_for_lines(caplog: pytest.LogCaptureFixture, text: str, count: int) -> list[logging.LogRecord]:
    for _ in range(300):  # at most 30 s
        found = [r for r in caplog.records if text in r.getMessage()]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    return found


@pytest.mark.parametrize(("path", "content_type"), [("/logowanie", "application/x-www-form-urlencoded"),
                                                    ("/api/pytaj", "application/json")])
def test_dropped_connections_are_one_log_line_each(guarded_url: str, caplog: pytest.LogCaptureFixture,
                                                   path: str, content_type: str) -> None:
    caplog.set_level(logging.WARNING)
    threads = [threading.Thread(target=drop_mid_body, args=(guarded_url, path, content_type))
               for _ in range(DROPPED)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    dropped = wait_for_lines(caplog, "zerwał połączenie", DROPPED)
    assert len(dropped) == DROPPED
    assert all(record.exc_info is None for record in caplog.records)
    assert "Traceback" not in caplog.text and len(caplog.text.splitlines()) == DROPPED
    response = httpx.get(f"{guarded_url}/api/pliki", headers={"Authorization": "Bearer tajny-token"}, timeout=30)
    assert response.status_code == 200


# --- złe treści pytań: 400 ze zdaniem, błąd przed strumieniem z własnym kodem ---

def ask(base: str, content: bytes, accept: str = "text/event-stream") -> httpx.Response:
    return httpx.post(f"{base}/api/pytaj", content=content, timeout=60,
                      headers={"Content-Type": "application/json", "Accept": accept})


@pytest.mark.parametrize(("content", "message"), [
    (b'{"pytanie": "urlop", "k": 1e400}', "liczbą całkowitą"),
    (b'{"pytanie": "urlop", "k": 1.5}', "liczbą całkowitą"),
    (b"[" * 10_000 + b"]" * 10_000, "poprawnym JSON-em"),
    (b'{"pytanie": ' * 5_000 + b'"x"' + b"}" * 5_000, "poprawnym JSON-em"),
])
def test_bad_question_bodies_are_400_with_a_sentence(served: str, content: bytes, message: str) -> None:
    response = ask(served, content)
    assert response.status_code == 400, response.text
    assert message in response.json()["blad"]


@pytest.fixture
def chat_model_with_credentials(monkeypatch: pytest.MonkeyPatch) -> str:
    """Model czatu pod adresem z danymi logowania, pod którym nic nie nasłuchuje."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CHROMA_RAG_LLM_URL", f"http://uzytkownik:tajne-haslo@127.0.0.1:{port}/v1")
    monkeypatch.setenv("CHROMA_RAG_LLM_MODEL", "model")
    monkeypatch.setenv("CHROMA_RAG_LLM_RETRIES", "0")
    return str(port)


def test_chat_model_error_is_502_without_its_address(served: str, chat_model_with_credentials: str) -> None:
    response = ask(served, json.dumps({"pytanie": "urlop"}).encode(), "application/json")
    assert response.status_code == 502, response.text
    assert response.headers["content-type"] == "application/json"
    said = response.json()["blad"]
    assert "Nie można połączyć się z serwerem modelu czatu" in said
    assert "tajne-haslo" not in response.text and chat_model_with_credentials not in response.text


def test_chat_model_error_after_the_sources_ends_the_stream_without_its_address(
        served: str, chat_model_with_credentials: str) -> None:
    # the sources go out as soon as the search is done (issue 38): the model's failure is the stream's last event
    response = ask(served, json.dumps({"pytanie": "urlop"}).encode(), "text/event-stream")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    last = response.text.strip().split("\n\n")[-1]
    assert last.startswith("event: blad") and "Nie można połączyć się z serwerem modelu czatu" in last
    assert "tajne-haslo" not in response.text and chat_model_with_credentials not in response.text


def test_cli_message_names_the_chat_model_without_credentials() -> None:
    from chroma_rag.llm import LlmSettings

    settings = LlmSettings(url="http://uzytkownik:tajne-haslo@model.firma:8000/v1")
    assert settings.shown_url == "http://model.firma:8000/v1"


# --- angielski tekst transportu MCP nie dociera do klienta ---

ENGLISH = ("Invalid", "Not Acceptable", "Unsupported", "Validation", "Parse error", "must", "field required")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}


@pytest.mark.parametrize(("headers", "content", "status", "said"), [
    ({"Origin": "http://evil.example"}, json.dumps(INITIALIZE).encode(), 403, "Origin"),
    ({"Content-Type": "text/plain"}, json.dumps(INITIALIZE).encode(), 400, "JSON-RPC"),
    ({"Accept": "text/html"}, json.dumps(INITIALIZE).encode(), 406, "Accept"),
    ({}, b"{", 400, "JSON-RPC"),
    ({}, b'{"jsonrpc": "2.0", "id": 1, "method": 5}', 400, "JSON-RPC"),
])
def test_mcp_transport_refusals_are_polish(served: str, headers: dict[str, str], content: bytes, status: int,
                                          said: str) -> None:
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    response = httpx.post(f"{served}/mcp", content=content, headers=sent, timeout=30)
    assert response.status_code == status, response.text
    reply = response.json()
    message = reply["error"]["message"] if "error" in reply else reply["blad"]
    assert said in message and not any(word in response.text for word in ENGLISH), response.text


def test_mcp_still_answers_a_real_client_request(served: str) -> None:
    response = httpx.post(f"{served}/mcp", json=INITIALIZE, timeout=30,
                          headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 200 and response.json()["result"]["serverInfo"]


# --- nagłówki bezpieczeństwa na każdej odpowiedzi ---

@pytest.mark.parametrize(("method", "path", "headers", "size"), [
    ("GET", "/api/pliki", {}, 0),
    ("GET", "/nie-ma-takiej", {}, 0),
    ("GET", "/api/pliki", {"Host": "evil.example"}, 0),
    ("POST", "/mcp", {"Origin": "http://evil.example"}, 0),
    ("POST", "/api/pytaj", {}, MAX_BODY_BYTES + 1),
])
def test_every_response_has_the_security_headers(served: str, method: str, path: str, headers: dict[str, str],
                                                 size: int) -> None:
    response = httpx.request(method, f"{served}{path}", headers=headers, content=b"x" * size, timeout=30)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    # not "no-referrer": with it Chromium sends `Origin: null` from the login form, which the CSRF check refuses
    assert response.headers["referrer-policy"] == "same-origin"


# --- token: z pliku, ciasteczko, limit błędnych prób ---

TOKEN = "tajny-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serwuj_reads_the_token_from_a_file_not_the_command_line(small_db: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    port = free_port()
    server = start("serwuj", "--baza", small_db, "--port", port, "--token-plik", token_file)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):  # at most 60 s for the server to come up
            try:
                refused = httpx.get(f"{base}/api/pliki", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert refused.status_code == 401
        allowed = httpx.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert allowed.status_code == 200
        assert TOKEN not in Path(f"/proc/{server.pid}/cmdline").read_text()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_token_on_the_command_line_is_warned_about(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "serwuj", "--token", TOKEN, "--baza", tmp_path / "nie-ma")
    assert code != 0 and "liście procesów (ps)" in err and "--token-plik" in err


@pytest.mark.parametrize(("content", "said"), [(None, "Nie da się przeczytać tokenu"), ("\n", "jest pusty")])
def test_unusable_token_file_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              content: str | None, said: str) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        token_file.write_text(content, encoding="utf-8")
    code, _, err = run_cli(capsys, "serwuj", "--token-plik", token_file, "--baza", tmp_path / "nie-ma")
    assert code == 2 and said in err and "Traceback" not in err


def log_in(base: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{base}/logowanie", data={"token": TOKEN}, headers=headers or {}, timeout=30)


def test_login_cookie_expires_and_is_signed(guarded_url: str) -> None:
    response = log_in(guarded_url)
    cookie = response.headers["set-cookie"]
    assert response.status_code == 303 and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "Max-Age=43200" in cookie and "Secure" not in cookie  # plain http: a Secure cookie would never return
    value = response.cookies["chroma_rag_sesja"]
    assert httpx.get(f"{guarded_url}/api/pliki", cookies={"chroma_rag_sesja": value}, timeout=30).status_code == 200
    expires, _, signature = value.partition(".")
    for forged in (f"{int(expires) + 10 ** 6}.{signature}", f"{int(time.time()) - 1}.{signature}", signature):
        refused = httpx.get(f"{guarded_url}/api/pliki", cookies={"chroma_rag_sesja": forged}, timeout=30)
        assert refused.status_code == 401


@pytest.mark.parametrize("trusted", [True, False])
def test_cookie_is_secure_only_behind_a_trusted_tls_proxy(small_db: Path, trusted: bool) -> None:
    with running_server(small_db, token=TOKEN, production=True,
                        trusted_proxy="127.0.0.1" if trusted else None) as base:
        # the browser behind the proxy sends its https origin; an untrusted X-Forwarded-Proto changes nothing
        origin = ("https://" if trusted else "http://") + urlsplit(base).netloc
        response = log_in(base, {"X-Forwarded-Proto": "https", "Origin": origin})
    assert response.status_code == 303, response.text
    assert ("Secure" in response.headers["set-cookie"]) is trusted


def test_wrong_tokens_are_limited_with_a_polish_429(small_db: Path) -> None:
    with running_server(small_db, token=TOKEN, production=True) as base:
        session = log_in(base).cookies["chroma_rag_sesja"]
        statuses = [httpx.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer zly-{n}"}, timeout=30)
                    .status_code for n in range(MAX_FAILURES)]
        limited = httpx.get(f"{base}/api/pliki", headers={"Authorization": "Bearer kolejny-zly"}, timeout=30)
        right = httpx.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        form = log_in(base)
        logged_in = httpx.get(f"{base}/api/pliki", cookies={"chroma_rag_sesja": session}, timeout=30)
    assert statuses == [401] * MAX_FAILURES
    assert limited.status_code == 429 and "Za dużo prób z błędnym tokenem" in limited.json()["blad"]
    assert int(limited.headers["retry-after"]) > 0
    assert right.status_code == 429  # a right guess while limited must look the same as a wrong one
    assert form.status_code == 429 and "Za dużo prób" in form.text
    assert logged_in.status_code == 200


def test_login_refused_for_too_many_wrong_tokens_keeps_the_page_to_come_back_to(small_db: Path) -> None:
    with running_server(small_db, token=TOKEN, production=True) as base:
        for n in range(MAX_FAILURES):
            httpx.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer zly-{n}"}, timeout=30)
        refused = httpx.post(f"{base}/logowanie", data={"token": TOKEN, "dalej": "/?q=urlop wypoczynkowy&tryb=slowa"},
                             timeout=30)
    assert refused.status_code == 429 and "Za dużo prób" in refused.text
    # the form shown again sends the shared search on, as the form after a wrong token does
    assert 'name="dalej" value="/?q=urlop+wypoczynkowy&amp;tryb=slowa"' in refused.text


# --- co jest publiczne przy tokenie: tylko własne skrypty i style strony oraz formularz logowania ---

@pytest.mark.parametrize("path", ["/static/style.css", "/static/app.js", "/logowanie"])
def test_only_the_pages_own_files_and_the_login_form_are_public(guarded_url: str, path: str) -> None:
    assert httpx.get(f"{guarded_url}{path}", timeout=30).status_code == 200


@pytest.mark.parametrize("path", ["/static/../api/pliki", "/static/%2e%2e/api/pliki", "/static/..%2fapi/pliki",
                                  "/static//api/pliki", "/static/../dokumenty/regulamin.md", "/favicon.ico",
                                  "/mcp", "/"])
def test_nothing_else_is_public(guarded_url: str, path: str) -> None:
    status, body = raw_request(guarded_url, "GET", path, {"Host": urlsplit(guarded_url).netloc})
    assert status in (401, 404), body
    assert "urlopu" not in body and "regulamin.md" not in body


# --- issue 39: zgadywanie tokenu z wielu adresów ------------------------------------------------------------


class Clock:
    """Zegar, który przesuwa test (bez czekania)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_guessing_from_many_addresses_hits_a_limit_of_the_whole_server() -> None:
    from chroma_rag.serving.security import FAILURE_WINDOW, GLOBAL_FAILURES, FailedTokens

    clock = Clock()
    failures = FailedTokens(MAX_FAILURES, clock=clock)
    for n in range(GLOBAL_FAILURES):  # each address stays under its own limit
        assert failures.wait_seconds(f"10.0.{n // 250}.{n % 250}") == 0.0
        failures.failed(f"10.0.{n // 250}.{n % 250}")
    assert failures.wait_seconds("192.0.2.7") > 0  # a fresh address waits too: the server is being guessed at
    clock.now += FAILURE_WINDOW + 1
    assert failures.wait_seconds("192.0.2.7") == 0.0
    failures.failed("192.0.2.7")
    assert failures.tracked_addresses() <= 1  # addresses whose tries left the window are forgotten
