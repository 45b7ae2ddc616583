"""Narzędzia MCP przez oficjalnego klienta SDK: stdio (`chroma-rag mcp` jako podproces) i streamable HTTP (/mcp)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import PATIENTS
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from serving_support import running_server

TOOLS = {"szukaj", "pokaz_jednostke", "lista_plikow"}


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    text = json.loads(result.content[0].text)
    assert result.structured_content in (None, text) or result.structured_content == {"result": text}
    return text


async def exercise(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    search = tools["szukaj"]
    assert "fragmentów" in (search.description or "")
    assert set(search.input_schema["properties"]) == {
        "pytanie", "plik", "typ", "rok", "od_roku", "do_roku", "art", "akt", "k"
    }
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.values())

    files = structured(await client.call_tool("lista_plikow", {}))
    assert PATIENTS in {f["plik"] for f in files["pliki"]}
    assert all(f["sciezka"] == f["plik"] for f in files["pliki"])  # the name, never the server's path

    found = structured(
        await client.call_tool("szukaj", {"pytanie": "prawo do informacji o stanie zdrowia", "plik": [PATIENTS]})
    )
    first = found["wyniki"][0]
    assert first["plik"] == PATIENTS and first["jednostka"].startswith("art. ")
    assert first["cytat"] == f"[{PATIENTS}, {first['jednostka']} u.p.p.]"  # with the act's abbreviation
    assert first["strona"] >= 1 and first["tekst"]

    unit = structured(await client.call_tool("pokaz_jednostke", {"plik": PATIENTS, "art": "24"}))
    assert unit["cytat"] == f"[{PATIENTS}, art. 24 u.p.p.]" and unit["skrot"] == "u.p.p."  # as in szukaj
    assert [v["wersja"] for v in unit["wersje"]] == ["obecna", "przyszla"]
    for pages in (unit, *unit["wersje"]):
        assert "strona_od" not in pages and 1 <= pages["strona"] <= pages["strona_do"]

    missing = await client.call_tool("pokaz_jednostke", {"plik": "nie.pdf", "art": "1"})
    assert missing.is_error and "nie ma pliku „nie.pdf”" in missing.content[0].text
    assert "lista_plikow" in missing.content[0].text and "chroma-rag" not in missing.content[0].text


def test_mcp_stdio(two_acts_db: Path, local_cache: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chroma_rag", "mcp", "--baza", str(two_acts_db)],
        env={"CHROMA_RAG_CACHE": str(local_cache), "OMP_WAIT_POLICY": "PASSIVE", "PATH": os.environ["PATH"]},
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await exercise(client)

    anyio.run(main)


def test_mcp_streamable_http(base: str) -> None:
    async def main() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
            await exercise(client)

    anyio.run(main)


def test_mcp_http_with_token(two_acts_db: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    with running_server(two_acts_db, token="tajny-token") as url:

        async def main() -> None:
            headers = {"Authorization": "Bearer tajny-token"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=120) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
            ):
                files = structured(await client.call_tool("lista_plikow", {}))
                assert PATIENTS in {f["plik"] for f in files["pliki"]}

        anyio.run(main)


def test_mcp_citations_tell_same_named_files_apart(same_named_db: Path) -> None:
    with running_server(same_named_db) as url:

        async def main() -> None:
            async with Client(f"{url}/mcp", read_timeout_seconds=120) as client:
                found = structured(await client.call_tool("szukaj", {"pytanie": "urlop", "k": 2}))
                assert {hit["cytat"] for hit in found["wyniki"]} == {"[kadry/regulamin.md, art. 1]",
                                                                      "[it/regulamin.md, art. 1]"}
                ambiguous = await client.call_tool("pokaz_jednostke", {"plik": "regulamin.md", "art": "1"})
                assert ambiguous.is_error and "kilku różnych plików" in ambiguous.content[0].text
                unit = structured(await client.call_tool("pokaz_jednostke", {"plik": "it/regulamin.md", "art": "1"}))
                assert "administratorowi" in json.dumps(unit, ensure_ascii=False)
                assert unit["cytat"] == "[it/regulamin.md, art. 1]"

        anyio.run(main)



def test_mcp_accepts_a_string_and_speaks_polish(base: str) -> None:
    async def main() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
            assert client.server_info is not None and client.server_info.version == "0.1.0"
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert "powod" in tools["szukaj"].description and "\n " not in tools["szukaj"].description
            found = structured(
                await client.call_tool("szukaj", {"pytanie": "prawo do informacji", "plik": PATIENTS, "art": "9"})
            )
            assert [(hit["plik"], hit["jednostka"]) for hit in found["wyniki"]][:1] == [(PATIENTS, "art. 9")]
            assert found["wyniki"][0]["strona"] >= 1 and "strona_od" not in found["wyniki"][0]

            wrong = await client.call_tool("szukaj", {"pytanie": "urlop", "k": "dużo"})
            text = wrong.content[0].text
            assert wrong.is_error and "„k”" in text and "liczba całkowita" in text, text
            assert "Error" not in text and "http" not in text and "validation" not in text
            long = await client.call_tool("szukaj", {"pytanie": "a" * 2001})
            assert long.is_error and long.content[0].text.startswith("Pytanie jest za długie")
            many = await client.call_tool("szukaj", {"pytanie": "urlop", "plik": [f"{n}.pdf" for n in range(51)]})
            assert many.is_error and "Za dużo wartości filtra „plik”" in many.content[0].text
            missing = await client.call_tool("pokaz_jednostke", {"plik": "nie.pdf", "art": "1"})
            assert not missing.content[0].text.startswith("Error executing")

    anyio.run(main)


def test_mcp_wrong_arguments_are_one_polish_sentence_each(base: str) -> None:
    async def main() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
            async def refused(tool: str, arguments: dict[str, Any]) -> str:
                result = await client.call_tool(tool, arguments)
                text = result.content[0].text
                assert result.is_error, (arguments, text)
                assert "pydantic" not in text and "http" not in text and "Input should" not in text, text
                assert "--" not in text and "chroma-rag" not in text, text
                return text

            assert "„art”" in await refused("szukaj", {"pytanie": "urlop", "art": ["1", 2]})
            assert "„plik”" in await refused("szukaj", {"pytanie": "urlop", "plik": ["a.pdf", 1]})
            unknown = await refused("szukaj", {"pytanie": "urlop", "pliki": [PATIENTS]})
            assert "„pliki”" in unknown and "„plik”" in unknown, unknown  # not silently unfiltered
            assert "„strona”" in await refused("pokaz_jednostke", {"plik": PATIENTS, "art": "1", "strona": 2})
            assert "Nieznany rodzaj dokumentu „ustwa”" in await refused("szukaj", {"pytanie": "urlop", "typ": "ustwa"})
            years = await refused("szukaj", {"pytanie": "urlop", "od_roku": 2020, "do_roku": 2000})
            assert "Rok początkowy 2020 jest późniejszy niż końcowy 2000" in years

    anyio.run(main)


def test_mcp_unknown_tool_resource_and_template_are_one_polish_sentence(base: str) -> None:
    tools = "szukaj, pokaz_jednostke, lista_plikow"

    async def main() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
            tool = await client.call_tool("szukac", {"pytanie": "urlop"})
            assert tool.is_error and tool.content[0].text == (
                f"Nie ma narzędzia „szukac” (może chodziło o „szukaj”?) – narzędzia tego serwera to: {tools}.")
            with pytest.raises(MCPError) as resource:
                await client.read_resource("chroma-rag://pliki")
            assert resource.value.message == f"Nie ma zasobu „chroma-rag://pliki” – ten serwer daje tylko narzędzia: " \
                                             f"{tools}."
            with pytest.raises(MCPError) as template:
                await client.get_prompt("prawnik", {})
            assert template.value.message == f"Nie ma szablonu „prawnik” – ten serwer daje tylko narzędzia: {tools}."

    anyio.run(main)
