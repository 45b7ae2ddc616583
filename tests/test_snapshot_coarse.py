"""Przegląd skupisk przez faiss (``coarse_index``, kody PQ): wśród kandydatów są najbliższe pasujące wiersze
przejrzanych skupisk, tylko pasujące do filtra, z każdego segmentu (mały dopisany segment bez indeksu – wszystkie
jego pasujące); plik indeksu mapowany w nowym procesie, dowiązany po dopisaniu i zbudowany od nowa, gdy jest
uszkodzony – bez przebudowy migawki. Wektory losowe, prawdziwa Chroma."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest

from chroma_rag.derived import DEFAULT_PARAMS, DerivedIndex, coarse_index, forget_loaded
from chroma_rag.storage.store import Store

N, DIM, CANDIDATES = 3000, 32, 300
# a small collection in clusters, with an index file per segment of 1000 rows or more
SMALL = replace(DEFAULT_PARAMS.snapshot, ivf_min_rows=1000, exact_rows=100, compact_fraction=10.0,
                coarse_candidates=CANDIDATES, coarse_min_rows=1000)


@pytest.fixture
def chunks(tmp_path):
    rng = np.random.default_rng(5)
    centers = rng.normal(size=(30, DIM))
    vectors = (centers[rng.integers(30, size=N)] + 0.4 * rng.normal(size=(N, DIM))).astype(np.float32)
    stored = Store(tmp_path / "dane").chunks("test:faiss", DIM, create=True)
    collection = DerivedIndex(stored, params=replace(DEFAULT_PARAMS, snapshot=SMALL))
    years = rng.integers(1990, 2024, size=N)
    stored.upsert([f"id-{i:05d}" for i in range(N)], vectors, ["tekst"] * N,
                      [{"rok": int(y), "plik": f"p-{i % 9}.pdf"} for i, y in enumerate(years)])
    forget_loaded()
    yield collection, vectors, years
    forget_loaded()


def _check_candidates(found, vectors, masks):
    """Kandydaci to różne wiersze spełniające filtr, wśród nich 10 najbliższych (float32) pasujących wierszy
    przejrzanych skupisk – kody PQ są zgrubne, więc dopuszczamy pojedyncze braki."""
    rng = np.random.default_rng(11)
    for mask in masks:
        recalled, expected = 0, 0
        for query in vectors[rng.integers(len(vectors), size=10)]:
            unit = (query / np.linalg.norm(query)).astype(np.float32)
            probes = len(found.centroids) // 4
            rows = found._coarse_candidates(unit, mask, probes)
            assert mask[rows].all() and len(set(rows.tolist())) == len(rows)
            chosen = np.argsort(-(found.centroids @ unit))[:probes]
            probed = np.flatnonzero(mask & np.isin(_clusters(found), chosen))
            best = probed[np.argsort(-(found.vectors_of(probed) @ unit))[:10]]
            recalled += len(set(best.tolist()) & set(rows.tolist()))
            expected += len(best)
        assert recalled >= 0.95 * expected


def _clusters(found):
    """Skupisko każdego wiersza migawki (z początków skupisk segmentów)."""
    out = np.empty(len(found.ids), dtype=np.int64)
    for segment in found.segments:
        out[segment.offset : segment.offset + len(segment)] = np.repeat(np.arange(len(segment.starts) - 1),
                                                                       np.diff(segment.starts))
    return out


def test_faiss_candidates_match_the_int8_scan(chunks):
    collection, vectors, _ = chunks
    found = collection.snapshot()
    assert found.centroids is not None and all(s.coarse is not None for s in found.segments)
    _check_candidates(found, vectors, [found.alive, found.mask({"rok": {"$gte": 2007}}),
                                       found.mask({"plik": "p-3.pdf"})])
    assert len(found._coarse_candidates(vectors[0], found.mask({"rok": 1800}), len(found.centroids))) == 0


def test_appended_segment_new_process_and_damaged_index(chunks):
    collection, vectors, _ = chunks
    base = collection.snapshot().segments[0].name
    new = vectors[:40] + 0.01
    collection.collection.upsert([f"nowy-{i}" for i in range(40)], new, ["nowy"] * 40, [{"rok": 2030}] * 40)
    forget_loaded()  # a new process
    found = collection.snapshot()
    assert found.segments[0].name == base and len(found.segments) == 2
    folder = collection.collection.derived_dir / found.marker
    # the small appended segment has no index: its matching rows are all candidates
    assert found.segments[1].coarse is None and not (folder / f"{found.segments[1].name}{coarse_index.SUFFIX}").exists()
    # the base segment's index is the previous version's file, linked, not rebuilt
    assert (folder / f"{base}{coarse_index.SUFFIX}").stat().st_nlink >= 1
    only_new = found.mask({"rok": 2030})
    unit = (new[0] / np.linalg.norm(new[0])).astype(np.float32)
    rows = found._coarse_candidates(unit, only_new, len(found.centroids))
    assert sorted(found.id_list(rows)) == sorted(f"nowy-{i}" for i in range(40))
    assert collection.query(new[0], 1, {"rok": 2030})[0].id == "nowy-0"
    _check_candidates(found, np.concatenate([vectors, new]), [found.alive])
    # a damaged index file: rebuilt from the segment's codes, the snapshot itself stays
    damaged = folder / f"{base}{coarse_index.SUFFIX}"
    # a new file in its place (as a crashed writer would leave): the mapped old one must not change under us
    (folder / "uszkodzony").write_bytes(b"uszkodzony")
    os.replace(folder / "uszkodzony", damaged)
    forget_loaded()
    again = collection.snapshot()
    assert again.marker == found.marker and again.segments[0].name == base
    assert again.segments[0].coarse.ntotal == len(again.segments[0])
    _check_candidates(again, np.concatenate([vectors, new]), [again.alive])
    # a snapshot from before the PQ index (or a deleted file): the index is built on load
    damaged.unlink()
    forget_loaded()
    assert collection.snapshot().segments[0].coarse is not None and damaged.exists()


def test_narrow_filters_rank_the_matching_codes_and_wide_ones_scan_the_nearest_lists(chunks, monkeypatch):
    """Przy skupiskach: filtr na mało wierszy liczy kody int8 samych pasujących (faiss przeglądałby wszystkie listy
    z mapą bitów), szeroki – najbliższe listy w faiss; w obu razem z dokładnym przeliczeniem wynik jak pełne
    przeszukanie pasujących."""
    collection, vectors, _ = chunks
    collection = DerivedIndex(collection.collection, params=replace(DEFAULT_PARAMS,
                                                                    snapshot=replace(SMALL, narrow_rows=500)))
    found = collection.snapshot()
    scanned = []
    search = coarse_index.search
    monkeypatch.setattr(coarse_index, "search", lambda *a: scanned.append(1) or search(*a))
    for where, narrow in (({"plik": "p-3.pdf"}, True), ({"rok": {"$gte": 2007}}, False)):
        mask = found.mask(where)
        rows = np.flatnonzero(mask)  # snapshot rows: clustered order, not the order of writing
        assert (len(rows) <= 500) == narrow
        recalls = []
        for query in vectors[:: len(vectors) // 20]:
            exact = rows[np.argsort(-(found.vectors_of(rows) @ (query / np.linalg.norm(query))))[:10]]
            got = {chunk_id for chunk_id, _ in found.nearest(query, mask, 10)}
            recalls.append(len(got & set(found.id_list(exact))) / 10)
        assert bool(scanned) != narrow
        assert np.mean(recalls) == 1.0 if narrow else np.mean(recalls) >= 0.95
        scanned.clear()
