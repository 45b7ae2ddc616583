"""Wspólne zasoby testów: prawdziwe PDF-y z ../shared, prawdziwa Chroma na dysku, prawdziwy model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chroma_rag.cli.app import main

REPO = Path(__file__).resolve().parents[1]
USTAWY = REPO.parent / "shared" / "dane" / "ustawy"
SAMPLES = REPO / "dane"
PATIENTS = "prawa-pacjenta-DU-2009-417.pdf"
DATA_PROTECTION = "ochrona-danych-osobowych-DU-1997-883.pdf"


@pytest.fixture(scope="session", autouse=True)
def local_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Dane pochodne trybu serwera (indeks słów) w folderze testów, nie w ~/.cache użytkownika."""
    cache = tmp_path_factory.mktemp("cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("CHROMA_RAG_CACHE", str(cache))
    # The user's own ~/.config/chroma-rag/chroma-rag.toml must not change what the tests see.
    patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    yield cache
    patch.undo()


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Uruchamia CLI w tym procesie; zwraca (kod wyjścia, stdout, stderr)."""
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="session")
def ustawy() -> Path:
    if not USTAWY.is_dir():
        pytest.fail(f"Brak wspólnych PDF-ów w {USTAWY}")
    return USTAWY


@pytest.fixture(scope="session")
def two_acts_db(tmp_path_factory: pytest.TempPathFactory, ustawy: Path) -> Path:
    """Baza z dwiema małymi ustawami, zbudowana raz na sesję (embedding trwa kilkadziesiąt sekund)."""
    from chroma_rag import Index

    db = tmp_path_factory.mktemp("two-acts") / "db"
    Index(db).add([ustawy / PATIENTS, ustawy / DATA_PROTECTION])
    return db


@pytest.fixture()
def two_acts_copy(two_acts_db: Path, tmp_path: Path) -> Path:
    """Prywatna kopia bazy dla testów, które ją zmieniają."""
    copy = tmp_path / "db"
    shutil.copytree(two_acts_db, copy)
    return copy


@pytest.fixture(scope="session")
def samples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chroma_rag import Index

    db = tmp_path_factory.mktemp("samples") / "db"
    Index(db).add([SAMPLES])
    return db


@pytest.fixture(scope="session")
def one_article_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Indeks jednego krótkiego regulaminu (jeden artykuł) – dla testów serwera, w których treść nie gra roli, a
    budowa ma być szybka. Tylko do odczytu."""
    from chroma_rag import Index

    root = tmp_path_factory.mktemp("jeden-artykul")
    doc = root / "regulamin.md"
    doc.write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n", encoding="utf-8")
    Index(root / "db").add([doc])
    return root / "db"


@pytest.fixture(scope="session")
def same_named_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Baza z dwoma plikami „regulamin.md” (art. 1 i 2) z folderów kadry/ i it/: cytaty i pokaz muszą je rozróżnić."""
    from chroma_rag import Index

    root = same_named_folders(tmp_path_factory.mktemp("same-named"))
    Index(root / "db").add([root / "kadry", root / "it"])
    return root / "db"


def same_named_folders(root: Path) -> Path:
    """``root`` z dwoma plikami „regulamin.md” (art. 1 i 2) w folderach kadry/ i it/."""
    for folder, first, second in (
        ("kadry", "Urlop wypoczynkowy planuje kierownik działu.", "Wynagrodzenie wypłaca się dziesiątego."),
        ("it", "Urlop od pracy przy serwerach zgłasza się administratorowi.", "Hasło zmienia się co 90 dni."),
    ):
        (root / folder).mkdir()
        (root / folder / "regulamin.md").write_text(
            f"# Regulamin\n\nArt. 1. {first}\n\nArt. 2. {second}\n", encoding="utf-8"
        )
    return root


WINDOWS_FOLDER = "C:\\Kancelaria"  # where a Windows client of the shared server keeps the firm's files


@pytest.fixture(scope="session")
def same_named_from_windows(chroma_servers: ChromaServers, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Adres wspólnego serwera Chromy, na który te same dwa „regulamin.md” zaindeksował komputer z Windows: w bazie
    są ścieżki „C:\\Kancelaria\\kadry\\regulamin.md” i „C:\\Kancelaria\\it\\regulamin.md”, których serwer
    na Linuksie nie otworzy."""
    from chroma_rag import Index
    from chroma_rag.indexing import discovery

    root = same_named_folders(tmp_path_factory.mktemp("same-named-windows")).resolve()
    url = chroma_servers.start(tmp_path_factory.mktemp("windows-serwer") / "dane")

    def windows_key(path: Path) -> str:  # what discovery keys a file by on Windows: its absolute path there
        return "\\".join([WINDOWS_FOLDER, *path.resolve().relative_to(root).parts])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(discovery, "_key", windows_key)
        patch.setattr(discovery, "_named", lambda path, key: path)  # read from here, recorded as on Windows
        Index(server=url).add([root / "kadry", root / "it"])
    recorded = sorted(info.path for info in Index(server=url).files())
    assert recorded == [f"{WINDOWS_FOLDER}\\it\\regulamin.md", f"{WINDOWS_FOLDER}\\kadry\\regulamin.md"], recorded
    return url


# --- Tryb serwera (issue 8): prawdziwy `chroma run` na wolnym porcie pętli zwrotnej ---------------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServers:
    """Uruchamia serwery `chroma run` (każdy na własnym folderze i porcie) i zatrzymuje je na końcu."""

    def __init__(self) -> None:
        self._processes: list = []

    def start(self, path: Path) -> str:
        import subprocess
        import sys
        import time

        import httpx

        port = free_port()
        exe = Path(sys.executable).with_name("chroma")
        log = path.with_name(f"{path.name}-chroma.log").open("w")
        process = subprocess.Popen(
            [str(exe), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT,
        )
        self._processes.append(process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return url
            except httpx.HTTPError:
                time.sleep(0.05)
        pytest.fail(f"chroma run nie odpowiada na {url} (log: {log.name})")

    def stop_all(self) -> None:
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            process.wait(timeout=30)


@pytest.fixture(scope="session")
def chroma_servers():
    servers = ChromaServers()
    yield servers
    servers.stop_all()


@pytest.fixture(scope="session")
def chroma_server(chroma_servers: ChromaServers, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Adres pustego serwera Chromy na czas sesji."""
    return chroma_servers.start(tmp_path_factory.mktemp("serwer") / "dane")


class Target:
    """Baza testowa w jednym z trybów: folder (``--baza``) albo serwer (``--serwer``)."""

    def __init__(self, path: Path | None = None, url: str | None = None) -> None:
        self.path, self.url = path, url
        self.args = ("--serwer", url) if url else ("--baza", str(path))

    def index(self):
        from chroma_rag import Index

        return Index(server=self.url) if self.url else Index(self.path)


@pytest.fixture(scope="session", params=["folder", "serwer"])
def tryb(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def two_acts_server(chroma_servers: ChromaServers, tmp_path_factory: pytest.TempPathFactory, ustawy: Path) -> Target:
    """Dwie ustawy zaindeksowane przez serwer (nie kopiowane z folderu), raz na sesję."""
    target = Target(url=chroma_servers.start(tmp_path_factory.mktemp("two-acts-serwer") / "dane"))
    target.index().add([ustawy / PATIENTS, ustawy / DATA_PROTECTION])
    return target


@pytest.fixture(scope="session")
def two_acts(tryb: str, request: pytest.FixtureRequest) -> Target:
    """Dwie ustawy w folderze albo na serwerze."""
    if tryb == "folder":
        return Target(path=request.getfixturevalue("two_acts_db"))
    return request.getfixturevalue("two_acts_server")


@pytest.fixture()
def two_acts_private(tryb: str, two_acts_copy: Path, chroma_servers: ChromaServers) -> Target:
    """Prywatna kopia dwóch ustaw dla testów, które je zmieniają (serwer startuje na kopii folderu)."""
    return Target(path=two_acts_copy) if tryb == "folder" else Target(url=chroma_servers.start(two_acts_copy))


@pytest.fixture()
def empty_target(tryb: str, tmp_path: Path, chroma_servers: ChromaServers) -> Target:
    return Target(path=tmp_path / "db") if tryb == "folder" else Target(url=chroma_servers.start(tmp_path / "dane"))


# --- chroma-rag serwuj (issue 15): prawdziwy uvicorn nad dwiema ustawami, zastępczy model czatu -------------------

SERVED_ANSWER = f"Pacjent ma prawo do informacji o swoim stanie zdrowia [{PATIENTS}, art. 9]."
CHAT_KEY = "sekretny-klucz-czatu"


@pytest.fixture(scope="module")
def fake_llm():
    """Model czatu odpowiadający ``SERVED_ANSWER``, z kluczem ``CHAT_KEY``, który nie może trafić do klienta."""
    from serving_support import chat_model

    with chat_model(SERVED_ANSWER, KEY=CHAT_KEY) as fake:
        yield fake


@pytest.fixture(scope="module")
def base(two_acts_db: Path, fake_llm) -> str:
    """Adres serwera `chroma-rag serwuj` (bez tokenu) nad ``two_acts_db``."""
    from serving_support import running_server

    with running_server(two_acts_db) as url:
        yield url
