"""Issue 13: ta sama nazwa w dwóch folderach to dwa dokumenty; ten sam dokument spod dwóch ścieżek to jeden
dokument (fragmenty raz). W obu trybach: folder i prawdziwy `chroma run` (parametr ``tryb``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Target, run_cli
from sync_corpus import regulation

from chroma_rag import Index
from chroma_rag.plural import FRAGMENT, count


def cli_json(capsys, target: Target, *args: str):
    code, out, err = run_cli(capsys, *args, "--json", *target.args)
    assert code == 0, err
    return json.loads(out)


def check(capsys, target: Target) -> dict:
    report = cli_json(capsys, target, "sprawdz")
    assert report["ok"], report
    return report


def test_same_name_in_two_folders_are_two_documents(capsys, tmp_path, empty_target):
    for folder, title in (("dzial-a", "kadry"), ("dzial-b", "magazyn")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "regulamin.txt").write_text(regulation(title, 2), encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", tmp_path / "dzial-a", tmp_path / "dzial-b", *empty_target.args)
    assert code == 0, err
    hits = cli_json(capsys, empty_target, "szukaj", "przerwa zasada numer 1", "-k", "4")["wyniki"]
    paths = {h["sciezka"] for h in hits if h["art"] == "§ 1"}  # § 1 of both: one does not hide the other
    assert paths == {str(tmp_path / "dzial-a" / "regulamin.txt"), str(tmp_path / "dzial-b" / "regulamin.txt")}
    code, out, err = run_cli(capsys, "szukaj", "przerwa zasada numer 1", "-k", "4", *empty_target.args)
    assert "dzial-a" in out and "dzial-b" in out  # the text output tells the two apart by their paths

    code, _, err = run_cli(capsys, "usun", "regulamin.txt", *empty_target.args)
    assert code == 2 and "kilka" in err and "dzial-a" in err and "dzial-b" in err
    assert len(cli_json(capsys, empty_target, "lista")) == 2  # nothing was deleted
    code, out, err = run_cli(capsys, "usun", tmp_path / "dzial-b" / "regulamin.txt", *empty_target.args)
    assert code == 0 and "Usunięto 2 fragmenty" in out, err
    assert [f["sciezka"] for f in cli_json(capsys, empty_target, "lista")] == [
        str(tmp_path / "dzial-a" / "regulamin.txt")
    ]
    check(capsys, empty_target)


def test_same_document_from_two_paths_is_stored_once(capsys, tmp_path, empty_target):
    shared, downloads = tmp_path / "wspolne", tmp_path / "Pobrane"
    shared.mkdir()
    (shared / "umowa.txt").write_text(regulation("umowa", 3), encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", shared, *empty_target.args)
    assert code == 0, err
    chunks = check(capsys, empty_target)["fragmenty"]
    shutil.copytree(shared, downloads)
    code, out, err = run_cli(capsys, "indeksuj", downloads, *empty_target.args)
    assert code == 0 and "Ten sam dokument" in out, err
    assert check(capsys, empty_target)["fragmenty"] == chunks  # no chunk added
    (row,) = cli_json(capsys, empty_target, "lista")  # one row, both paths
    assert row["sciezka"] == str(shared / "umowa.txt") and row["inne_sciezki"] == [str(downloads / "umowa.txt")]
    code, out, _ = run_cli(capsys, "indeksuj", shared, downloads, *empty_target.args)
    assert "bez zmian: 2" in " ".join(out.split())

    # removing one path keeps the document while the other remains
    code, out, err = run_cli(capsys, "usun", shared / "umowa.txt", *empty_target.args)
    assert code == 0 and "zostaje pod inną ścieżką" in " ".join(out.split()), err
    (row,) = cli_json(capsys, empty_target, "lista")
    assert row["sciezka"] == str(downloads / "umowa.txt") and row["fragmenty"] == chunks and not row["inne_sciezki"]
    hits = cli_json(capsys, empty_target, "szukaj", "przerwa zasada numer 1")["wyniki"]
    assert hits and {h["sciezka"] for h in hits} == {str(downloads / "umowa.txt")}
    assert check(capsys, empty_target)["fragmenty"] == chunks
    code, out, _ = run_cli(capsys, "usun", downloads / "umowa.txt", *empty_target.args)
    assert code == 0 and f"Usunięto {count(chunks, FRAGMENT)}" in out
    assert check(capsys, empty_target)["fragmenty"] == 0


def test_two_copies_in_one_run_and_a_changed_original(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "x.txt").write_text(regulation("x", 3), encoding="utf-8")
    db = tmp_path / "db"
    report = Index(db).add([a, b])
    assert list(report.indexed) == [str(a / "x.txt")] and report.same_document == {str(b / "x.txt"): str(a / "x.txt")}
    assert sum(f.chunks for f in Index(db).files()) == 3
    (a / "x.txt").write_text(regulation("x", 4), encoding="utf-8")  # the original changes, the copy does not
    report = Index(db).add([a, b])
    assert report.indexed == {str(a / "x.txt"): 4} and report.unchanged == [str(b / "x.txt")]
    files = {f.path: f for f in Index(db).files()}
    assert {p: f.chunks for p, f in files.items()} == {str(a / "x.txt"): 4, str(b / "x.txt"): 3}
    assert Index(db).check().ok
    hits = Index(db).search("zasada numer 1", k=3, threshold=None)
    assert {h.metadata["sciezka"] for h in hits} == {str(a / "x.txt"), str(b / "x.txt")}


def test_a_colleagues_path_is_not_taken_for_a_move(tmp_path, monkeypatch):
    theirs, mine = tmp_path / "mnt" / "wspolne", tmp_path / "home" / "wspolne"
    for folder in (theirs, mine):
        folder.mkdir(parents=True)
        (folder / "ustawa.txt").write_text(regulation("ustawa", 2), encoding="utf-8")
    db = tmp_path / "db"
    from chroma_rag.storage import documents

    monkeypatch.setattr(documents, "this_host", lambda: "laptop-kolegi")
    Index(db).add([theirs])
    shutil.rmtree(tmp_path / "mnt")  # the colleague's mount is not there on my computer
    monkeypatch.setattr(documents, "this_host", lambda: "moj-komputer")
    report = Index(db).add([mine])
    assert not report.moved and report.same_document == {str(mine / "ustawa.txt"): str(theirs / "ustawa.txt")}
    (row,) = Index(db).files()
    assert row.path == str(theirs / "ustawa.txt") and row.other_paths == [str(mine / "ustawa.txt")]
    assert Path(row.other_paths[0]).exists()
