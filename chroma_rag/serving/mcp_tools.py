"""Narzędzia MCP (oficjalne SDK ``mcp``) dla asystentów AI: szukaj, pokaz_jednostke, lista_plikow – te same
metody API co strona i CLI; przez stdio (``chroma-rag mcp``) i streamable HTTP (``/mcp`` serwera)."""

from __future__ import annotations

import difflib
import inspect
import re
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..answering.answer import citation_label, citation_names
from ..api import Index
from ..errors import FiltersMatchNothing, UserError
from ..filters import SearchFilters
from ..models import Hit
from .params import MAX_QUESTION_CHARS, MAX_RESULTS, MAX_VALUES
from .responses import POLISH_ERROR_DATA
from .security import is_loopback

INSTRUCTIONS = (
    "Wyszukiwarka w zaindeksowanych dokumentach zespołu (ustawy, rozporządzenia, regulaminy). Odpowiadaj tylko "
    "na podstawie zwróconych fragmentów i cytuj je polem „cytat”, np. [plik.pdf, art. 5]; całą jednostkę "
    "pokazuje pokaz_jednostke."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# A client may send one value as a string ("x.pdf", "23"), like the web API's single query parameter.
Values = str | list[str] | None
SEARCH_DESCRIPTION = (
    "Szuka fragmentów dokumentów najlepiej pasujących do pytania (filtry działają przed wyszukiwaniem). Każdy wynik "
    "ma plik, jednostkę (artykuł/paragraf), strony (strona, strona_do), tekst i gotowy cytat. Pusta lista wyników "
    "ma powód w polu „powod”: „filtry” – żaden fragment nie spełnia filtrów (zmień je albo zdejmij; zdanie dla "
    "użytkownika jest w polu „komunikat”), „prog” – nic "
    f"nie jest wystarczająco trafne (zmień słowa pytania). Pytanie do {MAX_QUESTION_CHARS} znaków, k do "
    f"{MAX_RESULTS}, każdy filtr do {MAX_VALUES} wartości."
)
UNIT_DESCRIPTION = (
    "Cała jednostka (artykuł, paragraf) pliku: wszystkie części, rozdział, strony (strona, strona_do) "
    "i brzmienia – obecne i przyszłe (zmiana, która jeszcze nie weszła w życie) osobno."
)
FILES_DESCRIPTION = ("Zaindeksowane pliki: nazwa, nazwa z folderem przy plikach o tej samej nazwie (pole „sciezka”, "
                     "jak w cytatach), rodzaj, rok, liczba fragmentów, tytuł, nazwa aktu i jego skrót.")


def build_mcp(index: Index) -> MCPServer:
    """Serwer MCP z trzema narzędziami tylko do odczytu nad ``index``."""
    arguments: dict[str, list[str]] = {}  # tool → its arguments, filled once the tools are defined below
    server = MCPServer(
        "chroma-rag", instructions=INSTRUCTIONS, log_level="WARNING", version=_version(),
        middleware=[polish_errors, refusing_unknown_names(arguments)],
    )

    @server.tool(annotations=_READ_ONLY, description=SEARCH_DESCRIPTION)
    def szukaj(
        pytanie: Annotated[str, Field(description="Pytanie lub szukana fraza, po polsku.")],
        plik: Annotated[Values, Field(description="Tylko te pliki (nazwy z lista_plikow); napis albo lista.")] = None,
        typ: Annotated[
            Values,
            Field(description="Rodzaje: ustawa, kodeks, rozporzadzenie, konstytucja, nowelizacja, umowa, regulamin, "
                              "dokument."),
        ] = None,
        rok: Annotated[int | None, Field(description="Rok Dziennika Ustaw.")] = None,
        od_roku: Annotated[int | None, Field(description="Rok od (włącznie).")] = None,
        do_roku: Annotated[int | None, Field(description="Rok do (włącznie).")] = None,
        art: Annotated[
            Values, Field(description="Artykuły lub paragrafy, np. 23, 385^1, '§ 6'; napis albo lista.")
        ] = None,
        akt: Annotated[
            Values, Field(description="Tylko te akty: skrót albo nazwa, np. kpc, k.p.c., 'ustawa o własności "
                                      "lokali'; napis albo lista.")
        ] = None,
        k: Annotated[int, Field(description="Ile fragmentów zwrócić.", ge=1, le=MAX_RESULTS)] = 5,
    ) -> dict[str, Any]:
        if len(pytanie) > MAX_QUESTION_CHARS:
            raise ToolError(f"Pytanie jest za długie (ponad {MAX_QUESTION_CHARS} znaków) – skróć je.")
        filters = SearchFilters(
            files=_values("plik", plik), types=_values("typ", typ), year=rok, year_from=od_roku, year_to=do_roku,
            articles=_values("art", art), acts=_values("akt", akt),
        )
        result = _user_errors(lambda: index.search(pytanie, k=k, filters=filters))
        names = citation_names(result, [info.path for info in index.files()])
        found: dict[str, Any] = {"wyniki": [_hit(hit, names) for hit in result], "powod": result.reason}
        if result.reason == "filtry":
            found["komunikat"] = FiltersMatchNothing().message("mcp")
        return found

    @server.tool(annotations=_READ_ONLY, description=UNIT_DESCRIPTION)
    def pokaz_jednostke(
        plik: Annotated[str, Field(description="Nazwa pliku, jak w wynikach szukaj albo lista_plikow; plik o nazwie "
                                               "powtarzającej się w kilku folderach – z folderem, jak w cytacie.")],
        art: Annotated[str, Field(description="Artykuł lub paragraf, np. 23, 385^1, '§ 6'.")],
    ) -> dict[str, Any]:
        unit = _user_errors(lambda: index.unit(plik, art))
        # a name given with its folder tells apart same-named files: the citation keeps it
        return {**unit.to_json(), "cytat": f"[{plik if '/' in plik else unit.file}, {unit.cited_label}]"}

    @server.tool(annotations=_READ_ONLY, description=FILES_DESCRIPTION)
    def lista_plikow() -> dict[str, Any]:
        files, names = _user_errors(index.files), index.shown_names()
        return {"pliki": [names.file(info.to_json()) for info in files]}

    arguments.update({tool.__name__: list(inspect.signature(tool).parameters)
                      for tool in (szukaj, pokaz_jednostke, lista_plikow)})
    return server


def mcp_transport_security(host: str) -> TransportSecuritySettings:
    """Na pętli zwrotnej SDK sprawdza nagłówki Host/Origin (DNS rebinding); gdzie indziej chroni token."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _user_errors(call: Any) -> Any:
    try:
        return call()
    except UserError as exc:
        raise ToolError(exc.message("mcp")) from exc


def _hit(hit: Hit, names: dict[str, str]) -> dict[str, Any]:
    meta = hit.metadata
    return {
        "plik": hit.file,
        "jednostka": hit.unit,
        "cytat": citation_label(hit, names),
        "strona": hit.page,
        "strona_do": meta.get("strona_do", hit.page),
        "rozdzial": meta.get("rozdzial", ""),
        "tytul": meta.get("tytul", ""),
        "podobienstwo": round(hit.similarity, 4),
        "tekst": hit.text,
    }


def _version() -> str:
    try:
        return version("chroma-rag")
    except PackageNotFoundError:
        return "0"


def _values(name: str, given: Values) -> list[str]:
    values = [given] if isinstance(given, str) else list(given or [])
    if len(values) > MAX_VALUES:
        raise ToolError(f"Za dużo wartości filtra „{name}” (najwyżej {MAX_VALUES}).")
    return [value for value in values if value.strip()]


_SDK_PREFIX = re.compile(r"^Error executing tool (\w+)(: )?")
# "art.list[str].1": an error inside one branch of a union (str | list[str]) is the whole argument's
_PYDANTIC_FIELD = re.compile(r"^(\w+)(\.\S+)?\n  .*?\[type=(\w+)", re.M)
_EXPECTED = {
    "union": "oczekiwany napis albo lista napisów",
    "missing": "brak tego argumentu", "string_type": "oczekiwany napis", "int_type": "oczekiwana liczba całkowita",
    "int_parsing": "oczekiwana liczba całkowita", "list_type": "oczekiwana lista napisów",
    "greater_than_equal": "wartość za mała", "less_than_equal": "wartość za duża",
}


def polish_error(text: str) -> str:
    """Błąd narzędzia po polsku: bez angielskiego przedrostka SDK, błąd typów pydantic jako jedno zdanie."""
    match = _SDK_PREFIX.match(text)
    if not match:
        return text
    tool, rest = match.group(1), text[match.end():]
    fields: dict[str, str] = {}
    for name, branch, kind in _PYDANTIC_FIELD.findall(rest) if "validation error" in rest else ():
        fields[name] = "union" if branch else kind
    if fields:
        wrong = "; ".join(f"„{name}”: {_EXPECTED.get(kind, 'zła wartość')}" for name, kind in fields.items())
        return f"Złe argumenty narzędzia {tool} – {wrong}; opis argumentów podaje lista narzędzi."
    return rest or f"Nieoczekiwany błąd narzędzia {tool} – szczegóły są w dzienniku serwera."


def refusing_unknown_names(arguments: dict[str, list[str]]) -> Any:
    """Pośrednik MCP: nieznane narzędzie, zasób albo szablon i argument, którego narzędzie nie ma („pliki” zamiast
    „plik”), to polskie zdanie z podpowiedzią. SDK odpowiadałby po angielsku („Unknown tool”), nieznany szablon
    – błędem wewnętrznym z wyjątkiem w dzienniku, a nieznany argument by pominął: wyszukiwanie bez filtra
    wyglądałoby jak odpowiedź na pytanie z filtrem."""

    async def refuse_unknown(ctx: Any, call_next: Any) -> Any:
        params = ctx.params or {}
        tools = ", ".join(arguments)
        if ctx.method in ("resources/read", "prompts/get"):  # the server offers tools only
            what = f"zasobu „{params.get('uri')}”" if ctx.method == "resources/read" else \
                f"szablonu „{params.get('name')}”"
            raise MCPError(INVALID_PARAMS, f"Nie ma {what} – ten serwer daje tylko narzędzia: {tools}.",
                           POLISH_ERROR_DATA)
        if ctx.method != "tools/call":
            return await call_next(ctx)
        name = str(params.get("name"))
        if name not in arguments:
            return _tool_error(f"Nie ma narzędzia „{name}”{_maybe(name, list(arguments))} – narzędzia tego serwera "
                               f"to: {tools}.")
        given = params.get("arguments") or {}
        unknown = [arg for arg in given if arg not in arguments[name]] if isinstance(given, dict) else []
        if not unknown:
            return await call_next(ctx)
        said = ", ".join(f"„{arg}”{_maybe(arg, arguments[name])}" for arg in unknown)
        return _tool_error(f"Narzędzie {name} nie ma argumentu {said} – jego argumenty to: "
                           f"{', '.join(arguments[name]) or 'żadnych'}.")

    return refuse_unknown


def _maybe(name: str, known: list[str]) -> str:
    """Podpowiedź najbliższej znanej nazwy, o ile jakaś jest blisko."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (może chodziło o „{close[0]}”?)" if close else ""


def _tool_error(text: str) -> dict[str, Any]:
    # the SDK hands middleware results already shaped for the wire
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True).model_dump(
        by_alias=True, exclude_none=True, mode="json")


async def polish_errors(ctx: Any, call_next: Any) -> Any:
    """Pośrednik MCP: treść błędów narzędzi (``isError``) przepisana przez ``polish_error``."""
    result = await call_next(ctx)
    # the SDK hands middleware the result already shaped for the wire (a dict with "isError", "content")
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
        for item in result.get("content", []):
            if item.get("type") == "text":
                item["text"] = polish_error(item["text"])
    return result
