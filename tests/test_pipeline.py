"""Indeksowanie w tempie modelu (issue 37): kolejne pliki wczytuje wątek w tle, a zapis pliku idzie w drugim wątku,
gdy model liczy już następny. Prawdziwa Chroma na dysku i prawdziwy model; współbieżność sprawdzana zdarzeniami
(wątek czeka na to, co bez nakładania się nigdy by nie nastąpiło), nie zegarem."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sync_corpus import write_docs

from chroma_rag import Index
from chroma_rag.indexing import sync as indexing
from chroma_rag.indexing.report import Progress

WAIT_S = 120  # only a safety net against a hang; every wait below ends on an event long before


class Recorder(Progress):
    """Zdarzenia postępu po kolei; ``on_start_file`` daje testowi chwilę „model zaczyna plik X”."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.file_started: dict[str, threading.Event] = {}

    def started(self, name: str) -> threading.Event:
        return self.file_started.setdefault(name, threading.Event())

    def reading(self, path: Path) -> None:
        self.events.append(("reading", path.name))

    def start(self, files: int, chunks: int) -> None:
        self.events.append(("start", files, chunks))

    def start_file(self, path: Path, chunks: int) -> None:
        self.events.append(("start_file", path.name, chunks))
        self.started(path.name).set()

    def advance(self, chunks: int) -> None:
        self.events.append(("advance", chunks))

    def finish_file(self, path: Path) -> None:
        self.events.append(("finish_file", path.name))


@pytest.fixture()
def pipelined(monkeypatch):
    """Także małe pliki idą potokiem (bez wczytania wszystkich przed pierwszym)."""
    monkeypatch.setattr(indexing, "PREPARE_AHEAD_BYTES", 0)


def test_preparation_runs_while_the_model_embeds_and_a_reader_error_is_the_same_skip(tmp_path, monkeypatch,
                                                                                     pipelined):
    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt", "b.txt", "c.txt", "d.txt"], paragraphs=3)
    (docs / "c.txt").write_bytes(b"")  # UnreadableFile: the usual one-line reason
    progress = Recorder()
    prepare_file = indexing.prepare_file
    overlapped = threading.Event()

    def preparing(source, doc_type=None, ocr=None):
        if source.path.name == "b.txt":  # prepared only once the model has started on a.txt
            overlapped.set() if progress.started("a.txt").wait(WAIT_S) else None
        if source.path.name == "d.txt":
            raise RuntimeError("błąd czytnika w wątku")  # a reader bug in the background thread
        return prepare_file(source, doc_type, ocr)

    monkeypatch.setattr(indexing, "prepare_file", preparing)
    report = Index(tmp_path / "db").add([docs], progress=progress)

    assert overlapped.is_set()
    assert sorted(Path(p).name for p in report.indexed) == ["a.txt", "b.txt"]
    assert report.skipped[str(docs / "c.txt")] == "c.txt: plik jest pusty."
    assert report.skipped[str(docs / "d.txt")] == "d.txt: nie da się odczytać (błąd czytnika RuntimeError)."
    # the totals come once every file is prepared (skipped ones left out), files are numbered in order
    assert ("start", 2, 6) in progress.events
    started = [e[1] for e in progress.events if e[0] == "start_file"]
    assert started == ["a.txt", "b.txt"]
    assert sum(e[1] for e in progress.events if e[0] == "advance") == 6
    assert Index(tmp_path / "db").check().ok


def test_a_file_is_written_while_the_model_embeds_the_next(tmp_path, monkeypatch, pipelined):
    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt", "b.txt", "c.txt"], paragraphs=2)
    progress = Recorder()
    write = indexing._Sync.write
    overlapped = []

    def writing(self, source, prepared, vectors, moved_from):
        following = {"a.txt": "b.txt", "b.txt": "c.txt"}.get(source.path.name)
        if following:  # the write of a file waits until the model starts on the next one
            overlapped.append(progress.started(following).wait(WAIT_S))
        return write(self, source, prepared, vectors, moved_from)

    monkeypatch.setattr(indexing._Sync, "write", writing)
    report = Index(tmp_path / "db").add([docs], progress=progress)
    assert overlapped == [True, True]
    assert list(report.indexed) == [str(docs / n) for n in ("a.txt", "b.txt", "c.txt")]
    assert report.embedded == 6 and report.seconds["zapis"] > 0
    assert Index(tmp_path / "db").check().ok


def test_ctrl_c_while_a_write_is_under_way_waits_for_it_and_leaves_whole_files(tmp_path, monkeypatch, pipelined):
    # Ctrl-C while the model embeds b.txt and a.txt is being written: a.txt goes in whole (its vectors were
    # computed, as without the thread), b.txt not at all; the next run indexes the rest.
    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt", "b.txt", "c.txt"], paragraphs=3)
    write = indexing._Sync.write
    writing_a = threading.Event()
    release_a = threading.Event()

    def writing(self, source, prepared, vectors, moved_from):
        if source.path.name == "a.txt":
            writing_a.set()
            release_a.wait(WAIT_S)
        return write(self, source, prepared, vectors, moved_from)

    class Interrupting(Recorder):
        def start_file(self, path: Path, chunks: int) -> None:
            super().start_file(path, chunks)
            if path.name == "b.txt":
                assert writing_a.wait(WAIT_S)
                release_a.set()  # the write goes on in its thread while the main thread is interrupted
                raise KeyboardInterrupt

    monkeypatch.setattr(indexing._Sync, "write", writing)
    db = tmp_path / "db"
    with pytest.raises(KeyboardInterrupt):
        Index(db).add([docs], progress=Interrupting())
    files = {Path(f.path).name: f.chunks for f in Index(db).files()}
    assert files == {"a.txt": 3}
    assert Index(db).check().ok

    monkeypatch.setattr(indexing._Sync, "write", write)
    report = Index(db).add([docs])
    assert sorted(Path(p).name for p in report.indexed) == ["b.txt", "c.txt"]
    assert {Path(f.path).name: f.chunks for f in Index(db).files()} == {"a.txt": 3, "b.txt": 3, "c.txt": 3}
    assert Index(db).check().ok


def test_a_failed_write_stops_the_run_with_its_own_error_and_keeps_earlier_files(tmp_path, monkeypatch, pipelined):
    from chroma_rag.errors import UserError

    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt", "b.txt", "c.txt"], paragraphs=2)
    write = indexing._Sync.write

    def writing(self, source, prepared, vectors, moved_from):
        if source.path.name == "b.txt":
            raise UserError("Baza była zajęta przez 1 s.")
        return write(self, source, prepared, vectors, moved_from)

    monkeypatch.setattr(indexing._Sync, "write", writing)
    db = tmp_path / "db"
    with pytest.raises(UserError, match="Baza była zajęta"):
        Index(db).add([docs])
    assert [Path(f.path).name for f in Index(db).files()] == ["a.txt"]
    assert Index(db).check().ok


def test_same_content_twice_in_one_run_is_one_document_with_two_paths(tmp_path, pipelined):
    # the second path waits for the first one's write (in the other thread) and becomes its alias
    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt", "b.txt"], paragraphs=2)
    (docs / "kopia.txt").write_bytes((docs / "a.txt").read_bytes())
    report = Index(tmp_path / "db").add([docs])
    assert report.same_document == {str(docs / "kopia.txt"): str((docs / "a.txt").resolve())}
    assert report.embedded == 4
    assert Index(tmp_path / "db").check().ok


def test_vector_cache_reads_only_what_was_appended_since_the_last_load(tmp_path):
    # indeksuj asks the cache once per file while its own file grows by every batch: each record is read once,
    # vectors come from the last record of a hash, a torn last record (kill while appending) is skipped
    import numpy as np

    from chroma_rag.storage.vector_cache import HASH_BYTES, VectorCache

    cache = VectorCache(tmp_path / "wektory", 4)
    first = np.arange(8, dtype=np.float32).reshape(2, 4)
    cache.append(["a" * 32, "b" * 32], first)
    assert set(cache.load(["a" * 32, "c" * 32])) == {"a" * 32}
    cache.append(["c" * 32, "a" * 32], first[::-1] + 10)
    found = cache.load(["a" * 32, "b" * 32, "c" * 32])
    assert np.array_equal(found["a" * 32], first[0] + 10) and np.array_equal(found["b" * 32], first[1])
    assert np.array_equal(found["c" * 32], first[1] + 10)
    other = tmp_path / "wektory" / "inny-komputer-1-4.bin"  # another process's file, torn at the end
    record_d = b"d" * HASH_BYTES + np.ones(4, np.float32).tobytes()
    record_e = b"e" * HASH_BYTES + np.full(4, 2, np.float32).tobytes()
    other.write_bytes(record_d + record_e[:10])
    assert set(cache.load(["d" * 32, "e" * 32])) == {"d" * 32}
    with other.open("ab") as handle:  # the torn record completed later: read from where the last load stopped
        handle.write(record_e[10:])
    assert np.array_equal(cache.load(["e" * 32])["e" * 32], np.full(4, 2))
    cache.clean()
    assert not cache._mine.exists()


def test_an_embedding_server_gets_its_own_batch_size_not_the_cache_batch(tmp_path, monkeypatch):
    # a GPU server behind Ollama / openai: takes CHROMA_RAG_EMBED_PACZKA fragments per request (default 32 for
    # Ollama); requests of 16 (the vector cache's batch) would leave it half idle
    from ollama_server import OllamaTestServer

    from chroma_rag.indexing.vector_reuse import CACHE_BATCH

    docs = tmp_path / "docs"
    write_docs(docs, ["dlugi.txt"], paragraphs=40)
    server = OllamaTestServer().start()
    try:
        monkeypatch.setenv("OLLAMA_URL", server.url)
        monkeypatch.delenv("CHROMA_RAG_EMBED_PACZKA", raising=False)
        report = Index(tmp_path / "db", model="ollama:multilingual-e5-small").add([docs])
        sizes = [len(payload["input"]) for _, payload in server.requests if len(payload["input"]) > 1]
    finally:
        server.stop()
    assert report.chunks == 40 and sizes == [32, 8] and max(sizes) > CACHE_BATCH


def test_progress_rate_and_eta_count_only_what_the_model_computes():
    # a resumed run takes thousands of vectors from the database in seconds: counted as done, but the rate and
    # the time left come from what the model computes (a resumed library showed "35125 fragm./s, ~12 min left")
    import os

    from rich.console import Console

    from chroma_rag.cli.progress import PLAIN_EVERY_S, PlainProgress

    now = [0.0]
    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    progress = PlainProgress(console, lambda: now[0])
    progress.start_file(Path("a.txt"), 100)
    progress.reuse(1000)  # before the totals: no numbers to divide yet
    now[0] = PLAIN_EVERY_S
    progress.advance(20)
    progress.start(2, 1100)
    progress.finish_file(Path("a.txt"))
    lines = console.export_text().splitlines()
    assert lines[0] == "plik 1/… · fragmenty 1020/… · 2.0 fragm./s · zostało ? · a.txt"
    assert lines[1] == "Do zaindeksowania: 2 pliki, 1100 fragmentów."
    assert lines[2] == "Gotowe: a.txt (plik 1/2 · fragmenty 1020/1100 · 2.0 fragm./s · zostało ~40 s)"
