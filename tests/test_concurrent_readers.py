"""Wielu czytelników naraz na prawdziwym serwerze ``serwuj``: te same wyniki co po kolei, a ``indeksuj`` w tym
samym folderze w trakcie nie daje żadnemu czytelnikowi błędu ani pół pliku (liczby fragmentów w ``/api/pliki``
są zawsze pełne)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from processes import expected_chunks, start
from serving_support import running_server
from sync_corpus import write_docs

from chroma_rag import Index

QUESTIONS = [
    "Kiedy zgłosić urlop przełożonemu?",
    "Jakie obowiązki ma pracodawca?",
    "termin złożenia wniosku",
    "kara za naruszenie przepisów",
    "prawo do wynagrodzenia",
    "obowiązek informacyjny",
    "kto wydaje decyzję",
    "odwołanie od decyzji",
]
CLIENTS = 8


def _search(base: str, question: str) -> list[tuple[str, float]]:
    response = httpx.get(f"{base}/api/szukaj", params={"q": question, "k": 5}, timeout=120)
    assert response.status_code == 200, response.text
    return [(hit["id"], hit["podobienstwo"]) for hit in response.json()["wyniki"]]


def test_parallel_readers_match_sequential(tmp_path):
    docs = tmp_path / "dokumenty"
    write_docs(docs, [f"akt-{n}.txt" for n in range(6)], paragraphs=5)
    db = tmp_path / "db"
    Index(db).add([docs])
    with running_server(db) as base:
        sequential = {q: _search(base, q) for q in QUESTIONS}
        with ThreadPoolExecutor(CLIENTS) as pool:
            parallel = list(pool.map(lambda q: (q, _search(base, q)), QUESTIONS * 3))
    assert all(hits == sequential[q] for q, hits in parallel)


def test_writer_never_breaks_readers_nor_shows_half_a_file(tmp_path):
    first, second = tmp_path / "pierwsze", tmp_path / "drugie"
    write_docs(first, [f"stary-{n}.txt" for n in range(3)], paragraphs=4)
    write_docs(second, [f"nowy-{n}.txt" for n in range(4)], paragraphs=6)
    # by name: the team's listing has no server paths (the names are unique here)
    full = {Path(path).name: chunks for path, chunks in (expected_chunks(first) | expected_chunks(second)).items()}
    db = tmp_path / "db"
    Index(db).add([first])
    errors: list[str] = []
    listings: list[dict[str, int]] = []
    stop = threading.Event()

    def reader(base: str, question: str) -> None:
        while not stop.is_set():
            try:
                _search(base, question)
                response = httpx.get(f"{base}/api/pliki", timeout=120)
                assert response.status_code == 200, response.text
                listings.append({f["plik"]: f["fragmenty"] for f in response.json()})
            except Exception as exc:  # every failure of a reader is what the test reports
                errors.append(f"{type(exc).__name__}: {exc}")

    with running_server(db) as base:
        threads = [threading.Thread(target=reader, args=(base, q)) for q in QUESTIONS[:CLIENTS]]
        for thread in threads:
            thread.start()
        writer = start("indeksuj", second, "--baza", db)
        out, err = writer.communicate(timeout=600)
        stop.set()
        for thread in threads:
            thread.join(timeout=300)
        after = httpx.get(f"{base}/api/pliki", timeout=120).json()
    assert writer.returncode == 0, out + err
    assert not errors, errors[:5]
    assert listings
    for listing in listings:  # a file is either absent or complete, never half
        assert all(full[path] == chunks for path, chunks in listing.items()), listing
    assert {f["plik"]: f["fragmenty"] for f in after} == full
