"""Narzędzia MCP (oficjalne SDK ``mcp``) dla asystentów AI: szukaj, pokaz_jednostke, lista_plikow – te same
metody API co strona i CLI; przez stdio (``chroma-rag mcp``) i streamable HTTP (``/mcp`` serwera)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from pydantic import Field

from ..answering.answer import citation_label, citation_names
from ..api import Index
from ..errors import UserError
from ..filters import SearchFilters
from ..models import Hit
from .security import is_loopback

INSTRUCTIONS = (
    "Wyszukiwarka w zaindeksowanych dokumentach zespołu (ustawy, rozporządzenia, regulaminy). Odpowiadaj tylko "
    "na podstawie zwróconych fragmentów i cytuj je polem „cytat”, np. [plik.pdf, art. 5]; całą jednostkę "
    "pokazuje pokaz_jednostke."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def build_mcp(index: Index) -> MCPServer:
    """Serwer MCP z trzema narzędziami tylko do odczytu nad ``index``."""
    server = MCPServer("chroma-rag", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=_READ_ONLY)
    def szukaj(
        pytanie: Annotated[str, Field(description="Pytanie lub szukana fraza, po polsku.")],
        plik: Annotated[list[str] | None, Field(description="Tylko te pliki (nazwy z lista_plikow).")] = None,
        typ: Annotated[
            list[str] | None,
            Field(description="Rodzaje: ustawa, kodeks, rozporzadzenie, konstytucja, nowelizacja, dokument."),
        ] = None,
        rok: Annotated[int | None, Field(description="Rok Dziennika Ustaw.")] = None,
        od_roku: Annotated[int | None, Field(description="Rok od (włącznie).")] = None,
        do_roku: Annotated[int | None, Field(description="Rok do (włącznie).")] = None,
        art: Annotated[list[str] | None, Field(description="Artykuły lub paragrafy, np. 23, 385^1, '§ 6'.")] = None,
        k: Annotated[int, Field(description="Ile fragmentów zwrócić.", ge=1, le=50)] = 5,
    ) -> dict[str, Any]:
        """Szuka fragmentów dokumentów najlepiej pasujących do pytania (filtry działają przed wyszukiwaniem).
        Każdy wynik ma plik, jednostkę (artykuł/paragraf), strony, tekst i gotowy cytat."""
        filters = SearchFilters(
            files=plik or [], types=typ or [], year=rok, year_from=od_roku, year_to=do_roku, articles=art or []
        )
        result = _user_errors(lambda: index.search(pytanie, k=k, filters=filters))
        names = citation_names(result)
        return {"wyniki": [_hit(hit, names) for hit in result], "powod": result.reason}

    @server.tool(annotations=_READ_ONLY)
    def pokaz_jednostke(
        plik: Annotated[str, Field(description="Nazwa pliku, jak w wynikach szukaj albo lista_plikow; plik o nazwie "
                                               "powtarzającej się w kilku folderach – z folderem, jak w cytacie.")],
        art: Annotated[str, Field(description="Artykuł lub paragraf, np. 23, 385^1, '§ 6'.")],
    ) -> dict[str, Any]:
        """Cała jednostka (artykuł, paragraf) pliku: wszystkie części, rozdział, strony i brzmienia – obecne
        i przyszłe (zmiana, która jeszcze nie weszła w życie) osobno."""
        unit = _user_errors(lambda: index.unit(plik, art))
        # a name given with its folder tells apart same-named files: the citation keeps it
        return {**unit.to_json(), "cytat": f"[{plik if '/' in plik else unit.file}, {unit.label}]"}

    @server.tool(annotations=_READ_ONLY)
    def lista_plikow() -> dict[str, Any]:
        """Zaindeksowane pliki: nazwa, rodzaj, rok, liczba fragmentów."""
        files = _user_errors(index.files)
        return {"pliki": [{k: v for k, v in info.to_json().items() if k != "sciezka"} for info in files]}

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
        raise ToolError(str(exc)) from exc


def _hit(hit: Hit, names: dict[str, str]) -> dict[str, Any]:
    meta = hit.metadata
    return {
        "plik": hit.file,
        "jednostka": hit.unit,
        "cytat": citation_label(hit, names),
        "strona_od": meta.get("strona_od", hit.page),
        "strona_do": meta.get("strona_do", hit.page),
        "rozdzial": meta.get("rozdzial", ""),
        "tytul": meta.get("tytul", ""),
        "podobienstwo": round(hit.similarity, 4),
        "tekst": hit.text,
    }
