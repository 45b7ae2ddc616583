"""Fuzja wyszukiwania planowanego (issue 12): składniki, plany błędne, dobór wag leave-one-out.

    python bench/planning.py --baza BAZA [--pytania …/pytania-dev.jsonl] [--plany …/plany-dev.jsonl]

Listy fuzji każdego pytania liczone są raz (``Searcher.fusion_lists``) dla planu właściwego i dla planu
przesuniętego o jedno pytanie (wszystkie plany błędne); warianty wag to już tylko RRF na tych listach.
Domyślna fuzja jest też liczona z planami przesuniętymi o 2, 3, 5, 8 i 12 pytań (rozrzut kosztu błędnych planów).
Plany przechodzą przez ``planning.parse_plan`` z katalogiem bazy, jak w ``ocena --przepisz``.

Leave-one-out: dla każdego pytania wagi wybiera siatka na pozostałych (cel: z planami błędnymi hit@5 ≥ 0,75 ×
bez planu, potem najlepsze MRR z planami właściwymi), a wynik liczy się na pominiętym – raportujemy, jak często
wybierano każdy wariant; osobno samo sito jednostek (``unit_margin``) i cała siatka marginesów.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")

from chroma_rag import Index  # noqa: E402
from chroma_rag.models import Hit, Plan  # noqa: E402
from chroma_rag.retrieval.evaluation import Outcome, Question, first_hit_rank, load_questions, metrics  # noqa: E402
from chroma_rag.retrieval.planning import parse_plan  # noqa: E402
from chroma_rag.retrieval.search import DEFAULT_FUSION, DEFAULT_THRESHOLD, FusionSettings, SearchRequest, fuse  # noqa: E402

DATA = ROOT.parent / "shared" / "dane"
DEPTH = 50


@dataclass
class Case:
    question: Question
    plan: Plan | None
    lists: list  # FusionList
    similarity: dict[str, float]


def prepare(index: Index, questions: list[Question], plans: list[dict | None]) -> list[Case]:
    searcher = index.searcher("hybryda")
    snapshot = searcher.collection.snapshot()
    assert snapshot is not None, "pomiar potrzebuje lokalnej migawki kolekcji (tryb folderu)"
    ids = snapshot.id_list()
    cases = []
    for question, raw in zip(questions, plans, strict=True):
        request = SearchRequest(question.text, 10, question.filters, "hybryda")
        if raw is not None:
            request.plan = parse_plan(json.dumps(raw, ensure_ascii=False), index.retrieval.catalog(searcher, request))
        vector = searcher.embedder.embed_query(question.text)
        lists = searcher.fusion_lists(request, vector, DEPTH)
        similarity = dict(zip(ids, (snapshot.vectors @ vector).tolist(), strict=True))
        cases.append(Case(question, request.plan, lists, similarity))
    return cases


def outcome(index: Index, case: Case, fusion: FusionSettings, meta: dict[str, dict], threshold: float | None):
    scores = fuse(case.lists, case.similarity, fusion)
    ordered = sorted(scores, key=lambda i: -scores[i])[:DEPTH]
    hits, seen = [], set()
    for chunk_id in ordered:
        hit = Hit(chunk_id, "", meta[chunk_id], case.similarity[chunk_id], scores[chunk_id])
        key = (hit.file, hit.art or hit.id)
        if key not in seen:
            seen.add(key)
            hits.append(hit)
    hits = hits[:10]
    searcher = index.searcher("hybryda")
    refused = searcher.refuses(case.question.text, hits, threshold, case.plan, case.question.filters)
    rank = None if refused else first_hit_rank(hits, case.question)
    return Outcome(case.question, rank, refused, hits[0] if hits else None)


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    answerable = [o for o in outcomes if o.question.answerable]
    result = metrics([o.rank for o in answerable])
    result["spoza"] = sum(o.refused for o in outcomes if not o.question.answerable)
    result["utracone"] = sum(o.refused for o in answerable)
    return result


def row(name: str, values: dict[str, float]) -> str:
    return (f"| {name} | {values['hit@1']:.2f} | {values['hit@5']:.2f} | {values['hit@10']:.2f} | "
            f"{values['mrr']:.2f} | {values['spoza']}/3 | {values['utracone']} |")


def offline_loo(questions: list[Question], cases: list[Case], run) -> None:
    """Fuzja bez planu (słowa : wektor, k RRF, odwołania) wybierana leave-one-out po MRR."""
    grid = [replace(DEFAULT_FUSION, keyword_weight=w, rrf_k=k, reference_weight=r)
            for w, k, r in itertools.product((0.0, 0.5, 1.0, 1.5, 2.0), (20, 60), (0.0, 1.0))]
    outcomes = [run(cases, fusion) for fusion in grid]
    held_out, chosen = [], Counter()
    for i in range(len(questions)):
        keep = [j for j in range(len(questions)) if j != i and questions[j].answerable]
        best = max(range(len(grid)), key=lambda n: (metrics([outcomes[n][j].rank for j in keep])["mrr"], -n))
        chosen[best] += 1
        held_out.append(outcomes[best][i])
    print(row("bez planu, leave-one-out (słowa×, k, odwołania×)", summary(held_out)))
    for n, count in chosen.most_common():
        g, full = grid[n], summary(outcomes[n])
        print(f"  {g.keyword_weight}, {g.rrf_k}, {g.reference_weight}: {count} – hit@5 {full['hit@5']:.2f} "
              f"MRR {full['mrr']:.2f}")
    values = [summary(o) for o in outcomes]
    print(f"siatka bez planu {len(grid)} wariantów: hit@5 {min(v['hit@5'] for v in values):.2f}–"
          f"{max(v['hit@5'] for v in values):.2f}, MRR {min(v['mrr'] for v in values):.2f}–"
          f"{max(v['mrr'] for v in values):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--pytania", type=Path, default=DATA / "pytania-dev.jsonl")
    parser.add_argument("--plany", type=Path, default=DATA / "plany-dev.jsonl")
    args = parser.parse_args()

    questions = load_questions(args.pytania)
    stored = {}
    for line in args.plany.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            stored[entry["pytanie"]] = entry["plan"]
    right = [stored[q.text] for q in questions]
    wrong = right[1:] + right[:1]  # every question gets the next one's plan
    index = Index(args.baza)
    collection = index.searcher("hybryda").collection
    files, arts = collection.column("plik", ""), collection.column("art", "")
    meta = {i: {"plik": files[i], "art": arts[i]} for i in files}
    variants = {"bez planu": prepare(index, questions, [None] * len(questions)),
                "plan": prepare(index, questions, right), "plan błędny": prepare(index, questions, wrong)}

    def run(cases: list[Case], fusion: FusionSettings, threshold=DEFAULT_THRESHOLD) -> list[Outcome]:
        return [outcome(index, case, fusion, meta, threshold) for case in cases]

    print("| konfiguracja | hit@1 | hit@5 | hit@10 | MRR | odmowy spoza | utracone przez próg |")
    print("|---|---|---|---|---|---|---|")
    print(row("bez planu (domyślna)", summary(run(variants["bez planu"], DEFAULT_FUSION))))
    ingredients = {
        "domyślna": DEFAULT_FUSION,
        "bez zapytań planu (query_weight 0)": replace(DEFAULT_FUSION, query_weight=0),
        "bez list zawężonych do dokumentów": replace(DEFAULT_FUSION, document_weight=0),
        "bez jednostek": replace(DEFAULT_FUSION, unit_weight=0),
        "pytanie ×1 (równe wagi)": replace(DEFAULT_FUSION, question_weight=1),
        "pytanie ×6": replace(DEFAULT_FUSION, question_weight=6),
        "bez odsiewu po podobieństwie (margines 1)": replace(DEFAULT_FUSION, plan_margin=1.0),
        "pytanie ×1, bez odsiewu (naiwne RRF)": replace(DEFAULT_FUSION, question_weight=1, plan_margin=1.0),
        "bez sita jednostek (unit_margin 1)": replace(DEFAULT_FUSION, unit_margin=1.0),
        "listy planu z k 60 jak listy pytania (poprzednia domyślna)": replace(DEFAULT_FUSION, plan_rrf_k=60),
        "listy planu k 10": replace(DEFAULT_FUSION, plan_rrf_k=10),
        "listy planu k 20": replace(DEFAULT_FUSION, plan_rrf_k=20),
    }
    for name, fusion in ingredients.items():
        for variant in ("plan", "plan błędny"):
            print(row(f"{variant}: {name}", summary(run(variants[variant], fusion))))

    # the table's wrong plans are the next question's (often the same act); other shifts pair other acts
    for shift in (2, 3, 5, 8, 12):
        shifted = prepare(index, questions, right[shift:] + right[:shift])
        print(row(f"plan błędny, przesunięcie o {shift}: domyślna", summary(run(shifted, DEFAULT_FUSION))))

    unplanned_outcomes = run(variants["bez planu"], DEFAULT_FUSION)
    planned_loo(questions, variants, run, unplanned_outcomes, "k RRF list planu (plan_rrf_k, reszta domyślna)",
                [replace(DEFAULT_FUSION, plan_rrf_k=k) for k in (3, 5, 10, 20, 30, 60)])
    planned_loo(questions, variants, run, unplanned_outcomes, "sito jednostek (unit_margin, reszta domyślna)",
                [replace(DEFAULT_FUSION, unit_margin=m) for m in (0.01, 0.015, 0.02, 0.025, 0.03, 1.0)])
    planned_loo(questions, variants, run, unplanned_outcomes,
                "plan_rrf_k, pytanie×, plan_margin, query_margin, unit_margin",
                [replace(DEFAULT_FUSION, plan_rrf_k=k, question_weight=q, plan_margin=m, query_margin=u, unit_margin=n)
                 for k, q, m, u, n in itertools.product((5, 10, 20, 60), (1, 2), (0.04, 0.06, 1.0), (-0.01, 0.0, 0.01),
                                                        (0.02, 0.025, 0.03, 1.0))])
    offline_loo(questions, variants["bez planu"], run)


def planned_loo(questions: list[Question], variants: dict[str, list[Case]], run, unplanned: list[Outcome],
                name: str, grid: list[FusionSettings]) -> None:
    """Leave-one-out wag fuzji z planem: dla każdego pytania wariant wybiera siatka na pozostałych (cel
    issue: z planem błędnym hit@5 ≥ 0,75 × bez planu, potem najlepsze MRR z planem właściwym), a wynik
    liczy się na pominiętym. Drukuje też wybory, rozrzut siatki i wariant wybrany na całym zbiorze."""
    per_config = [{v: run(variants[v], fusion) for v in ("plan", "plan błędny")} for fusion in grid]

    def objective(n: int, keep: list[int]) -> tuple[bool, float]:
        def ranks(outcomes: list[Outcome]) -> list[int | None]:
            return [outcomes[i].rank for i in keep if questions[i].answerable]

        robust = metrics(ranks(per_config[n]["plan błędny"]))["hit@5"] >= 0.75 * metrics(ranks(unplanned))["hit@5"]
        return robust, metrics(ranks(per_config[n]["plan"]))["mrr"]

    def choose(keep: list[int]) -> int:
        return max(range(len(grid)), key=lambda n: (objective(n, keep), -n))

    def describe(n: int) -> str:
        g, full = grid[n], {v: summary(per_config[n][v]) for v in ("plan", "plan błędny")}
        return (f"{g.plan_rrf_k}, {g.question_weight}, {g.plan_margin}, {g.query_margin}, {g.unit_margin} – plan hit@5 "
                f"{full['plan']['hit@5']:.2f} MRR {full['plan']['mrr']:.2f}, błędny hit@5 "
                f"{full['plan błędny']['hit@5']:.2f} MRR {full['plan błędny']['mrr']:.2f}")

    held_out: dict[str, list[Outcome]] = {"plan": [], "plan błędny": []}
    chosen = Counter()
    for i in range(len(questions)):
        best = choose([j for j in range(len(questions)) if j != i])
        chosen[best] += 1
        for variant in held_out:
            held_out[variant].append(per_config[best][variant][i])
    print(f"{name}: {len(grid)} wariantów")
    for variant, outcomes in held_out.items():
        print(row(f"leave-one-out, {variant}", summary(outcomes)))
    print("wybory leave-one-out (plan_rrf_k, pytanie×, plan_margin, query_margin, unit_margin: ile razy):")
    for n, count in chosen.most_common():
        print(f"  {count}× {describe(n)}")
    print(f"wybór na całym zbiorze: {describe(choose(list(range(len(questions)))))}")
    spread = [summary(p["plan"])["mrr"] for p in per_config]
    spread_wrong = [summary(p["plan błędny"])["hit@5"] for p in per_config]
    print(f"rozrzut siatki: MRR z planem {min(spread):.2f}–{max(spread):.2f}, "
          f"hit@5 z planem błędnym {min(spread_wrong):.2f}–{max(spread_wrong):.2f}")


if __name__ == "__main__":
    main()
