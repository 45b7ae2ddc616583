"""Skala do miliona fragmentów (issue 23): `python -m bench.scale --fragmenty 1000000 --json`.

Kolekcja (scale_data.py) budowana raz w folderze roboczym; pomiar w tym samym przebiegu:
- nasze wyszukiwanie w świeżym procesie (scale_worker.py): zimne pierwsze zapytanie, p95 `Index.search`
  (hybryda z nogą słów, k=10) i recall@10 rankingu wektorowego wobec dokładnego przeszukania, dla każdego
  rodzaju filtra; RSS procesu; dodanie i usunięcie pliku (bez embeddingu) z pierwszym zapytaniem po nim;
- RSS `chroma-rag serwuj` po zapytaniach wszystkich rodzajów;
- to samo wyszukiwanie przez `chroma run --path <ten sam katalog bazy>` (bez drugiej budowy: dane pochodne
  folderu dowiązane do pamięci podręcznej trybu serwera, bo znacznik zmiany kolekcji jest ten sam);
- surowa Chroma `query(where=…)` na tych samych danych (p95 i recall@10) – w tym procesie, po pomiarze naszego;
- koszt reprezentacji: recall@10 samego przeglądu int8 (bez dokładnego przeliczenia) bez filtra.
Ostatnia linia stdout z `--json`: jeden obiekt JSON z wynikami; `--zapisz` wpisuje tabelę (`report`)
do docs/BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench import scale_data
from bench.common import REPO, free_port, start_chroma_run
from bench.scale_data import ARTICLES, FILES, YEARS

K = 10
QUERIES = 40  # per filter kind, ours
CHROMA_QUERIES = 10  # per filter kind, raw Chroma (seconds each at 1M)
NEW_FILE_CHUNKS = 100
WORKER = [sys.executable, "-m", "bench.scale_worker"]  # a fresh process, run from REPO


def filter_kinds(meta: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, Callable[[], tuple]]:
    """Rodzaj filtra → losowanie (argumenty SearchFilters, maska dokładna) dla jednego zapytania."""
    plik, art, rok, typ = meta["plik"], meta["art"], meta["rok"], meta["typ"]

    def one_file():
        p = int(rng.integers(FILES))
        return {"files": [f"plik-{p:04d}.pdf"]}, plik == p

    def files():
        chosen = rng.choice(FILES, 5, replace=False)
        return {"files": [f"plik-{p:04d}.pdf" for p in chosen]}, np.isin(plik, chosen)

    def year():
        y = int(rng.integers(YEARS[0], YEARS[1] + 1))
        return {"year": y}, rok == y

    def years():
        y = int(rng.integers(YEARS[0], YEARS[1] - 4))
        return {"year_from": y, "year_to": y + 5}, (rok >= y) & (rok <= y + 5)

    def unit():
        a = int(rng.integers(1, ARTICLES + 1))
        return {"articles": [str(a)]}, art == a

    def unit_and_type():
        a = int(rng.integers(1, ARTICLES + 1))
        return {"articles": [str(a)], "types": ["ustawa"]}, (art == a) & (typ == "ustawa")

    def year_and_unit():
        a, y = int(rng.integers(1, ARTICLES + 1)), int(rng.integers(YEARS[0], YEARS[1] + 1))
        return {"articles": [str(a)], "year": y}, (art == a) & (rok == y)

    everything = np.ones(len(rok), dtype=bool)
    return {
        "brak": lambda: ({}, everything),
        "plik (0,1 %)": one_file,
        "kilka plików (0,5 %)": files,
        "typ rozporządzenie (10 %)": lambda: ({"types": ["rozporzadzenie"]}, typ == "rozporzadzenie"),
        "rok (2,9 %)": year,
        "zakres lat (18 %)": years,
        "jednostka (1 %)": unit,
        "jednostka + typ (0,5 %)": unit_and_type,
        "typ + lata (25 %)": lambda: ({"types": ["ustawa"], "year_from": 2007}, (typ == "ustawa") & (rok >= 2007)),
        "rok + jednostka (0,03 %)": year_and_unit,
        "od roku 2007 (50 %)": lambda: ({"year_from": 2007}, rok >= 2007),
    }


def exact_top(vectors: np.ndarray, queries: np.ndarray, masks: list[np.ndarray]) -> list[list[str]]:
    """Dokładne k najbliższych (z filtrem) – jedno przejście po macierzy dla wszystkich pytań."""
    units = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = np.empty((len(vectors), len(units)), dtype=np.float32)
    for s in range(0, len(vectors), 100_000):
        scores[s : s + 100_000] = vectors[s : s + 100_000] @ units.T
    out = []
    for q, mask in enumerate(masks):
        column = np.where(mask, scores[:, q], -np.inf)
        wanted = min(K, int(mask.sum()))
        best = np.argpartition(-column, wanted)[:wanted] if wanted < len(column) else np.arange(len(column))
        out.append([scale_data.chunk_id(int(i)) for i in best])
    return out


def recall(found: list[list[str]], expected: list[list[str]]) -> float:
    # nothing matches the filter: an empty answer is the whole answer
    return float(np.mean([len(set(f) & set(e)) / len(e) if e else float(not f)
                          for f, e in zip(found, expected, strict=True)]))


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000


def prepare(store: Any, src: scale_data.Source, n: int, folder: Path) -> None:
    """Kolekcja dokładnie ``n`` pierwszych fragmentów ciągu: dobudowana albo przycięta (większa budowa)."""
    from chroma_rag.embedding.embedder import LocalE5Embedder
    from chroma_rag.storage.locking import write_session

    with write_session(store):
        collection = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim, create=True)
        count = collection.count()
        if count > n:
            collection.delete([scale_data.chunk_id(i) for i in range(n, count + 5000)])
        scale_data.build(store, src, n, folder / "gotowe.json", log=lambda m: print(m, file=sys.stderr, flush=True))


def register_files(store: Any, plik: np.ndarray) -> None:
    """Wpisy rejestru ``FILES`` plików (z listą ich fragmentów, jak po `indeksuj`): filtr pliku je sprawdza."""
    from chroma_rag.embedding.embedder import LocalE5Embedder
    from chroma_rag.storage.locking import write_session
    from chroma_rag.storage.registry import REGISTRY_COLLECTION, SAME_AS_KEY, FileRecord, Registry

    with write_session(store):
        registry = Registry(store.client, create=True)
        # raw Chroma: whether the entries carry SAME_AS_KEY is not something the product's Registry exposes
        metas = store.client.get_collection(REGISTRY_COLLECTION).get(include=["metadatas"])["metadatas"]
        # else written before the key or the registry's change marker: again
        if len(metas) >= FILES and all(SAME_AS_KEY in m for m in metas) and Registry.version(store.client):
            return
        rows = np.argsort(plik, kind="stable")
        starts = np.searchsorted(plik[rows], np.arange(FILES + 1))
        for p in range(FILES):
            name = f"plik-{p:04d}.pdf"
            registry.put(FileRecord(
                path=f"/dane/{name}", name=name, size=1, mtime=0.0, hash=f"skrot-{p:04d}", chunker="bench",
                model=LocalE5Embedder.model_id, indexed_at="", doc_type="ustawa", year=2000,
                chunk_ids=[scale_data.chunk_id(int(r)) for r in rows[starts[p] : starts[p + 1]]]))


def new_file(src: scale_data.Source, n: int) -> dict[str, Any]:
    """Plik spoza kolekcji: ``NEW_FILE_CHUNKS`` następnych fragmentów ciągu (wektory gotowe)."""
    part = scale_data.block(src, n + scale_data.BLOCK, n // scale_data.BLOCK)
    rows = slice(n - part["start"], n - part["start"] + NEW_FILE_CHUNKS)
    meta = {k: v[rows] for k, v in part["meta"].items()}
    metas = scale_data.metadatas(meta, part["titles"][rows])
    for m in metas:
        m["hash"] = "skrot-nowego-pliku"
    return {"teksty": part["texts"][rows], "wektory": part["vectors"][rows].tolist(), "metadane": metas}


def rss_of(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_memory(pid: int) -> dict[str, Any]:
    """Pamięć procesu ``pid`` z potomkami (procesy robocze `serwuj`): RSS każdego (MiB) i suma PSS – strony
    mapowanych plików wspólne dla procesów liczą się w niej raz, więc to pamięć, którą serwer naprawdę zajmuje."""
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        for task in Path(f"/proc/{current}/task").iterdir():
            queue += [int(c) for c in (task / "children").read_text().split()]
    pss = 0
    for current in pids:
        for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1])
    return {"rss_procesow_mib": sorted(round(rss_of(p)) for p in pids), "pss_razem_mib": round(pss / 1024)}


def serwuj_memory(db: Path, kinds: list[dict[str, Any]]) -> dict[str, Any]:
    """Pamięć `chroma-rag serwuj` (domyślna liczba procesów) po zapytaniach (po 3) każdego rodzaju filtra przez
    `GET /api/szukaj`, wysłanych przez tylu klientów naraz, ile jest procesów roboczych – żeby każdy się rozgrzał."""
    import httpx

    from chroma_rag.serving.workers import default_processes

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = Path(sys.executable).with_name("chroma-rag")
    process = subprocess.Popen([str(exe), "serwuj", "--baza", str(db), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    names = {"files": "plik", "types": "typ", "year": "rok", "year_from": "od_roku", "year_to": "do_roku",
             "articles": "art"}

    def ask_all(_: int) -> None:
        with httpx.Client(timeout=300) as client:
            for kind in kinds:
                for query in kind["zapytania"][:3]:
                    params = [("q", query["tekst"]), ("k", "10")]
                    for key, value in query["filtry"].items():
                        params += [(names[key], str(v)) for v in (value if isinstance(value, list) else [value])]
                    client.get(f"{url}/api/szukaj", params=params).raise_for_status()

    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/api/pliki", timeout=300).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        clients = default_processes()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(ask_all, range(clients)))
        return tree_memory(process.pid)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def server_mode(db: Path, folder: Path, task: dict[str, Any]) -> dict[str, Any]:
    """Nasze wyszukiwanie przez `chroma run` na tym samym katalogu danych. Migawka i indeks słów to dane
    pochodne kluczowane znacznikiem zmiany kolekcji – ten sam przez serwer i w folderze – więc pamięć podręczna
    trybu serwera dostaje je z folderu (migawka: dowiązania, jej pliki są niezmienne; indeks słów: kopia) zamiast
    budować od nowa przez HTTP. Bez zapisu: serwer nie prowadzi dziennika migawki, a zmiana kolekcji kazałaby
    następnemu przebiegowi w folderze budować migawkę od zera."""
    from chroma_rag.storage.store import Store

    cache = folder / "pamiec-serwera"
    shutil.rmtree(cache, ignore_errors=True)
    process, url = start_chroma_run(db)
    previous = os.environ.get("CHROMA_RAG_CACHE")
    os.environ["CHROMA_RAG_CACHE"] = str(cache)
    try:
        work = Store(server=url).work_dir
        work.mkdir(parents=True)
        for derived in db.iterdir():
            if derived.name.startswith("migawka-"):
                subprocess.run(["cp", "-al", str(derived), str(work / derived.name)], check=True)
            elif derived.name.startswith("slowa-"):
                shutil.copytree(derived, work / derived.name)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as handle:
            json.dump({**task, "serwer": url, "bez_zapisu": True}, handle)
        worker = [*WORKER, handle.name]
        done = subprocess.run(worker, check=True, capture_output=True, text=True, cwd=REPO)
        measured = json.loads(done.stdout.splitlines()[-1])
        measured["rss_chroma_run_mib"] = rss_of(process.pid)
        os.unlink(handle.name)
        return measured
    finally:
        if previous is None:
            os.environ.pop("CHROMA_RAG_CACHE", None)
        else:
            os.environ["CHROMA_RAG_CACHE"] = previous
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=120)
        shutil.rmtree(cache, ignore_errors=True)


def chroma_raw(collection: Any, kinds: list[dict[str, Any]], expected: dict[str, list[list[str]]]) -> dict:
    """Surowa Chroma `query(where=…)`, te same pytania (pierwsze ``CHROMA_QUERIES`` każdego rodzaju)."""
    from chroma_rag.filters import SearchFilters, build_where

    out = {}
    for kind in kinds:
        latencies, found = [], []
        for query in kind["zapytania"][:CHROMA_QUERIES]:
            where = build_where(SearchFilters(**query["filtry"]))
            started = time.perf_counter()
            result = collection.chroma.query(query_embeddings=[np.asarray(query["wektor"], dtype=np.float32)],
                                             n_results=K, where=where, include=[])
            latencies.append(time.perf_counter() - started)
            found.append(result["ids"][0])
        out[kind["nazwa"]] = {"p95": p95(latencies),
                              "recall": recall(found, expected[kind["nazwa"]][:CHROMA_QUERIES])}
    return out


def int8_only_recall(collection: Any, queries: np.ndarray, expected: list[list[str]]) -> float:
    """Koszt reprezentacji: recall@10 samego przeglądu int8 całej kolekcji, bez dokładnego przeliczenia."""
    snapshot = collection.snapshot()
    alive = np.flatnonzero(snapshot.alive)
    found = []
    for query in queries:
        # the stored codes (each segment's ``quantized`` = round(vector / scale)) against the query, in blocks
        step = (query / np.linalg.norm(query)).astype(np.float32) * snapshot.scale
        rough = np.empty(len(snapshot.alive), dtype=np.float32)
        for segment in snapshot.segments:
            for start in range(0, len(segment), 16_384):
                block = segment.quantized[start : start + 16_384]
                rough[segment.offset + start : segment.offset + start + len(block)] = block.astype(np.float32) @ step
        best = alive[np.argpartition(-rough[alive], K)[:K]]
        found.append(snapshot.id_list(best))
    return recall(found, expected)


def run(n: int, scratch: Path) -> dict[str, Any]:
    from chroma_rag.embedding.embedder import LocalE5Embedder
    from chroma_rag.storage.store import Store

    load_start = os.getloadavg()
    src = scale_data.source(scratch)
    folder = scratch / "folder"
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "dane"
    store = Store(db)
    prepare(store, src, n, folder)
    data = scale_data.everything(src, n)
    register_files(store, data["meta"]["plik"])
    rng = np.random.default_rng(1)
    kinds, masks_by_kind = [], {}
    for name, draw in filter_kinds(data["meta"], rng).items():
        queries, masks = [], []
        for q in range(QUERIES):
            filters, mask = draw()
            queries.append({"tekst": src.query_texts[q % len(src.query_texts)], "filtry": filters,
                            "wektor": src.queries[q % len(src.queries)].tolist()})
            masks.append(mask)
        kinds.append({"nazwa": name, "zapytania": queries})
        masks_by_kind[name] = masks
    query_vectors = np.array([[q["wektor"] for q in kind["zapytania"]] for kind in kinds], dtype=np.float32)
    expected = {kind["nazwa"]: exact_top(data["vectors"], query_vectors[k], masks_by_kind[kind["nazwa"]])
                for k, kind in enumerate(kinds)}
    del data
    store.close()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as task:
        json.dump({"baza": str(db), "rodzaje": kinds, "nowy_plik": new_file(src, n)}, task)
    # first run: the worker builds the snapshot and the keyword index (minutes at 1M), then measures cold again
    worker = [*WORKER, task.name]
    marker = folder / f"pochodne-{n}.json"
    if not marker.exists():
        started = time.perf_counter()
        subprocess.run([*worker, "--tylko-rozgrzej"], check=True, capture_output=True, cwd=REPO)
        marker.write_text(json.dumps({"pierwsze_s": time.perf_counter() - started}), encoding="utf-8")
    done = subprocess.run(worker, check=True, capture_output=True, text=True, cwd=REPO)
    measured = json.loads(done.stdout.splitlines()[-1])
    serwuj = serwuj_memory(db, kinds)
    server = server_mode(db, folder, {"rodzaje": kinds, "nowy_plik": {}})
    from chroma_rag.derived import DerivedIndex

    store = Store(db)
    collection = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim)
    raw = chroma_raw(collection, kinds, expected)
    int8 = int8_only_recall(DerivedIndex(collection), query_vectors[0][:20], expected[kinds[0]["nazwa"]][:20])
    os.unlink(task.name)
    ours = measured["rodzaje"]
    return {
        "fragmenty": n,
        "p95_ms": {k: round(p95(v["czasy"]), 1) for k, v in ours.items()},
        "recall_at_10": {k: round(recall(v["wyniki"], expected[k]), 3) for k, v in ours.items()},
        "rss_mib": {"szukaj": round(measured["rss_mib"]), "serwuj": max(serwuj["rss_procesow_mib"])},
        "serwuj_pamiec": serwuj,
        "zimny_start_s": round(measured["zimny_start_s"], 2),
        "w_tym_start_modelu_s": round(measured["start_modelu_s"], 2),
        "dodanie_pliku_s": round(measured["dodanie_pliku_s"], 2),
        "chroma_p95_ms": {k: round(v["p95"], 1) for k, v in raw.items()},
        "usuniecie_pliku_s": round(measured["usuniecie_pliku_s"], 2),
        "fragmenty_dodanego_pliku": measured["fragmenty_pliku"],
        "w_dzialajacym_procesie": {"dodanie_pliku_s": round(measured["dodanie_pliku_s_w_dzialajacym_procesie"], 2),
                                   "usuniecie_pliku_s": round(measured["usuniecie_pliku_s_w_dzialajacym_procesie"], 2)},
        "p95_wektor_ms": {k: round(p95(v["czasy_wektor"]), 1) for k, v in ours.items()},
        "p95_slowa_ms": {k: round(p95(v["czasy_slowa"]), 1) for k, v in ours.items()},
        "chroma_recall_at_10": {k: round(v["recall"], 3) for k, v in raw.items()},
        "stosunek_p95_chroma_do_naszego": {k: round(raw[k]["p95"] / max(p95(v["czasy"]), 1e-9), 1)
                                           for k, v in ours.items()},
        "recall_at_10_int8_bez_przeliczenia": round(int8, 3),
        "rss_po_pierwszym_zapytaniu_mib": round(measured["rss_po_pierwszym_mib"]),
        "embedding_pytania_ms": round(measured["embedding_pytania_ms"], 1),
        "rss_wg_mapowan_mib": measured["rss_wg_mapowan_mib"],
        "serwer_chroma_run": {
            "p95_ms": {k: round(p95(v["czasy"]), 1) for k, v in server["rodzaje"].items()},
            "p95_wektor_ms": {k: round(p95(v["czasy_wektor"]), 1) for k, v in server["rodzaje"].items()},
            "recall_at_10": {k: round(recall(v["wyniki"], expected[k]), 3) for k, v in server["rodzaje"].items()},
            "rss_mib": {"szukaj": round(server["rss_mib"]), "chroma_run": round(server["rss_chroma_run_mib"])},
            "zimny_start_s": round(server["zimny_start_s"], 2),
        },
        "obciazenie_start_koniec": [round(load_start[0], 1), round(os.getloadavg()[0], 1)],
    }


def report(result: dict[str, Any], command: str, machine: str) -> str:
    """Sekcja docs/BENCHMARKS.md z wyniku ``run`` (tabela rodzajów filtra i pozostałe liczby)."""
    server = result["serwer_chroma_run"]
    lines = [
        f"Polecenie: `{command}`. Maszyna: {machine}; load average na początku i końcu: "
        f"{result['obciazenie_start_koniec']}. **{result['fragmenty']:_} fragmentów**".replace("_", " ")
        + " – folder i `chroma run --path` na tym samym katalogu danych, jeden przebieg.",
        "",
        "| filtr | p95 ms (hybryda) | p95 ms (wektor) | p95 ms (słowa) | recall@10 | `chroma run`: p95 ms "
        "| `chroma run`: recall@10 | Chroma `query(where)`: p95 ms | recall@10 | Chroma / nasze (p95) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, ours in result["p95_ms"].items():
        lines.append(
            f"| {kind} | {ours} | {result['p95_wektor_ms'][kind]} | {result['p95_slowa_ms'][kind]} | "
            f"{result['recall_at_10'][kind]} | "
            f"{server['p95_ms'][kind]} | {server['recall_at_10'][kind]} | {result['chroma_p95_ms'][kind]} | "
            f"{result['chroma_recall_at_10'][kind]} | {result['stosunek_p95_chroma_do_naszego'][kind]} |")
    mapped = ", ".join(f"{k} {v}" for k, v in result["rss_wg_mapowan_mib"].items())
    lines += [
        "",
        f"- RSS (MiB): proces wyszukiwania {result['rss_mib']['szukaj']} (po pierwszym zapytaniu "
        f"{result['rss_po_pierwszym_zapytaniu_mib']}), `serwuj` {result['rss_mib']['serwuj']} (największy z procesów "
        f"{result['serwuj_pamiec']['rss_procesow_mib']}; wszystkie razem, PSS: "
        f"{result['serwuj_pamiec']['pss_razem_mib']}); przez `chroma run`: "
        f"proces wyszukiwania {server['rss_mib']['szukaj']}, sam serwer Chromy {server['rss_mib']['chroma_run']};",
        f"- RSS procesu wyszukiwania według mapowań (MiB): {mapped};",
        "- zimne pierwsze zapytanie od uruchomienia procesu (z interpreterem i importami): "
        f"{result['zimny_start_s']} s (w tym model embeddingu "
        f"{result['w_tym_start_modelu_s']} s), przez `chroma run` {server['zimny_start_s']} s;",
        f"- dodanie pliku (`Index.add` pliku tekstowego, {result['fragmenty_dodanego_pliku']} fragmentów, bez "
        f"embeddingu) z pierwszym wyszukiwaniem "
        f"po nim: {result['dodanie_pliku_s']} s, usunięcie (`Index.remove`): {result['usuniecie_pliku_s']} s; "
        f"drugi plik w tym samym procesie (jak w działającym `--obserwuj`): dodanie "
        f"{result['w_dzialajacym_procesie']['dodanie_pliku_s']} s, usunięcie "
        f"{result['w_dzialajacym_procesie']['usuniecie_pliku_s']} s;",
        f"- embedding pytania (osobno, nie w p95): {result['embedding_pytania_ms']} ms; recall@10 samego "
        f"przeglądu int8 bez dokładnego przeliczenia: {result['recall_at_10_int8_bez_przeliczenia']}.",
        "",
        "Ostatnia linia wyjścia `--json`:",
        "",
        "```json",
        json.dumps(result, ensure_ascii=False),
        "```",
    ]
    return "\n".join(lines)
