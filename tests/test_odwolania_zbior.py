"""Zbiór odwołań dev (``bench/odwolania-dev.jsonl``: osiem prostych zapisów każdego z aktów biblioteki i PDF-ów,
zapisy złożone, z notatek i sklejone oraz akty spoza niej) rozpoznany bez bazy: każde odwołanie wskazuje swój akt
i jednostkę, każde do aktu spoza – nieznany akt. Ranking tych odwołań mierzy ``make ocena-biblioteka``; ten test
pilnuje samego rozpoznawania przy każdej zmianie."""

from __future__ import annotations

import json

from conftest import REPO, USTAWY

from chroma_rag.filters import normalize_article
from chroma_rag.ingest.loading import load_document
from chroma_rag.ingest.metadata import detect_title
from chroma_rag.retrieval.references import find_references


def test_every_reference_of_the_dev_set_names_its_act_and_unit() -> None:
    library = sorted(USTAWY.glob("*.pdf")) + sorted((USTAWY.parent / "biblioteka").glob("*.txt"))
    titles = {path.name: detect_title(load_document(path).text) for path in library}
    rows = [json.loads(line) for line in (REPO / "bench" / "odwolania-dev.jsonl").read_text("utf-8").splitlines()]
    missed = []
    for row in rows:
        refs = find_references(row["pytanie"], titles)
        if row["plik"] is None:
            resolved = not refs.units and bool(refs.unknown)
        else:
            first = refs.units[0] if refs.units else None
            resolved = first is not None and row["plik"] in first.files and normalize_article(row["art"][0]) in \
                first.articles
        if not resolved:
            missed.append(row["pytanie"])
    assert len(rows) > 300 and not missed, missed
