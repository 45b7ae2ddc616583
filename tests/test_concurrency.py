"""Wspólny folder bazy: trzech piszących naraz + czytelnik w pętli, blokada mówi, kto ją trzyma."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

from processes import cli, env, expected_chunks, run, start, verify_in_fresh_process
from sync_corpus import write_docs

from chroma_rag import Index
from chroma_rag.storage.locking import DbLock

_READER = """
import json, sys, time
from pathlib import Path
from chroma_rag import Index
db, stop, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
index = Index(db)  # one model in memory; every call still opens a fresh Chroma client under the read lock
queries, errors, sizes = 0, [], set()
while not stop.exists():
    try:
        index.search("Kiedy zgłosić urlop przełożonemu?", k=3)
        for _ in range(5):  # cheap reads between the (CPU-bound) query embeddings
            view = index.check()  # registry vs chunks, every chunk found by its own vector: one snapshot
            if not view.ok:
                errors.append(f"niespójny widok: {view.orphans} {view.incomplete} {view.unfindable}")
            sizes.add(view.files)
            queries += 1
        queries += 1
        ready.touch()
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
print(json.dumps({"queries": queries, "errors": errors, "sizes": sorted(sizes)}))
"""


def test_three_writers_and_a_looping_reader(tmp_path):
    db = tmp_path / "db"
    seed = tmp_path / "seed"
    write_docs(seed, ["poczatek.txt"], paragraphs=2)
    Index(db).add([seed])
    folders = [tmp_path / f"pisarz-{n}" for n in range(3)]
    for n, folder in enumerate(folders):
        write_docs(folder, [f"dok-{n}-{i}.txt" for i in range(4)], paragraphs=3)
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(db), str(stop), str(ready)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    deadline = time.monotonic() + 120
    while not ready.exists() and time.monotonic() < deadline and reader.poll() is None:
        time.sleep(0.1)
    writers = [start("indeksuj", folder, "--baza", db) for folder in folders]
    results = [(*w.communicate(timeout=600), w.returncode) for w in writers]
    time.sleep(1.0)  # a few more reads after the last write
    stop.touch()
    out, err = reader.communicate(timeout=120)
    for w_out, w_err, code in results:
        assert code == 0, w_out + w_err
    reads = json.loads(out)
    print(f"czytelnik: {reads['queries']} odczytów, {len(reads['errors'])} błędów, liczby plików: {reads['sizes']}")
    assert reads["errors"] == [] and reads["queries"] > 0, err
    report = verify_in_fresh_process(db)
    assert report["ok"], report
    expected = {**expected_chunks(seed)}
    for folder in folders:
        expected.update(expected_chunks(folder))
    assert report["files"] == expected
    assert report["chunks"] == sum(expected.values())  # every chunk of every file present once


def test_waiting_writer_names_the_lock_holder_and_gives_up_after_czekaj(tmp_path):
    db = tmp_path / "db"
    write_docs(tmp_path / "docs", ["a.txt"], paragraphs=1)
    Index(db).add([tmp_path / "docs"])
    (tmp_path / "docs" / "a.txt").write_text("§ 1. Zmieniona treść regulaminu o urlopie.", encoding="utf-8")
    with DbLock(db).writing(command="test"):
        result = run("indeksuj", tmp_path / "docs", "--czekaj", "1", "--baza", db)
    assert result.returncode == 1
    assert f"pid {os.getpid()}" in result.stderr and socket.gethostname() in result.stderr
    assert "zajęta" in result.stderr and "Traceback" not in result.stderr


def test_waiting_writer_proceeds_when_the_lock_is_freed(tmp_path):
    db = tmp_path / "db"
    write_docs(tmp_path / "docs", ["a.txt"], paragraphs=1)
    Index(db).add([tmp_path / "docs"])
    (tmp_path / "docs" / "a.txt").write_text("§ 1. Zmieniona treść regulaminu o urlopie.", encoding="utf-8")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with DbLock(db).writing(command="test"):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        writer = subprocess.Popen(cli("indeksuj", tmp_path / "docs", "--czekaj", "120", "--baza", db),
                                  stdout=subprocess.PIPE, stderr=stderr, text=True, env=env())
        deadline = time.monotonic() + 120
        while "zajęta" not in log.read_text() and time.monotonic() < deadline and writer.poll() is None:
            time.sleep(0.2)
        release.set()
        holder.join()
        out, _ = writer.communicate(timeout=300)
    err = log.read_text()
    assert writer.returncode == 0, out + err
    assert "zajęta" in err and f"pid {os.getpid()}" in err
    assert [f.chunks for f in Index(db).files()] == [1]
