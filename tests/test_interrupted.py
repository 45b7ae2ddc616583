"""Issue 13: Ctrl-C w połowie długiego pliku nie gubi policzonych wektorów – następny przebieg liczy co najwyżej
resztę plus jedną porcję; indeks pozostaje „wszystko albo nic” na plik. Prawdziwy proces, prawdziwy model."""

from __future__ import annotations

import signal
import time

from processes import start, verify_in_fresh_process
from sync_corpus import regulation

from chroma_rag import Index

PARAGRAPHS = 96
BATCH = 16  # vector_reuse.CACHE_BATCH


def test_ctrl_c_in_the_middle_of_the_very_first_file_keeps_computed_vectors(tmp_path):
    doc, db = tmp_path / "dlugi.txt", tmp_path / "db"
    doc.write_text(regulation("dlugi", PARAGRAPHS), encoding="utf-8")
    writer = start("indeksuj", doc, "--baza", db)
    deadline = time.monotonic() + 600  # only against a hang: the event below is what the test waits for
    # interrupt once a few batches are computed: their vectors are in the cache of unsaved vectors
    while sum(p.stat().st_size for p in db.glob("wektory-*/*.bin")) < 3 * BATCH * (32 + 4 * 384):
        assert writer.poll() is None and time.monotonic() < deadline, writer.communicate()
        time.sleep(0.1)
    writer.send_signal(signal.SIGINT)
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 130, err
    assert not (db / "chroma.sqlite3").exists() or not Index(db).files()  # the file is all or nothing

    report = Index(db).add([doc])
    assert report.chunks == PARAGRAPHS and report.embedded + report.reused == PARAGRAPHS
    assert report.embedded <= PARAGRAPHS - 3 * BATCH + BATCH, (report.embedded, report.reused)
    assert verify_in_fresh_process(db)["ok"]
    assert not list(db.glob("wektory-*/*.bin"))  # a finished run leaves no cache behind
