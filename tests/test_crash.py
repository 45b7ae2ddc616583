"""Awaria w dowolnej chwili: kill -9 albo Ctrl-C, potem zwykły przebieg – nic zgubione, nic zdublowane,
`sprawdz` czysty (w świeżym procesie każdy fragment odnajdywany własnym wektorem)."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest
from processes import expected_chunks, run, start, verify_in_fresh_process
from sync_corpus import regulation, write_docs

NAMES = [f"regulamin-{i}.txt" for i in range(6)]


def mutate(docs: Path, rng: random.Random, round_no: int) -> None:
    """Zmienia treść kilku plików, jeden usuwa, jeden dodaje – żeby każdy przebieg miał co zapisywać."""
    for name in rng.sample(NAMES, 2):
        (docs / name).write_text(regulation(f"{name}-{round_no}", rng.randint(2, 5), variant=round_no),
                                 encoding="utf-8")
    existing = sorted(docs.glob("*.txt"))
    if len(existing) > 3:
        rng.choice(existing).unlink()
    (docs / f"nowy-{round_no}.txt").write_text(regulation(f"nowy {round_no}", 3, variant=round_no), encoding="utf-8")


def kill_rounds(tmp_path: Path, rounds: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    docs, db = tmp_path / "docs", tmp_path / "db"
    write_docs(docs, NAMES, paragraphs=3)
    assert run("indeksuj", docs, "--baza", db).returncode == 0
    kill_times = []
    for round_no in range(rounds):
        mutate(docs, rng, round_no)
        writer = start("indeksuj", docs, "--usun-brakujace", "--baza", db)
        delay = rng.uniform(0.5, 8.0)  # start-up takes a few seconds: kills land in loading, embedding and writing
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.communicate()
        kill_times.append(delay)
        result = run("indeksuj", docs, "--usun-brakujace", "--baza", db)
        assert result.returncode == 0, result.stdout + result.stderr
        report = verify_in_fresh_process(db)
        assert report["ok"], (round_no, report)
        assert report["files"] == expected_chunks(docs), round_no  # 0 lost, nothing stale
        assert report["chunks"] == sum(expected_chunks(docs).values()), round_no  # 0 duplicated
    return kill_times


def test_sigkill_at_random_moments_quick(tmp_path):
    kill_rounds(tmp_path, rounds=2, seed=7)


@pytest.mark.wolne
def test_sigkill_twenty_times(tmp_path):
    kill_rounds(tmp_path, rounds=20, seed=2026)


def test_ctrl_c_prints_clean_message_and_leaves_db_usable(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write_docs(docs, [f"dok-{i}.txt" for i in range(5)], paragraphs=3)
    writer = start("indeksuj", docs, "--baza", db)
    deadline = time.monotonic() + 120
    while not (db / "chroma.sqlite3").exists() and time.monotonic() < deadline and writer.poll() is None:
        time.sleep(0.05)  # interrupt once the first file is being written
    writer.send_signal(signal.SIGINT)
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 130, err
    assert "Przerwano" in err and "Traceback" not in err
    assert run("indeksuj", docs, "--baza", db).returncode == 0
    report = verify_in_fresh_process(db)
    assert report["ok"] and report["files"] == expected_chunks(docs)
