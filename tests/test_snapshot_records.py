"""Treść i metadane wyników z migawki (``storage.records``): wyszukiwanie z migawką nie woła ``get`` Chromy
(w trybie folderu każdy ``get`` wczytuje do procesu cały indeks HNSW), a wynik jest ten sam co z Chromy –
po zbudowaniu, po dopisaniu i usunięciu fragmentów (nowy segment), w nowym procesie i po uszkodzeniu pliku."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from chroma_rag.derived import DerivedIndex, forget_loaded
from chroma_rag.storage import journal_pages, records
from chroma_rag.storage.collection import ChunkCollection
from chroma_rag.storage.journal import JOURNAL, JournalLimits
from chroma_rag.storage.store import Store

N, DIM = 400, 16


class _CountingCollection:
    """Kolekcja Chromy, która liczy wywołania ``get`` (reszta bez zmian)."""

    def __init__(self, inner) -> None:
        self.inner, self.gets = inner, 0

    def get(self, **kwargs):
        self.gets += 1
        return self.inner.get(**kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _metadata(i: int) -> dict:
    return {"plik": f"plik-{i % 7}.pdf", "rok": 1990 + i % 30, "typ": "ustawa", "strona": i, "tytul": "Ustawa ż",
            "uchylony": i % 2 == 0, "waga": 0.5}


@pytest.fixture(params=["folder", "serwer"])
def chunks(request, tmp_path, chroma_servers):
    folder = request.param == "folder"
    store = Store(tmp_path / "dane") if folder else Store(server=chroma_servers.start(tmp_path / "s"))
    collection = store.chunks("test:tresc", DIM, create=True)
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(N, DIM)).astype(np.float32)
    texts = [f"Art. {i}. Zażółć gęślą jaźń {i}" for i in range(N)]
    collection.upsert([f"id-{i:04d}" for i in range(N)], vectors, texts, [_metadata(i) for i in range(N)])
    forget_loaded()
    yield collection, vectors
    forget_loaded()


def _spied(collection: ChunkCollection) -> tuple[DerivedIndex, _CountingCollection]:
    spy = _CountingCollection(collection.chroma)
    return DerivedIndex(ChunkCollection(spy, collection._max_batch, collection._client, collection.derived_dir,
                                        collection._journal)), spy


def _from_chroma(collection: ChunkCollection, ids: list[str]) -> list[tuple[str, dict]]:
    got = collection.chroma.get(ids=ids, include=["documents", "metadatas"])
    found = dict(zip(got["ids"], zip(got["documents"], got["metadatas"], strict=True), strict=True))
    return [found[i] for i in ids]


def test_search_results_come_from_the_snapshot_without_chroma_get(chunks):
    collection, vectors = chunks
    spied, spy = _spied(collection)
    assert spied.snapshot() is not None
    spy.gets = 0
    hits = spied.query(vectors[5], 5, {"rok": {"$gte": 2000}})
    ids = ["id-0011", "id-0002", "id-0399"]
    plain = spied.hits(ids)
    scored = spied.hits(ids, vectors[0])
    assert spy.gets == 0
    assert [(h.text, h.metadata) for h in hits] == _from_chroma(collection, [h.id for h in hits])
    assert [(h.text, h.metadata) for h in plain] == _from_chroma(collection, ids)
    units = vectors[[11, 2, 399]] / np.linalg.norm(vectors[[11, 2, 399]], axis=1, keepdims=True)
    assert np.allclose([h.similarity for h in scored], units @ vectors[0], atol=1e-5)


def test_appended_and_deleted_chunks_in_a_new_process(chunks):
    collection, vectors = chunks
    assert DerivedIndex(collection).snapshot() is not None
    collection.upsert(["nowy-1", "id-0003"], vectors[:2], ["Nowy tekst § 1", "Zmieniony tekst"],
                      [{"plik": "nowy.pdf", "rok": 2024}, {"plik": "zmieniony.pdf", "rok": 1999}])
    collection.delete(["id-0004"])
    forget_loaded()  # a new process: the snapshot comes from disk
    spied, spy = _spied(collection)
    assert spied.snapshot() is not None  # catching up fetches the changed chunks, once
    spy.gets = 0
    hits = spied.hits(["nowy-1", "id-0003", "id-0005"])
    assert spy.gets == 0
    assert [(h.text, h.metadata["plik"]) for h in hits] == [
        ("Nowy tekst § 1", "nowy.pdf"), ("Zmieniony tekst", "zmieniony.pdf"),
        ("Art. 5. Zażółć gęślą jaźń 5", "plik-5.pdf")]
    assert len(spied.snapshot().segments) == (2 if collection._journal else 1)  # server: no journal, rebuilt
    assert spied.hits(["id-0004"]) == []  # deleted: the snapshot does not know it, Chroma has nothing either


def test_catching_up_with_a_removal_fetches_nothing_from_chroma(chunks):
    """Usunięte fragmenty wystarczy wygasić w migawce: w trybie folderu każdy ``get`` wczytuje cały HNSW
    (przy milionie fragmentów ~3 s przy każdym usuniętym pliku)."""
    collection, vectors = chunks
    if not collection._journal:
        pytest.skip("serwer nie ma dziennika: migawka budowana od nowa")
    assert DerivedIndex(collection).snapshot() is not None
    collection.delete(["id-0004", "id-0006"])
    collection.upsert(["id-0008"], vectors[:1], ["Zmieniony tekst"], [{"plik": "zmieniony.pdf", "rok": 1999}])
    collection.delete(["id-0008"])  # written, then removed: nothing to fetch either
    forget_loaded()  # a new process: the snapshot comes from disk
    spied, spy = _spied(collection)
    found = spied.snapshot()
    assert spy.gets == 0 and found is not None and len(found) == N - 3
    assert spied.hits(["id-0004", "id-0008", "id-0005"])[0].text == "Art. 5. Zażółć gęślą jaźń 5"
    assert len(spied.ranked(vectors[4], N, None)) == N - 3


def test_a_damaged_record_file_rebuilds_the_snapshot(chunks):
    collection, _ = chunks
    first = DerivedIndex(collection).snapshot()
    folder = collection.derived_dir / first.marker
    damaged = next(folder.glob(f"*{records.BYTES_SUFFIX}"))
    # a new, shorter file in its place: the mapped old one must not change under this process
    (folder / "krotszy").write_bytes(damaged.read_bytes()[:-10])
    os.replace(folder / "krotszy", damaged)
    forget_loaded()
    again = DerivedIndex(collection).snapshot()
    assert again is not None and again.segments[0].name != first.segments[0].name
    assert DerivedIndex(collection).hits(["id-0007"])[0].text == "Art. 7. Zażółć gęślą jaźń 7"


def test_catching_up_with_an_addition_fetches_nothing_from_chroma(chunks):
    """Wstawione fragmenty czytelnik bierze z pliku treści zapisu obok dziennika (``journal_pages``), a nie z ``get``
    Chromy – także zastąpiony fragment z metadanymi, które Chroma przy ``upsert`` scala ze starymi."""
    collection, vectors = chunks
    if not collection._journal:
        pytest.skip("serwer nie ma dziennika: migawka budowana od nowa")
    assert DerivedIndex(collection).snapshot() is not None
    collection.upsert(["nowy-1", "id-0003"], vectors[:2], ["Nowy tekst § 1", "Zmieniony tekst"],
                      [{"plik": "nowy.pdf", "rok": 2024}, {"plik": "zmieniony.pdf", "rok": 1999}])
    collection.upsert(["nowy-2", "nowy-1"], vectors[2:4], ["Drugi tekst", "Nowy tekst po zmianie"],
                      [{"plik": "nowy.pdf", "rok": 2025}, {"plik": "nowy.pdf", "rok": 2026}])
    forget_loaded()  # a new process: the snapshot comes from disk
    spied, spy = _spied(collection)
    found = spied.snapshot()
    assert spy.gets == 0 and found is not None and len(found) == N + 2 and len(found.segments) == 2
    ids = ["nowy-1", "id-0003", "nowy-2", "id-0005"]
    hits = spied.hits(ids, vectors[0])
    assert spy.gets == 0
    assert [(h.text, h.metadata) for h in hits] == _from_chroma(collection, ids)
    assert hits[0].text == "Nowy tekst po zmianie" and hits[1].metadata["waga"] == 0.5  # kept by Chroma
    units = vectors[[3, 1, 2, 5]] / np.linalg.norm(vectors[[3, 1, 2, 5]], axis=1, keepdims=True)
    assert np.allclose([h.similarity for h in hits], units @ vectors[0], atol=1e-5)


@pytest.mark.parametrize("damage", ["brak", "obciety", "zmienione-bajty", "czesc-id"])
def test_a_missing_or_damaged_journal_page_falls_back_to_chroma(chunks, damage):
    """Brak albo uszkodzenie pliku treści zapisu to tylko brak skrótu: brakujące fragmenty idą z Chromy, migawka
    dalej powstaje z poprzedniej wersji."""
    collection, vectors = chunks
    if not collection._journal:
        pytest.skip("serwer nie ma dziennika: migawka budowana od nowa")
    assert DerivedIndex(collection).snapshot() is not None
    ids = ["nowy-1", "nowy-2"]
    collection.upsert(ids, vectors[:2], ["Nowy tekst § 1", "Nowy tekst § 2"],
                      [{"plik": "nowy.pdf", "rok": 2024}, {"plik": "nowy.pdf", "rok": 2025}])
    page = journal_pages.path(collection.derived_dir, collection.version())
    content = page.read_bytes()
    if damage == "brak":
        page.unlink()
    elif damage == "obciety":
        page.write_bytes(content[: len(content) // 2])
    elif damage == "zmienione-bajty":  # same length, the zip's CRC no longer matches
        middle = len(content) // 2
        flipped = bytes(b ^ 0xFF for b in content[middle : middle + 64])
        page.write_bytes(content[:middle] + flipped + content[middle + 64 :])
    else:  # a readable page with only the first chunk: the other one comes from Chroma
        journal_pages.write(collection.derived_dir, collection.version(),
                            collection.chroma.get(ids=ids[:1], include=journal_pages.INCLUDE),
                            collection.journal_limits.pages_bytes)
    forget_loaded()
    spied, spy = _spied(collection)
    found = spied.snapshot()
    assert found is not None and len(found) == N + 2 and len(found.segments) == 2 and spy.gets == 1
    assert [(h.text, h.metadata) for h in spied.hits(ids)] == _from_chroma(collection, ids)


def test_journal_pages_are_removed_with_the_journal_and_kept_under_a_limit(chunks):
    """Pliki treści zapisów to dane pochodne o ograniczonym rozmiarze: znikają z wpisami przyciętego dziennika,
    najstarsze ponad ``JournalLimits.pages_bytes`` bajtów i – przy pełnej budowie migawki – te, które do niej
    prowadzą."""
    collection, vectors = chunks
    if not collection._journal:
        pytest.skip("serwer nie ma dziennika ani plików treści zapisów")
    root = collection.derived_dir

    def pages() -> set[str]:
        return {p.name for p in root.glob(f"{journal_pages.PREFIX}*{journal_pages.SUFFIX}")}

    def write(n: int) -> str:
        collection.upsert([f"nowy-{n}"], vectors[n : n + 1], [f"Tekst {n}"], [{"plik": "nowy.pdf", "rok": 2000 + n}])
        return journal_pages.path(root, collection.version()).name

    assert pages() == set()  # the fixture's write came before any snapshot: no reader would read its page
    assert DerivedIndex(collection).snapshot() is not None  # built from scratch
    written = [write(n) for n in range(4)]
    assert pages() == set(written)
    collection.journal_limits = JournalLimits(entries_bytes=1)
    written.append(write(4))  # the journal keeps only the newer half of its entries, with their pages
    collection.journal_limits = JournalLimits(entries_bytes=2**30, pages_bytes=2**30)
    journal = (root / JOURNAL).read_text(encoding="utf-8").splitlines()
    kept = {journal_pages.path(root, json.loads(line)["po"]).name for line in journal}
    assert written[-1] in kept and set(written) - kept and pages() == kept & set(written)
    collection.journal_limits = JournalLimits(entries_bytes=2**30, pages_bytes=1)
    newest = write(5)
    assert pages() == {newest}  # over the limit: only the newest one stays
    collection.journal_limits = JournalLimits(entries_bytes=2**30, pages_bytes=2**30)
    write(6)
    # a reader without a usable version builds from scratch
    shutil.rmtree(root / DerivedIndex(collection).snapshot().marker)
    forget_loaded()
    assert DerivedIndex(collection).snapshot() is not None and pages() == set()  # the pages leading to it go
