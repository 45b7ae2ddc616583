"""docs/BENCHMARKS.md: znaczniki sekcji, które benche wpisują same, i tabela bieżących wyników, która je cytuje."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "BENCHMARKS.md"
# a figure as the benches print it: 0.949, 1998, 84/88, 1.94 – not the 5 of "hit@5" or the 95 of "p95"
FIGURE = re.compile(r"(?<![\w@.,/])\d+(?:[.,]\d+)?(?:/\d+)?(?![\w@])")
COLUMNS = ["zbiór / pomiar", "n", "rodzaj", "wynik", "sekcja", "polecenie", "data"]


def sections(text: str) -> dict[str, str]:
    found = {}
    for match in re.finditer(r"<!-- (\S+): start -->\n(.*?)<!-- (\S+): koniec -->", text, re.S):
        name, body, closing = match.groups()
        assert closing == name, f"sekcja {name} kończy się znacznikiem sekcji {closing}"
        assert "<!--" not in body, f"w sekcji {name} jest znacznik innej sekcji"
        found[name] = body
    return found


def summary_rows(text: str) -> list[dict[str, str]]:
    table = text.split("\n## Aktualne wyniki\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == COLUMNS
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
            for line in lines[2:]]


def test_every_section_a_bench_writes_has_one_pair_of_markers() -> None:
    # BENCHMARKS.md, or the document a bench names (bench/atak.py: its table in NIEZAWODNOSC.md)
    texts = [doc.read_text(encoding="utf-8") for doc in (DOC, REPO / "docs" / "NIEZAWODNOSC.md")]
    found = {name: text for text in texts for name in sections(text)}
    written = {name for path in (REPO / "bench").glob("*.py")
               for name in re.findall(r'write_section\(f?"([^"{]+)', path.read_text(encoding="utf-8"))}
    assert written
    for name in written:
        names = [n for n in found if n == name or (name.endswith("-") and n.startswith(name))]
        assert names, f"brak sekcji {name} w docs/BENCHMARKS.md ani docs/NIEZAWODNOSC.md"
        for full in names:
            text = found[full]
            assert text.count(f"<!-- {full}: start -->") == text.count(f"<!-- {full}: koniec -->") == 1


def test_the_summary_quotes_its_sections() -> None:
    text = DOC.read_text(encoding="utf-8")
    found = sections(text)
    rows = summary_rows(text)
    assert len(rows) >= 10
    for row in rows:
        body = found[row["sekcja"].strip("`")]
        figures = FIGURE.findall(row["wynik"])
        assert figures, row
        for figure in figures:
            assert re.search(rf"(?<![\d.]){re.escape(figure)}(?!\d)", body), (
                f"{row['zbiór / pomiar']}: liczby {figure} nie ma w sekcji {row['sekcja']}")
        dated = re.search(r"Maszyna: (\d{4}-\d{2}-\d{2})", body)
        if dated:
            assert row["data"] == dated.group(1), f"{row['zbiór / pomiar']}: sekcja ma datę {dated.group(1)}"
        else:
            assert "z historii git" in row["data"], row
