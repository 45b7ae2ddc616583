"""Przegląd skupisk przez faiss (``coarse_index``): ci sami kandydaci co przegląd kodów int8 w numpy, tylko
pasujące do filtra, z każdego segmentu; plik indeksu mapowany w nowym procesie, dowiązany po dopisaniu
i zbudowany od nowa, gdy jest uszkodzony – bez przebudowy migawki. Wektory losowe, prawdziwa Chroma."""

from __future__ import annotations

import os

import numpy as np
import pytest

from chroma_rag.storage import coarse_index
from chroma_rag.storage import collection as collection_module
from chroma_rag.storage import snapshot as snapshot_module
from chroma_rag.storage.store import Store

N, DIM, KEEP = 3000, 32, 50


@pytest.fixture
def chunks(monkeypatch, tmp_path):
    monkeypatch.setattr(snapshot_module, "IVF_MIN_ROWS", 1000)
    monkeypatch.setattr(snapshot_module, "EXACT_ROWS", 100)
    monkeypatch.setattr(snapshot_module, "COMPACT_FRACTION", 10.0)
    rng = np.random.default_rng(5)
    centers = rng.normal(size=(30, DIM))
    vectors = (centers[rng.integers(30, size=N)] + 0.4 * rng.normal(size=(N, DIM))).astype(np.float32)
    collection = Store(tmp_path / "dane").chunks("test:faiss", DIM, create=True)
    years = rng.integers(1990, 2024, size=N)
    collection.upsert([f"id-{i:05d}" for i in range(N)], vectors, ["tekst"] * N,
                      [{"rok": int(y), "plik": f"p-{i % 9}.pdf"} for i, y in enumerate(years)])
    collection_module._SNAPSHOTS.clear()
    yield collection, vectors, years
    collection_module._SNAPSHOTS.clear()


def _numpy_top(found, unit, mask, probes):
    """Najlepsze ``KEEP`` według kodów int8 wśród pasujących wierszy ``probes`` najbliższych skupisk."""
    chosen = np.sort(np.argsort(-(found.centroids @ unit))[:probes])
    rows = found._matching_in(chosen, mask)
    rough = found._rough_similarities(rows, unit)
    return np.sort(rough)[::-1][:KEEP]


def _check_same_candidates(found, vectors, masks):
    rng = np.random.default_rng(11)
    for mask in masks:
        for query in vectors[rng.integers(len(vectors), size=5)]:
            unit = (query / np.linalg.norm(query)).astype(np.float32)
            probes = len(found.centroids) // 4
            rows = found._coarse_candidates(unit, mask, probes, KEEP)
            assert mask[rows].all() and len(set(rows.tolist())) == len(rows)
            ours = np.sort(found._rough_similarities(rows, unit))[::-1][:KEEP]
            assert np.allclose(ours, _numpy_top(found, unit, mask, probes), atol=1e-4)


def test_faiss_candidates_match_the_int8_scan(chunks):
    collection, vectors, _ = chunks
    found = collection.snapshot()
    assert found.centroids is not None and all(s.coarse is not None for s in found.segments)
    _check_same_candidates(found, vectors, [found.alive, found.mask({"rok": {"$gte": 2007}}),
                                            found.mask({"plik": "p-3.pdf"}), found.mask({"rok": 1800})])


def test_appended_segment_new_process_and_damaged_index(chunks):
    collection, vectors, _ = chunks
    base = collection.snapshot().segments[0].name
    new = vectors[:40] + 0.01
    collection.upsert([f"nowy-{i}" for i in range(40)], new, ["nowy"] * 40, [{"rok": 2030}] * 40)
    collection_module._SNAPSHOTS.clear()  # a new process
    found = collection.snapshot()
    assert found.segments[0].name == base and len(found.segments) == 2
    folder = collection.snapshot_dir / found.marker
    assert all((folder / f"{s.name}{coarse_index.SUFFIX}").exists() for s in found.segments)
    # the base segment's index is the previous version's file, linked, not rebuilt
    assert (folder / f"{base}{coarse_index.SUFFIX}").stat().st_nlink >= 1
    only_new = found.mask({"rok": 2030})
    unit = (new[0] / np.linalg.norm(new[0])).astype(np.float32)
    rows = found._coarse_candidates(unit, only_new, len(found.centroids), KEEP)
    assert sorted(found.id_list(rows)) == sorted(f"nowy-{i}" for i in range(40))
    assert collection.query(new[0], 1, {"rok": 2030})[0].id == "nowy-0"
    _check_same_candidates(found, np.concatenate([vectors, new]), [found.alive])
    # a damaged index file: rebuilt from the segment's codes, the snapshot itself stays
    damaged = folder / f"{base}{coarse_index.SUFFIX}"
    # a new file in its place (as a crashed writer would leave): the mapped old one must not change under us
    (folder / "uszkodzony").write_bytes(b"uszkodzony")
    os.replace(folder / "uszkodzony", damaged)
    collection_module._SNAPSHOTS.clear()
    again = collection.snapshot()
    assert again.marker == found.marker and again.segments[0].name == base
    assert again.segments[0].coarse.ntotal == len(again.segments[0])
    _check_same_candidates(again, np.concatenate([vectors, new]), [again.alive])


def test_narrow_filters_rank_the_matching_codes_and_wide_ones_scan_the_nearest_lists(chunks, monkeypatch):
    """Przy skupiskach: filtr na mało wierszy liczy kody int8 samych pasujących (faiss przeglądałby wszystkie listy
    z mapą bitów), szeroki – najbliższe listy w faiss; w obu razem z dokładnym przeliczeniem wynik jak pełne
    przeszukanie pasujących."""
    collection, vectors, _ = chunks
    monkeypatch.setattr(snapshot_module, "NARROW_ROWS", 500)
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
