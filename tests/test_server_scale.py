"""Strategia filtrowanego wyszukiwania w ``ChunkCollection.query`` (issue 8): obie ścieżki – dokładna
dla wąskich filtrów i HNSW z nadpróbkowaniem dla szerokich – dają wynik dokładnego przeszukania,
w folderze i na serwerze. Wektory losowe (bez modelu), więc test jest szybki."""

from __future__ import annotations

import numpy as np
import pytest

from chroma_rag import store as store_module
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.store import Store, matches_where

N, DIM, K = 3000, 64, 5


@pytest.fixture(scope="module")
def data() -> dict:
    rng = np.random.default_rng(7)
    centers = rng.normal(size=(40, DIM))
    vectors = centers[rng.integers(40, size=N)] + 0.3 * rng.normal(size=(N, DIM))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    years = rng.integers(1990, 2024, size=N)
    types = np.where(rng.random(N) < 0.1, "rozporzadzenie", "ustawa")
    files = rng.integers(300, size=N)
    return {"vectors": vectors, "years": years, "types": types, "files": files,
            "queries": vectors[rng.integers(N, size=12)] + 0.05 * rng.normal(size=(12, DIM)).astype(np.float32)}


@pytest.fixture(scope="module", params=["folder", "serwer"])
def collection(request, data, tmp_path_factory, chroma_servers):
    path = tmp_path_factory.mktemp("skala") / "dane"
    store = Store(path) if request.param == "folder" else Store(server=chroma_servers.start(path))
    chunks = store.chunks("test:losowe", DIM, create=True)
    metadatas = [
        {"plik": f"plik-{f}.pdf", "rok": int(y), "typ": str(t), "strona": 1}
        for f, y, t in zip(data["files"], data["years"], data["types"], strict=True)
    ]
    chunks.upsert([f"id-{i:05d}" for i in range(N)], data["vectors"], [f"tekst {i}" for i in range(N)], metadatas)
    return chunks


CASES = {
    "wszystko": (SearchFilters(), lambda d: np.ones(N, dtype=bool)),
    "plik": (SearchFilters(files=["plik-7.pdf"]), lambda d: d["files"] == 7),
    "typ": (SearchFilters(types=["rozporzadzenie"]), lambda d: d["types"] == "rozporzadzenie"),
    "lata": (SearchFilters(year_from=2007), lambda d: d["years"] >= 2007),
    "typ+lata": (
        SearchFilters(types=["ustawa"], year_to=1995),
        lambda d: (d["types"] == "ustawa") & (d["years"] <= 1995),
    ),
    "nic": (SearchFilters(year=1800), lambda d: np.zeros(N, dtype=bool)),
}


@pytest.mark.parametrize("max_candidates", [10**9, 0], ids=["hnsw-nadprobkowanie", "dokladnie"])
@pytest.mark.parametrize("case", list(CASES))
def test_filtered_query_matches_exact_search(monkeypatch, collection, data, case, max_candidates):
    monkeypatch.setattr(store_module, "MAX_CANDIDATES", max_candidates)
    filters, mask_of = CASES[case]
    mask = mask_of(data)
    for query in data["queries"]:
        scores = np.where(mask, data["vectors"] @ query / np.linalg.norm(query), -np.inf)
        expected = [f"id-{i:05d}" for i in np.argsort(-scores)[: min(K, int(mask.sum()))]]
        hits = collection.query(query, K, build_where(filters))
        assert [h.id for h in hits] == expected
        assert all(mask[int(h.id[3:])] for h in hits)
        assert np.allclose([h.similarity for h in hits], scores[[int(i[3:]) for i in expected]], atol=1e-4)
        assert all(h.text and h.metadata["plik"] for h in hits)


def test_query_without_where_uses_plain_hnsw(collection, data):
    query = data["queries"][0]
    expected = np.argsort(-(data["vectors"] @ query))[:K]
    assert [h.id for h in collection.query(query, K, None)] == [f"id-{i:05d}" for i in expected]


@pytest.mark.parametrize(
    "where",
    [
        {"uchylony": {"$ne": True}},
        {"typ": {"$nin": ["ustawa"]}},
        {"$or": [{"rok": {"$lt": 1992}}, {"plik": {"$in": ["plik-1.pdf", "plik-2.pdf"]}}]},
        {"$and": [{"rok": {"$gt": 2000}}, {"rok": {"$lte": 2003}}, {"typ": "ustawa"}, {"strona": {"$ne": 2}}]},
        {"rok": "2000"},
        {"brak": 1},
    ],
)
def test_where_check_agrees_with_chroma(collection, where):
    """Sprawdzanie ``where`` na metadanych kandydatów daje ten sam zbiór co Chroma (także brak klucza)."""
    everything = collection._collection.get(include=["metadatas"])
    ours = {i for i, meta in zip(everything["ids"], everything["metadatas"], strict=True) if matches_where(meta, where)}
    assert ours == set(collection._collection.get(where=where, include=[])["ids"])
