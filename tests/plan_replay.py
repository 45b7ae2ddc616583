"""Odtwarzanie zapisanych planów (``../shared/dane/plany-dev.jsonl``) przez serwer czatu zgodny z OpenAI.

Serwer z ``llm_server.py`` szuka w zapytaniu planowania pytania (dosłownie) i zwraca jego zapisany plan;
na inne zapytania odpowiada zwykłym tekstem. Używają go testy i ``make ocena-plan``:

    python tests/plan_replay.py PLANY.jsonl [--zamien N] -- chroma-rag ocena PYTANIA --przepisz

Polecenie po ``--`` dostaje ``CHROMA_RAG_LLM_URL`` serwera. ``--zamien N`` oddaje każdemu pytaniu plan
pytania o N dalszego (plany błędne – pomiar odporności fuzji).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_server import Reply, Request, running_fake_llm

PLANNING_MARK = '"zapytania"'  # the planning prompt asks for this JSON key; answering prompts never do


def load_plans(path: Path, rotate: int = 0) -> dict[str, dict]:
    """Pytanie → plan; z ``rotate`` plany przesunięte między pytaniami."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [row["pytanie"] for row in rows]
    plans = [row["plan"] for row in rows]
    shift = rotate % len(rows) if rows else 0
    return {q: plans[(i + shift) % len(plans)] for i, q in enumerate(questions)}


def plan_responder(plans: dict[str, dict]):
    """Odpowiedź na zapytanie planowania: zapisany plan pytania, które występuje w nim dosłownie (najdłuższe
    pasujące, bo jedno pytanie może zawierać inne); ``None`` (odpowiedź domyślna) dla pozostałych."""

    def respond(request: Request) -> Reply | None:
        text = "\n".join(str(m.get("content", "")) for m in request.body.get("messages", []))
        if PLANNING_MARK not in text:
            return None
        found = [q for q in plans if q in text]
        if not found:
            return Reply(text='{"zapytania": [], "dokumenty": [], "jednostki": []}')
        return Reply(text=json.dumps(plans[max(found, key=len)], ensure_ascii=False))

    return respond


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plany", type=Path)
    parser.add_argument("--zamien", type=int, default=0, help="przesuń plany o N pytań (plany błędne)")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("po „--” podaj polecenie do uruchomienia")
    with running_fake_llm(plan_responder(load_plans(args.plany, args.zamien))) as server:
        model = f"odtworzone-plany-{args.zamien}"  # its own plan cache entries
        env = {**os.environ, "CHROMA_RAG_LLM_URL": server.url, "CHROMA_RAG_LLM_MODEL": model}
        return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
