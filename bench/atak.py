"""Próby ataku sąsiada z pętli zwrotnej na prawdziwy `chroma-rag serwuj` (issue #22, #39) – tabela w sekcji serwera
docs/NIEZAWODNOSC.md. Każda próba ma ograniczoną liczbę połączeń i czas i własny, świeży serwer: z tokenem nad małą
bazą albo kancelarię – dwie bazy i użytkownicy z osobistymi tokenami, z których nie każdy może czytać każdą bazę.

    .venv/bin/python -m bench.atak                      # ten kod
    .venv/bin/python -m bench.atak --zapisz             # i tabela do docs/NIEZAWODNOSC.md
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

from bench.common import REPO, free_port, machine, write_section

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
    """Świeży ``serwuj`` z argumentami ``arguments`` (baza albo bazy) i wspólnym tokenem; ``env`` – np. model czatu."""

    def __init__(self, cli: str, arguments: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = f"127.0.0.1:{self.port}".encode()
        self.log = log
        # the old code has no --token-plik: the environment works for both
        env = {**os.environ, "CHROMA_RAG_TOKEN": TOKEN, "COLUMNS": "200", **(env or {})}  # wide: one message a line
        self.process = subprocess.Popen([cli, "serwuj", *arguments, "--port", str(self.port)],
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
    return f"niepoprawne HTTP: {head.split(b' ', 2)[1].decode()} z treścią {body.decode(errors='replace')[:90]!r}"


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


SECRET = "CZYNSZ-SEKRET-7731"  # text of the other base's document: it must never reach a user without access


class Firm:
    """Kancelaria: bazy „spory” i „umowy” (w niej poufna umowa z ``SECRET``) i użytkownicy – anna czyta tylko spory,
    jan wszystko, nikt niczego; ``tokens`` – ich tokeny."""

    def __init__(self, work: Path, spory: Path) -> None:
        from chroma_rag import Index
        from chroma_rag.serving.accounts import Accounts

        folder = work / "umowy"
        folder.mkdir(exist_ok=True)
        secret = folder / "najem-tajny.md"
        secret.write_text(f"# Umowa najmu\n\nArt. 1. Czynsz wynosi {SECRET} zł.\n", encoding="utf-8")
        Index(folder / "db").add([secret])
        self.accounts = Accounts(work / "uzytkownicy.json")
        self.accounts.path.unlink(missing_ok=True)
        self.tokens = {name: self.accounts.add(name, bases) for name, bases in
                       (("anna", ["spory"]), ("jan", None), ("nikt", []))}
        self.arguments = ["--bazy", f"spory={spory}", "--bazy", f"umowy={folder / 'db'}",
                          "--uzytkownicy", str(self.accounts.path)]

    def bearer(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}


def _leaks(responses: list[httpx.Response], *names: str) -> list[str]:
    """Ścieżki, których odpowiedź zdradza coś z ``names`` (nazwę cudzej bazy, plik, treść), czego pytający sam nie
    podał (404 „nie ma pliku X” powtarza tylko jego własne słowa)."""
    def asked(request: httpx.Request) -> str:
        return (str(request.url) + request.content.decode(errors="replace")).lower()

    return [f"{r.request.method} {r.request.url.raw_path.decode()}" for r in responses
            if any(name.lower() in r.text.lower() and name.lower() not in asked(r.request) for name in names)]


def _statuses(responses: list[httpx.Response]) -> str:
    return ", ".join(f"{k}×{v}" for k, v in sorted(Counter(r.status_code for r in responses).items()))


MCP = {"Accept": "application/json, text/event-stream"}


def _every_path(client: httpx.Client, base: str) -> list[httpx.Response]:
    """Każda ścieżka bazy ``base``: strona, API, dokumenty, rozmowy, pytanie i MCP."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "szukaj",
                                                                          "arguments": {"pytanie": "czynsz"}}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
    root = f"/b/{base}"
    return [
        client.get(f"{root}/"), client.get(f"{root}/api/pliki"), client.get(f"{root}/api/stan"),
        client.get(f"{root}/api/szukaj", params={"q": "czynsz najmu"}),
        client.get(f"{root}/api/jednostka", params={"plik": "najem-tajny.md", "art": "1"}),
        client.get(f"{root}/dokumenty/najem-tajny.md"), client.get(f"{root}/api/rozmowy/abc"),
        client.delete(f"{root}/api/rozmowy/abc"),
        client.post(f"{root}/api/pytaj", json={"pytanie": "Ile wynosi czynsz?"}),
        client.post(f"{root}/mcp", json=call, headers=MCP), client.post(f"{root}/mcp", json=listing, headers=MCP),
    ]


def attack_other_base(target: Target, firm: Firm) -> str:
    with httpx.Client(base_url=target.url, headers=firm.bearer("anna"), timeout=60) as anna:
        responses = _every_path(anna, "umowy")
        # the same file and its text reached through the base anna may read, another spelling and the list
        responses += [anna.get("/b/spory/dokumenty/najem-tajny.md"),
                      anna.get("/b/spory/api/jednostka", params={"plik": "najem-tajny.md", "art": "1"}),
                      anna.get("/b/spory/api/szukaj", params={"q": SECRET, "tryb": "slowa"}),
                      anna.get("/b/UMOWY/api/pliki"), anna.get("/b/umowy%2F/api/pliki"),
                      anna.get("/b/spory/..%2Fumowy/api/pliki"), anna.get("/api/bazy"), anna.get("/")]
    leaks = _leaks(responses, "umowy", "najem", SECRET)
    return (f"użytkownik bez dostępu do bazy „umowy” pyta o nią {len(responses)} ścieżkami (strona, API, dokumenty, "
            f"rozmowy, pytanie, MCP, inna pisownia, przez własną bazę): {_statuses(responses)}; "
            f"zdradziło nazwę, plik albo treść: {len(leaks)} {leaks if leaks else ''}".rstrip())


def attack_user_without_access(target: Target, firm: Firm) -> str:
    with httpx.Client(base_url=target.url, headers=firm.bearer("nikt"), timeout=60) as nobody:
        listed = nobody.get("/api/bazy")
        responses = [listed, nobody.get("/"), *_every_path(nobody, "spory"), *_every_path(nobody, "umowy")]
    leaks = _leaks(responses, "spory", "umowy", "najem", SECRET)
    return (f"użytkownik bez żadnej bazy: /api/bazy {listed.status_code} {listed.text}, {len(responses)} zapytań: "
            f"{_statuses(responses)}; zdradziło nazwę, plik albo treść: {len(leaks)} {leaks if leaks else ''}"
            ).rstrip()


def attack_ended_sessions(target: Target, firm: Firm) -> str:
    origin = {"Origin": target.url}
    cookies = {}
    for name in ("anna", "jan"):
        login = httpx.post(f"{target.url}/logowanie", data={"token": firm.tokens[name]}, headers=origin, timeout=60)
        cookies[name] = dict(login.cookies)
    httpx.post(f"{target.url}/wylogowanie", json={}, cookies=cookies["anna"], headers=origin, timeout=60)
    firm.accounts.remove("jan")  # the admin, in another terminal, while the server runs
    after = {name: Counter(httpx.get(f"{target.url}/b/spory/api/pliki", cookies=cookies[name],
                                     timeout=60).status_code for _ in range(10)) for name in cookies}
    bearer = Counter(httpx.get(f"{target.url}/b/spory/api/pliki", headers=firm.bearer("jan"),
                               timeout=60).status_code for _ in range(10))
    said = {name: ", ".join(f"{k}×{v}" for k, v in sorted(c.items())) for name, c in after.items()}
    return (f"kopia ciasteczka po wylogowaniu, 10 nowych połączeń (procesy robocze): {said['anna']}; ciasteczko "
            f"i token usuniętego użytkownika: {said['jan']} / {', '.join(f'{k}×{v}' for k, v in bearer.items())}")


class HungModel:
    """Zastępczy model czatu (protokół OpenAI), który nie odpowiada, dopóki nie ``release``; liczy wywołania."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.calls = 0
        self.released = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                model.calls += 1
                model.released.wait(120)
                body = (b'{"choices":[{"index":0,"message":{"role":"assistant","content":"Urlop [regulamin.md, '
                        b'art. 1]."},"finish_reason":"stop"}]}')
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.env = {"CHROMA_RAG_LLM_URL": f"http://127.0.0.1:{self.server.server_address[1]}/v1",
                    "CHROMA_RAG_LLM_MODEL": "zawieszony/model", "CHROMA_RAG_LLM_RETRIES": "0"}

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()


def attack_question_pool(target: Target, model: HungModel) -> str:
    sockets = []
    for n in range(64):  # each from its own address (127.0.0.0/8 is all local), each its own question
        body = f'{{"pytanie": "Ile dni urlopu przysługuje? ({n})"}}'.encode()
        sock = socket.create_connection(("127.0.0.1", target.port), timeout=30, source_address=(f"127.0.1.{n}", 0))
        sock.sendall(b"POST /api/pytaj HTTP/1.1\r\nHost: " + target.host + b"\r\nAuthorization: Bearer "
                     + TOKEN.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        sockets.append(sock)
    refused: Counter[str] = Counter()
    waiting = list(sockets)
    for _ in range(600):  # until each question got its 503 or holds a call of the model (a cold worker loads first)
        for sock in _answered(waiting):
            waiting.remove(sock)
            refused[sock.recv(64).split(b" ", 2)[1].decode()] += 1
        if waiting and model.calls >= len(waiting):
            break
        time.sleep(0.5)
    held = model.calls
    during = target.searches()
    files = Counter(httpx.get(f"{target.url}/api/pliki", headers=AUTH, timeout=30).status_code for _ in range(5))
    for sock in sockets:
        sock.close()  # everybody hangs up
    time.sleep(2)  # the server notices the hang-ups
    model.released.set()
    time.sleep(10)  # the held calls return; the abandoned questions must not call the model again
    return (f"64 pytania z 64 adresów do zawieszonego modelu: czeka na model {held}, odmowy "
            f"{', '.join(f'{k}×{v}' for k, v in refused.items())}; w tym czasie wyszukiwania {during}, /api/pliki "
            f"{', '.join(f'{k}×{v}' for k, v in files.items())}; po rozłączeniu wszystkich i odwieszeniu modelu "
            f"dalszych wywołań modelu: {model.calls - held}")


def _answered(sockets: list[socket.socket]) -> list[socket.socket]:
    """Połączenia, na które serwer już coś odpowiedział."""
    import select

    return select.select(sockets, [], [], 0)[0] if sockets else []


# what an attack's server needs: its serwuj arguments, environment and what else the attack gets
Server = tuple[list[str], dict[str, str], tuple[object, ...]]


def single_base(work: Path, db: Path) -> Server:
    return ["--baza", str(db)], {}, ()


def firm_bases(work: Path, db: Path) -> Server:
    firm = Firm(work, db)
    return firm.arguments, {}, (firm,)


def hung_model(work: Path, db: Path) -> Server:
    model = HungModel()
    return ["--baza", str(db)], model.env, (model,)


ATTACKS: list[tuple[Callable[..., str], Callable[[Path, Path], Server]]] = [
    (attack_garbage, single_base), (attack_big_headers, single_base), (attack_unfinished_headers, single_base),
    (attack_slow_bodies, single_base), (attack_idle_mcp, single_base), (attack_dropped_logins, single_base),
    (attack_wrong_tokens, single_base), (attack_other_base, firm_bases), (attack_user_without_access, firm_bases),
    (attack_ended_sessions, firm_bases), (attack_question_pool, hung_model),
]
NIEZAWODNOSC = REPO / "docs" / "NIEZAWODNOSC.md"


def main() -> None:
    own = str(Path(sys.executable).with_name("chroma-rag"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=own, help="polecenie chroma-rag do sprawdzenia (domyślnie z tego .venv)")
    parser.add_argument("--zapisz", action="store_true", help="zapisz tabelę wyników w docs/NIEZAWODNOSC.md")
    args = parser.parse_args()
    # this .venv may be shared by several checkouts: its chroma-rag then runs the code of this one
    code = {"PYTHONPATH": str(REPO)} if args.cli == own else {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="atak-") as work:
        db = small_db(Path(work))
        for attack, server in ATTACKS:  # a fresh server for each, so one attack's leftovers do not skew the next
            arguments, env, extra = server(Path(work), db)
            target = Target(args.cli, arguments, Path(work) / "serwer.log", {**env, **code})
            try:
                said = attack(target, *extra)
            except Exception as exc:  # the old code may fail an attack; the rest still runs
                said = f"{attack.__name__}: próba przerwana ({type(exc).__name__}: {exc})"
            finally:
                target.stop()
                for each in extra:
                    if isinstance(each, HungModel):
                        each.stop()
            print(said, flush=True)
            rows.append(said.partition(": "))
    if args.zapisz:
        table = "\n".join(f"| {what} | {result.replace('|', '/')} |" for what, _, result in rows)
        write_section("atak", f"Uruchomienie: {machine()}; `{Path(args.cli).name}`.\n\n| próba | wynik |\n"
                              f"| --- | --- |\n{table}", NIEZAWODNOSC)


if __name__ == "__main__":
    main()
