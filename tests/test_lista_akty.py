"""Powierzchnie dla biblioteki aktów (issue 37, pkt 5): `lista` pogrupowana według rodzaju z nazwą aktu i skrótem
(także w potoku przy 80 kolumnach), pola `tytul`/`akt`/`skrot` w `lista --json`, `GET /api/pliki` i narzędziu MCP
`lista_plikow`, lista dokumentów w prośbie o plan (akt nazwą i skrótem, ograniczona).

Prawdziwa baza z prawdziwymi plikami biblioteki (``library_support``), prawdziwy model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from library_support import CIVIL_PROCEDURE, FLATS, PETTY_OFFENCES, RULES, TREES, library_db

from chroma_rag import Index
from chroma_rag.retrieval.planning import LISTED_DOCUMENTS, TITLE_CHARS, Catalog, DocumentEntry, plan_messages

EXPECTED = {  # file → (kind, act's name, abbreviation)
    CIVIL_PROCEDURE: ("kodeks", "Kodeks postępowania cywilnego", "k.p.c."),
    PETTY_OFFENCES: ("kodeks", "Kodeks wykroczeń", "k.w."),
    FLATS: ("ustawa", "o własności lokali", "u.w.l."),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return library_db(tmp_path_factory)


def lista(db: Path, columns: int) -> str:
    """`chroma-rag lista` we własnym procesie, z wyjściem w potoku (konsola czyta COLUMNS przy starcie)."""
    exe = Path(sys.executable).with_name("chroma-rag")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "chroma_rag"]
    run = subprocess.run([*command, "lista", "--baza", str(db)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": str(columns)})
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_lista_groups_files_by_kind_with_act_names_at_80_columns_in_a_pipe(db: Path) -> None:
    out = lista(db, 80)
    lines = out.splitlines()
    assert lines[0].startswith("Zaindeksowane pliki: 5")
    headings = [line for line in lines if line.endswith(")") and not line.startswith(" ") and "(" in line
                and line.split(" (")[0] in {"Kodeksy", "Ustawy", "Regulaminy", "Dokumenty"}]
    assert headings == ["Kodeksy (2)", "Ustawy (2)", "Regulaminy (1)"], out
    assert all(len(line) <= 80 and line == line.rstrip() for line in lines), out
    assert "\x1b" not in out and "│" not in out  # a pipe gets plain lines, no table at 80 columns
    for name in (CIVIL_PROCEDURE, PETTY_OFFENCES, FLATS, RULES, TREES):
        assert name in lines, name  # the file name whole, on its own line: copied into --plik, grepped
    below = {lines[i]: lines[i + 1] for i in range(len(lines) - 1)}
    assert below[CIVIL_PROCEDURE] == "  Kodeks postępowania cywilnego (k.p.c.) · 1964 · 21 fragmentów"
    assert below[PETTY_OFFENCES].startswith("  Kodeks wykroczeń (k.w.) · 1971 · ")
    assert below[FLATS].startswith("  Ustawa o własności lokali (u.w.l.) · 1994 · ")
    assert below[RULES].startswith("  Regulamin pracy spółki Zielony Las sp. z o.o. · ")
    # a title too long for the line is shortened at a word, the year and the count stay
    assert below[TREES].startswith("  Ustawa o ochronie drzew w mieście Zielonogród") and "…" in below[TREES]
    assert below[TREES].endswith(" · 2024 · 7 fragmentów")
    kodeksy, ustawy = lines.index("Kodeksy (2)"), lines.index("Ustawy (2)")
    assert kodeksy < lines.index(CIVIL_PROCEDURE) < lines.index(PETTY_OFFENCES) < ustawy < lines.index(FLATS)


def test_lista_in_a_wide_terminal_is_a_table_per_kind(db: Path) -> None:
    out = lista(db, 200)
    rows = [line for line in out.splitlines() if line.startswith("│")]
    civil = next(row for row in rows if CIVIL_PROCEDURE in row)
    assert [cell.strip() for cell in civil.strip("│").split("│")] == [
        CIVIL_PROCEDURE, "Kodeks postępowania cywilnego", "k.p.c.", "1964", "21"]
    assert any(FLATS in row and "Ustawa o własności lokali" in row and "u.w.l." in row for row in rows)
    widths = {len(line) for line in out.splitlines() if line.startswith(("┏", "└"))}
    assert len(widths) == 1 and widths.pop() <= 200  # every kind's table has the same columns
    assert out.index("Kodeksy (2)") < out.index("Ustawy (2)") < out.index("Regulaminy (1)")


def check_fields(files: list[dict]) -> None:
    by_name = {f["plik"]: f for f in files}
    for name, (kind, act, short) in EXPECTED.items():
        assert (by_name[name]["typ"], by_name[name]["akt"], by_name[name]["skrot"]) == (kind, act, short), name
    assert by_name[PETTY_OFFENCES]["tytul"] == "USTAWA z dnia 20 maja 1971 r. Kodeks wykroczeń"
    assert by_name[FLATS]["tytul"] == "Ustawa z dnia 24 czerwca 1994 r. o własności lokali"
    assert by_name[RULES]["tytul"].startswith("Regulamin pracy") and by_name[RULES]["akt"] == ""
    assert by_name[RULES]["skrot"] == "" and by_name[TREES]["skrot"] == ""


def test_lista_json_has_the_act_fields(capsys, db: Path) -> None:
    from conftest import run_cli

    code, out, err = run_cli(capsys, "lista", "--json", "--baza", db)
    assert code == 0, err
    files = json.loads(out)
    check_fields(files)
    assert list(files[0])[-3:] == ["tytul", "akt", "skrot"]


def test_api_pliki_and_mcp_lista_plikow_have_the_act_fields(db: Path) -> None:
    import anyio
    import httpx
    from mcp import Client
    from serving_support import running_server

    with running_server(db) as url:
        response = httpx.get(f"{url}/api/pliki", timeout=120)
        assert response.status_code == 200
        check_fields(response.json())

        async def main() -> dict:
            async with Client(f"{url}/mcp", read_timeout_seconds=120) as client:
                result = await client.call_tool("lista_plikow", {})
                assert not result.is_error, result.content
                return json.loads(result.content[0].text)

        check_fields(anyio.run(main)["pliki"])


def test_titles_are_read_once_per_collection_version(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chroma_rag.derived import DerivedIndex

    reads = []
    original = DerivedIndex.file_titles
    monkeypatch.setattr(DerivedIndex, "file_titles", lambda self: reads.append(1) or original(self))
    index = Index(db)
    first = [info.to_json() for info in index.files()]
    for _ in range(3):
        assert [info.to_json() for info in index.files()] == first
    assert len(reads) == 1  # /api/pliki and MCP ask on every request; the fragments' titles are read once


def planning_lines(db: Path, question: str) -> list[str]:
    [_, user] = Index(db).planning_messages(question)
    return [line[2:] for line in user["content"].splitlines() if line.startswith("- ")]


def test_planning_prompt_names_acts_by_name_and_abbreviation(db: Path) -> None:
    lines = planning_lines(db, "Kiedy sąd może udzielić stronie pouczenia?")
    assert f"{CIVIL_PROCEDURE} | Kodeks postępowania cywilnego (k.p.c.) | kodeks | 1964" in lines, lines
    assert f"{PETTY_OFFENCES} | Kodeks wykroczeń (k.w.) | kodeks | 1971" in lines, lines
    assert f"{FLATS} | Ustawa o własności lokali (u.w.l.) | ustawa | 1994" in lines, lines
    assert any(line.startswith(f"{RULES} | Regulamin pracy spółki Zielony Las sp. z o.o. | ") for line in lines)
    assert len(lines) == 5 and not any("z dnia" in line for line in lines)  # no date of enactment


def test_planning_list_stays_bounded_with_long_titles() -> None:
    title = "ROZPORZĄDZENIE MINISTRA ZDROWIA z dnia 21 grudnia 2010 r. w sprawie " + "rodzajów i zakresu " * 30
    documents = [DocumentEntry(f"rozporzadzenie-{n:03d}.pdf", title, "rozporzadzenie", 2010) for n in range(150)]
    [_, user] = plan_messages("Pytanie?", Catalog(documents))
    listed = [line for line in user["content"].splitlines() if line.startswith("- rozporzadzenie-")]
    assert len(listed) == LISTED_DOCUMENTS and "i 120 więcej" in user["content"]
    titles = [line.split(" | ")[1] for line in listed]
    assert all(len(t) <= TITLE_CHARS and t.startswith("Rozporządzenie Ministra Zdrowia w sprawie") for t in titles)
    assert all(t.endswith("…") for t in titles)
    assert len(user["content"]) < 30 * (TITLE_CHARS + 60)


def test_plan_replay_still_finds_the_question(db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import time

    from llm_server import llm_environment
    from plan_replay import plan_responder

    from chroma_rag.llm import LlmSettings

    question = f"Jaka kara grozi za zakłócenie spokoju w nocy? {time.monotonic_ns()}"  # never in the plan cache
    plan = {"zapytania": ["zakłócanie spoczynku nocnego"], "dokumenty": [PETTY_OFFENCES], "jednostki": ["art. 51"]}
    with llm_environment(monkeypatch, tmp_path, "sk-test-0123456789") as server:
        server.responder = plan_responder({question: plan})
        result = Index(db).search(question, k=3, rewrite=True, settings=LlmSettings.from_env())
        content = server.requests[0].body["messages"][1]["content"]
    assert f"- {PETTY_OFFENCES} | Kodeks wykroczeń (k.w.) | kodeks | 1971" in content
    assert result.plan is not None and result.plan.documents == [PETTY_OFFENCES] and result.plan.error is None
    assert result and result[0].file == PETTY_OFFENCES and result[0].art == "51"


def test_control_characters_in_file_names_reach_the_terminal_escaped(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    """Issue 39: nazwa pliku z sekwencją terminala (kolor, tytuł okna) albo nową linią nie działa w ``lista``."""
    from conftest import run_cli

    folder = tmp_path / "dokumenty"
    folder.mkdir()
    (folder / "zly\x1b]0;TYTUL\x07\x1b[31mczerwony.md").write_text("# Regulamin A\n\nArt. 1. Urlop.\n",
                                                                    encoding="utf-8")
    (folder / "nowa\nlinia.md").write_text("# Regulamin B\n\nArt. 1. Praca zdalna.\n", encoding="utf-8")
    code, _, _ = run_cli(capsys, "indeksuj", folder, "--baza", tmp_path / "db")
    assert code == 0
    for columns in ("200", "40"):  # the table and the narrow line layout
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("COLUMNS", columns)
            code, listed, _ = run_cli(capsys, "lista", "--baza", tmp_path / "db")
        assert code == 0 and "\x1b" not in listed and "\x07" not in listed
        assert "zly\\x1b]0;TYTUL\\x07\\x1b[31mczerwony.md" in listed and "nowa\\nlinia.md" in listed
