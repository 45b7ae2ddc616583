"""Issue 38: strona, JSON API, strumień odpowiedzi, zapisane rozmowy i MCP nie pokazują ścieżek serwera – plik ma
nazwę, pod którą cytuje go CLI (``distinct_names``: ``umowa.md``, ``it/regulamin.md`` przy imienniku z innego
folderu), i tę nazwę serwer przyjmuje z powrotem (``/dokumenty``, ``/api/jednostka``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from serving_support import chat_model, running_app, running_server

from chroma_rag import Index
from chroma_rag.errors import UserError
from chroma_rag.filters import SearchFilters
from chroma_rag.indexing.watch import WatchState
from chroma_rag.models import ShownNames, distinct_names, paths_named
from chroma_rag.retrieval.validation import resolve_files
from chroma_rag.serving.app import build_bases_app
from chroma_rag.serving.shared_index import SharedIndex

RULES = {"kadry": ("Urlop wypoczynkowy planuje kierownik działu.", "Wynagrodzenie wypłaca się dziesiątego."),
         "it": ("Urlop od pracy przy serwerach zgłasza się administratorowi.", "Hasło zmienia się co 90 dni.")}
CONTRACT = "# Umowa najmu\n\nArt. 1. Czynsz najmu wynosi 5000 zł miesięcznie.\n"
ANSWER = "Urlop zgłasza się administratorowi [it/regulamin.md, art. 1]."


@pytest.fixture(scope="module")
def firm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder kancelarii: dwa różne „regulamin.md” (kadry/, it/), ta sama umowa w umowy/ i archiwum/ (druga
    ścieżka tego samego dokumentu), baza „firma” w db/ i druga baza „spory” – wszystko pod jednym folderem, którego
    ścieżki nie może pokazać żadna odpowiedź."""
    root = tmp_path_factory.mktemp("kancelaria")
    for folder, (first, second) in RULES.items():
        (root / folder).mkdir()
        (root / folder / "regulamin.md").write_text(f"# Regulamin\n\nArt. 1. {first}\n\nArt. 2. {second}\n",
                                                    encoding="utf-8")
    for folder in ("umowy", "archiwum"):
        (root / folder).mkdir()
        (root / folder / "umowa.md").write_text(CONTRACT, encoding="utf-8")
    Index(root / "db").add([root / "kadry", root / "it", root / "umowy", root / "archiwum"])
    (root / "spory").mkdir()
    (root / "spory" / "pozew.md").write_text("# Pozew\n\nArt. 1. Urlop pracownika nie wstrzymuje biegu sprawy.\n",
                                             encoding="utf-8")
    Index(root / "spory-db").add([root / "spory"])
    return root


@pytest.fixture(scope="module")
def firm_server(firm: Path) -> Iterator[str]:
    """Serwer z bazami „firma” i „spory” (``serwuj --bazy``), „firma” z obserwowanym folderem."""
    watched = WatchState(folders=[str(firm / "umowy")], pending=[str(firm / "umowy" / "aneks.md")])
    app = build_bases_app({"firma": SharedIndex(firm / "db"), "spory": SharedIndex(firm / "spory-db")},
                          status=lambda: {"firma": watched.to_json()})
    with chat_model(ANSWER), running_app(app) as url:
        yield url


def leaked(firm: Path, body: bytes) -> bool:
    return any(folder.encode() in body for folder in {str(firm), str(firm.resolve())})


def test_no_team_surface_shows_a_server_path(firm: Path, firm_server: str) -> None:
    base = f"{firm_server}/b/firma"

    def get(path: str, **params: object) -> httpx.Response:
        return httpx.get(base + path, params=params, timeout=120)

    def ask(accept: str, **body: object) -> httpx.Response:
        return httpx.post(f"{base}/api/pytaj", json={"pytanie": "Komu zgłasza się urlop?", **body},
                          headers={"Accept": accept}, timeout=120)

    responses = {
        "pliki": get("/api/pliki"),
        "szukaj": get("/api/szukaj", q="urlop", k=6),
        "szukaj w pliku": get("/api/szukaj", q="urlop", plik="it/regulamin.md"),
        "szukaj w bazach": httpx.get(f"{firm_server}/api/szukaj", params={"q": "urlop", "bazy": ["firma", "spory"]},
                                     timeout=120),
        "jednostka": get("/api/jednostka", plik="it/regulamin.md", art="1"),
        "jednostka imiennika": get("/api/jednostka", plik="regulamin.md", art="1"),
        "dokument imiennika": get("/dokumenty/regulamin.md"),
        "stan": get("/api/stan"),
    }
    asked = ask("application/json")
    conversation = asked.json()["rozmowa"]
    responses |= {
        "pytaj": asked,
        "pytaj strumieniem": ask("text/event-stream", rozmowa=conversation),
        "rozmowa": get(f"/api/rozmowy/{conversation}"),
        "rozmowy": get("/api/rozmowy"),
    }
    assert all(r.status_code == 200 for name, r in responses.items() if "imiennika" not in name), responses
    assert responses["jednostka imiennika"].status_code == responses["dokument imiennika"].status_code == 409
    saved = [path.read_bytes() for path in firm.rglob("rozmowy/*.json")]
    assert saved
    for name, response in responses.items():
        assert not leaked(firm, response.content), (name, response.text)
    assert not any(leaked(firm, body) for body in saved)
    for shown in mcp_replies(f"{base}/mcp"):
        assert not leaked(firm, shown.encode()), shown

    # not an empty check: each file keeps a name that tells it apart, the one its citations use
    listed = {f["sciezka"]: f for f in responses["pliki"].json()}
    assert set(listed) == {"it/regulamin.md", "kadry/regulamin.md", "umowa.md"}
    assert listed["umowa.md"]["inne_sciezki"] in (["archiwum/umowa.md"], ["umowy/umowa.md"])
    hits = responses["szukaj"].json()["wyniki"]
    assert {h["sciezka"] for h in hits if h["plik"] == "regulamin.md"} == {"it/regulamin.md", "kadry/regulamin.md"}
    assert {h["sciezka"] for h in responses["szukaj w pliku"].json()["wyniki"]} == {"it/regulamin.md"}
    assert {h["sciezka"] for h in responses["szukaj w bazach"].json()["wyniki"]} >= {"pozew.md", "it/regulamin.md"}
    turns = responses["rozmowa"].json()["tury"]
    assert len(turns) == 2 and "it/regulamin.md" in {s["sciezka"] for s in turns[0]["zrodla"]}
    assert "(it/regulamin.md, kadry/regulamin.md)" in responses["dokument imiennika"].json()["blad"]
    assert "it/regulamin.md, kadry/regulamin.md" in responses["jednostka imiennika"].json()["blad"]


def mcp_replies(address: str) -> list[str]:
    """Odpowiedzi narzędzi MCP serwera (lista plików, wyszukiwanie, jednostka imiennika) jako tekst."""

    async def main() -> list[str]:
        async with Client(address, read_timeout_seconds=120) as client:
            calls = [("lista_plikow", {}), ("szukaj", {"pytanie": "urlop", "k": 6}),
                     ("pokaz_jednostke", {"plik": "regulamin.md", "art": "1"})]
            replies = [await client.call_tool(tool, arguments) for tool, arguments in calls]
        assert replies[2].is_error and "it/regulamin.md" in replies[2].content[0].text
        return [reply.content[0].text for reply in replies]

    return anyio.run(main)


def test_a_document_and_a_unit_are_opened_by_the_name_the_page_shows(firm: Path, firm_server: str) -> None:
    base = f"{firm_server}/b/firma"

    def get(path: str, **params: object) -> httpx.Response:
        return httpx.get(base + path, params=params, timeout=120)

    for folder, (first, _) in RULES.items():
        document = get("/dokumenty/regulamin.md", sciezka=f"{folder}/regulamin.md")
        assert document.status_code == 200 and first in document.text
        unit = get("/api/jednostka", plik=f"{folder}/regulamin.md", art="1")
        assert unit.status_code == 200 and first in unit.text and unit.json()["plik_na_serwerze"] is True
    hits = get("/api/szukaj", q="urlop").json()["wyniki"]  # the page links these files: the server has them
    assert hits and all(hit["plik_na_serwerze"] is True for hit in hits), hits
    assert get("/dokumenty/umowa.md", sciezka="umowa.md").text == CONTRACT
    refused = [get("/dokumenty/regulamin.md", sciezka="hr/regulamin.md"),
               get("/dokumenty/regulamin.md", sciezka="/etc/passwd"),
               get("/dokumenty/regulamin.md", sciezka="regulamin.md"),
               get("/api/jednostka", plik="hr/regulamin.md", art="1")]
    assert [r.status_code for r in refused] == [404, 404, 409, 404]
    for response in refused:
        said = response.json()["blad"]
        assert said.endswith(".") and "\n" not in said and not leaked(firm, response.content), said
        assert "root:" not in response.text
    for response in refused[:3]:  # a document is opened from the page: no API address in what it says
        assert "/api" not in response.json()["blad"], response.text


def test_an_old_conversation_with_server_paths_opens_with_names(firm: Path, tmp_path: Path) -> None:
    """Rozmowa zapisana, zanim serwer przestał zapisywać ścieżki: otwiera się z nazwami, a plik, którego już nie ma
    w indeksie, ma samą nazwę."""
    db = tmp_path / "db"
    Index(db).add([firm / "kadry", firm / "it"])
    source = {"plik": "regulamin.md", "art": "1", "strona": 1, "tekst": "Urlop…"}
    turn = {"pytanie": "Komu zgłasza się urlop?", "odpowiedz": ANSWER,
            "zrodla": [{**source, "sciezka": str(firm / "it" / "regulamin.md")},
                       {**source, "plik": "stary.md", "sciezka": str(firm / "usuniete" / "stary.md")},
                       {**source, "sciezka": "kadry/regulamin.md"}]}
    conversation = "0123456789abcdef01234567"
    (db / "rozmowy").mkdir()
    (db / "rozmowy" / f"{conversation}.json").write_text(json.dumps({"rozmowa": conversation, "tury": [turn]}),
                                                        encoding="utf-8")
    with running_server(db) as url:
        opened = httpx.get(f"{url}/api/rozmowy/{conversation}", timeout=60)
    assert opened.status_code == 200 and not leaked(firm, opened.content), opened.text
    sources = opened.json()["tury"][0]["zrodla"]
    assert [s["sciezka"] for s in sources] == ["it/regulamin.md", "stary.md", "kadry/regulamin.md"]


def test_a_name_never_carries_the_server_root() -> None:
    """Plik, którego cała ścieżka jest końcówką ścieżki imiennika, dostaje nazwę bez korzenia – nie „//srv/r.md”,
    czyli ścieżkę serwera."""
    assert distinct_names(["/srv/r.md", "/home/srv/r.md", "/inne.md"]) == {
        "/srv/r.md": "srv/r.md", "/home/srv/r.md": "home/srv/r.md", "/inne.md": "inne.md"}


def test_a_base_with_nothing_indexed_yet_names_no_folder(tmp_path: Path) -> None:
    """Serwer nad bazą, której jeszcze nie zaindeksowano (np. ``serwuj --obserwuj`` przed pierwszym zapisem): zdanie
    dla zespołu bez folderu bazy i bez polecenia CLI."""
    with chat_model(ANSWER), running_server(tmp_path / "db") as url:
        refused = [httpx.get(f"{url}/api/pliki", timeout=60),
                   httpx.get(f"{url}/api/szukaj", params={"q": "urlop"}, timeout=60),
                   httpx.get(f"{url}/api/jednostka", params={"plik": "regulamin.md", "art": "1"}, timeout=60),
                   httpx.post(f"{url}/api/pytaj", json={"pytanie": "Komu zgłasza się urlop?"},
                              headers={"Accept": "application/json"}, timeout=60)]
    for response in refused:
        assert response.status_code == 400 and not leaked(tmp_path, response.content), response.text
        assert "nie ma jeszcze zaindeksowanych dokumentów" in response.json()["blad"]
        assert "chroma-rag" not in response.text


def test_a_name_that_ends_another_files_path_opens_its_own_file(tmp_path: Path) -> None:
    """Cała ścieżka jednego pliku jest końcówką ścieżki imiennika (``/x/r.md`` i ``/y/x/r.md``): nazwa pierwszego
    („x/r.md”) kończy obie ścieżki, a i tak otwiera – na stronie, w API i w ``pokaz`` – ten plik, którego jest
    nazwą, zamiast mówić, że pasuje do kilku."""
    inner = tmp_path / "x" / "r.md"
    outer = tmp_path / "y" / inner.relative_to(inner.anchor)
    for path, text in ((inner, "Czynsz płaci się do piątego."), (outer, "Czynsz płaci się do dziesiątego.")):
        path.parent.mkdir(parents=True)
        path.write_text(f"# Regulamin\n\nArt. 1. {text}\n\nArt. 2. Hasło zmienia się co 90 dni.\n", encoding="utf-8")
    db = tmp_path / "db"
    Index(db).add([inner, outer])
    names = distinct_names([str(inner), str(outer)])
    assert names[str(outer)].endswith(names[str(inner)])  # the case: one name ends the other file's path too
    with running_server(db) as url:
        for path, day in ((inner, "piątego"), (outer, "dziesiątego")):
            name = names[str(path)]
            unit = httpx.get(f"{url}/api/jednostka", params={"plik": name, "art": "1"}, timeout=60)
            assert unit.status_code == 200 and day in unit.json()["wersje"][0]["tekst"], unit.text
            document = httpx.get(f"{url}/dokumenty/r.md", params={"sciezka": name}, timeout=60)
            assert document.status_code == 200 and day in document.text, document.text
            assert day in Index(db).unit(name, "1").versions[0].text
            assert Index(db).indexed_file(name) == str(path)


def test_an_operators_sentence_reaches_the_team_without_the_server_path() -> None:
    """Zdanie błędu napisane dla operatora (CLI) ze ścieżką serwera – strona, API i MCP dostają je z samą nazwą
    pliku; CLI dalej z pełną ścieżką."""
    failure = UserError("Błąd dostępu do pliku „/srv/kancelaria/umowy/najem.md”: brak uprawnień.")
    assert failure.message("cli") == str(failure)
    for surface in ("web", "mcp"):
        assert failure.message(surface) == "Błąd dostępu do pliku „najem.md”: brak uprawnień."


def test_paths_indexed_from_windows_on_a_shared_server_are_named_like_any_other() -> None:
    """Wspólny serwer Chromy trzyma też ścieżki zapisane na Windows: zespół widzi nazwę pliku (imienniki – z folderem,
    jak przy ścieżkach Linuksa), nazwa z folderem wskazuje swój plik, a ścieżka spoza indeksu nie wychodzi cała."""
    it, hr = r"C:\Kancelaria\it\regulamin.md", r"C:\Kancelaria\kadry\regulamin.md"
    shared, linux = r"\\serwer\wspolne\umowa.docx", "/srv/akty/regulamin.md"
    assert distinct_names([it, hr, shared, linux]) == {it: "it/regulamin.md", hr: "kadry/regulamin.md",
                                                       shared: "umowa.docx", linux: "akty/regulamin.md"}
    assert paths_named("it/regulamin.md", [it, hr, linux]) == [it]
    assert paths_named("kadry\\regulamin.md", [it, hr, linux]) == [hr]
    assert ShownNames().name(r"D:\Pobrane\najem.md") == "najem.md"
    chosen = resolve_files(SearchFilters(files=["kadry\\regulamin.md"]), [("regulamin.md", it), ("regulamin.md", hr)])
    assert (chosen.files, chosen.paths) == ([], [hr])


WINDOWS_ANSWER = "Administratorowi [it/regulamin.md, art. 1]."


def test_a_shared_server_indexed_from_windows_names_its_files_on_every_surface(same_named_from_windows: str) -> None:
    """Wspólny serwer Chromy, na który pliki zaindeksował komputer z Windows („C:\\Kancelaria\\it\\regulamin.md”), pod
    ``serwuj`` na Linuksie: API, odpowiedź, zapisana rozmowa i MCP nazywają pliki jak przy ścieżkach Linuksa
    („it/regulamin.md”), ta nazwa wybiera plik w filtrze i w jednostce, a dokumentu, którego serwer nie ma na swoim
    dysku, nie obiecuje zdanie „zaindeksuj go ponownie”."""
    app = build_bases_app({"firma": SharedIndex(server=same_named_from_windows)})
    with chat_model(WINDOWS_ANSWER), running_app(app) as url:
        base = f"{url}/b/firma"

        def get(path: str, **params: object) -> httpx.Response:
            return httpx.get(base + path, params=params, timeout=120)

        asked = httpx.post(f"{base}/api/pytaj", json={"pytanie": "Komu zgłasza się urlop od pracy przy serwerach?"},
                           headers={"Accept": "application/json"}, timeout=120)
        responses = {
            "pliki": get("/api/pliki"),
            "szukaj": get("/api/szukaj", q="urlop", k=6),
            "szukaj w pliku": get("/api/szukaj", q="urlop", plik="it/regulamin.md"),
            "jednostka": get("/api/jednostka", plik="it/regulamin.md", art="1"),
            "jednostka imiennika": get("/api/jednostka", plik="regulamin.md", art="1"),
            "pytaj": asked,
            "rozmowa": get(f"/api/rozmowy/{asked.json()['rozmowa']}"),
            "dokument": get("/dokumenty/regulamin.md", sciezka="it/regulamin.md"),
        }
        replies = mcp_replies(f"{base}/mcp")
    for name, response in responses.items():
        assert "Kancelaria" not in response.text and "C:" not in response.text, (name, response.text)
    for shown in replies:
        assert "Kancelaria" not in shown and "C:" not in shown, shown

    assert {f["sciezka"] for f in responses["pliki"].json()} == {"it/regulamin.md", "kadry/regulamin.md"}
    assert {h["sciezka"] for h in responses["szukaj"].json()["wyniki"]} == {"it/regulamin.md", "kadry/regulamin.md"}
    assert {h["sciezka"] for h in responses["szukaj w pliku"].json()["wyniki"]} == {"it/regulamin.md"}
    unit = responses["jednostka"]
    assert unit.status_code == 200 and "administratorowi" in unit.json()["wersje"][0]["tekst"], unit.text
    assert responses["jednostka imiennika"].status_code == 409
    assert "it/regulamin.md, kadry/regulamin.md" in responses["jednostka imiennika"].json()["blad"]
    assert "it/regulamin.md" in {s["sciezka"] for s in asked.json()["fragmenty"]}
    assert "it/regulamin.md" in {s["sciezka"] for s in responses["rozmowa"].json()["tury"][0]["zrodla"]}
    assert "it/regulamin.md" in replies[0] and "kadry/regulamin.md" in replies[0], replies[0]
    document = responses["dokument"]
    said = document.json()["blad"]
    assert document.status_code == 404 and said.endswith(".") and "\n" not in said, said
    assert "zaindeksuj" not in said and "innym komputerze" in said, said
    # the page offers no link to a file the server does not have: every hit, source and unit says so
    shown = [*responses["szukaj"].json()["wyniki"], *asked.json()["fragmenty"],
             *responses["rozmowa"].json()["tury"][0]["zrodla"], unit.json()]
    assert shown and all(item["plik_na_serwerze"] is False for item in shown), shown
