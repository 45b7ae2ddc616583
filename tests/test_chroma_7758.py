"""chroma-core/chroma#7758 na żądanie: po usunięciach i nadpisaniach HNSW Chromy 1.5.9 gubi żywe fragmenty
(``query`` nie zwraca ich nawet ich własnym wektorem, ``get`` tak). Wyszukiwanie produktu na tym nie polega,
a ``indeksuj`` i ``sprawdz --napraw`` budują taką kolekcję od nowa."""

from __future__ import annotations

import numpy as np
import pytest
from sync_corpus import write_docs

from chroma_rag import Index
from chroma_rag.derived import DerivedIndex
from chroma_rag.indexing import consistency
from chroma_rag.storage.collection import VERSION_KEY, ChunkCollection
from chroma_rag.storage.locking import write_session
from chroma_rag.storage.store import Store, collection_name

MODEL, DIM = "test:losowe", 384
# Vectors around two centres (similarities in a narrow band, like a real model's) in a collection with Chroma's
# default graph, churned by rounds of deletes, upserts and adds: 2000 of them lose 10-30 chunks after three
# rounds on chromadb 1.5.9, a fresh graph of HNSW_CONFIGURATION none (1 in ~10 builds one, hence its retries).
CLUSTER_SPREAD, START_SIZE, MAX_ROUNDS = 0.5, 2000, 12
DEFAULT_GRAPH = {"hnsw": {"space": "cosine"}}


class Churn:
    """Kolekcja przeorana usunięciami i nadpisaniami; ``vectors`` to wektory żywych fragmentów."""

    def __init__(self, collection: ChunkCollection, seed: int, around: np.ndarray | None = None,
                 prefix: str = "id") -> None:
        self.collection, self.prefix = collection, prefix
        self.rng = np.random.default_rng(seed)
        self.centres = around if around is not None else self.rng.standard_normal((2, DIM))
        self.vectors: dict[str, np.ndarray] = {}
        self.next_id = 0
        self.add(START_SIZE)

    def fresh(self, n: int) -> np.ndarray:
        scale = CLUSTER_SPREAD * np.linalg.norm(self.centres[0]) / np.sqrt(DIM)  # the same band at any norm
        centres = self.centres[self.rng.integers(len(self.centres), size=n)]
        return (centres + scale * self.rng.standard_normal((n, DIM))).astype(np.float32)

    def write(self, ids: list[str], vectors: np.ndarray) -> None:
        self.collection.upsert(ids, vectors, [f"tekst {i}" for i in ids],
                               [{"plik": f"{int(i.rsplit('-', 1)[1]) % 7}.txt", "strona": 1} for i in ids])
        self.vectors.update(zip(ids, vectors, strict=True))

    def add(self, n: int) -> None:
        ids = [f"{self.prefix}-{self.next_id + j:05d}" for j in range(n)]
        self.next_id += n
        self.write(ids, self.fresh(n))

    def round(self) -> None:
        live = sorted(self.vectors)
        gone = [live[j] for j in self.rng.choice(len(live), len(live) // 2, replace=False)]
        self.collection.delete(gone)
        for i in gone:
            del self.vectors[i]
        live = sorted(self.vectors)
        changed = [live[j] for j in self.rng.choice(len(live), len(live) * 3 // 10, replace=False)]
        self.write(changed, self.fresh(len(changed)))
        self.add(len(gone))

    def until_lost(self) -> list[str]:
        """Kolejne rundy, aż Chroma zgubi fragmenty; lista zgubionych."""
        for _ in range(MAX_ROUNDS):
            self.round()
            lost = consistency.unfindable(self.collection)
            if lost:
                return lost
        pytest.fail(f"Chroma po {MAX_ROUNDS} rundach nie zgubiła żadnego fragmentu – jeśli #7758 naprawiono, "
                    "przebudowa kolekcji w indeksuj przestała być potrzebna")


def old_base(store: Store, model: str) -> ChunkCollection:
    """Kolekcja bazy sprzed HNSW_CONFIGURATION: domyślny graf Chromy."""
    store.client.create_collection(collection_name(model), embedding_function=None, configuration=DEFAULT_GRAPH,
                                   metadata={"model": model, "wymiar": DIM, VERSION_KEY: "przed"})
    return store.chunks(model, DIM)


def stored(collection: ChunkCollection) -> dict[str, tuple]:
    return collection.records()


def same(a: dict[str, tuple], b: dict[str, tuple]) -> bool:
    # Chroma hands some vectors back one float32 step off what it was given
    return a.keys() == b.keys() and all(
        a[i][:2] == b[i][:2] and np.allclose(a[i][2], b[i][2], rtol=1e-6, atol=1e-7) for i in a)


def test_lost_chunks_are_found_by_product_search_and_a_repair_brings_them_back(tmp_path):
    store = Store(tmp_path / "db")
    churn = Churn(old_base(store, MODEL), seed=7)
    lost = churn.until_lost()
    collection = store.chunks(MODEL, DIM)
    assert set(lost) <= set(churn.vectors) and set(lost) <= set(collection.records(ids=lost))  # live, not found

    # (a) the product ranks from its own snapshot: every live chunk comes first for its own vector
    derived = DerivedIndex(collection)
    assert derived.snapshot() is not None
    for own, vector in churn.vectors.items():
        assert derived.ranked(vector, 1, None)[0][0] == own
    for own in lost:  # and with a filter
        where = {"plik": f"{int(own.rsplit('-', 1)[1]) % 7}.txt"}
        assert derived.ranked(churn.vectors[own], 1, where)[0][0] == own

    # (b) a rebuild: the same chunks and change marker (the snapshot stays current), every chunk findable
    before, marker = stored(collection), collection.version()
    with write_session(store):
        assert consistency.ensure_findable(store, MODEL, DIM) > 0
    store.close()
    store = Store(tmp_path / "db")  # the sessions' client is another one
    rebuilt = store.chunks(MODEL, DIM)
    assert same(stored(rebuilt), before) and rebuilt.version() == marker
    assert consistency.unfindable(rebuilt) == [] and rebuilt.checked_findable()
    assert [c.name for c in store.client.list_collections() if c.name.startswith(collection_name(MODEL))] == [
        collection_name(MODEL)]
    store.close()


@pytest.mark.parametrize("repair", ["indeksuj", "sprawdz --napraw"])
def test_after_an_interrupted_write_a_collection_that_lost_chunks_is_rebuilt(tmp_path, repair):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write_docs(docs, [f"regulamin-{i}.txt" for i in range(3)], paragraphs=4)
    model = "lokalny:multilingual-e5-small"
    store = Store(db)
    old_base(store, model)
    store.close()
    index = Index(db)
    index.add([docs])
    files = {f.path: f.chunks for f in index.files()}

    # leftovers of interrupted writes: chunks no registry entry owns, written and rewritten many times
    store = Store(db)
    collection = store.chunks(model, DIM)
    real = collection.records()
    centres = np.stack([vector for _, _, vector in real.values()][:2])
    lost = Churn(collection, seed=11, around=centres, prefix="przerwany").until_lost()
    store.close()

    index = Index(db)
    if repair == "indeksuj":
        report = index.add([docs])
        assert report.orphans_removed > 0
        if any(i in real for i in lost):  # a real chunk was lost: the rebuild said so
            assert any("chroma-core/chroma#7758" in note for note in report.notes), report.notes
    else:
        assert not index.check().ok
        assert any("sierot" in done for done in index.check(repair=True).repaired)
    check = index.check()
    assert check.ok, check.unfindable
    assert {f.path: f.chunks for f in index.files()} == files and check.chunks == sum(files.values())


def test_a_rebuild_cut_short_between_its_renames_is_finished_by_the_next_writer(tmp_path):
    store = Store(tmp_path / "db")
    churn = Churn(store.chunks(MODEL, DIM, create=True), seed=3)
    before = stored(store.chunks(MODEL, DIM))
    name = collection_name(MODEL)
    # the copy is complete and the original set aside, the copy not yet renamed (killed in between)
    store.client.create_collection(name + "-nowa", embedding_function=None, metadata={"model": MODEL, "wymiar": DIM})
    store.client.get_collection(name, embedding_function=None).modify(name=name + "-stara")
    assert same(stored(store.chunks(MODEL, DIM)), before)  # a reader sees the original meanwhile
    assert store.indexed_models() == {MODEL: DIM}
    churn.collection = store.chunks(MODEL, DIM, create=True)  # a writer puts the original back
    assert same(stored(churn.collection), before)
    assert sorted(c.name for c in store.client.list_collections() if c.name.startswith(name)) == [name]
    store.close()


def test_a_rebuild_on_a_chroma_server_keeps_every_chunk(chroma_server: str) -> None:
    store = Store(server=chroma_server)
    model = "test:przebudowa-na-serwerze"
    churn = Churn(store.chunks(model, DIM, create=True), seed=5)
    before, marker = stored(store.chunks(model, DIM)), store.chunks(model, DIM).version()
    rebuilt = store.rebuild_chunks(model, DIM)
    assert same(stored(rebuilt), before) and rebuilt.version() == marker and len(before) == len(churn.vectors)
    assert sorted(c.name for c in store.client.list_collections() if c.name.startswith(collection_name(model))) == [
        collection_name(model)]
