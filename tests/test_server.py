"""Tryb serwera (issue 8): te same polecenia na folderze i na prawdziwym `chroma run` (parametr ``tryb``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import DATA_PROTECTION, PATIENTS, SAMPLES, Target, free_port, run_cli

from chroma_rag.errors import ServiceError, UserError
from chroma_rag.storage.store import Store, check_server_version, parse_server


def search_json(capsys, target: Target, *args: str) -> list[dict]:
    code, out, err = run_cli(capsys, "szukaj", *args, "--json", *target.args)
    assert code == 0, err
    return json.loads(out)["wyniki"]


def listing(capsys, target: Target) -> dict[str, dict]:
    code, out, err = run_cli(capsys, "lista", "--json", *target.args)
    assert code == 0, err
    return {f["plik"]: f for f in json.loads(out)}


def test_json_shape_and_plik_filter(capsys, two_acts):
    hits = search_json(capsys, two_acts, "Kto może zobaczyć moją dokumentację medyczną?", "--plik", PATIENTS, "-k", "8")
    assert len(hits) == 8
    for hit in hits:
        assert hit["plik"] == PATIENTS and hit["rok"] == 2009 and hit["typ"] == "ustawa"
        assert isinstance(hit["strona"], int) and hit["art"] and hit["tekst"]
        assert 0.0 < hit["podobienstwo"] <= 1.0
    scores = [h["wynik"] for h in hits]  # hybrid mode ranks by the fused score
    assert scores == sorted(scores, reverse=True)


def test_each_filter_kind(capsys, two_acts):
    assert {h["rok"] for h in search_json(capsys, two_acts, "dane osobowe", "--rok", "1997", "-k", "10")} == {1997}
    assert {h["plik"] for h in search_json(capsys, two_acts, "dane", "--od-roku", "2000", "-k", "10")} == {PATIENTS}
    assert {h["plik"] for h in search_json(capsys, two_acts, "dane", "--do-roku", "2000", "-k", "10")} == {
        DATA_PROTECTION
    }
    assert search_json(capsys, two_acts, "dane", "--od-roku", "1998", "--do-roku", "2008") == []
    assert {h["typ"] for h in search_json(capsys, two_acts, "zgoda", "--typ", "ustawa", "-k", "10")} == {"ustawa"}
    assert search_json(capsys, two_acts, "zgoda", "--typ", "kodeks") == []
    hits = search_json(capsys, two_acts, "prawo pacjenta", "--art", "23", "--art", "24", "-k", "10")
    assert hits and {h["art"] for h in hits} <= {"23", "24"}
    hits = search_json(
        capsys, two_acts, "informacja", "--plik", DATA_PROTECTION, "--art", "24", "--rok", "1997", "--typ", "ustawa"
    )
    assert hits and all(h["plik"] == DATA_PROTECTION and h["art"] == "24" for h in hits)


def test_unknown_file_lists_closest_names(capsys, two_acts):
    code, out, err = run_cli(capsys, "szukaj", "x", "--plik", "prawa-pacjeta.pdf", *two_acts.args)
    assert code == 2 and "prawa-pacjeta.pdf" in err and PATIENTS in err
    assert "Traceback" not in err + out


def test_lista(capsys, two_acts):
    files = listing(capsys, two_acts)
    assert set(files) == {PATIENTS, DATA_PROTECTION}
    assert files[PATIENTS]["rok"] == 2009 and files[PATIENTS]["fragmenty"] > 30
    assert files[PATIENTS]["modele"] == ["lokalny:multilingual-e5-small"]


def test_usun_removes_exactly_one_file(capsys, two_acts_private):
    before = {name: f["fragmenty"] for name, f in listing(capsys, two_acts_private).items()}
    code, out, _ = run_cli(capsys, "usun", PATIENTS, *two_acts_private.args)
    assert code == 0 and str(before[PATIENTS]) in out
    assert {name: f["fragmenty"] for name, f in listing(capsys, two_acts_private).items()} == {
        DATA_PROTECTION: before[DATA_PROTECTION]
    }
    code, _, err = run_cli(capsys, "usun", PATIENTS, *two_acts_private.args)
    assert code == 2 and "nie ma pliku" in err


def test_indexing_twice_keeps_chunks_and_answers(capsys, empty_target):
    code, _, err = run_cli(capsys, "szukaj", "urlop", *empty_target.args)
    assert code == 1 and "indeksuj" in err
    assert run_cli(capsys, "indeksuj", SAMPLES, *empty_target.args)[0] == 0
    first = listing(capsys, empty_target)
    assert run_cli(capsys, "indeksuj", SAMPLES, *empty_target.args)[0] == 0
    assert listing(capsys, empty_target) == first
    hits = search_json(capsys, empty_target, "Ile dni urlopu przysługuje pracownikowi?", "-k", "1")
    assert hits[0]["art"] == "§ 6" and hits[0]["typ"] == "regulamin"


def test_every_command_works_in_both_modes(capsys, two_acts, tmp_path):
    """Rejestr, indeks słów, ocena, sprawdz i pytaj (bez modelu czatu) na folderze i na serwerze."""
    keyword_hits = search_json(capsys, two_acts, "dokumentacja medyczna", "--tryb", "slowa", "-k", "3")
    assert keyword_hits and all(h["plik"] == PATIENTS for h in keyword_hits)
    code, out, err = run_cli(capsys, "sprawdz", "--json", *two_acts.args)
    assert code == 0, err + out  # the report says which check failed
    assert json.loads(out)["ok"] and json.loads(out)["pliki"] == 2
    questions = tmp_path / "pytania.jsonl"
    questions.write_text(
        json.dumps({"pytanie": "Czy pacjent ma prawo do dokumentacji medycznej?", "plik": PATIENTS, "art": ["23"]},
                   ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "ocena", questions, "--json", *two_acts.args)
    assert code == 0, err
    assert json.loads(out)["n"] == 1
    code, out, err = run_cli(capsys, "pytaj", "Kto ma dostęp do dokumentacji medycznej?", "--pokaz-prompt", "--json",
                             *two_acts.args)
    assert code == 0, err
    assert PATIENTS in json.loads(out)["wiadomosci"][-1]["content"]


@pytest.mark.parametrize(
    "filters",
    [
        (),
        ("--plik", PATIENTS),
        ("--typ", "ustawa", "--od-roku", "1990"),
        ("--art", "24", "--art", "23"),
        ("--plik", DATA_PROTECTION, "--rok", "1997", "--typ", "ustawa"),
    ],
)
def test_server_results_identical_to_folder(capsys, two_acts_db, two_acts_server, filters):
    """Ten sam PDF zaindeksowany osobno do folderu i na serwer daje te same wyniki (id, wynik, tekst)."""
    question = "Czy szpital może udostępnić moje dane osobowe i dokumentację medyczną?"
    folder = search_json(capsys, Target(path=two_acts_db), question, "-k", "6", *filters)
    served = search_json(capsys, two_acts_server, question, "-k", "6", *filters)
    assert folder and served == folder


def test_env_variable_selects_server(capsys, monkeypatch, two_acts_db, two_acts_server):
    monkeypatch.setenv("CHROMA_RAG_SERWER", two_acts_server.url)
    code, out, err = run_cli(capsys, "lista", "--json")
    assert code == 0, err
    assert {f["plik"] for f in json.loads(out)} == {PATIENTS, DATA_PROTECTION}
    # An explicit --baza outranks the server from the environment (flag > environment > file > default).
    code, _, err = run_cli(capsys, "lista", "--baza", two_acts_db.parent / "brak")
    assert code == 1 and "jeszcze nie istnieje" in err  # the folder was used, not the server
    code, _, err = run_cli(capsys, "lista", "--baza", two_acts_db, "--serwer", two_acts_server.url)
    assert code == 2 and "nie oba naraz" in err


def test_unreachable_server_is_one_polish_sentence(capsys):
    url = f"http://127.0.0.1:{free_port()}"
    for command in (("szukaj", "urlop"), ("lista",), ("usun", "x.pdf"), ("indeksuj", SAMPLES)):
        code, out, err = run_cli(capsys, *command, "--serwer", url)
        assert code == 1, command
        assert "Nie można połączyć się z serwerem Chromy" in err and url in err
        assert "Traceback" not in out + err


def test_unreachable_server_is_a_failed_service_not_a_bad_request():
    # the team server (serwuj) answers 502 for it, not 400: the question was fine
    with pytest.raises(ServiceError, match="Nie można połączyć się z serwerem Chromy"):
        Store(server=f"http://127.0.0.1:{free_port()}").client()


def test_console_script_with_unreachable_server_has_no_traceback():
    exe = [sys.executable, "-m", "chroma_rag"]
    result = subprocess.run(
        [*exe, "lista", "--serwer", f"127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "Nie można połączyć się" in result.stderr


def test_bad_address_and_wrong_protocol(capsys, tmp_path):
    code, _, err = run_cli(capsys, "lista", "--serwer", "ftp://serwer:21")
    assert code == 1 and "Niepoprawny adres serwera" in err
    # A plain HTTP server that is not Chroma (here: a loopback static file server) is reported as such.
    port = free_port()
    static = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        code, _, err = run_cli(capsys, "lista", "--serwer", f"http://127.0.0.1:{port}")
    finally:
        static.terminate()
        static.wait(timeout=10)
    assert code == 1 and "nie odpowiada serwer Chromy 1.x" in err


def _wait_for_port(port: int) -> None:
    import socket
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)


def test_server_version_check():
    check_server_version('"1.0.0"', "http://x:1")
    with pytest.raises(UserError, match="wymaga serwera Chromy"):
        check_server_version('"0.5.23"', "http://x:1")


def test_address_parsing_and_local_work_dir(monkeypatch, tmp_path):
    assert parse_server("127.0.0.1:8001").url == "http://127.0.0.1:8001"
    assert parse_server("https://chroma.firma.pl").url == "https://chroma.firma.pl:443"
    assert parse_server("http://serwer").url == "http://serwer:8000"
    monkeypatch.setenv("CHROMA_RAG_CACHE", str(tmp_path / "cache"))
    store = Store(server="http://10.0.0.5:8000", token="sekret")
    assert store.is_server and not store.needs_lock
    assert store.work_dir == tmp_path / "cache" / "serwer-10.0.0.5-8000"
    folder = Store(tmp_path / "db")
    assert folder.work_dir == tmp_path / "db" and folder.needs_lock


class _TokenProxy:
    """Prawdziwe reverse proxy na 127.0.0.1, które – jak nginx z docs/SERWER.md – wpuszcza do `chroma run`
    tylko zapytania z właściwym nagłówkiem X-Chroma-Token (sam serwer Chromy 1.5.9 tokenu nie sprawdza)."""

    def __init__(self, upstream: str, token: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        import httpx

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                if self.headers.get("X-Chroma-Token") != token:
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                reply = httpx.request(self.command, upstream + self.path, content=body,
                                      headers={"Content-Type": self.headers.get("Content-Type", "application/json")})
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_token_is_sent_and_rejection_is_reported(capsys, monkeypatch, two_acts_server):
    proxy = _TokenProxy(two_acts_server.url, "tajny-token")
    try:
        monkeypatch.setenv("CHROMA_RAG_SERWER_TOKEN", "tajny-token")
        code, out, err = run_cli(capsys, "szukaj", "zgoda", "--typ", "ustawa", "--json", "--serwer", proxy.url)
        assert code == 0, err
        assert json.loads(out)["wyniki"]
        monkeypatch.setenv("CHROMA_RAG_SERWER_TOKEN", "zly-token")
        code, out, err = run_cli(capsys, "lista", "--serwer", proxy.url)
        assert code == 1 and "odrzucił dostęp" in err and "CHROMA_RAG_SERWER_TOKEN" in err
        assert "Traceback" not in out + err
    finally:
        proxy.close()


def test_long_lived_index_notices_other_writers_on_the_server(monkeypatch, chroma_servers, tmp_path):
    """Dwie osoby (każda z własnym katalogiem danych pochodnych) na jednym serwerze: długo żyjący ``Index``
    czytelnika widzi po znaczniku zmiany kolekcji, co dopisał i usunął drugi – w obu nogach wyszukiwania."""
    from chroma_rag import Index
    from chroma_rag.filters import SearchFilters

    url = chroma_servers.start(tmp_path / "dane")
    parking, canteen = tmp_path / "parking.txt", tmp_path / "kantyna.txt"
    parking.write_text("Miejsca dla rowerów są przy bramie B, a dla samochodów na poziomie -1.", encoding="utf-8")
    canteen.write_text("Kantyna jest czynna od 11:00 do 15:00, obiad kosztuje 25 zł.", encoding="utf-8")
    writer, reader = Index(server=url), Index(server=url)

    def as_person(name: str) -> None:
        monkeypatch.setenv("CHROMA_RAG_CACHE", str(tmp_path / f"cache-{name}"))

    as_person("pisarz")
    writer.add([parking])
    as_person("czytelnik")
    assert reader.search("rowery brama", threshold=None, mode="slowa")[0].file == "parking.txt"
    as_person("pisarz")
    writer.add([canteen])
    as_person("czytelnik")
    assert reader.search("obiad kantyna", threshold=None, mode="slowa")[0].file == "kantyna.txt"
    hits = reader.search("Ile kosztuje obiad?", threshold=None, filters=SearchFilters(files=["kantyna.txt"]))
    assert hits and hits[0].file == "kantyna.txt"
    as_person("pisarz")
    writer.remove("parking.txt")
    as_person("czytelnik")
    assert all(h.file != "parking.txt" for h in reader.search("rowery brama", threshold=None, mode="slowa"))
    assert all(h.file != "parking.txt" for h in reader.search("rowery", threshold=None, mode="wektor"))


def test_keyword_index_compares_chunks_only_after_a_change(monkeypatch, two_acts_private):
    """Zgodność indeksu słów z kolekcją: przy tym samym znaczniku zmiany bez pobierania wersji fragmentów; po zapisie
    w folderze – tylko fragmenty z dziennika zmian migawki, na serwerze (bez dziennika) – wersje wszystkich."""
    from chroma_rag.derived import DerivedIndex

    two_acts_private.index().search("urlop", threshold=None)  # syncs and stores the collection's marker
    compared = []
    column = DerivedIndex.column
    monkeypatch.setattr(DerivedIndex, "column", lambda self, *args: compared.append(args) or column(self, *args))
    two_acts_private.index().search("dokumentacja medyczna", threshold=None)
    assert compared == []
    index = two_acts_private.index()
    index.remove(DATA_PROTECTION)
    # the write changed the marker: the folder catches up from the journal, the server compares every chunk
    assert bool(compared) == (two_acts_private.url is not None)
    compared.clear()
    hits = two_acts_private.index().search("dane osobowe", threshold=None, mode="slowa")
    assert compared == [] and hits and all(h.file == PATIENTS for h in hits)
