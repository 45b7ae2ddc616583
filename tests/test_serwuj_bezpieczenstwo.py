"""`chroma-rag serwuj` pod atakiem sąsiada z pętli zwrotnej (issue #22): podmienione pliki, obejście limitów
logowania, podrobiony nagłówek Host – na prawdziwym uvicorn."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from serving_support import running_server

from chroma_rag import Index
from chroma_rag.serving.security import MAX_BODY_BYTES

SECRET = "root:x:0:0:sekret-sasiada\n"


@pytest.fixture(scope="module")
def swapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Serwer nad indeksem jednego pliku, który potem podmieniono na dowiązanie do cudzego sekretu."""
    root = tmp_path_factory.mktemp("podmiana")
    docs = root / "docs" / "sub"
    docs.mkdir(parents=True)
    indexed = docs / "sekret.md"
    indexed.write_text("# Regulamin\n\nArt. 1. Pracownik ma prawo do urlopu wypoczynkowego.\n", encoding="utf-8")
    db = root / "db"
    Index(db).add([indexed])
    outside = root / "passwd"
    outside.write_text(SECRET, encoding="utf-8")
    with running_server(db) as url:
        yield url, indexed


def raw_request(base: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, str]:
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body or None)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def test_dokumenty_serves_the_indexed_file_itself(swapped: tuple[str, Path]) -> None:
    url, indexed = swapped
    response = httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30)
    assert response.status_code == 200 and "urlopu" in response.text


@pytest.mark.parametrize("link", ["file", "folder"])
def test_file_swapped_for_a_symlink_is_not_served(swapped: tuple[str, Path], link: str) -> None:
    url, indexed = swapped
    original = indexed.read_bytes()
    outside = indexed.parents[2] / "passwd"
    folder = indexed.parent
    try:
        if link == "file":
            indexed.unlink()
            indexed.symlink_to(outside)
        else:  # the folder on the indexed path now leads elsewhere, with a same-named file
            moved = folder.with_name("sub-stary")
            folder.rename(moved)
            elsewhere = folder.with_name("obcy")
            elsewhere.mkdir()
            (elsewhere / indexed.name).write_text(SECRET, encoding="utf-8")
            folder.symlink_to(elsewhere, target_is_directory=True)
        response = httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30)
        assert response.status_code == 404, response.text
        assert "root:" not in response.text
        assert "zaindeksuj" in response.json()["blad"]
    finally:
        if link == "file":
            indexed.unlink()
            indexed.write_bytes(original)
        else:
            folder.unlink()
            folder.with_name("sub-stary").rename(folder)
    assert httpx.get(f"{url}/dokumenty/{indexed.name}", timeout=30).status_code == 200


def test_login_body_over_the_limit_is_413_before_reading_it(guarded_url: str) -> None:
    field = "token=" + "x" * (5 * 1024 * 1024)
    response = httpx.post(f"{guarded_url}/logowanie", content=field.encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert response.status_code == 413
    assert "za duża" in response.json()["blad"]


def test_login_chunked_body_over_the_limit_is_413(guarded_url: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"token="
        for _ in range(4 * MAX_BODY_BYTES // 1024):
            yield b"x" * 1024

    response = httpx.post(f"{guarded_url}/logowanie", content=chunks(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert response.status_code == 413
    assert "za duża" in response.json()["blad"]


@pytest.fixture(scope="module")
def guarded_url(two_acts_db: Path) -> Iterator[str]:
    with running_server(two_acts_db, token="tajny-token") as url:
        yield url


@pytest.mark.parametrize("host", ["127.0.0.1:evil", "127.0.0.1:18080@evil.com", "localhost:80:80", "127.0.0.1:"])
def test_host_with_a_bad_port_is_refused(swapped: tuple[str, Path], host: str) -> None:
    url, _ = swapped
    status, body = raw_request(url, "GET", "/api/pliki", {"Host": host})
    assert status == 400, body
    assert "nazwa hosta" in json.loads(body)["blad"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8080", "[::1]:80"])
def test_loopback_host_with_a_port_is_accepted(swapped: tuple[str, Path], host: str) -> None:
    url, _ = swapped
    status, body = raw_request(url, "GET", "/api/pliki", {"Host": host})
    assert status == 200, body
