"""Dostrojone liczby indeksu pochodnego w jednym miejscu, każda z tym, skąd się wzięła.

Pomiary: ``bench/scale.py`` (1 mln fragmentów, 60 prawdziwych pytań) i docs/BENCHMARKS.md, sekcja o skali.
Testy podają własne obiekty (``replace(DEFAULT_PARAMS.snapshot, ivf_min_rows=1000)``) zamiast podmieniać stałe
modułów; produkt używa ``DEFAULT_PARAMS``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SnapshotParams:
    """Migawka wektorów (``snapshot.py``) i jej przegląd skupisk (``coarse_index.py``)."""

    # up to this many candidate rows: exact float32 similarities, more: int8 first
    exact_rows: int = 20_000
    # int8 candidates rescored exactly: int8 error only reorders close neighbours
    rescore: int = 200
    # ...and at least this many per result wanted: 20 per result made a fusion list of 50 read 1000 float32 rows
    # (3 lists a query: ~3000 single-row preads, 15 ms at 1M); the first 10 – recall@10 – still get 200
    rescore_per_k: int = 4
    # With clusters, a filter matching up to this many rows ranks their int8 codes directly (at most 19 MB read):
    # faiss would scan every list checking the bitmap (at 1M, ~25 ms for a filter on 1 %)
    narrow_rows: int = 50_000
    # from this size a full build splits rows into ~sqrt(n) clusters
    ivf_min_rows: int = 200_000
    # A query scans the nearest probe_fraction of the clusters (at least nprobe), and more until they hold
    # matched_min rows matching the filter. Neighbours of real questions spread over many clusters: at 1M
    # (60 real questions) every row of 15 % of the clusters gave recall@10 0.96–0.98, of 30 % 1.0; PQ codes of
    # 30 % with coarse_candidates rescored give 1.0 too, of all clusters no better (0.998) and 2.3 times slower.
    probe_fraction: float = 0.3
    nprobe: int = 24
    matched_min: int = 4000
    # then the appended segments merge into one (rewriting the whole base cost ~47 s every 8th write at 1M)
    max_segments: int = 8
    # dead + appended rows over this share of live rows: the next version is one segment again
    compact_fraction: float = 0.1
    # int8 rows converted to float32 at a time (fits the cache)
    scan_block: int = 16_384
    # Up to this many float32 rows are read with pread, not through the mapping: pages read through a mapping count
    # in the process's RSS, and rescoring a few hundred scattered rows per query would after some thousand queries
    # keep the whole 1.5 GiB file (at 1M chunks) resident (bench/scale.py, rss_wg_mapowan_mib).
    pread_rows: int = 4096
    # a column condition allowing (or rejecting) at most this many values is evaluated by comparisons
    # (~0.2 ms each at 1M rows) instead of indexing by the code array (~1–2 ms)
    few_codes: int = 4
    # a filter matching at most 1/narrow_share of the rows lists them by their ranks in id order (a walk over
    # the million sorted rows costs ~8 ms per new filter)
    narrow_share: int = 16
    # Masks of this many recent filters are kept per snapshot (1 MB each at 1M rows): one search asks for the same
    # filter's mask several times (keyword leg, vector leg, references, plan lists), each costing milliseconds.
    masks: int = 8
    # A planned question places its evidence by the share of fragments ranked above it; at a million fragments
    # reading every vector cost 2 s per question and, read in big blocks, put the whole float32 file into the RSS.
    # An even sample of this many rows estimates a share of 2 % within ±0.1 % (binomial standard error); 7504e3b.
    pool_rows: int = 20_000
    # Candidates per segment passed from the PQ codes to int8 rescoring: at 1M (60 real questions, 30 % of the
    # lists) 2000 gave recall@10 0.988, 5000 1.0
    coarse_candidates: int = 5000
    # a smaller segment has no faiss index: its matching rows are all candidates anyway (2 × coarse_candidates)
    coarse_min_rows: int = 10_000
    # PQ subspaces of 2 dimensions (192 for 384): 4 dimensions each left recall@10 at 0.92 even after rescoring
    # 10 000 candidates
    subspace_dims: int = 2
    # fast scan: 16 centroids per subspace, distance tables held in SIMD registers
    code_bits: int = 4
    # rows the PQ codebook of a segment learns from (an even sample)
    training_rows: int = 65_536
    # Clusters: spherical k-means of faiss on an even sample of this many rows per cluster (64k at 1M), enough
    # rounds to settle – 6 rounds of an earlier hand-written k-means left neighbours of a question spread over
    # twice as many clusters
    sample_per_cluster: int = 64
    kmeans_rounds: int = 20
    kmeans_seed: int = 1234


@dataclass(frozen=True)
class KeywordParams:
    """Indeks słów (``keyword.py``) i rzadkie liczenie BM25 (``keyword_scoring.py``)."""

    # a delta up to max(delta_min, delta_fraction · matrix rows) chunks; more: the matrix is rebuilt (and its
    # statistics refreshed). Chosen, not measured: a file added to a big collection stays in the delta instead of
    # a rebuild and a save of the whole index (seconds at 100k chunks).
    delta_min: int = 2000
    delta_fraction: float = 0.05
    # filters whose allowed positions are remembered (1 MB each at 1M chunks): the same filter is asked for
    # several times in one search
    marks: int = 8
    # touched entries at least 1/dense_share of the index: sum on a dense array instead of sorting the lists
    dense_share: int = 16
    # Candidates per result whose exact scores set the first MaxScore threshold: the k best by a few words' sum
    # are often not the k best overall, and a low threshold prunes little.
    leaders_per_k: int = 16
    # a bisection of one candidate in one list costs about this many summed list entries
    lookup_cost: int = 8


@dataclass(frozen=True)
class DerivedParams:
    snapshot: SnapshotParams = field(default_factory=SnapshotParams)
    keywords: KeywordParams = field(default_factory=KeywordParams)


DEFAULT_PARAMS = DerivedParams()
