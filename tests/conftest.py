"""Wspólne zasoby testów: prawdziwe PDF-y z ../shared, prawdziwa Chroma na dysku, prawdziwy model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chroma_rag.cli import main

REPO = Path(__file__).resolve().parents[1]
USTAWY = REPO.parent / "shared" / "dane" / "ustawy"
SAMPLES = REPO / "dane"
PATIENTS = "prawa-pacjenta-DU-2009-417.pdf"
DATA_PROTECTION = "ochrona-danych-osobowych-DU-1997-883.pdf"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Uruchamia CLI w tym procesie; zwraca (kod wyjścia, stdout, stderr)."""
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="session")
def ustawy() -> Path:
    if not USTAWY.is_dir():
        pytest.fail(f"Brak wspólnych PDF-ów w {USTAWY}")
    return USTAWY


@pytest.fixture(scope="session")
def two_acts_db(tmp_path_factory: pytest.TempPathFactory, ustawy: Path) -> Path:
    """Baza z dwiema małymi ustawami, zbudowana raz na sesję (embedding trwa kilkadziesiąt sekund)."""
    from chroma_rag import Index

    db = tmp_path_factory.mktemp("two-acts") / "db"
    Index(db).add([ustawy / PATIENTS, ustawy / DATA_PROTECTION])
    return db


@pytest.fixture()
def two_acts_copy(two_acts_db: Path, tmp_path: Path) -> Path:
    """Prywatna kopia bazy dla testów, które ją zmieniają."""
    copy = tmp_path / "db"
    shutil.copytree(two_acts_db, copy)
    return copy


@pytest.fixture(scope="session")
def samples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chroma_rag import Index

    db = tmp_path_factory.mktemp("samples") / "db"
    Index(db).add([SAMPLES])
    return db
