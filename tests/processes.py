"""Prawdziwe procesy `chroma-rag` i kontrola bazy w świeżym procesie (wspólne dla testów awarii i współbieżności)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def env(**extra: str) -> dict[str, str]:
    """Środowisko procesu potomnego, liczone przy uruchomieniu: zawiera folder danych pochodnych i ustawień testów
    (``local_cache`` w conftest ustawia je dopiero po imporcie tego modułu)."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "COLUMNS": "200", "PYTHONPATH": path, **extra}

_VERIFY = """
import json, sys
from chroma_rag import Index
index = Index(sys.argv[1])
report = index.check()
print(json.dumps({
    "ok": report.ok, "orphans": len(report.orphans), "incomplete": report.incomplete,
    "unfindable": report.unfindable, "chunks": report.chunks,
    "files": {f.path: f.chunks for f in index.files()},
}))
"""


def cli(*args: object) -> list[str]:
    return [sys.executable, "-m", "chroma_rag", *(str(a) for a in args)]


def start(*args: object, stdout: int = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(cli(*args), stdout=stdout, stderr=subprocess.PIPE, text=True, env=env(), cwd=REPO)


def run(*args: object, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), capture_output=True, text=True, env=env(), cwd=REPO, timeout=timeout)


def verify_in_fresh_process(db: Path) -> dict:
    """`sprawdz` (rejestr vs kolekcja, każdy fragment znaleziony własnym wektorem) + lista plików."""
    result = subprocess.run([sys.executable, "-c", _VERIFY, str(db)], capture_output=True, text=True, env=env(),
                            timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def expected_chunks(folder: Path) -> dict[str, int]:
    """Ile fragmentów powinien mieć każdy plik folderu (dokumenty z sync_corpus: jeden na paragraf)."""
    return {str(p.resolve()): p.read_text(encoding="utf-8").count("\n§ ") for p in sorted(folder.rglob("*.txt"))}
