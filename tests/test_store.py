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
    assert sorted(paged.ids({"n": {"$gte": 4}})) == ids[4:]
    assert sorted(paged.records()) == ids
    assert sorted(paged.records(ids=ids[:7])) == ids[:7]
