"""Issue 39: kilka baz w jednym serwerze (``serwuj --bazy NAZWA=FOLDER``) i użytkownik, który widzi tylko swoje.

Użytkownik bez dostępu do bazy próbuje każdej ścieżki (strona, API, dokumenty, rozmowy, MCP) – o bazie, której nie
może czytać, słyszy dokładnie to samo co o nieistniejącej."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import run_cli
from serving_support import chat_model, index_bases, running_app

from chroma_rag import Index
from chroma_rag.serving.accounts import ACCOUNTS_FILE, Accounts
from chroma_rag.serving.app import build_bases_app
from chroma_rag.serving.audit import AuditLog
from chroma_rag.serving.security import page_address
from chroma_rag.serving.shared_index import SharedIndex

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def two_bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Dwie bazy działów kancelarii: spory (regulamin sądowy) i umowy (umowa najmu)."""
    return index_bases(tmp_path_factory.mktemp("bazy"), {
        "spory": ("pozew-wzor.md", "# Wzór pozwu\n\nArt. 1. Pozew o zapłatę wnosi się do sądu rejonowego.\n"),
        "umowy": ("najem-klient.md", "# Umowa najmu lokalu\n\nArt. 1. Czynsz najmu wynosi 5000 zł miesięcznie.\n"),
    })


@pytest.fixture
def firm(two_bases: dict[str, Path], tmp_path: Path) -> Iterator[tuple[str, dict[str, dict[str, str]], Path]]:
    """Serwer obu baz; anna (tylko spory), jan (wszystkie); adres, nagłówki użytkowników i dziennik."""
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    users = {name: {"Authorization": f"Bearer {accounts.add(name, bases)}"}
             for name, bases in (("anna", ["spory"]), ("jan", None))}
    log = tmp_path / "dziennik.jsonl"
    app = build_bases_app({name: SharedIndex(folder) for name, folder in two_bases.items()}, accounts=accounts,
                          audit=AuditLog(log))
    with running_app(app) as base:
        yield base, users, log


def test_each_base_answers_from_its_own_documents_only(firm) -> None:
    base, users, _ = firm
    jan = users["jan"]
    assert httpx.get(f"{base}/api/bazy", headers=jan, timeout=30).json() == [{"nazwa": "spory"}, {"nazwa": "umowy"}]
    for name, file in (("spory", "pozew-wzor.md"), ("umowy", "najem-klient.md")):
        files = httpx.get(f"{base}/b/{name}/api/pliki", headers=jan, timeout=30).json()
        assert [info["plik"] for info in files] == [file]
        found = httpx.get(f"{base}/b/{name}/api/szukaj", params={"q": "czynsz najmu pozew"}, headers=jan,
                          timeout=60).json()
        assert {hit["plik"] for hit in found["wyniki"]} <= {file}
    page = httpx.get(f"{base}/", headers={**jan, "Accept": "text/html"}, timeout=30)
    assert page.status_code == 200 and 'href="/b/spory/"' in page.text and 'href="/b/umowy/"' in page.text


def test_a_base_the_user_may_not_read_does_not_exist_for_them(firm) -> None:
    base, users, log = firm
    anna = users["anna"]
    assert httpx.get(f"{base}/api/bazy", headers=anna, timeout=30).json() == [{"nazwa": "spory"}]
    assert httpx.get(f"{base}/b/spory/api/pliki", headers=anna, timeout=30).status_code == 200
    home = httpx.get(f"{base}/?q=pozew", headers={**anna, "Accept": "text/html"}, timeout=30)
    assert home.status_code == 303 and home.headers["location"] == "/b/spory/?q=pozew"  # nothing to choose
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lista_plikow", "arguments": {}}}
    attempts = [
        ("GET", "/", {}), ("GET", "/api/pliki", {}), ("GET", "/api/stan", {}), ("GET", "/api/szukaj?q=czynsz", {}),
        ("GET", "/api/jednostka?plik=najem-klient.md&art=1", {}), ("GET", "/dokumenty/najem-klient.md", {}),
        ("GET", "/api/rozmowy/" + "0" * 24, {}), ("DELETE", "/api/rozmowy/" + "0" * 24, {}),
        ("POST", "/api/pytaj", {"json": {"pytanie": "Ile wynosi czynsz?"}}), ("POST", "/mcp", {"json": call}),
    ]
    for method, path, extra in attempts:
        answers = [httpx.request(method, f"{base}/b/{name}{path}", headers={**anna, **MCP_HEADERS}, timeout=30,
                                 **extra) for name in ("umowy", "nie-ma-takiej")]
        forbidden, missing = answers
        assert forbidden.status_code == missing.status_code == 404, (path, forbidden.text)
        assert forbidden.text == missing.text and "umowy" not in forbidden.text and "najem" not in forbidden.text
    assert "umowy" not in httpx.get(f"{base}/", headers={**anna, "Accept": "text/html"}, timeout=30,
                                    follow_redirects=True).text
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    attempt = next(line for line in lines if line["sciezka"] == "/b/umowy/api/pliki")  # who tried, and where
    assert attempt["uzytkownik"] == "anna" and attempt["baza"] == "umowy" and attempt["status"] == 404


def test_mcp_of_a_base_searches_that_base(firm) -> None:
    base, users, _ = firm
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lista_plikow", "arguments": {}}}
    response = httpx.post(f"{base}/b/umowy/mcp", json=call, headers={**users["jan"], **MCP_HEADERS}, timeout=60)
    assert response.status_code == 200 and "najem-klient.md" in response.text and "pozew" not in response.text


def test_questions_and_conversations_stay_in_their_base(firm) -> None:
    base, users, _ = firm
    jan = {**users["jan"], "Accept": "application/json"}
    with chat_model("Czynsz wynosi 5000 zł [najem-klient.md, art. 1]."):
        asked = httpx.post(f"{base}/b/umowy/api/pytaj", json={"pytanie": "Ile wynosi czynsz?"}, headers=jan,
                           timeout=60)
    assert asked.status_code == 200 and {hit["plik"] for hit in asked.json()["fragmenty"]} == {"najem-klient.md"}
    conversation = asked.json()["rozmowa"]
    assert httpx.get(f"{base}/b/umowy/api/rozmowy/{conversation}", headers=jan, timeout=30).status_code == 200
    assert httpx.get(f"{base}/b/spory/api/rozmowy/{conversation}", headers=jan, timeout=30).status_code == 404


def test_login_comes_back_to_the_base_page() -> None:
    assert page_address("/b/spory/?q=pozew") == "/b/spory/?q=pozew"
    assert page_address("/b/spory/") == "/b/spory/"
    for elsewhere in ("//evil.example/", "/b/spory/api/pliki", "/b/../etc/", "https://evil.example/"):
        assert page_address(elsewhere) == "/"


def test_bases_option_is_checked(capsys: pytest.CaptureFixture[str], two_bases: dict[str, Path],
                                 tmp_path: Path) -> None:
    for given, said in (("spory", "NAZWA=FOLDER"), ("zła nazwa=/x", "niedozwolona"),
                        (f"spory={tmp_path / 'nie-ma'}", "nie-ma")):
        code, _, err = run_cli(capsys, "serwuj", "--bazy", given)
        assert code != 0 and said in err and "Traceback" not in err, err
    code, _, err = run_cli(capsys, "serwuj", "--bazy", f"a={two_bases['spory']}", "--bazy", f"a={two_bases['umowy']}")
    assert code == 2 and "powtarza się" in err
    code, _, err = run_cli(capsys, "serwuj", "--bazy", f"a={two_bases['spory']}", "--baza", two_bases["umowy"])
    assert code == 2 and "zastępuje --baza" in err


def test_a_user_limited_to_some_bases_is_listed_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    accounts = tmp_path / "uzytkownicy.json"
    code, _, _ = run_cli(capsys, "uzytkownicy", "dodaj", "anna", "--tylko", "spory", "--uzytkownicy", accounts)
    assert code == 0 and Accounts(accounts).named("anna").bases == ("spory",)
    code, listed, _ = run_cli(capsys, "uzytkownicy", "lista", "--json", "--uzytkownicy", accounts)
    assert code == 0 and json.loads(listed) == [{"nazwa": "anna", "dodano": json.loads(listed)[0]["dodano"],
                                                 "bazy": ["spory"]}]
    code, _, err = run_cli(capsys, "uzytkownicy", "dodaj", "jan", "--tylko", "../x", "--uzytkownicy", accounts)
    assert code == 2 and "Nazwa bazy" in err


@pytest.mark.parametrize("processes", ["1", "2"])
def test_serwuj_serves_several_bases_from_the_command_line(two_bases: dict[str, Path], tmp_path: Path,
                                                           processes: str) -> None:
    from processes import start
    from test_serwuj_bezpieczenstwo import free_port

    accounts = tmp_path / "uzytkownicy.json"
    token = Accounts(accounts).add("anna", ["umowy"])
    port = free_port()
    server = start("serwuj", "--port", port, "--procesy", processes, "--uzytkownicy", accounts,
                   *[arg for name, folder in two_bases.items() for arg in ("--bazy", f"{name}={folder}")])
    try:
        base, anna = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
        for _ in range(600):  # a hang guard: the workers load the model first
            try:
                listed = httpx.get(f"{base}/api/bazy", headers=anna, timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.communicate()
                time.sleep(0.1)
        assert listed.json() == [{"nazwa": "umowy"}]
        files = httpx.get(f"{base}/b/umowy/api/pliki", headers=anna, timeout=30).json()
        assert [info["plik"] for info in files] == ["najem-klient.md"]
        assert httpx.get(f"{base}/b/spory/api/pliki", headers=anna, timeout=30).status_code == 404
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_watched_folders_are_given_per_base(capsys: pytest.CaptureFixture[str], two_bases: dict[str, Path],
                                            tmp_path: Path) -> None:
    bases = [arg for name, folder in two_bases.items() for arg in ("--bazy", f"{name}={folder}")]
    for watched, said in ((str(tmp_path), "--obserwuj NAZWA=FOLDER"), (f"inna={tmp_path}", "nie ma bazy „inna”"),
                          (f"spory={tmp_path / 'nie-ma'}", "nie są foldery")):
        code, _, err = run_cli(capsys, "serwuj", *bases, "--obserwuj", watched)
        assert code == 2 and said in err and "Traceback" not in err, err


def test_two_bases_on_one_chroma_server_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "serwuj", "--bazy", "a=http://127.0.0.1:9", "--bazy", "b=http://127.0.0.1:9/")
    assert code == 2 and "ten sam serwer Chromy" in err and "Traceback" not in err, err


def test_a_base_watches_its_own_folders_next_to_a_base_on_a_chroma_server(
    two_bases: dict[str, Path], tmp_path: Path, chroma_servers,
) -> None:
    from processes import start
    from test_serwuj_bezpieczenstwo import free_port

    remote = chroma_servers.start(tmp_path / "dane")
    (tmp_path / "zdalne").mkdir()
    (tmp_path / "zdalne" / "ugoda.md").write_text("# Ugoda\n\nArt. 1. Strony zawierają ugodę.\n", encoding="utf-8")
    Index(server=remote).add([tmp_path / "zdalne" / "ugoda.md"])
    watched = tmp_path / "nowe-sprawy"
    watched.mkdir()
    (watched / "wezwanie.md").write_text("# Wezwanie\n\nArt. 1. Wzywam do zapłaty.\n", encoding="utf-8")
    port = free_port()
    server = start("serwuj", "--port", port, "--procesy", "2", "--bazy", f"umowy={two_bases['umowy']}",
                   "--bazy", f"nowe={tmp_path / 'nowe-db'}", "--bazy", f"zdalna={remote}",
                   "--obserwuj", f"nowe={watched}")
    base = f"http://127.0.0.1:{port}"

    def files(name: str) -> list[str]:
        return sorted(info["plik"] for info in httpx.get(f"{base}/b/{name}/api/pliki", timeout=30).json())

    try:
        for _ in range(1200):  # a hang guard: the first indexing of the watched folder, then the workers' model
            try:
                httpx.get(f"{base}/api/bazy", timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.communicate()
                time.sleep(0.1)
        assert files("nowe") == ["wezwanie.md"] and files("zdalna") == ["ugoda.md"]
        assert files("umowy") == ["najem-klient.md"]
        state = httpx.get(f"{base}/b/nowe/api/stan", timeout=30).json()["obserwowanie"]
        assert state["foldery"] == [watched.name]  # the folder's name: the server's paths are not the team's business
        for other in ("umowy", "zdalna"):
            assert httpx.get(f"{base}/b/{other}/api/stan", timeout=30).json()["obserwowanie"] is None
        (watched / "pozew.md").write_text("# Pozew\n\nArt. 1. Wnoszę pozew o zapłatę.\n", encoding="utf-8")
        for _ in range(1200):  # a hang guard: the watcher settles the file, then indexes it
            if files("nowe") == ["pozew.md", "wezwanie.md"]:
                break
            time.sleep(0.1)
        assert files("nowe") == ["pozew.md", "wezwanie.md"] and files("umowy") == ["najem-klient.md"]
    finally:
        server.terminate()
        server.wait(timeout=30)
