"""Strategia filtrowanego wyszukiwania w ``DerivedIndex.query`` (issue 8): wszystkie ścieżki – z lokalnej
migawki (dokładna i HNSW z maską), bez niej dokładna dla wąskich filtrów i HNSW z nadpróbkowaniem dla
szerokich – dają wynik dokładnego przeszukania, w folderze i na serwerze; migawka nadąża za zapisami
(także cudzymi) i odbudowuje się po uszkodzeniu. Wektory losowe (bez modelu), więc test jest szybki."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chroma_rag.derived import DEFAULT_PARAMS, DerivedIndex, forget_loaded
from chroma_rag.derived import snapshot as snapshot_module
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.storage.collection import ChunkCollection
from chroma_rag.storage.filtered_ranking import DEFAULT_RANKING
from chroma_rag.storage.store import Store
from chroma_rag.storage.where import matches_where

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
    return DerivedIndex(chunks)


def snapshot_params(**changed) -> object:
    return replace(DEFAULT_PARAMS, snapshot=replace(DEFAULT_PARAMS.snapshot, **changed))


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


def expected_ids(vectors: np.ndarray, mask: np.ndarray, query: np.ndarray, ids: list[str]) -> list[str]:
    scores = np.where(mask, vectors @ query / np.linalg.norm(query), -np.inf)
    return [ids[i] for i in np.argsort(-scores)[: min(K, int(mask.sum()))]]


STRATEGIES = {  # name: (use the snapshot, RankingParams.max_candidates, SnapshotParams.exact_rows)
    "migawka-dokladnie": (True, 2000, 10**9),
    "migawka-int8": (True, 2000, 0),  # int8 for every candidate, the best rescored in float32
    "hnsw-nadprobkowanie": (False, 10**9, 0),
    "dokladnie": (False, 0, 0),
}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("case", list(CASES))
def test_filtered_query_matches_exact_search(collection, data, case, strategy):
    """Ścieżka z migawką i ścieżka prosto z Chromy (bez folderu danych pochodnych) dają dokładny wynik."""
    use_snapshot, max_candidates, exact_rows = STRATEGIES[strategy]
    stored = collection.collection
    ranking = replace(DEFAULT_RANKING, max_candidates=max_candidates)
    folder = stored.derived_dir if use_snapshot else None
    collection = DerivedIndex(ChunkCollection(stored.chroma, stored._max_batch, stored._client, folder, stored._journal,
                                              ranking=ranking), params=snapshot_params(exact_rows=exact_rows))
    assert (collection.snapshot() is not None) == use_snapshot
    filters, mask_of = CASES[case]
    mask = mask_of(data)
    for query in data["queries"]:
        scores = np.where(mask, data["vectors"] @ query / np.linalg.norm(query), -np.inf)
        expected = expected_ids(data["vectors"], mask, query, [f"id-{i:05d}" for i in range(N)])
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
        {"plik": {"$nin": ["plik-1.pdf", "plik-2.pdf"]}},  # the snapshot: a few rejected values
        {"plik": {"$in": [f"plik-{f}.pdf" for f in range(5, 60)]}},  # many allowed and many rejected
        {"$and": [{"typ": "ustawa"}, {"plik": "plik-7.pdf"}]},  # narrow: rows listed by their rank
    ],
)
def test_where_check_agrees_with_chroma(collection, where):
    """Sprawdzanie ``where`` na metadanych kandydatów i na kolumnach migawki daje ten sam zbiór co Chroma (także
    brak klucza); id z migawki w kolejności id."""
    everything = collection.collection.chroma.get(include=["metadatas"])
    ours = {i for i, meta in zip(everything["ids"], everything["metadatas"], strict=True) if matches_where(meta, where)}
    chroma = set(collection.collection.chroma.get(where=where, include=[])["ids"])
    assert ours == chroma
    assert list(collection.rows(where)) == sorted(chroma)


def test_ids_and_columns_come_from_the_snapshot(collection, data):
    assert collection.snapshot() is not None
    where = build_where(SearchFilters(types=["rozporzadzenie"], year_to=2000))
    assert sorted(collection.rows(where)) == sorted(collection.collection.chroma.get(where=where, include=[])["ids"])
    years = collection.column("rok", None)
    assert len(years) == N and all(years[f"id-{i:05d}"] == int(data["years"][i]) for i in range(0, N, 97))
    assert collection.file_titles() == {f"plik-{f}.pdf": "" for f in set(data["files"].tolist())}
    rows = collection.snapshot().rows(["id-00007", "nie-ma", "id-00007-dluzsze-niz-kazde-id", "id-02999"])
    assert rows.tolist() == [7, -1, -1, 2999]


@pytest.fixture(params=["folder", "serwer"])
def small(request, tmp_path, chroma_servers):
    """Mała kolekcja do zmieniania: (magazyn, kolekcja, wektory wg id, metadane wg id)."""
    path = tmp_path / "dane"
    store = Store(path) if request.param == "folder" else Store(server=chroma_servers.start(path))
    rng = np.random.default_rng(3)
    vectors = {f"a-{i:03d}": v for i, v in enumerate(rng.normal(size=(200, DIM)).astype(np.float32))}
    metas = {i: {"plik": f"plik-{n % 7}.pdf", "rok": 2000 + n % 20, "typ": "ustawa"} for n, i in enumerate(vectors)}
    chunks = store.chunks("test:male", DIM, create=True)
    ids = list(vectors)
    chunks.upsert(ids, np.stack([vectors[i] for i in ids]), ids, [metas[i] for i in ids])
    return store, DerivedIndex(chunks), vectors, metas


def check_against_exact(chunks, vectors, metas, rng) -> None:
    """Wyniki z migawki == dokładne przeszukanie bieżących danych, dla kilku filtrów."""
    ids = sorted(vectors)
    matrix = np.stack([vectors[i] for i in ids])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    for filters in (SearchFilters(), SearchFilters(files=["plik-3.pdf"]), SearchFilters(year_from=2010),
                    SearchFilters(year=2031)):
        where = build_where(filters)
        mask = np.array([matches_where(metas[i], where) for i in ids])
        query = rng.normal(size=DIM).astype(np.float32)
        assert [h.id for h in chunks.query(query, K, where)] == expected_ids(matrix, mask, query, ids)
    assert chunks.snapshot().marker == chunks.version()
    assert sorted(chunks.snapshot().id_list()) == ids


def test_snapshot_follows_add_replace_and_remove(monkeypatch, small):
    store, chunks, vectors, metas = small
    rng = np.random.default_rng(5)
    check_against_exact(chunks, vectors, metas, rng)
    first = chunks.snapshot().marker
    builds = []
    build = snapshot_module.build
    monkeypatch.setattr(snapshot_module, "build", lambda *args: builds.append(args[1]) or build(*args))
    # another writer (a second client of the same database) changes the collection
    other = Store(store.path) if not store.is_server else Store(server=store.server.url)
    writer = other.chunks("test:male", DIM)
    added = {f"b-{i:03d}": v for i, v in enumerate(rng.normal(size=(30, DIM)).astype(np.float32))}
    for i in added:
        metas[i] = {"plik": "plik-3.pdf", "rok": 2015, "typ": "ustawa"}
    writer.upsert(list(added), np.stack(list(added.values())), list(added), [metas[i] for i in added])
    vectors.update(added)
    check_against_exact(chunks, vectors, metas, rng)
    assert chunks.snapshot().marker != first
    replaced = ["a-003", "a-010", "b-004"]
    for i in replaced:
        vectors[i] = rng.normal(size=DIM).astype(np.float32)
        metas[i] = {"plik": "plik-3.pdf", "rok": 2031, "typ": "ustawa"}  # a value the snapshot has not seen
    writer.upsert(replaced, np.stack([vectors[i] for i in replaced]), replaced, [metas[i] for i in replaced])
    check_against_exact(chunks, vectors, metas, rng)
    removed = ["a-001", "a-003", "b-000"]
    writer.delete(removed)
    for i in removed:
        del vectors[i], metas[i]
    check_against_exact(chunks, vectors, metas, rng)
    # the exact query of a replaced vector finds it first
    assert chunks.query(vectors["a-010"], 1, None)[0].id == "a-010"
    # folder: each new version came from the previous one and the journal of changes; server: rebuilt
    assert len(builds) == (3 if store.is_server else 0)


@pytest.mark.parametrize("damage", ["obciety", "opis", "brak"])
def test_damaged_snapshot_is_rebuilt(small, damage):
    store, chunks, vectors, metas = small
    rng = np.random.default_rng(9)
    check_against_exact(chunks, vectors, metas, rng)
    folder = store.work_dir / f"migawka-{chunks.collection.chroma.name}" / chunks.version()
    if damage == "obciety":
        segment = next(folder.glob("*.f32.npy"))
        content = segment.read_bytes()
        segment.write_bytes(content[: len(content) // 2])
    elif damage == "opis":
        (folder / "opis.json").write_text("{nie json", encoding="utf-8")
    else:
        (folder / "kody.npy").unlink()
    forget_loaded()  # as in a new process
    check_against_exact(chunks, vectors, metas, rng)
    assert len(snapshot_module.load(folder.parent, folder.name, DEFAULT_PARAMS.snapshot)) == len(vectors)


def test_broken_journal_chain_rebuilds_from_scratch(small, monkeypatch):
    """Wpis dziennika bez następcy (zapis przerwany przed zmianą znacznika) rozwidla łańcuch: pełna budowa."""
    store, chunks, vectors, metas = small
    if store.is_server:
        pytest.skip("dziennik zmian jest tylko w trybie folderu")
    rng = np.random.default_rng(11)
    check_against_exact(chunks, vectors, metas, rng)
    chunks.collection.announce_version(["a-005"])  # a write that died right after announcing itself
    vectors["a-005"] = rng.normal(size=DIM).astype(np.float32)
    chunks.collection.upsert(["a-005"], vectors["a-005"][None, :], ["a-005"], [metas["a-005"]])
    builds = []
    build = snapshot_module.build
    monkeypatch.setattr(snapshot_module, "build", lambda *args: builds.append(args[1]) or build(*args))
    check_against_exact(chunks, vectors, metas, rng)
    assert builds == [chunks.version()]


def test_appended_segments_follow_changes(small):
    """Dopisanie pliku do migawki nie przepisuje wektorów: poprzednie segmenty zostają (dowiązane), nowe
    wiersze to nowy segment, usunięte i zastąpione – martwe wiersze; wyniki jak dokładne przeszukanie."""
    store, chunks, vectors, metas = small
    if store.is_server:
        pytest.skip("dziennik zmian (aktualizacja zamiast budowy) jest tylko w trybie folderu")
    chunks = DerivedIndex(chunks.collection, params=snapshot_params(compact_fraction=10.0))
    rng = np.random.default_rng(13)
    check_against_exact(chunks, vectors, metas, rng)
    base = chunks.snapshot().segments[0].name
    for round_ in range(3):
        added = {f"c{round_}-{i:02d}": v for i, v in enumerate(rng.normal(size=(12, DIM)).astype(np.float32))}
        for i in added:
            metas[i] = {"plik": "plik-3.pdf", "rok": 2010 + round_, "typ": "ustawa"}
        replaced = [f"a-{10 * round_ + 5:03d}"]
        vectors[replaced[0]] = rng.normal(size=DIM).astype(np.float32)
        ids = [*added, *replaced]
        vectors.update(added)
        chunks.collection.upsert(ids, np.stack([vectors[i] for i in ids]), ids, [metas[i] for i in ids])
        removed = f"a-{10 * round_ + 7:03d}"
        chunks.collection.delete([removed])
        del vectors[removed], metas[removed]
        check_against_exact(chunks, vectors, metas, rng)
        assert chunks.query(vectors[replaced[0]], 1, None)[0].id == replaced[0]
    found = chunks.snapshot()
    assert found.segments[0].name == base and len(found.segments) == 4  # the base + one per round (removals add none)
    assert len(found) == len(vectors) and int((~found.alive).sum()) == 6
    forget_loaded()  # a new process reads the same version from disk
    check_against_exact(chunks, vectors, metas, rng)
    # too many segments: the appended ones merge into one (their live rows and the new ones), the base stays
    chunks = DerivedIndex(chunks.collection, params=snapshot_params(compact_fraction=10.0, max_segments=4))
    extra = {"c9-00": rng.normal(size=DIM).astype(np.float32)}
    metas["c9-00"] = {"plik": "plik-4.pdf", "rok": 2020, "typ": "ustawa"}
    vectors.update(extra)
    chunks.collection.upsert(list(extra), np.stack(list(extra.values())), list(extra), [metas["c9-00"]])
    merged = chunks.snapshot()
    assert [s.name for s in merged.segments][:1] == [base] and len(merged.segments) == 2
    assert len(merged.segments[1]) == 3 * 13 + 1 and int((~merged.alive).sum()) == 6  # dead rows: all in the base
    check_against_exact(chunks, vectors, metas, rng)
    forget_loaded()
    check_against_exact(chunks, vectors, metas, rng)
    # dead and appended rows over COMPACT_FRACTION: the next version is one segment again, with the same content
    chunks = DerivedIndex(chunks.collection)
    chunks.collection.delete(["a-100"])
    del vectors["a-100"], metas["a-100"]
    check_against_exact(chunks, vectors, metas, rng)
    assert len(chunks.snapshot().segments) == 1 and chunks.snapshot().alive.all()


def test_clusters_find_the_nearest_and_follow_changes(tmp_path, data):
    """Duża kolekcja w skupiskach (IVF) z int8: przegląda tylko najbliższe skupiska, a i tak znajduje
    prawie wszystkie dokładne wyniki, z dokładnym podobieństwem; dopisane i usunięte fragmenty widzi od razu."""
    params = snapshot_params(ivf_min_rows=1000, exact_rows=100, nprobe=6, probe_fraction=0.1, matched_min=300,
                             compact_fraction=10.0, narrow_rows=500, coarse_min_rows=1000, coarse_candidates=200)
    stored = Store(tmp_path / "dane").chunks("test:skupiska", DIM, create=True)
    chunks = DerivedIndex(stored, params=params)
    ids = [f"id-{i:05d}" for i in range(N)]
    metadatas = [{"plik": f"plik-{f}.pdf", "rok": int(y), "typ": str(t)}
                 for f, y, t in zip(data["files"], data["years"], data["types"], strict=True)]
    stored.upsert(ids, data["vectors"], ids, metadatas)
    found = chunks.snapshot()
    assert found.centroids is not None and len(found.centroids) == int(np.sqrt(N))
    scanned, hits_total, recalled = [], 0, 0
    for case in ("wszystko", "lata", "typ", "plik"):
        filters, mask_of = CASES[case]
        mask = mask_of(data)
        for query in data["queries"]:
            unit = query / np.linalg.norm(query)
            scanned.append(found._probes(unit.astype(np.float32), found.mask(build_where(filters))))
            expected = expected_ids(data["vectors"], mask, query, ids)
            hits = chunks.query(query, K, build_where(filters))
            assert all(mask[int(h.id[3:])] for h in hits) and len(hits) == len(expected)
            exact = data["vectors"][[int(h.id[3:]) for h in hits]] @ unit
            assert np.allclose([h.similarity for h in hits], exact, atol=1e-5)
            hits_total += len(expected)
            recalled += len(set(expected) & {h.id for h in hits})
    assert recalled / hits_total >= 0.95
    assert min(scanned) < len(found.centroids) / 4  # an unfiltered query really skips most clusters
    rng = np.random.default_rng(17)
    new = (data["vectors"][:5] + 0.01 * rng.normal(size=(5, DIM))).astype(np.float32)
    stored.upsert([f"nowy-{i}" for i in range(5)], new, ["nowy"] * 5, metadatas[:5])
    stored.delete(["id-00000"])
    assert chunks.query(new[0], 1, None)[0].id == "nowy-0"
    assert "id-00000" not in {h.id for h in chunks.query(data["vectors"][0], K, None)}
    assert len(chunks.snapshot().segments) == 2  # the base and the appended rows


class _SpyCollection:
    """Kolekcja Chromy, która zapisuje, o co ją pytano w ``get`` (reszta bez zmian)."""

    def __init__(self, inner) -> None:
        self.inner, self.includes = inner, []

    def get(self, **kwargs):
        self.includes.append(kwargs.get("include"))
        return self.inner.get(**kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_hits_take_similarities_from_the_snapshot(collection, data):
    """Treść wyników z Chromy, podobieństwa z migawki: wektorów wyników nie pobieramy z Chromy."""
    stored = collection.collection
    spy = _SpyCollection(stored.chroma)
    chunks = DerivedIndex(ChunkCollection(spy, stored._max_batch, stored._client, stored.derived_dir, stored._journal))
    assert chunks.snapshot() is not None
    spy.includes.clear()  # only what the hits need
    query = data["queries"][0]
    ids = ["id-00011", "id-00002", "id-02999"]
    hits = chunks.hits(ids, query)
    assert [h.id for h in hits] == ids and all(h.text for h in hits)
    assert np.allclose([h.similarity for h in hits], data["vectors"][[11, 2, 2999]] @ query, atol=1e-5)
    assert all("embeddings" not in (include or []) for include in spy.includes)
    # an id the snapshot does not know (e.g. written a moment ago): vectors from Chroma after all
    assert chunks.hits(["id-00011", "nie-ma"], query)[0].id == "id-00011"
    assert "embeddings" in spy.includes[-1]
