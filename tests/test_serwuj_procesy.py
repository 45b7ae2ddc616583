"""`chroma-rag serwuj --procesy N` (issue 23, czytelnicy): kilka prawdziwych procesów roboczych za jednym
adresem – wspólne logowanie, zapytania rozłożone na procesy, czyste Ctrl-C całej grupy procesów."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import free_port
from processes import REPO, cli, env

from chroma_rag import Index
from chroma_rag.serving.accounts import ACCOUNTS_FILE, Accounts

TOKEN = "tajny-token-procesow"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("procesy")
    rules = root / "regulamin.md"
    rules.write_text("# Regulamin pracy\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n\n"
                     "Art. 2. Pracodawca wypłaca wynagrodzenie do dziesiątego dnia miesiąca.\n", encoding="utf-8")
    Index(root / "db").add([rules])
    return root / "db"


def workers_of(pid: int) -> list[int]:
    """Procesy robocze uvicorn (spawn) serwera ``pid``; bez procesu pilnującego zasobów multiprocessing."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return [c for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.fixture
def server(db: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN, encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(cli("serwuj", "--baza", db, "--port", port, "--token-plik", token_file,
                                   "--procesy", "2", "--uzytkownicy", tmp_path / ACCOUNTS_FILE),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), cwd=REPO,
                               start_new_session=True)  # its own process group, as in a terminal
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while len(workers_of(process.pid)) < 2 or not _answers(base):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "serwuj nie wystartował w 120 s"
            time.sleep(0.2)
        yield process, base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/stan", timeout=5).status_code == 401  # up, and asks for the token
    except httpx.TransportError:
        return False


def test_a_login_from_one_worker_is_valid_in_every_worker(server: tuple[subprocess.Popen[str], str]) -> None:
    process, base = server
    login = httpx.post(f"{base}/logowanie", data={"token": TOKEN}, headers={"Origin": base})
    assert login.status_code == 303, login.text
    cookies = dict(login.cookies)
    workers = workers_of(process.pid)
    before = {pid: cpu_ticks(pid) for pid in workers}
    statuses = []
    for _ in range(30):  # a new connection each time: the kernel hands it to whichever worker accepts first
        with httpx.Client(cookies=cookies, timeout=60) as client:
            statuses.append(client.get(f"{base}/api/szukaj", params={"q": "urlop wypoczynkowy", "k": 2}).status_code)
    assert statuses == [200] * 30
    assert all(cpu_ticks(pid) > before[pid] for pid in workers), "zapytania obsłużył tylko jeden proces"


def _statuses(base: str, cookies: dict[str, str], times: int = 20) -> set[int]:
    """Kody ``/api/pliki`` z ciasteczkiem ``cookies`` po ``times`` nowych połączeniach (każde trafia do procesu,
    który pierwszy je przyjmie)."""
    found = set()
    for _ in range(times):
        with httpx.Client(cookies=cookies, timeout=60) as client:
            found.add(client.get(f"{base}/api/pliki").status_code)
    return found


def test_a_logout_or_a_removed_user_ends_the_session_in_every_worker(
    server: tuple[subprocess.Popen[str], str], tmp_path: Path,
) -> None:
    _, base = server
    login = httpx.post(f"{base}/logowanie", data={"token": TOKEN}, headers={"Origin": base})
    copied = dict(login.cookies)
    assert _statuses(base, copied) == {200}
    out = httpx.post(f"{base}/wylogowanie", json={}, cookies=copied, headers={"Origin": base})
    assert out.status_code == 200, out.text
    assert _statuses(base, copied) == {401}

    accounts = Accounts(tmp_path / ACCOUNTS_FILE)  # the admin, in another terminal, while the server runs
    login = httpx.post(f"{base}/logowanie", data={"token": accounts.add("anna")}, headers={"Origin": base})
    assert login.status_code == 303 and _statuses(base, dict(login.cookies)) == {200}
    accounts.remove("anna")
    assert _statuses(base, dict(login.cookies)) == {401}


def test_ctrl_c_stops_every_worker_without_a_traceback(server: tuple[subprocess.Popen[str], str]) -> None:
    process, _ = server
    workers = workers_of(process.pid)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "procesów: 2" in err and "Traceback" not in err
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]


def test_wrong_tokens_are_limited_for_the_whole_server_not_per_worker(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    from chroma_rag.serving.security import MAX_FAILURES

    _, base = server
    statuses = []
    for n in range(3 * MAX_FAILURES):  # new connections: the guesses spread over both workers
        with httpx.Client(timeout=60) as client:
            statuses.append(client.get(f"{base}/api/pliki", headers={"Authorization": f"Bearer zly-{n}"}).status_code)
    assert set(statuses) == {401, 429}
    assert statuses.count(401) <= MAX_FAILURES, statuses


def test_workers_end_when_the_supervisor_is_killed(server: tuple[subprocess.Popen[str], str]) -> None:
    process, base = server
    workers = workers_of(process.pid)
    process.kill()  # kill -9: the supervisor cannot stop its workers itself
    process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while [pid for pid in workers if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if _alive(pid)], "procesy robocze działają dalej bez nadzorcy"
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/api/stan", timeout=5)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_killed_supervisor_leaves_no_folder_for_good(db: Path, tmp_path: Path) -> None:
    """Stan obserwowania idzie do procesów roboczych przez folder w katalogu tymczasowym: ``kill -9`` nadzorcy go
    zostawia, następny start go sprząta – folderów nie przybywa z każdym zabiciem."""
    temp, watched = tmp_path / "tmp", tmp_path / "folder"
    temp.mkdir()
    watched.mkdir()
    (watched / "zarzadzenie.md").write_text("# Zarządzenie\n\nArt. 1. Biuro jest czynne od ósmej.\n", encoding="utf-8")
    own_db = tmp_path / "db"
    shutil.copytree(db, own_db)

    def folders() -> list[Path]:
        return sorted(temp.glob("chroma-rag-serwuj-*"))

    def started() -> subprocess.Popen[str]:
        port = free_port()  # the workers of a killed supervisor may still hold the last one for a moment
        process = subprocess.Popen(cli("serwuj", "--baza", own_db, "--port", port, "--obserwuj", watched,
                                       "--procesy", "2"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   env=env(TMPDIR=str(temp)), cwd=REPO, start_new_session=True)
        deadline = time.monotonic() + 120
        while not _watching(f"http://127.0.0.1:{port}"):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "serwuj nie wystartował w 120 s"
            time.sleep(0.2)
        return process

    first = started()
    assert len(folders()) == 1
    first.kill()  # kill -9: no cleanup
    first.wait(timeout=30)
    assert len(folders()) == 1
    second = started()
    try:
        assert len(folders()) == 1  # the killed one's folder is gone, the new one's is there
    finally:
        os.killpg(second.pid, signal.SIGINT)
        second.communicate(timeout=60)
    assert folders() == []  # a clean stop removes its own


def _watching(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/stan", timeout=5).json()["obserwowanie"]["stan"] == "czeka"
    except (httpx.TransportError, ValueError, KeyError, TypeError):
        return False
