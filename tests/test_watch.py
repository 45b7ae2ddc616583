"""indeksuj --obserwuj: prawdziwy proces obserwatora nad folderem tymczasowym, prawdziwy model i Chroma na dysku;
pliki pojawiają się, zmieniają, przenoszą i znikają w trakcie, kopiowanie trwa, inny proces trzyma blokadę."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from processes import cli, env, verify_in_fresh_process
from sync_corpus import regulation

from chroma_rag import Index
from chroma_rag.indexing.report import IndexReport
from chroma_rag.indexing.watch import WatchState, network_filesystem, watch_folders
from chroma_rag.storage.locking import DbLock

# Every wait for the watcher is bounded by this, only so that a broken watcher fails instead of hanging the suite;
# how soon a change is searchable is measured by bench/watch.py, not asserted here.
LIMIT = 60.0
SUMMARY = "Zaindeksowano: "  # the last line of each sync's report


class Watcher:
    def __init__(self, folder: Path, db: Path, log: Path, *extra: str) -> None:
        self.db, self.log = db, log
        self.process = subprocess.Popen(
            cli("indeksuj", folder, "--obserwuj", "--baza", db, "--cicho", *extra),
            stdout=log.open("w"), stderr=subprocess.STDOUT, text=True, env=env(),
        )

    def files(self) -> dict[str, int]:
        if not (self.db / "chroma.sqlite3").exists():
            return {}
        return {Path(info.path).name: info.chunks for info in Index(self.db).files()}

    def wait_until(self, condition: Callable[[dict[str, int]], bool]) -> None:
        """Czeka, aż lista plików indeksu spełni warunek."""
        deadline = time.monotonic() + LIMIT
        while not condition(self.files()):
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, f"indeks nie doszedł do oczekiwanego stanu: {self.files()}\n" \
                                                f"{self.output()}"
            time.sleep(0.2)

    def wait_for_output(self, text: str, times: int = 1) -> None:
        """Wynik synchronizacji jest wypisywany chwilę po tym, jak indeks już go pokazuje (koniec zapisu)."""
        deadline = time.monotonic() + LIMIT
        while self.output().count(text) < times:
            assert self.process.poll() is None and time.monotonic() < deadline, self.output()
            time.sleep(0.2)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=60)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture()
def watcher(tmp_path: Path) -> Iterator[Callable[..., Watcher]]:
    started: list[Watcher] = []

    def start(folder: Path, *extra: str) -> Watcher:
        started.append(Watcher(folder, tmp_path / "db", tmp_path / f"watch-{len(started)}.log", *extra))
        return started[-1]

    yield start
    for one in started:
        one.kill()


def write(path: Path, paragraphs: int, variant: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(regulation(path.stem, paragraphs, variant), encoding="utf-8")


def test_files_appear_change_move_and_disappear(tmp_path: Path, watcher) -> None:
    folder = tmp_path / "folder"
    write(folder / "pierwszy.md", 3)
    run = watcher(folder)
    run.wait_until(lambda files: files == {"pierwszy.md": 3})

    write(folder / "drugi.txt", 2)
    run.wait_until(lambda files: files.get("drugi.txt") == 2)
    run.wait_for_output(SUMMARY, 2)

    write(folder / "pierwszy.md", 5, variant=1)
    run.wait_until(lambda files: files.get("pierwszy.md") == 5)
    run.wait_for_output(SUMMARY, 3)  # a move while that sync is still running would be a removal plus a new file

    (folder / "dzial").mkdir()
    (folder / "drugi.txt").rename(folder / "dzial" / "drugi-przeniesiony.txt")
    run.wait_until(lambda files: "drugi.txt" not in files and files.get("drugi-przeniesiony.txt") == 2)
    run.wait_for_output("Przeniesiony:")

    (folder / "pierwszy.md").unlink()
    run.wait_until(lambda files: files == {"drugi-przeniesiony.txt": 2})

    run.wait_for_output(SUMMARY, 5)  # the last sync has finished: Ctrl-C finds the watcher idle
    assert run.interrupt() == 0, run.output()  # Ctrl-C while idle is the normal way to stop watching
    assert "Traceback" not in run.output()
    report = verify_in_fresh_process(tmp_path / "db")
    assert report["ok"] and report["chunks"] == 2, report


# The copy below pauses 0.1 s between paragraphs and lasts longer than this settle window, so only the events of
# the copy keep the watcher from indexing it half; a pause of the copy longer than twice the window (6 s) would
# end it as far as any watcher can tell.
COPY_SETTLE = 3.0
COPIED_PARAGRAPHS = 40


class WatchInThisProcess:
    """``watch_folders`` nad folderem w wątku tego procesu (z wybranym oknem ciszy) i raport każdej
    synchronizacji – co zaindeksowała."""

    def __init__(self, folder: Path, db: Path, settle: float) -> None:
        self.folder, self.index = folder, Index(db)
        self.reports: list[IndexReport] = []
        self.synced = threading.Condition()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=watch_folders, args=([folder], self.sync), daemon=True,
                                       kwargs={"stop": self.stop, "settle": settle, "ignore": [db]})
        self.thread.start()

    def sync(self) -> IndexReport:
        report = self.index.add([self.folder], prune=True)
        with self.synced:
            self.reports.append(report)
            self.synced.notify_all()
        return report

    def indexed(self, name: str) -> list[int]:
        """Ile fragmentów pliku ``name`` zapisała każda synchronizacja, która go zapisała."""
        with self.synced:
            return [n for report in self.reports for path, n in report.indexed.items() if Path(path).name == name]

    def wait_for(self, name: str) -> None:
        """Czeka na synchronizację, która zapisze plik ``name``."""
        with self.synced:
            assert self.synced.wait_for(lambda: self.indexed(name), LIMIT), self.reports

    def close(self) -> None:
        self.stop.set()
        self.thread.join(LIMIT)


def test_file_still_being_copied_is_not_indexed_half(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    write(folder / "staly.md", 2)
    watcher = WatchInThisProcess(folder, tmp_path / "db", COPY_SETTLE)
    try:
        watcher.wait_for("staly.md")
        lines = regulation("kopiowany", COPIED_PARAGRAPHS).splitlines(keepends=True)
        with (folder / "kopiowany.md").open("w", encoding="utf-8") as copy:  # a slow copy, longer than the window
            for line in lines:
                copy.write(line)
                copy.flush()
                time.sleep(0.1)
                assert watcher.indexed("kopiowany.md") == [], "plik w trakcie kopiowania trafił do indeksu"
        watcher.wait_for("kopiowany.md")
        # changes the watcher saw after that sync come before those of a later file: once that file is indexed,
        # every sync the copy caused has happened
        write(folder / "pozniejszy.md", 1)
        watcher.wait_for("pozniejszy.md")
        assert watcher.indexed("kopiowany.md") == [COPIED_PARAGRAPHS]  # indexed once, whole
    finally:
        watcher.close()


def test_writer_holding_the_lock_is_waited_for(tmp_path: Path, watcher) -> None:
    folder = tmp_path / "folder"
    write(folder / "pierwszy.md", 2)
    run = watcher(folder)
    run.wait_until(lambda files: "pierwszy.md" in files)

    with DbLock(tmp_path / "db").writing(command="test"):
        write(folder / "drugi.md", 3)
        run.wait_for_output("Baza jest zajęta")  # the watcher wants to write and waits for the lock
        assert run.process.poll() is None
    run.wait_until(lambda files: files.get("drugi.md") == 3)
    assert "chroma-rag test" in run.output()  # it said who held the lock
    run.wait_for_output(SUMMARY, 2)
    assert run.interrupt() == 0
    assert verify_in_fresh_process(tmp_path / "db")["ok"]


def test_ctrl_c_during_a_sync_leaves_the_file_whole_or_absent(tmp_path: Path, watcher) -> None:
    folder = tmp_path / "folder"
    write(folder / "pierwszy.md", 2)
    run = watcher(folder)
    run.wait_until(lambda files: "pierwszy.md" in files)
    run.wait_for_output(SUMMARY)  # the sync is over, and with it its vector cache
    write(folder / "duzy.md", 300)
    # the sync of the big file has begun once its first vectors are in the cache of unsaved vectors
    deadline = time.monotonic() + LIMIT
    while not any(path.stat().st_size for path in (tmp_path / "db").glob("wektory-*/*.bin")):
        assert run.process.poll() is None and time.monotonic() < deadline, run.output()
        time.sleep(0.05)
    assert run.interrupt() == 130, run.output()  # stopped in the middle of that sync, not after it
    assert "Traceback" not in run.output()
    report = verify_in_fresh_process(tmp_path / "db")
    assert report["ok"], report
    assert {Path(p).name: n for p, n in report["files"].items()}.get("duzy.md", 300) == 300, report


def test_polling_mode_sees_changes(tmp_path: Path, watcher) -> None:
    folder = tmp_path / "folder"
    write(folder / "pierwszy.md", 2)
    run = watcher(folder, "--odpytuj")
    run.wait_until(lambda files: "pierwszy.md" in files)
    assert "odpytywanie" in run.output()
    write(folder / "drugi.md", 2)
    (folder / "pierwszy.md").unlink()
    run.wait_until(lambda files: files == {"drugi.md": 2})
    run.wait_for_output("drugi.md")
    run.wait_for_output("Usunięto z indeksu")
    assert run.interrupt() == 0


def test_watch_needs_folders(tmp_path: Path) -> None:
    write(tmp_path / "plik.md", 1)
    result = subprocess.run(cli("indeksuj", tmp_path / "plik.md", "--obserwuj", "--baza", tmp_path / "db"),
                            capture_output=True, text=True, env=env(), timeout=120)
    assert result.returncode == 1 and "tylko na folderach" in result.stderr, result.stderr


def test_network_mounts_are_detected(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    spaced = str(tmp_path / "nfs akty").replace(" ", "\\040")  # /proc/mounts escapes spaces
    mounts.write_text(
        "/dev/sda1 / ext4 rw 0 0\n"
        f"//nas/zespol {tmp_path / 'udzial'} cifs rw 0 0\n"
        f"nas:/akty {spaced} nfs4 rw 0 0\n",
        encoding="utf-8",
    )
    assert network_filesystem(tmp_path / "udzial" / "ustawy", mounts) == "cifs"
    assert network_filesystem(tmp_path / "nfs akty", mounts) == "nfs4"
    assert network_filesystem(tmp_path / "lokalny", mounts) is None


def test_server_watches_a_folder(tmp_path: Path) -> None:
    import httpx
    from conftest import free_port

    folder = tmp_path / "folder"
    write(folder / "pierwszy.md", 2)
    port = free_port()
    log = tmp_path / "serwuj.log"
    process = subprocess.Popen(
        cli("serwuj", "--obserwuj", folder, "--port", port, "--baza", tmp_path / "db", "--procesy", "2"),
        stdout=log.open("w"), stderr=subprocess.STDOUT, text=True, env=env(),
    )
    base = f"http://127.0.0.1:{port}"

    def until(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text(encoding="utf-8")
            try:
                if condition():
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.2)
        raise AssertionError(log.read_text(encoding="utf-8"))

    def searched(name: str) -> bool:
        hits = httpx.get(f"{base}/api/szukaj", params={"q": f"dokument {name}", "k": 10}).json()["wyniki"]
        return any(hit["plik"] == name for hit in hits)

    try:
        until(lambda: httpx.get(f"{base}/api/stan").json()["obserwowanie"]["stan"] == "czeka")
        assert searched("pierwszy.md")
        write(folder / "drugi.md", 3)
        until(lambda: searched("drugi.md"))
        (folder / "pierwszy.md").unlink()
        def listed() -> list[str]:
            response = httpx.get(f"{base}/api/pliki")
            assert response.status_code == 200, response.text  # a reader never fails while the watcher writes
            return [f["plik"] for f in response.json()]

        until(lambda: listed() == ["drugi.md"])
        assert not searched("pierwszy.md")
        def state() -> dict:
            return httpx.get(f"{base}/api/stan").json()["obserwowanie"]

        until(lambda: state()["synchronizacje"] >= 3)  # worker processes see the state up to 0.2 s late
        assert state()["foldery"] == [folder.name] and state()["blad"] is None, state()  # no server path
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    assert code in (0, 130) and "Traceback" not in log.read_text(encoding="utf-8")
    assert verify_in_fresh_process(tmp_path / "db")["ok"]


def test_the_state_a_team_member_reads_has_no_server_paths() -> None:
    """``/api/stan`` czytają członkowie zespołu (issue 38): obserwowane foldery, czekające pliki i błąd bez ścieżek."""
    state = WatchState(folders=["/srv/kancelaria/umowy", "/srv/kancelaria/umowy-archiwum"],
                       pending=["/srv/kancelaria/umowy/aneks.pdf"],
                       last_error="Nie można odczytać /srv/kancelaria/umowy-archiwum/stara.pdf – sprawdź prawa.")
    shown = state.to_json()
    assert shown["foldery"] == ["umowy", "umowy-archiwum"] and shown["oczekujace"] == ["aneks.pdf"]
    assert shown["blad"] == "Nie można odczytać umowy-archiwum/stara.pdf – sprawdź prawa."
    assert "/srv" not in json.dumps(shown)
