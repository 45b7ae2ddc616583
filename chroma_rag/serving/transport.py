"""Połączenia HTTP pod uvicorn: parser h11 (jedyny, który trzyma limit wielkości nagłówków – httptools go
ignoruje), limit czasu na nagłówki, limit liczby połączeń i polskie odpowiedzi tam, gdzie uvicorn odpowiada
sam (niepoprawne zapytanie, przepełnienie) – przed aplikacją, więc bez jej middleware."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

from uvicorn.protocols.http.h11_impl import H11Protocol

from .responses import SECURITY_HEADERS

MAX_HEADER_BYTES = 16 * 1024


@dataclass(frozen=True)
class TransportLimits:
    """Limity połączeń, zanim zapytanie dojdzie do aplikacji (testy podają krótsze)."""

    # from connecting, or from a request's first byte, to the end of its headers: 260 connections with unfinished
    # headers held the server for as long as they liked
    header_seconds: float = 10.0
    # open connections, idle ones included; far below the process's file descriptors
    connections: int = 1024
    # One client address may hold a quarter of them: 1100 idle sockets from one neighbour locked everyone out
    # (issue 39); a browser opens at most 6 per host. A trusted proxy (--zaufane-proxy) carries every client, so it
    # has no share.
    client_connections: int = 256


TRANSPORT_LIMITS = TransportLimits()
BAD_REQUEST = (f"Zapytanie HTTP jest niepoprawne albo ma za duże nagłówki (najwyżej {MAX_HEADER_BYTES // 1024} KiB) "
               "– wyślij poprawne zapytanie HTTP/1.1.")
TOO_MANY = "Serwer ma teraz za dużo otwartych połączeń – spróbuj za chwilę."
TOO_MANY_FROM_ONE = ("Z tego adresu jest teraz za dużo otwartych połączeń z serwerem – zamknij nieużywane i spróbuj "
                     "za chwilę.")
log = logging.getLogger("chroma_rag.serwuj")


def raw_response(status: int, reason: str, message: str) -> bytes:
    """Cała odpowiedź HTTP/1.1 z błędem ``{"blad": …}`` zamykająca połączenie – dla chwil, w których parser
    nie ma jeszcze (albo już) zapytania, na które mógłby odpowiedzieć."""
    body = json.dumps({"blad": message}, ensure_ascii=False).encode()
    headers = {"content-type": "application/json", "content-length": str(len(body)), "connection": "close",
               **SECURITY_HEADERS}
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode("latin-1") + body


class GuardedH11Protocol(H11Protocol):
    """``H11Protocol`` uvicorn z limitem czasu na nagłówki (uvicorn czeka na nie bez końca: 260 połączeń
    z niedokończonymi nagłówkami zajmowało serwer), limitem połączeń – wszystkich i z jednego adresu – sprawdzanym
    od razu po połączeniu i polskimi odpowiedziami 400/408/503 zamiast angielskich."""

    _header_timer: asyncio.TimerHandle | None = None
    _header_bytes = 0
    limits = TRANSPORT_LIMITS

    @classmethod
    def limited(cls, limits: TransportLimits) -> type[GuardedH11Protocol]:
        """Ten protokół z innymi limitami (uvicorn tworzy protokół sam, z klasy, więc limity niesie klasa)."""
        return cls if limits == cls.limits else type(cls.__name__, (cls,), {"limits": limits})

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.connections:
            log.warning("Za dużo otwartych połączeń (%d) – nowe dostaje 503.", len(self.connections))
            self._refuse(503, "Service Unavailable", TOO_MANY)
            return
        if self._over_client_share():
            log.warning("Za dużo otwartych połączeń z adresu %s – nowe dostaje 503.", self.client[0])
            self._refuse(503, "Service Unavailable", TOO_MANY_FROM_ONE)
            return
        self._await_headers()

    def _over_client_share(self) -> bool:
        address = self.client[0] if self.client else None
        trusted = self.config.forwarded_allow_ips if self.config.proxy_headers else None
        if address is None or address in ([trusted] if isinstance(trusted, str) else trusted or []):
            return False
        held = sum(1 for other in self.connections if getattr(other, "client", None) and other.client[0] == address)
        return held > self.limits.client_connections

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        if before is None or before.response_complete:  # between requests: these are a new request's headers
            if self._header_timer is None:
                self._await_headers()
            # h11 limits only a head that arrives in pieces; one sent at once would pass at any size
            end = data.find(b"\r\n\r\n")
            if self._header_bytes + (len(data) if end < 0 else end) > MAX_HEADER_BYTES:
                self._refuse(431, "Request Header Fields Too Large", BAD_REQUEST)
                return
            self._header_bytes += len(data)
        super().data_received(data)
        if self.cycle is not before:  # a request's headers arrived
            self._headers_arrived()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, "Bad Request", BAD_REQUEST)

    def _await_headers(self) -> None:
        self._headers_arrived()
        self._header_bytes = 0
        self._header_timer = self.loop.call_later(self.limits.header_seconds, self._headers_too_slow)

    def _headers_arrived(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.cycle is None or self.cycle.response_complete:
            seconds = self.limits.header_seconds
            self._refuse(408, "Request Timeout", f"Nagłówki zapytania nie nadeszły w ciągu {seconds:.0f} s – "
                                                 "połączenie zamknięte, wyślij je od razu.")

    def _refuse(self, status: int, reason: str, message: str) -> None:
        self._headers_arrived()
        if not self.transport.is_closing():
            self.transport.write(raw_response(status, reason, message))
            self.transport.close()
