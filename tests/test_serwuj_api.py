"""`chroma-rag serwuj`: JSON API, dokumenty, strumień odpowiedzi, token i limity na prawdziwym uvicorn."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import CHAT_KEY as KEY
from conftest import DATA_PROTECTION, PATIENTS, run_cli
from conftest import SERVED_ANSWER as ANSWER
from llm_server import HOLD_LIMIT, FakeLlm, Hold, Reply
from serving_support import running_server

from chroma_rag import Index
from chroma_rag.serving.limits import MAX_BODY_BYTES, LimitSettings


@pytest.fixture(scope="module")
def guarded(two_acts_db: Path) -> Iterator[str]:
    with running_server(two_acts_db, token="tajny-token") as url:
        yield url


def get(base: str, path: str, **params: object) -> httpx.Response:
    return httpx.get(base + path, params=params, timeout=60)


def events(text: str) -> list[tuple[str, dict]]:
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def test_pliki_to_lista_json(base: str, two_acts_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    response = get(base, "/api/pliki")
    assert response.status_code == 200
    _, out, _ = run_cli(capsys, "lista", "--json", "--baza", two_acts_db)
    # the same objects, a file named as in citations instead of its path on the server (the CLI is the operator's)
    assert response.json() == [{**listed, "sciezka": listed["plik"]} for listed in json.loads(out)]


def test_szukaj_same_as_api(base: str, two_acts_db: Path) -> None:
    response = get(base, "/api/szukaj", q="prawo do informacji o stanie zdrowia", k=3)
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"wyniki", "powod", "plan"}
    expected = Index(two_acts_db).search("prawo do informacji o stanie zdrowia", k=3)
    assert [hit["id"] for hit in body["wyniki"]] == [hit.id for hit in expected]
    assert body["wyniki"][0]["plik"] == PATIENTS and body["wyniki"][0]["tekst"]


def test_szukaj_filters(base: str) -> None:
    both = get(base, "/api/szukaj", q="dane osobowe pacjenta", k=10, plik=[PATIENTS, DATA_PROTECTION]).json()
    assert {hit["plik"] for hit in both["wyniki"]} == {PATIENTS, DATA_PROTECTION}
    one = get(base, "/api/szukaj", q="dane osobowe pacjenta", k=10, plik=PATIENTS).json()
    assert {hit["plik"] for hit in one["wyniki"]} == {PATIENTS}
    years = get(base, "/api/szukaj", q="dane osobowe", k=10, od_roku=2000, do_roku=2010).json()
    assert years["wyniki"] and {hit["rok"] for hit in years["wyniki"]} == {2009}
    year = get(base, "/api/szukaj", q="dane osobowe", k=10, rok=1997, typ="ustawa").json()
    assert {hit["plik"] for hit in year["wyniki"]} == {DATA_PROTECTION}
    articles = get(base, "/api/szukaj", q="informacja", k=10, plik=PATIENTS, art=["9", "10"]).json()
    assert {hit["art"] for hit in articles["wyniki"]} <= {"9", "10"} and articles["wyniki"]
    nothing = get(base, "/api/szukaj", q="dane osobowe", rok=1900).json()
    assert nothing["wyniki"] == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Brakuje pytania"),
        ({"q": "  "}, "Brakuje pytania"),
        ({"q": "urlop", "k": "abc"}, "„k” musi być liczbą całkowitą"),
        ({"q": "urlop", "k": "0"}, "od 1 do 50"),
        ({"q": "urlop", "rok": "dwa tysiące"}, "„rok” musi być liczbą całkowitą"),
        ({"q": "urlop", "tryb": "magia"}, "Nieznany tryb wyszukiwania „magia”"),
        ({"q": "x" * 2001}, "za długie"),
    ],
)
def test_szukaj_bad_input(base: str, params: dict, message: str) -> None:
    response = get(base, "/api/szukaj", **params)
    assert response.status_code == 400
    assert message in response.json()["blad"]


def test_szukaj_unknown_file_same_sentence_as_cli(
    base: str, two_acts_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    response = get(base, "/api/szukaj", q="urlop", plik="prawa-kierowcy.pdf")
    assert response.status_code == 404
    said = response.json()["blad"]  # the page's words: no CLI commands or options
    assert "nie ma pliku „prawa-kierowcy.pdf”" in said and "Wybierz plik z listy filtrów" in said
    assert "chroma-rag" not in said and "--plik" not in said
    code, _, err = run_cli(capsys, "szukaj", "urlop", "--plik", "prawa-kierowcy.pdf", "--baza", two_acts_db)
    assert code == 2 and "nie ma pliku „prawa-kierowcy.pdf”" in err and "chroma-rag lista" in err


def test_jednostka(base: str, two_acts_db: Path) -> None:
    response = get(base, "/api/jednostka", plik=PATIENTS, art="24")
    assert response.status_code == 200
    unit = response.json()
    assert unit == {**Index(two_acts_db).unit(PATIENTS, "24").to_json(), "plik_na_serwerze": True}
    assert [v["wersja"] for v in unit["wersje"]] == ["obecna", "przyszla"]
    for pages in (unit, *unit["wersje"]):
        assert "strona_od" not in pages and 1 <= pages["strona"] <= pages["strona_do"]
    missing = get(base, "/api/jednostka", plik=PATIENTS, art="999")
    assert missing.status_code == 404 and "nie ma jednostki art. 999" in missing.json()["blad"]
    unknown = get(base, "/api/jednostka", plik="nie.pdf", art="1")
    assert unknown.status_code == 404 and "nie ma pliku „nie.pdf”" in unknown.json()["blad"]
    incomplete = get(base, "/api/jednostka", plik=PATIENTS)
    assert incomplete.status_code == 400 and "Podaj plik i jednostkę" in incomplete.json()["blad"]


def test_pytaj_streams_answer_then_pytaj_json(base: str, fake_llm: FakeLlm) -> None:
    body = {"pytanie": "Czy pacjent ma prawo do informacji o stanie zdrowia?", "plik": [PATIENTS], "k": 3}
    with httpx.stream("POST", f"{base}/api/pytaj", json=body, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    found = events(text)
    pieces = [data["tekst"] for kind, data in found if kind == "tekst"]
    assert len(pieces) > 1, "odpowiedź ma przychodzić kawałkami"
    kind, final = found[-1]
    assert kind == "wynik"
    assert "".join(pieces) == final["odpowiedz"] == ANSWER
    assert final["model"] == fake_llm.model and final["niepasujace_cytaty"] == []
    assert {hit["plik"] for hit in final["fragmenty"]} == {PATIENTS}
    assert KEY not in text


def test_pytaj_plain_json(base: str) -> None:
    response = httpx.post(
        f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"}, headers={"Accept": "application/json"},
        timeout=60,
    )
    assert response.status_code == 200
    assert response.json()["odpowiedz"] == ANSWER
    assert KEY not in response.text


def test_pytaj_chat_model_error_is_one_polish_sentence(base: str, fake_llm: FakeLlm) -> None:
    fake_llm.default = Reply(status=401)
    try:
        response = httpx.post(f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"}, timeout=60)
    finally:
        fake_llm.default = Reply(text=ANSWER)
    # the sources go out as soon as the search is done; the model's failure after them is the stream's last event
    assert response.status_code == 200
    kinds = [kind for kind, _ in events(response.text)]
    assert kinds == ["zrodla", "blad"], kinds
    said = events(response.text)[-1][1]["blad"]
    assert said and "Traceback" not in said and KEY not in response.text and "CHROMA_RAG" not in said


def test_sources_come_before_the_answer_streams(base: str) -> None:
    response = httpx.post(f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"}, timeout=60)
    found = events(response.text)
    assert found[0][0] == "zrodla" and found[-1][0] == "wynik"
    assert {kind for kind, _ in found[1:-1]} == {"tekst"}
    assert found[0][1]["fragmenty"] == found[-1][1]["fragmenty"]  # the same sources the answer cites


@pytest.mark.parametrize("status", [401, 404, 500])
def test_pytaj_json_chat_model_failure_is_502_not_the_clients_fault(base: str, fake_llm: FakeLlm, status: int) -> None:
    fake_llm.default = Reply(status=status)
    try:
        response = httpx.post(
            f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"}, headers={"Accept": "application/json"},
            timeout=60,
        )
    finally:
        fake_llm.default = Reply(text=ANSWER)
    assert response.status_code == 502
    said = response.json()["blad"]
    assert said.startswith("Serwer ") and KEY not in response.text
    assert "CHROMA_RAG" not in said and "/v1" not in said, said  # the operator's variables are not the team's


def test_chat_model_down_is_said_without_the_operators_variable(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHROMA_RAG_LLM_URL", "http://127.0.0.1:9/v1")  # discard port: nothing listens
    response = httpx.post(f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"},
                          headers={"Accept": "application/json"}, timeout=60)
    said = response.json()["blad"]
    assert response.status_code == 502 and "połączyć" in said
    assert "CHROMA_RAG" not in said and "127.0.0.1" not in said and "zmienn" not in said, said


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"tryb": "magia"}, "Nieznany tryb wyszukiwania „magia”"),
        ({"typ": "ustwa"}, "Nieznany rodzaj dokumentu „ustwa”"),
        ({"od_roku": "2020", "do_roku": "2000"}, "Rok początkowy 2020 jest późniejszy niż końcowy 2000"),
        ({"rok": "2010", "od_roku": "2015"}, "Rok 2010 wychodzi poza zakres lat"),
        ({"rok": "99"}, "Rok musi być liczbą od 1000 do 9999"),
    ],
)
def test_bad_filter_values_are_said_in_the_pages_words(base: str, params: dict, said: str) -> None:
    for response in (get(base, "/api/szukaj", q="urlop", **params),
                     httpx.post(f"{base}/api/pytaj", json={"pytanie": "urlop", **params},
                                headers={"Accept": "application/json"}, timeout=60)):
        text = response.json()["blad"]
        assert response.status_code == 400 and said in text, text
        assert "--" not in text and "chroma-rag" not in text, text


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b"{nie json", 400, "nie jest poprawnym JSON-em"),
        (b"[1, 2]", 400, "musi być obiektem JSON"),
        (b'{"pytanie": ""}', 400, "Brakuje pytania"),
        (b'{"pytanie": "urlop", "rok": true}', 400, "„rok” musi być liczbą"),
        (b'{"pytanie": "urlop", "k": 1.5}', 400, "„k” musi być liczbą całkowitą"),
        (b'{"pytanie": "urlop", "k": 1e400}', 400, "„k” musi być liczbą całkowitą"),
        (b'{"pytanie": "urlop", "plik": [{"a": 1}]}', 400, "Filtr „plik” przyjmuje napisy"),
        (b'{"pytanie": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}', 413, "za duża"),
    ],
)
def test_pytaj_bad_body(base: str, content: bytes, status: int, message: str) -> None:
    response = httpx.post(
        f"{base}/api/pytaj", content=content, headers={"Content-Type": "application/json"}, timeout=60
    )
    assert response.status_code == status
    assert message in response.json()["blad"]


def test_pytaj_chunked_body_over_limit_is_refused(base: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"pytanie": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b"x" * 1024
        yield b'"}'

    response = httpx.post(f"{base}/api/pytaj", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert "za duża" in response.json()["blad"]


def test_dokumenty_serves_indexed_file(base: str, ustawy: Path) -> None:
    response = get(base, f"/dokumenty/{PATIENTS}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.content == (ustawy / PATIENTS).read_bytes()


def test_dokumenty_of_a_same_named_file_needs_its_folder(same_named_db: Path) -> None:
    files = {Path(info.path).parent.name: info.path for info in Index(same_named_db).files()}
    with running_server(same_named_db) as url:
        ambiguous = get(url, "/dokumenty/regulamin.md")
        assert ambiguous.status_code == 409 and "w kilku folderach" in ambiguous.json()["blad"]
        chosen = get(url, "/dokumenty/regulamin.md", sciezka="it/regulamin.md")  # the name the page shows
        assert chosen.status_code == 200 and "administratorowi" in chosen.text
        linked = get(url, "/dokumenty/regulamin.md", sciezka=files["kadry"])  # a link from before names
        assert linked.status_code == 200 and "kierownik" in linked.text
        other = get(url, "/dokumenty/regulamin.md", sciezka="/etc/passwd")
        assert other.status_code == 404 and "root:" not in other.text


def test_dokumenty_refusals_show_no_server_folder(same_named_db: Path, tmp_path: Path) -> None:
    gone = tmp_path / "akta" / "zniknie.md"
    gone.parent.mkdir()
    gone.write_text("# Zarządzenie\n\nArt. 1. Biuro jest czynne od ósmej.\n", encoding="utf-8")
    Index(tmp_path / "db").add([gone])
    gone.unlink()
    with running_server(same_named_db) as url:
        refused = [get(url, "/dokumenty/regulamin.md"), get(url, "/dokumenty/nie-ma.md"),
                   get(url, "/dokumenty/regulamin.md", sciezka=str(same_named_db.parent / "it" / "inny.md"))]
    with running_server(tmp_path / "db") as url:
        refused.append(get(url, "/dokumenty/zniknie.md"))
    assert [r.status_code for r in refused] == [409, 404, 404, 404]
    for response in refused:
        said = response.json()["blad"]
        assert str(same_named_db.parent) not in said and str(tmp_path) not in said, said
    assert "(it/regulamin.md, kadry/regulamin.md)" in refused[0].json()["blad"]  # named as in citations


def raw_get(base: str, raw_path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """Ścieżka wysłana dokładnie tak, jak podana (httpx usunąłby z niej „../”)."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.request("GET", raw_path, headers=headers or {})
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, body


@pytest.mark.parametrize(
    "path",
    [
        "/dokumenty/../../../../etc/passwd",
        "/dokumenty/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "/dokumenty/%2Fetc%2Fpasswd",
        "/dokumenty/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/dokumenty/..",
        "/dokumenty/kodeks-karny-DU-1997-553.pdf",  # lies next to the indexed PDFs, but is not indexed
        f"/dokumenty/..%2F{PATIENTS}",
        "/dokumenty/%00",
    ],
)
def test_dokumenty_never_serves_a_path_from_the_request(base: str, path: str) -> None:
    status, body = raw_get(base, path)
    assert status == 404
    assert "root:" not in body and "%PDF" not in body
    assert json.loads(body)["blad"]


def test_unknown_route_and_method_are_polish_json(base: str) -> None:
    missing = get(base, "/api/nic")
    assert missing.status_code == 404 and "Nie ma takiej strony" in missing.json()["blad"]
    wrong = httpx.get(f"{base}/api/pytaj")
    assert wrong.status_code == 405 and "metody HTTP" in wrong.json()["blad"]


def test_foreign_host_header_is_refused_on_loopback(base: str) -> None:
    status, body = raw_get(base, "/api/pliki", headers={"Host": "zly.example:80"})
    assert status == 400 and "nazwa hosta" in json.loads(body)["blad"]


def test_page_is_served_without_the_chat_key(base: str) -> None:
    page = get(base, "/")
    assert page.status_code == 200 and "chroma-rag" in page.text and 'lang="pl"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    script = get(base, "/static/app.js")
    assert script.status_code == 200
    assert KEY not in page.text + script.text


def test_token_required_on_every_route(guarded: str) -> None:
    for path in ("/api/pliki", "/api/szukaj?q=urlop", f"/dokumenty/{PATIENTS}", "/mcp", "/"):
        response = httpx.get(guarded + path, follow_redirects=False)
        assert response.status_code == 401, path
        assert "tokenu" in response.json()["blad"]
    assert httpx.post(f"{guarded}/api/pytaj", json={"pytanie": "x"}).status_code == 401
    wrong = httpx.get(f"{guarded}/api/pliki", headers={"Authorization": "Bearer zly"})
    assert wrong.status_code == 401
    right = httpx.get(f"{guarded}/api/pliki", headers={"Authorization": "Bearer tajny-token"})
    assert right.status_code == 200 and right.json()


def test_token_login_form_for_the_page(guarded: str) -> None:
    page = httpx.get(f"{guarded}/", headers={"Accept": "text/html"}, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/logowanie"  # no address to come back to
    form = httpx.get(f"{guarded}/logowanie")
    assert form.status_code == 200 and 'name="token"' in form.text
    bad = httpx.post(f"{guarded}/logowanie", data={"token": "zly"}, follow_redirects=False)
    assert bad.status_code == 401 and "Zły token" in bad.text
    with httpx.Client(base_url=guarded) as browser:
        good = browser.post("/logowanie", data={"token": "tajny-token"}, follow_redirects=False)
        assert good.status_code == 303
        cookie = good.headers["set-cookie"]
        assert "tajny-token" not in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert browser.get("/").status_code == 200
        assert browser.get("/api/pliki").status_code == 200


def test_a_shared_link_survives_the_login(guarded: str) -> None:
    # issue 38: /?q=… → /logowanie → an empty page; the link a colleague sent is what the user came for
    shared = "/?q=prawo+do+informacji&plik=prawa-pacjenta-DU-2009-417.pdf&od_roku=2009"
    page = httpx.get(f"{guarded}{shared}", headers={"Accept": "text/html"}, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/logowanie?dalej=")
    form = httpx.get(f"{guarded}{page.headers['location']}")
    assert form.status_code == 200 and 'name="dalej"' in form.text
    wrong = httpx.post(f"{guarded}/logowanie", data={"token": "zly", "dalej": shared}, follow_redirects=False)
    assert wrong.status_code == 401 and 'name="dalej"' in wrong.text  # a typo does not lose it either
    good = httpx.post(f"{guarded}/logowanie", data={"token": "tajny-token", "dalej": shared}, follow_redirects=False)
    assert good.status_code == 303 and good.headers["location"] == shared
    for elsewhere in ("//evil.example/", "https://evil.example/", "/\\evil.example", "/api/pliki", "/?q=\r\nX: y"):
        sent = httpx.post(f"{guarded}/logowanie", data={"token": "tajny-token", "dalej": elsewhere},
                          follow_redirects=False)
        assert sent.status_code == 303 and sent.headers["location"] in ("/", "/?q=%0D%0AX%3A+y"), elsewhere


def test_serwuj_refuses_network_host_without_token(
    two_acts_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHROMA_RAG_TOKEN", raising=False)
    code, _, err = run_cli(capsys, "serwuj", "--host", "0.0.0.0", "--baza", two_acts_db)
    assert code == 2  # a missing option the host requires: a usage error
    assert "--token" in err and "CHROMA_RAG_TOKEN" in err and "Traceback" not in err


def test_serwuj_uses_token_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from chroma_rag.serving.security import resolve_token

    monkeypatch.setenv("CHROMA_RAG_TOKEN", "z-otoczenia")
    assert resolve_token("0.0.0.0", None) == "z-otoczenia"
    assert resolve_token("0.0.0.0", "z-opcji") == "z-opcji"
    monkeypatch.delenv("CHROMA_RAG_TOKEN")
    assert resolve_token("127.0.0.1", None) is None


def test_serwuj_refuses_missing_db_and_busy_port(
    two_acts_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "serwuj", "--baza", tmp_path / "nie-ma", "--port", "8091")
    assert code == 1 and "jeszcze nie istnieje" in err
    code, _, err = run_cli(capsys, "mcp", "--baza", tmp_path / "nie-ma")
    assert code == 1 and "jeszcze nie istnieje" in err
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run_cli(capsys, "serwuj", "--baza", two_acts_db, "--port", str(port))
    assert code == 1 and "port jest zajęty" in err and "Address" not in err


def test_slow_request_gets_503_not_a_hang(two_acts_db: Path) -> None:
    with running_server(two_acts_db, limits=LimitSettings(request_seconds=0.0)) as url:
        response = get(url, "/api/szukaj", q="dane osobowe")
    assert response.status_code == 503
    assert "dłużej niż" in response.json()["blad"]


def test_too_many_requests_at_once_get_a_polish_503(two_acts_db: Path) -> None:
    import threading

    from chroma_rag.storage.locking import DbLock

    # a slow MCP call holds the one place (questions have their own pool: test_pytania_pula.py)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "szukaj", "arguments": {
        "pytanie": "dane osobowe"}}}
    with running_server(two_acts_db, limits=LimitSettings(requests=1, request_seconds=600.0)) as base:
        with DbLock(two_acts_db, 10).writing(None, "indeksuj"):  # the search waits for the lock, holding its place
            def hold_the_place() -> None:  # until it gets in: a probe below may have the place for a moment
                while httpx.post(f"{base}/mcp", json=call, headers={"Accept": "application/json, text/event-stream"},
                                 timeout=60).status_code == 503:
                    time.sleep(0.05)

            slow = threading.Thread(target=hold_the_place)
            slow.start()
            for _ in range(1200):  # hang guard: until the held call has the place (/api/stan never waits for the base)
                if get(base, "/api/stan").status_code == 503:
                    break
                time.sleep(0.05)
            busy = get(base, "/api/szukaj", q="dane osobowe")
        slow.join()
        assert busy.status_code == 503
        assert "za dużo zapytań naraz" in busy.json()["blad"]
        assert get(base, "/api/szukaj", q="dane osobowe").status_code == 200


def test_slow_planning_holds_up_no_other_search(base: str, fake_llm: FakeLlm) -> None:
    """Pytanie modelu czatu o plan idzie bez blokady indeksu: zwykłe wyszukiwanie nie czeka na wolny model."""
    import threading

    held = Hold()
    fake_llm.default = Reply(text=ANSWER, hold=held)
    question = f"dane osobowe pacjenta {time.monotonic_ns()}"  # never in the plan cache
    earlier = len(fake_llm.requests)
    slow = threading.Thread(target=lambda: httpx.post(f"{base}/api/pytaj", json={"pytanie": question}, timeout=60))
    try:
        slow.start()
        assert held.arrived.wait(HOLD_LIMIT)  # the question now waits for its plan, and keeps waiting
        # the model answers only after this search has: a search waiting for the plan would end in the 503 of
        # the time limit
        plain = get(base, "/api/szukaj", q="dane osobowe", tryb="slowa")
        planning = [request.body["messages"][0]["content"] for request in fake_llm.requests[earlier:]]
    finally:
        held.release.set()
        slow.join()
        fake_llm.default = Reply(text=ANSWER)
    assert plain.status_code == 200, plain.text
    assert len(planning) == 1 and '"zapytania"' in planning[0]  # what the model held back was the plan


def test_time_limit_answers_while_the_search_still_waits(two_acts_db: Path) -> None:
    """Wyszukiwanie czekające na blokadę bazy (np. trwa indeksowanie) dostaje 503 po limicie, nie po blokadzie."""
    from chroma_rag.storage.locking import DbLock

    with running_server(two_acts_db, limits=LimitSettings(request_seconds=1.0)) as base:
        with DbLock(two_acts_db, 10).writing(None, "indeksuj"):
            # the lock is released only after the answer came: the answer cannot be the lock's release
            response = get(base, "/api/szukaj", q="dane osobowe")
        assert response.status_code == 503 and "dłużej niż" in response.json()["blad"]
        assert get(base, "/api/szukaj", q="dane osobowe").status_code == 200


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        ({"Content-Type": "text/plain"}, 415, "Content-Type: application/json"),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "z innej strony"),
    ],
)
def test_pytaj_refuses_what_a_foreign_page_can_send(
    base: str, fake_llm: FakeLlm, headers: dict, status: int, message: str
) -> None:
    """CSRF: formularz ``text/plain`` i ``fetch`` z obcej strony nie każą serwerowi pytać modelu czatu."""
    asked = len(fake_llm.requests)
    response = httpx.post(f"{base}/api/pytaj", content=b'{"pytanie": "urlop"}', headers=headers, timeout=60)
    assert response.status_code == status and message in response.json()["blad"]
    assert len(fake_llm.requests) == asked


def test_pytaj_from_the_servers_own_page_is_allowed(base: str) -> None:
    headers = {"Origin": base, "Accept": "application/json"}
    response = httpx.post(f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"}, headers=headers, timeout=60)
    assert response.status_code == 200, response.text


def test_login_from_another_port_of_loopback_is_refused(guarded: str) -> None:
    """Inny port 127.0.0.1 to dla przeglądarki ta sama witryna (ciasteczko SameSite jedzie), ale inne pochodzenie."""
    other = guarded.rsplit(":", 1)[0] + ":1"
    response = httpx.post(f"{guarded}/logowanie", data={"token": "tajny-token"}, headers={"Origin": other}, timeout=60)
    assert response.status_code == 403 and "z innej strony" in response.json()["blad"]


# --- issue 21: każda powierzchnia mówi swoim językiem, kody HTTP według rodzaju błędu -----------------------------


def test_filters_matching_nothing_are_said_in_the_pages_words(base: str) -> None:
    body = {"pytanie": "prawo do informacji", "plik": [PATIENTS], "art": ["9999"]}
    plain = httpx.post(f"{base}/api/pytaj", json=body, headers={"Accept": "application/json"}, timeout=60)
    assert plain.status_code == 200 and plain.json()["powod"] == "filtry"
    streamed = httpx.post(f"{base}/api/pytaj", json=body, timeout=60).text
    for said in (plain.json()["odpowiedz"], *(data.get("tekst", "") for _, data in events(streamed))):
        assert "--" not in said and "chroma-rag" not in said, said
    assert "filtr" in plain.json()["odpowiedz"]


def test_unknown_file_is_404_and_an_ambiguous_one_409_on_every_endpoint(base: str, same_named_db: Path) -> None:
    assert get(base, "/api/szukaj", q="urlop", plik="nie.pdf").status_code == 404
    assert get(base, "/api/jednostka", plik="nie.pdf", art="1").status_code == 404
    asked = httpx.post(f"{base}/api/pytaj", json={"pytanie": "urlop", "plik": "nie.pdf"},
                       headers={"Accept": "application/json"}, timeout=60)
    assert asked.status_code == 404 and "nie ma pliku „nie.pdf”" in asked.json()["blad"]
    with running_server(same_named_db) as url:
        ambiguous = get(url, "/api/jednostka", plik="regulamin.md", art="1")
        assert ambiguous.status_code == 409 and "kilku różnych plików" in ambiguous.json()["blad"]
        assert "chroma-rag" not in ambiguous.json()["blad"]
        assert get(url, "/api/jednostka", plik="it/regulamin.md", art="1").status_code == 200


def test_no_chat_model_is_503_in_a_short_sentence_without_administrator_steps(
    base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("URL", "MODEL", "KEY"):
        monkeypatch.delenv(f"CHROMA_RAG_LLM_{name}", raising=False)
    monkeypatch.setenv("CHROMA_RAG_LLM_URL", "https://openrouter.ai/api/v1")
    response = httpx.post(f"{base}/api/pytaj", json={"pytanie": "prawo do informacji"},
                          headers={"Accept": "application/json"}, timeout=60)
    said = response.json()["blad"]
    assert response.status_code == 503, response.text
    assert "CHROMA_RAG" not in said and ".env" not in said and "http" not in said and len(said) < 200, said


def test_markdown_heading_is_the_title_without_its_hashes(same_named_db: Path) -> None:
    from chroma_rag.ingest.metadata import detect_title

    assert detect_title("## Regulamin pracy\n\nArt. 1. Tekst.") == "Regulamin pracy"
    with running_server(same_named_db) as url:
        hits = get(url, "/api/szukaj", q="urlop", k=2).json()["wyniki"]
        assert hits and {hit["tytul"] for hit in hits} == {"Regulamin"}, hits


def test_logout_clears_the_cookie_and_refuses_a_foreign_page(guarded: str) -> None:
    assert httpx.get(f"{guarded}/api/stan", headers={"Authorization": "Bearer tajny-token"}).json()["token"] is True
    with httpx.Client(base_url=guarded, timeout=60) as browser:
        browser.post("/logowanie", data={"token": "tajny-token"})
        assert browser.get("/api/pliki").status_code == 200
        foreign = browser.post("/wylogowanie", json={}, headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403 and browser.get("/api/pliki").status_code == 200
        form = browser.post("/wylogowanie", data={"x": "1"})
        assert form.status_code == 415
        out = browser.post("/wylogowanie", json={})
        assert out.status_code == 200 and out.json() == {"wylogowano": True}
        assert "chroma_rag_sesja" in out.headers.get("set-cookie", "") and "Max-Age=0" in out.headers["set-cookie"]
        assert browser.get("/api/pliki").status_code == 401  # the client dropped the expired cookie


def test_stan_says_no_token_without_one(base: str) -> None:
    assert get(base, "/api/stan").json() == {"obserwowanie": None, "token": False, "uzytkownik": None}
