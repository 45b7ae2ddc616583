"""Linki w indeksowanym i obserwowanym folderze (issue #39): nic spoza folderu nie trafia do indeksu ani na
`/dokumenty` – `indeksuj FOLDER`, `indeksuj --obserwuj`, `serwuj --obserwuj`; link do pliku i do folderu, link
dodany w trakcie obserwowania, plik podmieniony na link po przejściu po folderze, to, co wcześniejsza wersja
zaindeksowała przez link, znika przy następnej synchronizacji. Prawdziwe pliki, Chroma na dysku, model i procesy."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest import DATA_PROTECTION, PATIENTS, free_port, run_cli
from processes import cli, env
from test_watch import Watcher

from chroma_rag import Index
from chroma_rag.indexing.discovery import collect_files, fingerprint

SECRET = "Tajny token serwera zx81-kwiecien-sekret"
LIMIT = 120.0  # only a guard against hanging: every wait polls for an event, none measures time


@dataclass
class Tree:
    folder: Path  # the indexed / watched folder
    token: Path  # a file outside it, which only the indexing user may read
    files: Path  # a folder outside it
    secret_doc: Path  # a document in that outside folder


def make_tree(root: Path) -> Tree:
    folder = root / "obserwowany"
    (folder / "wewnatrz").mkdir(parents=True)
    (folder / "regulamin.md").write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n",
                                         encoding="utf-8")
    (folder / "wewnatrz" / "zasady.md").write_text("# Zasady\n\nArt. 1. Przerwa w pracy trwa 15 minut.\n",
                                                    encoding="utf-8")
    token = root / "domowy" / "token.txt"
    token.parent.mkdir()
    token.write_text(f"Art. 1. {SECRET}.\n", encoding="utf-8")
    files = root / "poza" / "akta"
    files.mkdir(parents=True)
    secret_doc = files / "umowa-poufna.md"
    secret_doc.write_text(f"# Umowa poufna\n\nArt. 1. {SECRET} w umowie.\n", encoding="utf-8")
    return Tree(folder, token, files, secret_doc)


def names(found: list[Path]) -> set[str]:
    return {Path(p).name for p in found}


# --- przejście po folderze ---

def test_walk_skips_links_out_of_the_folder_and_follows_links_inside(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    (tree.folder / "t.txt").symlink_to(tree.token)
    (tree.folder / "katalog").symlink_to(tree.files, target_is_directory=True)
    (tree.folder / "wzgledny.md").symlink_to(Path("..") / "poza" / "akta" / tree.secret_doc.name)
    (tree.folder / "skrot.md").symlink_to(tree.folder / "wewnatrz" / "zasady.md")
    (tree.folder / "wewnatrz-link").symlink_to(tree.folder / "wewnatrz", target_is_directory=True)
    found = collect_files([tree.folder])
    assert sorted(str(p.resolve()) for p in found.files) == sorted(
        str(p.resolve()) for p in (tree.folder / "regulamin.md", tree.folder / "wewnatrz" / "zasady.md"))
    outward = {str(tree.folder / n) for n in ("t.txt", "katalog", "wzgledny.md")}
    assert set(found.skipped) == outward
    assert all("link prowadzi poza folder" in found.skipped[p] for p in outward)
    assert {str(tree.token), str(tree.files), str(tree.secret_doc)} <= set(found.folders.escapes)


def test_folder_given_as_a_link_is_bounded_by_its_real_path(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    (tree.folder / "t.txt").symlink_to(tree.token)
    shortcut = tmp_path / "skrot-do-folderu"
    shortcut.symlink_to(tree.folder, target_is_directory=True)
    found = collect_files([shortcut])
    assert names(found.files) == {"regulamin.md", "zasady.md"}
    assert set(found.skipped) == {str(shortcut / "t.txt")}


def test_file_given_by_name_is_its_own_root_even_through_a_link(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    link = tree.folder / "t.txt"
    link.symlink_to(tree.token)
    sources = fingerprint(collect_files([link]).files, {})
    assert [s.key for s in sources] == [str(tree.token.resolve())]


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_file_that_became_a_link_after_the_walk_is_not_read(tmp_path: Path, swap: str) -> None:
    tree = make_tree(tmp_path)
    found = collect_files([tree.folder])
    if swap == "file":  # between the walk and the reading, a document is swapped for a link out
        (tree.folder / "regulamin.md").unlink()
        (tree.folder / "regulamin.md").symlink_to(tree.token)
        swapped = tree.folder / "regulamin.md"
    else:  # … or a folder on its path, for a link to a folder with a same-named file
        (tree.folder / "wewnatrz").rename(tmp_path / "stary-wewnatrz")
        (tree.files / "zasady.md").write_text(f"Art. 1. {SECRET}.\n", encoding="utf-8")
        (tree.folder / "wewnatrz").symlink_to(tree.files, target_is_directory=True)
        swapped = tree.folder / "wewnatrz" / "zasady.md"
    skipped: dict[str, str] = {}
    sources = fingerprint(found.files, skipped)
    assert all(s.key.startswith(str(tree.folder.resolve()) + os.sep) for s in sources), sources
    assert len(sources) == 1 and "linkiem" in skipped[str(swapped)], skipped


@pytest.mark.parametrize("suffix", [".md", ".pdf"])
def test_file_that_became_a_link_after_hashing_is_not_loaded(tmp_path: Path, ustawy: Path, suffix: str) -> None:
    from chroma_rag.errors import UnreadableFile
    from chroma_rag.indexing.preparing import prepare_file

    tree = make_tree(tmp_path)
    document = tree.folder / f"umowa{suffix}"
    if suffix == ".pdf":
        shutil.copy(ustawy / PATIENTS, document)
        secret = ustawy / DATA_PROTECTION  # readable by the indexing user, not meant for the index
    else:
        document.write_text("# Umowa\n\nArt. 1. Pracownik ma prawo do urlopu.\n", encoding="utf-8")
        secret = tree.token
    (source,) = fingerprint([document], {})
    document.unlink()  # between hashing and loading, the document is swapped for a link out
    document.symlink_to(secret)
    with pytest.raises(UnreadableFile, match="stał się linkiem"):
        prepare_file(source)


def test_a_loaded_file_is_the_one_opened_even_when_swapped_while_reading(tmp_path: Path) -> None:
    from chroma_rag.indexing.discovery import open_unlinked
    from chroma_rag.ingest.loading import load_opened

    tree = make_tree(tmp_path)
    document = tree.folder / "regulamin.md"
    handle = open_unlinked(document)
    assert handle is not None
    document.unlink()  # after the checked open, before any reader opens the file by its name
    document.symlink_to(tree.token)
    with handle:
        loaded = load_opened(handle, document)
    assert SECRET not in loaded.text and "urlopu wypoczynkowego" in loaded.text and loaded.path == document


# --- indeksuj FOLDER ---

def listed(capsys: pytest.CaptureFixture[str], db: Path) -> set[str]:
    code, out, err = run_cli(capsys, "lista", "--json", "--baza", db)
    assert code == 0, err
    return {entry["plik"] for entry in json.loads(out)}


def test_indeksuj_skips_links_out_and_prunes_what_was_indexed_through_them(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    db = tmp_path / "db"
    Index(db).add([tree.token, tree.files])  # what an earlier version indexed through the links below
    (tree.folder / "t.txt").symlink_to(tree.token)
    (tree.folder / "katalog").symlink_to(tree.files, target_is_directory=True)

    code, _, err = run_cli(capsys, "indeksuj", tree.folder, "--baza", db, "--cicho")
    said = " ".join(err.split())
    assert code == 3, err  # indexed, with skipped files
    for link in ("t.txt", "katalog"):
        assert f"Pominięto {tree.folder / link}: link prowadzi poza folder" in said, err
    assert "nie ma już w podanych folderach" in said and "--usun-brakujace" in said, err
    assert "Traceback" not in err

    code, out, err = run_cli(capsys, "indeksuj", tree.folder, "--baza", db, "--usun-brakujace", "--cicho")
    assert code == 3, err
    flat = "".join(out.split())  # the report wraps long paths
    assert f"{tree.token}" in flat and f"{tree.secret_doc}" in flat, out  # „Usunięto z indeksu”
    assert listed(capsys, db) == {"regulamin.md", "zasady.md"}

    # a document of the folder swapped for a link out: its entry goes, and nothing behind the link comes in
    (tree.folder / "regulamin.md").unlink()
    (tree.folder / "regulamin.md").symlink_to(tree.token)
    code, out, err = run_cli(capsys, "indeksuj", tree.folder, "--baza", db, "--usun-brakujace", "--cicho")
    assert code == 3, err
    assert listed(capsys, db) == {"zasady.md"}
    hits = Index(db).search(SECRET, k=10, mode="slowa", threshold=None)
    assert not any(SECRET in hit.text for hit in hits)


# --- indeksuj --obserwuj ---

def test_watcher_prunes_old_entries_and_skips_links_added_while_watching(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    db = tmp_path / "db"
    Index(db).add([tree.token])  # an earlier version's entry, through the link already in the folder
    (tree.folder / "t.txt").symlink_to(tree.token)
    run = Watcher(tree.folder, db, tmp_path / "obserwator.log")
    try:
        run.wait_until(lambda files: set(files) == {"regulamin.md", "zasady.md"})  # token.txt pruned
        (tree.folder / "katalog").symlink_to(tree.files, target_is_directory=True)
        (tree.folder / "drugi-token.md").symlink_to(tree.token)
        (tree.folder / "nowy.md").write_text("# Nowy\n\nArt. 1. Urlop okolicznościowy trwa 2 dni.\n",
                                             encoding="utf-8")  # indexed by a sync that saw both links
        run.wait_until(lambda files: "nowy.md" in files)
        run.wait_for_output("nowy.md")  # its report row comes after the report's skipped lines
        said = " ".join(run.output().split())
        for link in ("katalog", "drugi-token.md"):
            assert f"Pominięto {tree.folder / link}: link prowadzi poza folder" in said, run.output()
        assert set(run.files()) == {"regulamin.md", "zasady.md", "nowy.md"}
    finally:
        code = run.interrupt()
        run.kill()
    assert code == 0 and "Traceback" not in run.output(), run.output()


# --- serwuj --obserwuj: /dokumenty, /api/pliki, wyszukiwanie ---

class Servers:
    """Procesy `chroma-rag serwuj` testu; każdy zatrzymany Ctrl-C, a jego dziennik bez tracebacku."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[tuple[subprocess.Popen[str], Path]] = []

    def start(self, db: Path, *extra: object) -> str:
        port = free_port()
        log = self.tmp_path / f"serwuj-{len(self.started)}.log"
        process = subprocess.Popen(cli("serwuj", "--port", port, "--baza", db, "--procesy", "1", *extra),
                                   stdout=log.open("w"), stderr=subprocess.STDOUT, text=True, env=env())
        self.started.append((process, log))
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + LIMIT
        while True:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(encoding="utf-8")
            try:
                httpx.get(f"{base}/api/stan", timeout=5)
                return base
            except httpx.TransportError:
                time.sleep(0.2)

    def stop_all(self) -> None:
        for process, log in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                process.wait(timeout=60)
            assert "Traceback" not in log.read_text(encoding="utf-8"), log.read_text(encoding="utf-8")


@pytest.fixture()
def servers(tmp_path: Path) -> Iterator[Servers]:
    running = Servers(tmp_path)
    try:
        yield running
    finally:
        for process, _ in running.started:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIMIT
    while not condition():
        assert time.monotonic() < deadline, "serwer nie doszedł do oczekiwanego stanu"
        time.sleep(0.2)


def served_names(base: str) -> set[str]:
    response = httpx.get(f"{base}/api/pliki", timeout=30)
    assert response.status_code == 200, response.text
    return {entry["plik"] for entry in response.json()}


def assert_nothing_from_outside(base: str) -> None:
    for name in ("token.txt", "umowa-poufna.md", "t.txt", "katalog"):
        response = httpx.get(f"{base}/dokumenty/{name}", timeout=30)
        assert response.status_code == 404 and SECRET not in response.text, (name, response.text)
    assert not {"token.txt", "umowa-poufna.md"} & served_names(base)
    hits = httpx.get(f"{base}/api/szukaj", params={"q": SECRET, "k": 10}, timeout=60).json()["wyniki"]
    assert not any(SECRET in json.dumps(hit, ensure_ascii=False) for hit in hits)


def test_server_never_serves_a_file_behind_a_link(tmp_path: Path, servers: Servers) -> None:
    tree = make_tree(tmp_path)
    db = tmp_path / "db"
    Index(db).add([tree.token, tree.files])  # an earlier version's entries, through links (one still there)
    (tree.folder / "t.txt").symlink_to(tree.token)
    base = servers.start(db, "--obserwuj", tree.folder)

    def synced(count: int) -> bool:
        state = httpx.get(f"{base}/api/stan", timeout=30).json()["obserwowanie"]
        return state["synchronizacje"] >= count and state["stan"] == "czeka"

    until(lambda: synced(1))
    assert "token.txt" not in served_names(base)  # pruned by the first sync: its link is still in the folder
    response = httpx.get(f"{base}/dokumenty/token.txt", timeout=30)
    assert response.status_code == 404 and SECRET not in response.text

    (tree.folder / "katalog").symlink_to(tree.files, target_is_directory=True)  # added while watching
    (tree.folder / "nowy.md").write_text("# Nowy\n\nArt. 1. Urlop okolicznościowy trwa 2 dni.\n", encoding="utf-8")
    until(lambda: "nowy.md" in served_names(base))
    assert served_names(base) == {"regulamin.md", "zasady.md", "nowy.md"}
    assert_nothing_from_outside(base)
    regular = httpx.get(f"{base}/dokumenty/regulamin.md", timeout=30)
    assert regular.status_code == 200 and "urlopu" in regular.text

    # the links removed and the server started again: nothing from outside is indexed or served
    servers.stop_all()
    (tree.folder / "t.txt").unlink()
    (tree.folder / "katalog").unlink()
    again = servers.start(db)
    assert served_names(again) == {"regulamin.md", "zasady.md", "nowy.md"}
    assert_nothing_from_outside(again)
    servers.stop_all()
