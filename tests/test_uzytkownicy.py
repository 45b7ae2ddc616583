"""Issue 39: osobiste tokeny (``chroma-rag uzytkownicy``) i dziennik zapytań (``serwuj --dziennik``).

Prawdziwy serwer na pętli zwrotnej, prawdziwe zapytania HTTP; lista użytkowników zmieniana w trakcie pracy serwera,
tak jak zrobi to administrator poleceniem w drugim terminalu."""

from __future__ import annotations

import json
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import run_cli
from serving_support import chat_model, running_server

from chroma_rag import Index
from chroma_rag.errors import UsageError
from chroma_rag.serving.accounts import ACCOUNTS_FILE, Accounts
from chroma_rag.serving.audit import AuditLog
from chroma_rag.serving.security import COOKIE, resolve_token
from chroma_rag.serving.sessions import ENDED_SESSIONS_FILE

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def own_db(tmp_path: Path) -> Path:
    """Świeża baza z jednym artykułem: polecenia ``uzytkownicy`` piszą do jej folderu."""
    doc = tmp_path / "regulamin.md"
    doc.write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n", encoding="utf-8")
    Index(tmp_path / "db").add([doc])
    return tmp_path / "db"


def test_users_are_added_listed_and_removed_by_the_cli(capsys: pytest.CaptureFixture[str], own_db: Path) -> None:
    code, token, said = run_cli(capsys, "uzytkownicy", "dodaj", "anna.nowak", "--baza", own_db)
    token = token.strip()
    assert code == 0 and len(token) >= 40 and "nie da się go później odczytać" in said
    stored = own_db / ACCOUNTS_FILE
    assert token not in stored.read_text(encoding="utf-8")  # only its digest
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert Accounts(stored).who(token).name == "anna.nowak"

    code, listed, _ = run_cli(capsys, "uzytkownicy", "lista", "--json", "--baza", own_db)
    assert code == 0 and [row["nazwa"] for row in json.loads(listed)] == ["anna.nowak"]
    assert token not in listed

    code, _, said = run_cli(capsys, "uzytkownicy", "dodaj", "anna.nowak", "--baza", own_db)
    assert code == 2 and "już jest" in said and "Traceback" not in said
    code, _, said = run_cli(capsys, "uzytkownicy", "dodaj", "anna nowak", "--baza", own_db)
    assert code == 2 and "niedozwolona" in said
    code, _, said = run_cli(capsys, "uzytkownicy", "usun", "jan", "--baza", own_db)
    assert code == 2 and "Nie ma użytkownika „jan”" in said and "anna.nowak" in said

    code, _, _ = run_cli(capsys, "uzytkownicy", "usun", "anna.nowak", "--baza", own_db)
    assert code == 0 and Accounts(stored).who(token) is None
    code, _, said = run_cli(capsys, "uzytkownicy", "lista", "--baza", own_db)
    assert code == 0 and "Nie ma użytkowników" in said


def test_users_need_an_existing_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, said = run_cli(capsys, "uzytkownicy", "dodaj", "anna", "--baza", tmp_path / "nie-ma")
    assert code != 0 and "Traceback" not in said and not (tmp_path / "nie-ma").exists()


def test_a_user_added_or_removed_while_the_server_runs_needs_no_restart(one_article_db: Path,
                                                                        tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    with running_server(one_article_db, accounts=accounts) as base:
        # loopback without users: as simple as without any access control
        assert httpx.get(f"{base}/api/pliki", timeout=30).status_code == 200
        token = accounts.add("anna")
        assert httpx.get(f"{base}/api/pliki", timeout=30).status_code == 401
        bearer = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{base}/api/pliki", headers=bearer, timeout=30).status_code == 200
        assert httpx.get(f"{base}/api/pliki", headers={"Authorization": "Bearer zly"}, timeout=30).status_code == 401

        login = httpx.post(f"{base}/logowanie", data={"token": token}, timeout=30)
        assert login.status_code == 303
        cookie = {COOKIE: login.cookies[COOKIE]}
        state = httpx.get(f"{base}/api/stan", cookies=cookie, timeout=30).json()
        assert state["token"] is True and state["uzytkownik"] == "anna"

        accounts.remove("anna")
        for refused in (httpx.get(f"{base}/api/pliki", headers=bearer, timeout=30),
                        httpx.get(f"{base}/api/pliki", cookies=cookie, timeout=30)):
            assert refused.status_code == 401 and "Brak ważnego tokenu" in refused.json()["blad"]
        # a new token for the same name: the old session stays ended
        accounts.add("anna")
        assert httpx.get(f"{base}/api/pliki", cookies=cookie, timeout=30).status_code == 401


def test_personal_tokens_and_the_shared_token_work_side_by_side(one_article_db: Path, tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    token = accounts.add("jan")
    with running_server(one_article_db, token="wspolny-token", accounts=accounts) as base:
        for given in (token, "wspolny-token"):
            response = httpx.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer {given}"}, timeout=30)
            assert response.status_code == 200
        login = httpx.post(f"{base}/logowanie", data={"token": "wspolny-token"}, timeout=30)
        state = httpx.get(f"{base}/api/stan", cookies={COOKIE: login.cookies[COOKIE]}, timeout=30).json()
        assert state["token"] is True and state["uzytkownik"] is None
        # a shared-token session is not a user's, and a user's cookie cannot be made from another user's name
        forged = login.cookies[COOKIE].replace("..", ".jan.")
        assert httpx.get(f"{base}/api/pliki", cookies={COOKIE: forged}, timeout=30).status_code == 401


def test_off_loopback_users_are_enough_and_nothing_is_not(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    with pytest.raises(UsageError, match="uzytkownicy dodaj"):
        resolve_token("0.0.0.0", None, None, accounts)
    accounts.add("anna")
    assert resolve_token("0.0.0.0", None, None, accounts) is None


def test_a_broken_user_list_is_one_polish_sentence_for_the_team(one_article_db: Path, tmp_path: Path) -> None:
    path = tmp_path / ACCOUNTS_FILE
    path.write_text("{nie json", encoding="utf-8")
    with running_server(one_article_db, accounts=Accounts(path)) as base:
        response = httpx.get(f"{base}/api/pliki", headers={"Authorization": "Bearer x"}, timeout=30)
    assert response.status_code == 500
    said = response.json()["blad"]
    assert "osobie, która prowadzi ten serwer" in said and str(tmp_path) not in said


def test_the_audit_log_says_who_asked_what(one_article_db: Path, tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    bearer = {"Authorization": f"Bearer {accounts.add('anna')}"}
    log = tmp_path / "dziennik.jsonl"
    with chat_model("Urlop przysługuje [regulamin.md, art. 1]."), \
            running_server(one_article_db, accounts=accounts, audit=AuditLog(log)) as base:
        httpx.get(f"{base}/api/stan", headers=bearer, timeout=30)  # the page's polling: not a question
        httpx.get(f"{base}/api/szukaj", params={"q": "urlop wypoczynkowy", "k": "3"}, headers=bearer, timeout=60)
        httpx.get(f"{base}/api/pliki", headers={"Authorization": "Bearer zly"}, timeout=30)
        asked = httpx.post(f"{base}/api/pytaj", json={"pytanie": "Ile urlopu?"}, timeout=60,
                           headers={**bearer, "Accept": "application/json"})
        assert asked.status_code == 200
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "szukaj", "arguments": {"pytanie": "urlop"}}}
        httpx.post(f"{base}/mcp", json=call, headers={**bearer, **MCP_HEADERS}, timeout=60)
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    refused = lines.pop(1)  # the wrong token: a failed login, by nobody known
    assert (refused["sciezka"], refused["status"], refused["uzytkownik"]) == ("/api/pliki", 401, "(nieznany)")
    assert [line["sciezka"] for line in lines] == ["/api/szukaj", "/api/pytaj", "/mcp"]
    assert all(line["uzytkownik"] == "anna" and line["adres"] == "127.0.0.1" for line in lines)
    search, ask, mcp = lines
    assert search["parametry"] == {"q": "urlop wypoczynkowy", "k": "3"} and search["status"] == 200
    assert ask["tresc"]["pytanie"] == "Ile urlopu?" and "odpowiedz" not in ask
    assert mcp["mcp"]["narzedzie"] == "szukaj" and mcp["mcp"]["argumenty"] == {"pytanie": "urlop"}
    assert "czas" in search and stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream"])
def test_the_audit_log_keeps_answers_only_when_asked_to(one_article_db: Path, tmp_path: Path, accept: str) -> None:
    log = tmp_path / "dziennik.jsonl"
    answer = "Urlop przysługuje [regulamin.md, art. 1]."
    # a question well above the "nothing relevant" threshold: "Ile urlopu?" sits on it (0.8299 against 0.83 on an AMD
    # EPYC, above it on a Xeon), and below it the answer is the refusal, never the chat model's
    question = "Czy pracownik ma prawo do urlopu wypoczynkowego?"
    with chat_model(answer), running_server(one_article_db, audit=AuditLog(log, answers=True)) as base:
        response = httpx.post(f"{base}/api/pytaj", json={"pytanie": question}, headers={"Accept": accept},
                              timeout=60)
        assert response.status_code == 200
    (line,) = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert line["odpowiedz"] == answer and line["uzytkownik"] == "(bez logowania)"


@dataclass(frozen=True)
class CountedLog(AuditLog):
    """Dziennik, który daje znać o każdej zapisanej linii: serwer pisze ją po wysłaniu odpowiedzi, więc klient
    może ją dostać, zanim linia jest w pliku."""

    lines: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))

    def write(self, entry: dict[str, Any]) -> None:
        super().write(entry)
        self.lines.release()


def test_a_moved_audit_log_is_started_anew(one_article_db: Path, tmp_path: Path) -> None:
    log = tmp_path / "dziennik.jsonl"
    audit = CountedLog(log)
    with running_server(one_article_db, audit=audit) as base:
        httpx.get(f"{base}/api/pliki", timeout=30)
        assert audit.lines.acquire(timeout=60)
        log.rename(tmp_path / "dziennik.jsonl.1")  # what logrotate does
        httpx.get(f"{base}/api/pliki", timeout=30)
    assert len((tmp_path / "dziennik.jsonl.1").read_text(encoding="utf-8").splitlines()) == 1
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1


def test_audit_options_are_checked_before_the_server_starts(capsys: pytest.CaptureFixture[str],
                                                            one_article_db: Path, tmp_path: Path) -> None:
    code, _, said = run_cli(capsys, "serwuj", "--dziennik-odpowiedzi", "--baza", one_article_db)
    assert code == 2 and "--dziennik PLIK" in said
    code, _, said = run_cli(capsys, "serwuj", "--dziennik", tmp_path / "nie-ma" / "d.jsonl", "--baza",
                            one_article_db)
    assert code == 2 and "Nie da się pisać do dziennika" in said and "Traceback" not in said


def test_logout_ends_the_session_on_the_server(one_article_db: Path, tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    token = accounts.add("anna")
    with running_server(one_article_db, token="wspolny-token", accounts=accounts) as base:
        for given in (token, "wspolny-token"):
            with httpx.Client(base_url=base, timeout=30) as browser, httpx.Client(base_url=base, timeout=30) as other:
                browser.post("/logowanie", data={"token": given})
                other.post("/logowanie", data={"token": given})  # the same person in a second browser
                copied = {COOKIE: browser.cookies[COOKIE]}  # e.g. left in a shared computer's profile
                assert httpx.get(f"{base}/api/pliki", cookies=copied, timeout=30).status_code == 200
                assert browser.post("/wylogowanie", json={}).status_code == 200
                refused = httpx.get(f"{base}/api/pliki", cookies=copied, timeout=30)
                assert refused.status_code == 401 and "Brak ważnego tokenu" in refused.json()["blad"]
                assert other.get("/api/pliki").status_code == 200  # only the session that logged out ends


def test_a_logout_the_server_cannot_record_says_so_and_keeps_the_session(one_article_db: Path,
                                                                         tmp_path: Path) -> None:
    """Zakończenia sesji nie da się zapisać (zamiast pliku sesji jest folder – tak samo jak przy folderze bez prawa
    zapisu, ale działa też dla roota): jedno polskie zdanie zamiast „Nieoczekiwany błąd”, bez ścieżki serwera,
    a ciasteczko zostaje, bo sesja nadal jest ważna – przeglądarka nie udaje wylogowania."""
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    token = accounts.add("anna")
    (tmp_path / ENDED_SESSIONS_FILE).mkdir()
    with running_server(one_article_db, accounts=accounts) as base, httpx.Client(base_url=base, timeout=30) as browser:
        browser.post("/logowanie", data={"token": token})
        refused = browser.post("/wylogowanie", json={})
        assert refused.status_code == 503, refused.text
        said = refused.json()["blad"]
        assert "wylogowani" in said.lower() and str(tmp_path) not in said and "Nieoczekiwany" not in said
        assert "set-cookie" not in refused.headers
        assert browser.get("/api/pliki").status_code == 200


def test_failed_logins_are_in_the_audit_log_without_the_token(one_article_db: Path, tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    accounts.add("anna")
    log = tmp_path / "dziennik.jsonl"
    with running_server(one_article_db, accounts=accounts, audit=AuditLog(log)) as base:
        assert httpx.post(f"{base}/logowanie", data={"token": "zgadywany-token-1"}, timeout=30).status_code == 401
        bad = httpx.get(f"{base}/api/pliki", headers={"Authorization": "Bearer zgadywany-token-2"}, timeout=30)
        assert bad.status_code == 401
        assert httpx.get(f"{base}/logowanie", timeout=30).status_code == 200  # the form itself: nothing to audit
    text = log.read_text(encoding="utf-8")
    assert "zgadywany-token" not in text
    form, bearer = [json.loads(line) for line in text.splitlines()]
    assert (form["sciezka"], form["metoda"], form["status"]) == ("/logowanie", "POST", 401)
    assert (bearer["sciezka"], bearer["status"]) == ("/api/pliki", 401)
    assert form["uzytkownik"] == bearer["uzytkownik"] == "(nieznany)" and form["adres"] == "127.0.0.1"
