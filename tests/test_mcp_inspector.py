"""Narzędzia MCP oczami niezależnego klienta: oficjalny MCP Inspector (npm, wersja z tests/mcp-inspector) w trybie
CLI, przez stdio (`chroma-rag mcp`) i streamable HTTP (/mcp serwera) – nie tylko przez SDK, którego używa serwer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO
from serving_support import running_server

INSPECTOR = REPO / "tests" / "mcp-inspector"


def inspector(target: list[str], *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Odpowiedź Inspectora (JSON ze stdout) na jedno wywołanie ``--method …`` serwera ``target``."""
    assert shutil.which("npx"), "brak node/npx – zainstaluj Node.js 20 (CI ma go mieć)"
    assert (INSPECTOR / "node_modules" / ".bin" / "mcp-inspector").exists(), "brak Inspectora – make inspektor-mcp"
    variables = [part for name, value in (env or {}).items() for part in ("-e", f"{name}={value}")]
    done = subprocess.run(
        ["npx", "--no-install", "@modelcontextprotocol/inspector", "--cli", *variables, *target, *args],
        cwd=INSPECTOR, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stdio_server(db: Path) -> tuple[list[str], dict[str, str]]:
    # the Inspector starts the server with a clean environment: the test's cache and config go with -e
    names = ("CHROMA_RAG_CACHE", "XDG_CONFIG_HOME", "PATH", "HOME")
    env = {name: os.environ[name] for name in names if name in os.environ}
    return [sys.executable, "-m", "chroma_rag", "mcp", "--baza", str(db)], {**env, "OMP_WAIT_POLICY": "PASSIVE"}


def call(target: list[str], tool: str, env: dict[str, str] | None = None, **arguments: str) -> dict[str, Any]:
    pairs = [f"{name}={value}" for name, value in arguments.items()]
    return inspector(target, "--method", "tools/call", "--tool-name", tool, "--tool-arg", *pairs, env=env)


def check_tools(target: list[str], env: dict[str, str] | None = None) -> None:
    tools = {tool["name"]: tool for tool in inspector(target, "--method", "tools/list", env=env)["tools"]}
    assert set(tools) == {"szukaj", "pokaz_jednostke", "lista_plikow"}
    for tool in tools.values():
        assert tool["annotations"]["readOnlyHint"] is True and tool["annotations"]["destructiveHint"] is False
        assert "\n " not in tool["description"] and tool["description"].strip() == tool["description"]
    assert "„powod”" in tools["szukaj"]["description"]

    # one file and one article as strings, as the web API's single parameter
    found = call(target, "szukaj", env, pytanie="urlop", plik="it/regulamin.md", art="1")
    assert not found.get("isError"), found
    hits = found["structuredContent"]["wyniki"]
    assert [(hit["cytat"], hit["strona"]) for hit in hits] == [("[it/regulamin.md, art. 1]", 1)]
    listed = call(target, "szukaj", env, pytanie="urlop", plik='["it/regulamin.md"]', art='["1"]')
    assert listed["structuredContent"]["wyniki"] == hits

    nothing = call(target, "szukaj", env, pytanie="urlop", art="999")["structuredContent"]
    assert nothing["wyniki"] == [] and nothing["powod"] == "filtry"
    assert "lista_plikow" in nothing["komunikat"] and "--" not in nothing["komunikat"]

    wrong = call(target, "szukaj", env, pytanie="urlop", k="dużo")
    said = wrong["content"][0]["text"]
    assert wrong["isError"] and "„k”" in said and "Error" not in said and "http" not in said, said
    long = call(target, "szukaj", env, pytanie="a" * 2001)
    assert long["isError"] and long["content"][0]["text"].startswith("Pytanie jest za długie")
    ambiguous = call(target, "pokaz_jednostke", env, plik="regulamin.md", art="1")
    assert ambiguous["isError"] and "kilku różnych plików" in ambiguous["content"][0]["text"]


def test_inspector_over_stdio(same_named_db: Path) -> None:
    command, env = stdio_server(same_named_db)
    check_tools(command, env)


def test_inspector_over_streamable_http(same_named_db: Path) -> None:
    with running_server(same_named_db) as url:
        check_tools([f"{url}/mcp", "--transport", "http"])

