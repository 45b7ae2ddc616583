"""Fuzja wyszukiwania planowanego na wszystkich zbiorach dev naraz, z walidacją krzyżową po aktach (issue 20).

    python bench/planning.py --baza BAZA [--dane ../shared/dane] [--zapisz]

Zbiory: ``pytania-dev`` i ``potoczne-dev`` z planami silnego modelu, ``egzaminy-dev`` bez planów. Listy fuzji
każdego pytania liczy raz produkt (``Searcher.fusion_lists``), a warianty ustawień łączy ``Searcher.fused_hits``
i ocenia ``Searcher.refuses`` – ta sama ścieżka co ``ocena --przepisz``, bez kopii fuzji w pomiarze. Plany
przechodzą przez ``planning.parse_plan`` z katalogiem bazy.

Warianty planów: właściwy, błędny (plan następnego pytania tego samego zbioru), słabsze: bez jednostek,
jednostki przesunięte o ±1…5 artykułów, same dokumenty. Walidacja krzyżowa: dla każdego aktu (pliku z
odpowiedzią; pytania spoza dokumentów to osobna grupa) ustawienia wybiera siatka na pozostałych aktach (warunek:
z planami błędnymi hit@5 ≥ 0,75 × bez planu, potem najlepsze MRR z planami właściwymi), a wynik liczy się na
pominiętym akcie."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")

from chroma_rag import Index  # noqa: E402
from chroma_rag.retrieval.calibration import DEFAULT_CALIBRATION, DEFAULT_FUSION, Calibration  # noqa: E402
from chroma_rag.retrieval.evaluation import Question, first_hit_rank, load_questions, metrics  # noqa: E402
from chroma_rag.retrieval.planning import parse_plan  # noqa: E402
from chroma_rag.retrieval.search import Searcher, SearchRequest  # noqa: E402

DATA = ROOT.parent / "shared" / "dane"
SETS = (("pytania-dev", "plany-dev"), ("potoczne-dev", "plany-potoczne-dev"), ("egzaminy-dev", None))
DEPTH = 50
K = 10


@dataclass
class Case:
    group: str  # the act (gold file) or "spoza": the unit left out together in cross-validation
    dataset: str
    question: Question
    plans: dict  # variant → (Plan | None, fusion lists)
    vector: object


def shifted_units(raw: dict, by: int) -> dict:
    def shift(unit: str) -> str:
        match = re.search(r"(\d+)", unit)
        return unit[: match.start()] + str(max(1, int(match.group(1)) + by)) if match else unit
    return {**raw, "jednostki": [shift(u) for u in raw.get("jednostki", [])]}


def plan_variants(raw: dict | None, wrong: dict | None) -> dict[str, dict | None]:
    if raw is None:
        return {"bez planu": None}
    variants = {"bez planu": None, "plan": raw, "plan błędny": wrong, "bez jednostek": {**raw, "jednostki": []},
                "same dokumenty": {"zapytania": [], "dokumenty": raw.get("dokumenty", []), "jednostki": []}}
    for by in (-5, -1, 1, 5):
        variants[f"jednostki {by:+d}"] = shifted_units(raw, by)
    return variants


def prepare(index: Index, searcher: Searcher, data: Path) -> list[Case]:
    cases = []
    for name, plans_name in SETS:
        questions = load_questions(data / f"{name}.jsonl")
        stored = {}
        if plans_name:
            for line in (data / f"{plans_name}.jsonl").read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    stored[entry["pytanie"]] = entry["plan"]
        raws = [stored.get(q.text) for q in questions]
        for n, question in enumerate(questions):
            vector = searcher.embedder.embed_query(question.text)
            plans = {}
            for variant, raw in plan_variants(raws[n], raws[(n + 1) % len(raws)]).items():
                request = SearchRequest(question.text, K, question.filters, "hybryda")
                if raw is not None:
                    request.plan = parse_plan(json.dumps(raw, ensure_ascii=False),
                                              index.retrieval.catalog(searcher, request))
                plans[variant] = (request.plan, searcher.fusion_lists(request, vector, DEPTH))
            cases.append(Case(question.file or "spoza", name, question, plans, vector))
    return cases


def outcome(searcher: Searcher, case: Case, variant: str, calibration: Calibration,
            threshold: float | None = None) -> tuple[int | None, bool]:
    plan, lists = case.plans.get(variant, case.plans["bez planu"])
    hits = searcher.fused_hits(lists, case.vector, K, calibration.fusion)
    threshold = calibration.threshold if threshold is None else threshold
    refused = searcher.refuses(case.question.text, hits, threshold, plan, case.question.filters,
                               calibration.refusal_bump)
    return (None if refused else first_hit_rank(hits, case.question)), refused


def summary(results: list[tuple[int | None, bool]], cases: list[Case]) -> dict[str, float]:
    answerable = [r for r, c in zip(results, cases, strict=True) if c.question.answerable]
    values = metrics([rank for rank, _ in answerable])
    values["utracone"] = sum(refused for _, refused in answerable)
    values["spoza"] = sum(r[1] for r, c in zip(results, cases, strict=True) if not c.question.answerable)
    values["n_spoza"] = sum(not c.question.answerable for c in cases)
    return values


def row(name: str, v: dict[str, float]) -> str:
    return (f"| {name} | {v['hit@1']:.2f} | {v['hit@5']:.2f} | {v['mrr']:.2f} | "
            f"{int(v['spoza'])}/{int(v['n_spoza'])} | {int(v['utracone'])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--dane", type=Path, default=DATA)
    args = parser.parse_args()
    index = Index(args.baza)
    # a gated fusion makes the unit lists carry their rank within the hinted files, which the grid varies
    searcher = replace(index.searcher("hybryda"), fusion=replace(DEFAULT_FUSION, unit_gate=0.0))
    cases = prepare(index, searcher, args.dane)
    planned = [c for c in cases if "plan" in c.plans]
    grid = [replace(DEFAULT_CALIBRATION, fusion=replace(DEFAULT_FUSION, unit_gate=g, question_weight=q, plan_margin=m))
            for g, q, m in itertools.product((0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 1.0), (1, 2), (0.06, 1.0))]
    variants = ("bez planu", "plan", "plan błędny")
    results = {n: {v: [outcome(searcher, c, v, f) for c in planned] for v in variants} for n, f in enumerate(grid)}

    def choose(keep: list[int]) -> int:
        def objective(n: int) -> tuple[bool, float]:
            def part(variant: str) -> dict[str, float]:
                return summary([results[n][variant][i] for i in keep], [planned[i] for i in keep])
            robust = part("plan błędny")["hit@5"] >= 0.75 * part("bez planu")["hit@5"]
            return robust, part("plan")["mrr"]
        return max(range(len(grid)), key=lambda n: (objective(n), -n))

    groups = sorted({c.group for c in planned})
    held = {v: [None] * len(planned) for v in variants}
    chosen = Counter()
    for group in groups:
        best = choose([i for i, c in enumerate(planned) if c.group != group])
        chosen[best] += 1
        for i, case in enumerate(planned):
            if case.group == group:
                for v in variants:
                    held[v][i] = results[best][v][i]

    def describe(n: int) -> str:
        g = grid[n].fusion
        return f"unit_gate {g.unit_gate}, pytanie ×{g.question_weight}, plan_margin {g.plan_margin}"

    sizes = ", ".join(f"{k} {v}" for k, v in Counter(c.dataset for c in planned).items())
    print(f"Pytania z planami: {len(planned)} ({sizes}), grupy walidacji (akty): {len(groups)}, "
          f"siatka: {len(grid)} wariantów\n")
    print("| ustawienia | hit@1 | hit@5 | MRR | odmowy spoza | utracone przez próg |")
    print("|---|---|---|---|---|---|")
    for v in variants:
        print(row(f"walidacja po aktach, {v}", summary(held[v], planned)))
    full = choose(list(range(len(planned))))
    default = [outcome(searcher, c, "plan", DEFAULT_CALIBRATION) for c in planned]
    print(row("domyślna (DEFAULT_CALIBRATION), plan", summary(default, planned)))
    for v in ("bez planu", "plan", "plan błędny", "bez jednostek", "same dokumenty", "jednostki -5", "jednostki -1",
              "jednostki +1", "jednostki +5"):
        print(row(f"wybór na całości ({describe(full)}): {v}",
                  summary([outcome(searcher, c, v, grid[full]) for c in planned], planned)))
    print("\nwybory w walidacji po aktach (ile aktów):")
    for n, count in chosen.most_common():
        print(f"  {count}× {describe(n)}")
    print("\nsiatka na całości (plan MRR / plan błędny hit@5):")
    for n in range(len(grid)):
        s_plan, s_wrong = summary(results[n]["plan"], planned), summary(results[n]["plan błędny"], planned)
        print(f"  {describe(n)}: {s_plan['hit@5']:.2f} / {s_plan['mrr']:.2f} ; błędny {s_wrong['hit@5']:.2f}")
    exams = [c for c in cases if c.dataset == "egzaminy-dev"]
    print("\n" + row(f"egzaminy-dev bez planu (n={len(exams)}), domyślna",
                     summary([outcome(searcher, c, "bez planu", DEFAULT_CALIBRATION) for c in exams], exams)))
    print(f"\nCalibration wybrana na całości: {grid[full]!r}")
    threshold_curve(searcher, planned, exams, grid[full])


def threshold_curve(searcher: Searcher, planned: list[Case], exams: list[Case], calibration: Calibration) -> None:
    """Próg → pytania z odpowiedzią utracone (plan właściwy i egzaminy bez planu) wobec pytań spoza odrzuconych
    (z planem i bez): próg wybiera się z zapasem od pierwszej utraty, nie jako najwyższy bez utrat."""
    print("\nkrzywa progu (wszystkie zbiory):\n")
    print("| próg | utracone z planem | utracone egzaminy bez planu | spoza odrzucone z planem | spoza bez planu |")
    print("|---|---|---|---|---|")
    outside = [c for c in planned if not c.question.answerable]
    for step in range(76, 91):
        value = step / 100
        lost_planned = sum(outcome(searcher, c, "plan", calibration, value)[1]
                           for c in planned if c.question.answerable)
        lost_exams = sum(outcome(searcher, c, "bez planu", calibration, value)[1] for c in exams)
        refused_planned = sum(outcome(searcher, c, "plan", calibration, value)[1] for c in outside)
        refused_plain = sum(outcome(searcher, c, "bez planu", calibration, value)[1] for c in outside)
        print(f"| {value:.2f} | {lost_planned} | {lost_exams} | {refused_planned}/{len(outside)} | "
              f"{refused_plain}/{len(outside)} |")


if __name__ == "__main__":
    main()
