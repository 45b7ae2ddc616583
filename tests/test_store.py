"""Magazyn: pobieranie porcjami (Chroma 1.5.9 nie zwraca ~100 tys. metadanych jednym `get`)."""

import numpy as np

from chroma_rag.storage.collection import ChunkCollection
from chroma_rag.storage.store import Store


def test_gets_are_paged_by_max_batch(tmp_path):
    store = Store(tmp_path / "db")
    collection = store.chunks("test:model", 4, create=True)
    ids = [f"f{i:02d}" for i in range(10)]
    vectors = np.eye(10, 4, dtype=np.float32) + 0.1
    collection.upsert(ids, vectors, [f"tekst {i}" for i in ids], [{"plik": "a.txt", "n": i} for i in range(10)])
    paged = ChunkCollection(collection._collection, max_batch=3)
    assert sorted(paged.metadatas()) == ids
    assert len(paged.metadatas(limit=5)) == 5
    assert sorted(paged.stored_ids({"n": {"$gte": 4}})) == ids[4:]
    assert sorted(paged.records()) == ids
    assert sorted(paged.records(ids=ids[:7])) == ids[:7]


def test_a_process_keeps_its_current_client_until_another_process_writes(tmp_path, monkeypatch):
    """Otwarcie klienta folderu wczytuje cały HNSW kolekcji (przy milionie fragmentów ~2 s), a `indeksuj` jednego
    pliku to kilka sesji (wektory do ponownego użycia, zapis, sprzątanie, indeks słów): po własnym zapisie proces
    zostaje przy swoim kliencie; zapis innego procesu każe otworzyć świeżego, który ten zapis widzi."""
    import subprocess
    import sys

    from sync_corpus import write_docs

    from chroma_rag import Index

    docs = tmp_path / "docs"
    write_docs(docs, ["a.txt"], paragraphs=2)
    db = tmp_path / "db"
    index = Index(db)
    index.add([docs])
    opened: list[Store] = []
    open_folder = Store._open_folder
    monkeypatch.setattr(Store, "_open_folder", lambda self: opened.append(self) or open_folder(self))
    write_docs(docs, ["b.txt"], paragraphs=2)
    assert list(index.add([docs]).indexed) == [str(docs / "b.txt")]
    assert {h.file for h in index.search("b zasada numer 2", k=10, threshold=None)} >= {"b.txt"}
    assert opened == []
    other = docs.parent / "inne"
    write_docs(other, ["c.txt"], paragraphs=2)
    script = f"from chroma_rag import Index; Index({str(db)!r}).add([{str(other)!r}])"
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=300)
    assert {h.file for h in index.search("c zasada numer 2", k=10, threshold=None)} >= {"c.txt"}
    assert len(opened) == 1


def test_registry_names_come_from_metadata_as_the_records_say(tmp_path):
    """Nazwy, ścieżki i drugie ścieżki dokumentów z samych metadanych rejestru (bez list id fragmentów) – to
    samo co z pełnych wpisów; wpis zapisany przed kluczem ``ta_sama_tresc`` jest czytany w całości."""
    import json
    from dataclasses import asdict

    from chroma_rag.storage.registry import FileRecord, Registry

    def record(path: str, same_as: str | None = None) -> FileRecord:
        return FileRecord(path=path, name=path.rsplit("/", 1)[-1], size=1, mtime=0.0, hash="h", chunker="x",
                          model="m", indexed_at="", doc_type="ustawa", year=2000,
                          chunk_ids=[] if same_as else [f"{path}#1"], same_as=same_as)

    registry = Registry(Store(tmp_path / "db").client, create=True)
    for entry in (record("/b/x.pdf"), record("/a/x.pdf", same_as="/b/x.pdf"), record("/c/y.pdf")):
        registry.put(entry)
    older = record("/d/z.pdf", same_as="/c/y.pdf")
    registry._collection.add(ids=[older.record_id], embeddings=[[1.0]], documents=[json.dumps(asdict(older))],
                             metadatas=[{"model": "m", "sciezka": older.path, "plik": older.name, "hash": "h"}])
    records = registry.records()
    assert registry.names() == ([(r.name, r.path) for r in records], {r.path: r.same_as for r in records if r.same_as})
    assert registry.names()[1] == {"/a/x.pdf": "/b/x.pdf", "/d/z.pdf": "/c/y.pdf"}
