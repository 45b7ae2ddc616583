"""Skala do miliona fragmentów (issue 23): `python -m bench.scale --fragmenty 1000000 --json`.

Kolekcja (scale_data.py) budowana raz w folderze roboczym; pytania: dla każdego rodzaju filtra 200 odłożonych
(held-out – nieużywanych przy doborze liczb migawki) i 60 dev (tych, na których je dobierano), każde z własnym
losowaniem filtra. Pomiar w tym samym przebiegu:
- nasze wyszukiwanie w świeżym procesie (scale_worker.py): zimne pierwsze zapytanie, p95 `Index.search`
  (hybryda z nogą słów, k=10) na pytaniach odłożonych i recall@10 rankingu wektorowego wobec dokładnego
  przeszukania – osobno odłożone i dev – dla każdego rodzaju filtra; RSS procesu; dodanie i usunięcie pliku
  (bez embeddingu) z pierwszym zapytaniem po nim;
- RSS `chroma-rag serwuj` po zapytaniach wszystkich rodzajów;
- to samo wyszukiwanie przez `chroma run --path <ten sam katalog bazy>` (bez drugiej budowy: dane pochodne
  folderu dowiązane do pamięci podręcznej trybu serwera, bo znacznik zmiany kolekcji jest ten sam);
- surowa Chroma `query(where=…)` na tych samych danych – w tym procesie, po pomiarze naszego: najpierw kilka
  zapytań bez pomiaru na rodzaj filtra (rozgrzewka; pierwsze z nich to osobna liczba: zimna Chroma), potem p95
  i recall@10 na mniejszej liczbie pytań odłożonych (jedno to przy 1 mln sekundy);
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
from bench.common import REPO, free_port, percentile_ms, start_chroma_run
from bench.scale_data import ARTICLES, FILES, YEARS

K = 10
# Per filter kind every question once (each with its own draw of the filter): the 60 dev questions and the
# 200 held-out ones (scale_data.py); p95 is taken over the held-out (n = 200), recall over each set apart.
CHROMA_WARMUP = 3  # raw Chroma: untimed queries per filter kind first – the first ones load its index and pages
CHROMA_QUERIES = 20  # then timed per filter kind, held-out questions (seconds each at 1M, so fewer than ours)
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


def similarities(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Podobieństwa wszystkich fragmentów do wszystkich pytań (wiersz na pytanie) – jedno przejście po macierzy."""
    units = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = np.empty((len(units), len(vectors)), dtype=np.float32)
    for s in range(0, len(vectors), 100_000):
        scores[:, s : s + 100_000] = units @ vectors[s : s + 100_000].T
    return scores


def exact_top(row: np.ndarray, mask: np.ndarray) -> list[str]:
    """Dokładne k najbliższych spełniających filtr."""
    column = np.where(mask, row, -np.inf)
    wanted = min(K, int(mask.sum()))
    best = np.argpartition(-column, wanted)[:wanted] if wanted < len(column) else np.arange(len(column))
    return [scale_data.chunk_id(int(i)) for i in best]


def recall(found: list[list[str]], expected: list[list[str]]) -> float:
    # nothing matches the filter: an empty answer is the whole answer
    return float(np.mean([len(set(f) & set(e)) / len(e) if e else float(not f)
                          for f, e in zip(found, expected, strict=True)]))


def p95(samples: list[float]) -> float:
    return percentile_ms(samples, 0.95)


def held_out(kind: dict[str, Any], values: list) -> list:
    """Wartości (czasy, wyniki) pytań odłożonych danego rodzaju filtra – w kolejności jego ``zapytania``."""
    return [v for q, v in zip(kind["zapytania"], values, strict=True) if q["odlozone"]]


def dev(kind: dict[str, Any], values: list) -> list:
    return [v for q, v in zip(kind["zapytania"], values, strict=True) if not q["odlozone"]]


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
                               env={**os.environ, "PYTHONPATH": str(REPO)},  # this checkout's code, not the venv's
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


def chroma_raw(collection: Any, kinds: list[dict[str, Any]],
               expected: dict[str, list[list[str]]]) -> tuple[dict[str, Any], float]:
    """Surowa Chroma `query(where=…)` na tych samych pytaniach: dla każdego rodzaju filtra najpierw
    ``CHROMA_WARMUP`` zapytań bez pomiaru (pytania dev), potem ``CHROMA_QUERIES`` mierzonych (pierwsze pytania
    odłożone). Osobno czas pierwszego zapytania procesu – zimnej Chromy."""
    from chroma_rag.filters import SearchFilters, build_where

    def ask(query: dict[str, Any]) -> tuple[float, list[str]]:
        where = build_where(SearchFilters(**query["filtry"]))
        started = time.perf_counter()
        result = collection.chroma.query(query_embeddings=[np.asarray(query["wektor"], dtype=np.float32)],
                                         n_results=K, where=where, include=[])
        return time.perf_counter() - started, result["ids"][0]

    out, cold_ms = {}, None
    for kind in kinds:
        stage(f"surowa Chroma: {kind['nazwa']}")
        warmups = [ask(q)[0] for q in dev(kind, kind["zapytania"])[:CHROMA_WARMUP]]
        cold_ms = warmups[0] * 1000 if cold_ms is None else cold_ms
        timed = [ask(q) for q in held_out(kind, kind["zapytania"])[:CHROMA_QUERIES]]
        wanted = held_out(kind, expected[kind["nazwa"]])[:CHROMA_QUERIES]
        out[kind["nazwa"]] = {"p95": p95([t for t, _ in timed]), "recall": recall([f for _, f in timed], wanted),
                              "rozgrzewka_ms": [round(t * 1000) for t in warmups]}
    return out, cold_ms


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


def stage(name: str) -> None:
    """Etap przebiegu na stderr (przy 1 mln przebieg trwa kilkadziesiąt minut)."""
    print(f"{time.strftime('%H:%M:%S')} {name}", file=sys.stderr, flush=True)


def run(n: int, scratch: Path) -> dict[str, Any]:
    from chroma_rag.embedding.embedder import LocalE5Embedder
    from chroma_rag.storage.store import Store

    load_start = os.getloadavg()
    src = scale_data.source(scratch)
    held_vectors, held_texts = scale_data.held_out(scratch)
    folder = scratch / "folder"
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "dane"
    store = Store(db)
    prepare(store, src, n, folder)
    stage("dane do dokładnego przeszukania")
    data = scale_data.everything(src, n)
    register_files(store, data["meta"]["plik"])
    asked = [(text, vector, False) for text, vector in zip(src.query_texts, src.queries, strict=True)]
    asked += [(text, vector, True) for text, vector in zip(held_texts, held_vectors, strict=True)]
    scores = similarities(data["vectors"], np.array([vector for _, vector, _ in asked]))
    rng = np.random.default_rng(1)
    kinds, expected = [], {}
    for name, draw in filter_kinds(data["meta"], rng).items():
        queries, tops = [], []
        for q, (text, vector, is_held_out) in enumerate(asked):
            filters, mask = draw()
            queries.append({"tekst": text, "filtry": filters, "wektor": vector.tolist(), "odlozone": is_held_out})
            tops.append(exact_top(scores[q], mask))
        kinds.append({"nazwa": name, "zapytania": queries})
        expected[name] = tops
    del data, scores
    store.close()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as task:
        json.dump({"baza": str(db), "rodzaje": kinds, "nowy_plik": new_file(src, n)}, task)
    # first run: the worker builds the snapshot and the keyword index (minutes at 1M), then measures cold again
    worker = [*WORKER, task.name]
    marker = folder / f"pochodne-{n}.json"
    stage("nasze wyszukiwanie w folderze")
    if not marker.exists():
        started = time.perf_counter()
        subprocess.run([*worker, "--tylko-rozgrzej"], check=True, capture_output=True, cwd=REPO)
        marker.write_text(json.dumps({"pierwsze_s": time.perf_counter() - started}), encoding="utf-8")
    done = subprocess.run(worker, check=True, capture_output=True, text=True, cwd=REPO)
    measured = json.loads(done.stdout.splitlines()[-1])
    stage("pamięć serwuj")
    serwuj = serwuj_memory(db, kinds)
    stage("nasze wyszukiwanie przez chroma run")
    server = server_mode(db, folder, {"rodzaje": kinds, "nowy_plik": {}})
    from chroma_rag.derived import DerivedIndex

    store = Store(db)
    collection = store.chunks(LocalE5Embedder.model_id, LocalE5Embedder.dim)
    raw, chroma_cold_ms = chroma_raw(collection, kinds, expected)
    unfiltered = kinds[0]  # "brak": every row matches
    int8_queries = np.array([q["wektor"] for q in held_out(unfiltered, unfiltered["zapytania"])[:20]], np.float32)
    int8_expected = held_out(unfiltered, expected[unfiltered["nazwa"]])[:20]
    int8 = int8_only_recall(DerivedIndex(collection), int8_queries, int8_expected)
    os.unlink(task.name)
    ours = ours_summary(measured["rodzaje"], kinds, expected)
    return {
        "fragmenty": n,
        "n": {"pytania_odlozone_na_filtr": len(held_texts), "pytania_dev_na_filtr": len(src.query_texts),
              "chroma_mierzone_na_filtr": CHROMA_QUERIES, "chroma_rozgrzewka_na_filtr": CHROMA_WARMUP},
        **ours,
        "rss_mib": {"szukaj": round(measured["rss_mib"]), "serwuj": max(serwuj["rss_procesow_mib"])},
        "serwuj_pamiec": serwuj,
        "zimny_start_s": round(measured["zimny_start_s"], 2),
        "w_tym_start_modelu_s": round(measured["start_modelu_s"], 2),
        "dodanie_pliku_s": round(measured["dodanie_pliku_s"], 2),
        "chroma_p95_ms": {k: round(v["p95"], 1) for k, v in raw.items()},
        "chroma_recall_at_10": {k: round(v["recall"], 3) for k, v in raw.items()},
        "chroma_rozgrzewka_ms": {k: v["rozgrzewka_ms"] for k, v in raw.items()},
        "chroma_zimne_pierwsze_ms": round(chroma_cold_ms, 1),
        "stosunek_p95_chroma_do_naszego": {k: round(raw[k]["p95"] / max(v, 1e-9), 1)
                                           for k, v in ours["p95_ms"].items()},
        "usuniecie_pliku_s": round(measured["usuniecie_pliku_s"], 2),
        "fragmenty_dodanego_pliku": measured["fragmenty_pliku"],
        "w_dzialajacym_procesie": {"dodanie_pliku_s": round(measured["dodanie_pliku_s_w_dzialajacym_procesie"], 2),
                                   "usuniecie_pliku_s": round(measured["usuniecie_pliku_s_w_dzialajacym_procesie"], 2)},
        "recall_at_10_int8_bez_przeliczenia": round(int8, 3),
        "rss_po_pierwszym_zapytaniu_mib": round(measured["rss_po_pierwszym_mib"]),
        "embedding_pytania_ms": round(measured["embedding_pytania_ms"], 1),
        "rss_wg_mapowan_mib": measured["rss_wg_mapowan_mib"],
        "serwer_chroma_run": {
            **ours_summary(server["rodzaje"], kinds, expected),
            "rss_mib": {"szukaj": round(server["rss_mib"]), "chroma_run": round(server["rss_chroma_run_mib"])},
            "zimny_start_s": round(server["zimny_start_s"], 2),
        },
        "obciazenie_start_koniec": [round(load_start[0], 1), round(os.getloadavg()[0], 1)],
    }


def ours_summary(measured: dict[str, Any], kinds: list[dict[str, Any]],
                 expected: dict[str, list[list[str]]]) -> dict[str, dict[str, float]]:
    """Nasze liczby dla każdego rodzaju filtra: p95 na pytaniach odłożonych (hybryda, sam wektor, same słowa),
    recall@10 rankingu wektorowego na odłożonych i – osobno – na pytaniach dev."""
    out: dict[str, dict[str, float]] = {"p95_ms": {}, "p95_wektor_ms": {}, "p95_slowa_ms": {}, "recall_at_10": {},
                                        "recall_at_10_dev": {}}
    for kind in kinds:
        name, got, wanted = kind["nazwa"], measured[kind["nazwa"]], expected[kind["nazwa"]]
        for key, times in (("p95_ms", "czasy"), ("p95_wektor_ms", "czasy_wektor"), ("p95_slowa_ms", "czasy_slowa")):
            out[key][name] = round(p95(held_out(kind, got[times])), 1)
        out["recall_at_10"][name] = round(recall(held_out(kind, got["wyniki"]), held_out(kind, wanted)), 3)
        out["recall_at_10_dev"][name] = round(recall(dev(kind, got["wyniki"]), dev(kind, wanted)), 3)
    return out


def report(result: dict[str, Any], command: str, machine: str) -> str:
    """Sekcja docs/BENCHMARKS.md z wyniku ``run`` (tabela rodzajów filtra i pozostałe liczby)."""
    server, n = result["serwer_chroma_run"], result["n"]
    held, dev_n = n["pytania_odlozone_na_filtr"], n["pytania_dev_na_filtr"]
    lines = [
        f"Polecenie: `{command}`. Maszyna: {machine}; load average na początku i końcu: "
        f"{result['obciazenie_start_koniec']}. **{result['fragmenty']:_} fragmentów**".replace("_", " ")
        + " – folder i `chroma run --path` na tym samym katalogu danych, jeden przebieg.",
        "",
        f"Pytania na każdy rodzaj filtra: {held} **odłożonych** (held-out: inne fragmenty i inne ziarno niż pytania, "
        f"na których dobierano liczby migawki, `bench/scale_data.py`) i {dev_n} **dev** (te, na których je "
        f"dobierano: `chroma_rag/derived/params.py`). Nasze p95 – na {held} odłożonych, w rozgrzanym procesie "
        "(zimny start osobno niżej); recall@10 rankingu wektorowego wobec dokładnego przeszukania – osobno dla "
        f"odłożonych (n = {held}) i dev (n = {dev_n}). Surowa Chroma `query(where)` – przy milionie fragmentów "
        f"jedno zapytanie to sekundy, więc mniej pytań: najpierw {n['chroma_rozgrzewka_na_filtr']} bez pomiaru "
        f"(rozgrzewka, pytania dev), potem {n['chroma_mierzone_na_filtr']} mierzonych (pierwsze odłożone); "
        f"pierwsze zapytanie zimnej Chromy (przed rozgrzewką): {result['chroma_zimne_pierwsze_ms']} ms.",
        "",
        f"| filtr | p95 ms hybryda (n={held}) | p95 ms wektor | p95 ms słowa | recall@10 odłożone (n={held}) "
        f"| recall@10 dev (n={dev_n}) | `chroma run`: p95 ms (n={held}) | `chroma run`: recall@10 odłożone "
        f"| Chroma `query(where)`, rozgrzana: p95 ms (n={n['chroma_mierzone_na_filtr']}) | Chroma: recall@10 "
        f"(n={n['chroma_mierzone_na_filtr']}) | Chroma / nasze (p95) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, ours in result["p95_ms"].items():
        lines.append(
            f"| {kind} | {ours} | {result['p95_wektor_ms'][kind]} | {result['p95_slowa_ms'][kind]} | "
            f"{result['recall_at_10'][kind]} | {result['recall_at_10_dev'][kind]} | "
            f"{server['p95_ms'][kind]} | {server['recall_at_10'][kind]} | {result['chroma_p95_ms'][kind]} | "
            f"{result['chroma_recall_at_10'][kind]} | {result['stosunek_p95_chroma_do_naszego'][kind]} |")
    mapped = ", ".join(f"{k} {v}" for k, v in result["rss_wg_mapowan_mib"].items())
    warmups = "; ".join(f"{k} {v}" for k, v in result["chroma_rozgrzewka_ms"].items())
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
        f"- rozgrzewka surowej Chromy (ms, {n['chroma_rozgrzewka_na_filtr']} zapytania bez pomiaru na rodzaj "
        f"filtra, po kolei): {warmups};",
        f"- dodanie pliku (`Index.add` pliku tekstowego, {result['fragmenty_dodanego_pliku']} fragmentów, bez "
        f"embeddingu) z pierwszym wyszukiwaniem "
        f"po nim: {result['dodanie_pliku_s']} s, usunięcie (`Index.remove`): {result['usuniecie_pliku_s']} s; "
        f"drugi plik w tym samym procesie (jak w działającym `--obserwuj`): dodanie "
        f"{result['w_dzialajacym_procesie']['dodanie_pliku_s']} s, usunięcie "
        f"{result['w_dzialajacym_procesie']['usuniecie_pliku_s']} s;",
        f"- embedding pytania (osobno, nie w p95): {result['embedding_pytania_ms']} ms; recall@10 samego "
        f"przeglądu int8 bez dokładnego przeliczenia (20 pytań odłożonych, bez filtra): "
        f"{result['recall_at_10_int8_bez_przeliczenia']}.",
        "",
        "Ostatnia linia wyjścia `--json`:",
        "",
        "```json",
        json.dumps(result, ensure_ascii=False),
        "```",
    ]
    return "\n".join(lines)
