"""Awaria w trakcie zapisów: kill -9 albo Ctrl-C w losowo wybranym miejscu przebiegu, potem zwykły przebieg – nic
zgubione, nic zdublowane, `sprawdz` czysty (w świeżym procesie każdy fragment odnajdywany własnym wektorem)."""

from __future__ import annotations

import json
import queue
import random
import signal
import subprocess
import threading
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


# A writer that never says it is at the chosen moment fails the test instead of hanging it.
LIMIT = 600.0


class Writer:
    """``indeksuj`` z wierszami stderr czytanymi w tle (postęp bez terminala: wiersz na każdy gotowy plik)."""

    def __init__(self, *args: object) -> None:
        self.process = start("indeksuj", *args, stdout=subprocess.DEVNULL)
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.put(line)
        self._lines.put(None)

    def until(self, prefix: str) -> str:
        """Czeka na wiersz zaczynający się od ``prefix`` i go zwraca."""
        while (line := self._lines.get(timeout=LIMIT)) is not None:
            self.seen.append(line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"proces skończył, zanim wypisał „{prefix}”: {''.join(self.seen)}")

    def stop(self, sig: signal.Signals) -> tuple[int, str]:
        """Sygnał, koniec procesu; jego kod wyjścia i całe stderr."""
        self.process.send_signal(sig)
        code = self.process.wait(timeout=LIMIT)
        while (line := self._lines.get(timeout=LIMIT)) is not None:
            self.seen.append(line)
        return code, "".join(self.seen)


def indexed_files(db: Path) -> dict[str, int]:
    """Pliki rejestru i ich fragmenty, odczytane w świeżym procesie."""
    listing = run("lista", "--json", "--baza", db)
    assert listing.returncode == 0, listing.stderr
    return {entry["sciezka"]: entry["fragmenty"] for entry in json.loads(listing.stdout)}


def kill_rounds(tmp_path: Path, rounds: int, seed: int) -> list[int]:
    """``rounds`` razy: zmiana plików, ``indeksuj`` zabity w losowym miejscu zapisów, zwykły przebieg, kontrola.

    Miejsce to zdarzenie, nie chwila: tuż po tym, jak proces ogłosił pliki do zapisu (model liczy pierwszy), albo
    tuż po k-tym gotowym pliku (jego zapis idzie w tle, model liczy następny) – nigdy po ostatnim. Proces nie
    może więc skończyć przed zabiciem, a ostatni z jego plików nie jest jeszcze zapisany: każda runda sprawdza
    powrót po przerwanym zapisie, a nie po zakończonym."""
    rng = random.Random(seed)
    docs, db = tmp_path / "docs", tmp_path / "db"
    write_docs(docs, NAMES, paragraphs=3)
    assert run("indeksuj", docs, "--baza", db).returncode == 0
    kill_points = []
    for round_no in range(rounds):
        mutate(docs, rng, round_no)
        writer = Writer(docs, "--usun-brakujace", "--baza", db)
        todo = int(writer.until("Do zaindeksowania: ").split()[2])  # "Do zaindeksowania: 3 pliki, 11 fragmentów."
        point = rng.randrange(todo)  # 0: embedding the first file; k: after the k-th file is done
        for _ in range(point):
            writer.until("Gotowe: ")
        code, err = writer.stop(signal.SIGKILL)
        kill_points.append(point)
        assert code == -signal.SIGKILL, (round_no, code, err)
        assert indexed_files(db) != expected_chunks(docs), round_no  # the kill came before the last write
        result = run("indeksuj", docs, "--usun-brakujace", "--baza", db)
        assert result.returncode == 0, result.stdout + result.stderr
        report = verify_in_fresh_process(db)
        assert report["ok"], (round_no, report)
        assert report["files"] == expected_chunks(docs), round_no  # 0 lost, nothing stale
        assert report["chunks"] == sum(expected_chunks(docs).values()), round_no  # 0 duplicated
    return kill_points


def test_sigkill_at_random_moments_quick(tmp_path):
    kill_rounds(tmp_path, rounds=2, seed=7)


@pytest.mark.wolne
def test_sigkill_twenty_times(tmp_path):
    kill_rounds(tmp_path, rounds=20, seed=2026)


def test_ctrl_c_prints_clean_message_and_leaves_db_usable(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write_docs(docs, [f"dok-{i}.txt" for i in range(5)], paragraphs=3)
    writer = Writer(docs, "--baza", db)
    writer.until("Gotowe: ")  # the first file is being written, four more to go
    code, err = writer.stop(signal.SIGINT)
    assert code == 130, err
    assert "Przerwano" in err and "Traceback" not in err
    assert run("indeksuj", docs, "--baza", db).returncode == 0
    report = verify_in_fresh_process(db)
    assert report["ok"] and report["files"] == expected_chunks(docs)
