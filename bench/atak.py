"""Próby ataku sąsiada z pętli zwrotnej na prawdziwy `chroma-rag serwuj` (issue #22) – liczby do sekcji serwera
w docs/NIEZAWODNOSC.md. Każda próba ma ograniczoną liczbę połączeń i czas; serwer z tokenem nad małą bazą.

    .venv/bin/python -m bench.atak                      # ten kod
    .venv/bin/python -m bench.atak --cli /inne/.venv/bin/chroma-rag   # np. starszy kod, dla porównania
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.common import free_port

TOKEN = "tajny-token-do-proby"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HEADER_WAIT = 15.0  # how long to watch half-open connections for the server to close them


def small_db(folder: Path) -> Path:
    from chroma_rag import Index

    doc = folder / "regulamin.md"
    doc.write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n", encoding="utf-8")
    Index(folder / "db").add([doc])
    return folder / "db"


class Target:
    def __init__(self, cli: str, db: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = f"127.0.0.1:{self.port}".encode()
        self.log = log
        # the old code has no --token-plik: the environment works for both
        env = {**os.environ, "CHROMA_RAG_TOKEN": TOKEN, "COLUMNS": "200"}  # wide: one log message, one line
        self.process = subprocess.Popen([cli, "serwuj", "--baza", str(db), "--port", str(self.port)],
                                        stderr=log.open("w"), env=env)
        for _ in range(1200):
            try:
                httpx.get(f"{self.url}/api/pliki", headers=AUTH, timeout=5)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("serwer nie wystartował")

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def searches(self, count: int = 5) -> str:
        """Statusy ``count`` zwykłych wyszukiwań (i czy odmowa była po polsku)."""
        seen: Counter[str] = Counter()
        for _ in range(count):
            try:
                response = httpx.get(f"{self.url}/api/szukaj", params={"q": "urlop", "tryb": "slowa"},
                                     headers=AUTH, timeout=30)
                polish = "" if response.status_code == 200 else (" pl" if "blad" in response.text else " en")
                seen[f"{response.status_code}{polish}"] += 1
            except httpx.HTTPError as exc:
                seen[type(exc).__name__] += 1
        return ", ".join(f"{k}×{v}" for k, v in sorted(seen.items()))

    def log_lines(self) -> int:
        return len(self.log.read_text(errors="replace").splitlines())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # the old code waits for open streams on shutdown
            print("  (serwer nie zakończył się w 30 s po SIGTERM – zabity)", flush=True)
            self.process.kill()
            self.process.wait(timeout=30)


def closed_within(sockets: list[socket.socket], seconds: float) -> tuple[int, Counter[str]]:
    """Ile połączeń serwer zamknął w ``seconds`` i jakimi statusami odpowiedział."""
    deadline = time.monotonic() + seconds
    closed, statuses = 0, Counter()
    for sock in sockets:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
            closed += 1
            statuses[data.split(b" ", 2)[1].decode() if data else "bez odpowiedzi"] += 1
        except TimeoutError:
            statuses["wciąż otwarte"] += 1
        except OSError:
            closed += 1
            statuses["zerwane"] += 1
    return closed, statuses


def held(target: Target, count: int, opening: bytes) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        try:
            sock = target.connect()
            sock.sendall(opening)
            sockets.append(sock)
        except OSError:
            break
    return sockets


def _unfinished(target: Target, count: int, opening: bytes, what: str) -> str:
    """``count`` połączeń, które wysłały tylko ``opening``: czy wyszukiwania działają i czy serwer je zamyka."""
    sockets = held(target, count, opening)
    during = target.searches()
    closed, statuses = closed_within(sockets, HEADER_WAIT)
    for sock in sockets:
        sock.close()
    return (f"{len(sockets)} {what}: wyszukiwania w trakcie {during}; "
            f"serwer zamknął {closed}/{len(sockets)} w {HEADER_WAIT:.0f} s ({dict(statuses)})")


def attack_unfinished_headers(target: Target) -> str:
    opening = b"GET /api/pliki HTTP/1.1\r\nHost: " + target.host + b"\r\n"
    return _unfinished(target, 260, opening, "połączeń z niedokończonymi nagłówkami")


def attack_slow_bodies(target: Target) -> str:
    opening = (b"POST /api/pytaj HTTP/1.1\r\nHost: " + target.host + b"\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pytanie\"")
    return _unfinished(target, 64, opening, "powolnych treści POST")


def attack_idle_mcp(target: Target) -> str:
    opening = (b"GET /mcp HTTP/1.1\r\nHost: " + target.host + b"\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nAccept: text/event-stream\r\n\r\n")
    sockets = held(target, 64, opening)
    time.sleep(1)
    during = target.searches()
    for sock in sockets:
        sock.close()
    return f"{len(sockets)} bezczynnych strumieni GET /mcp: wyszukiwania w trakcie {during}"


def attack_big_headers(target: Target) -> str:
    with target.connect() as sock:
        try:
            sock.sendall(b"GET /api/pliki HTTP/1.1\r\nHost: " + target.host + b"\r\nAuthorization: Bearer "
                         + TOKEN.encode() + b"\r\nX-Duzy: " + b"a" * (8 * 2**20) + b"\r\n\r\n")
            reply = sock.recv(65536)
            said = reply.split(b"\r\n", 1)[0].decode() if reply else "bez odpowiedzi"
        except OSError as exc:
            said = f"połączenie zerwane przez serwer ({type(exc).__name__})"
    return f"nagłówek 8 MiB: {said}"


def attack_garbage(target: Target) -> str:
    with target.connect() as sock:
        sock.sendall(b"TO NIE JEST HTTP\r\n\r\n")
        reply = sock.recv(65536)
    head, _, body = reply.partition(b"\r\n\r\n")
    return f"niepoprawne HTTP: {head.split(b' ', 2)[1].decode()} z treścią {body[:90].decode(errors='replace')!r}"


def attack_dropped_logins(target: Target) -> str:
    before = target.log_lines()

    def drop() -> None:
        with target.connect() as sock:
            sock.sendall(b"POST /logowanie HTTP/1.1\r\nHost: " + target.host + b"\r\nContent-Type: "
                         b"application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ntoken=abc")

    threads = [threading.Thread(target=drop) for _ in range(64)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answered = target.searches(1)
    seconds = time.monotonic() - started
    time.sleep(2)
    return (f"64 zerwane POST /logowanie naraz: {target.log_lines() - before} linii dziennika; następne "
            f"wyszukiwanie {answered} po {seconds:.1f} s")


def attack_wrong_tokens(target: Target) -> str:
    statuses = [httpx.get(f"{target.url}/api/pliki", headers={"Authorization": f"Bearer zly-{n}"},
                          timeout=30).status_code for n in range(30)]
    return "30 błędnych tokenów: " + ", ".join(f"{k}×{v}" for k, v in sorted(Counter(statuses).items()))


ATTACKS: list[Callable[[Target], str]] = [attack_garbage, attack_big_headers, attack_unfinished_headers,
                                          attack_slow_bodies, attack_idle_mcp, attack_dropped_logins,
                                          attack_wrong_tokens]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=str(Path(sys.executable).with_name("chroma-rag")),
                        help="polecenie chroma-rag do sprawdzenia (domyślnie z tego .venv)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="atak-") as work:
        db = small_db(Path(work))
        for attack in ATTACKS:  # a fresh server for each, so one attack's leftovers do not skew the next
            target = Target(args.cli, db, Path(work) / "serwer.log")
            try:
                print(attack(target), flush=True)
            except Exception as exc:  # the old code may fail an attack; the rest still runs
                print(f"{attack.__name__}: próba przerwana ({type(exc).__name__}: {exc})", flush=True)
            finally:
                target.stop()


if __name__ == "__main__":
    main()
