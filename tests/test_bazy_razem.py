"""Issue 39: wyszukiwanie w kilku bazach naraz – tylko na życzenie (``/api/szukaj?bazy=…&bazy=…``) i tylko w bazach,
które ten, kto pyta, może czytać; każde trafienie mówi, z której bazy jest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serving_support import index_bases, running_app

from chroma_rag.serving.accounts import ACCOUNTS_FILE, Accounts
from chroma_rag.serving.app import NO_BASE, build_bases_app
from chroma_rag.serving.shared_index import SharedIndex

TEXTS = {
    "spory": ("pozew-wzor.md", "# Wzór pozwu\n\nArt. 1. Pozew o zapłatę czynszu najmu wnosi się do sądu rejonowego.\n"),
    "umowy": ("najem-klient.md", "# Umowa najmu lokalu\n\nArt. 1. Czynsz najmu wynosi 5000 zł miesięcznie.\n"),
    "kadry": ("regulamin-pracy.md", "# Regulamin pracy\n\n§ 1. Pracownik ma prawo do urlopu wypoczynkowego.\n"),
}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return index_bases(tmp_path_factory.mktemp("bazy-razem"), TEXTS)


@pytest.fixture
def firm(bases: dict[str, Path], tmp_path: Path) -> Iterator[tuple[str, dict[str, dict[str, str]]]]:
    accounts = Accounts(tmp_path / ACCOUNTS_FILE)
    users = {name: {"Authorization": f"Bearer {accounts.add(name, readable)}"}
             for name, readable in (("anna", ["spory", "umowy"]), ("ola", ["kadry"]))}
    app = build_bases_app({name: SharedIndex(folder) for name, folder in bases.items()}, accounts=accounts)
    with running_app(app) as address:
        yield address, users


def search(address: str, headers: dict[str, str], **params: object) -> httpx.Response:
    return httpx.get(f"{address}/api/szukaj", params=params, headers=headers, timeout=60)


def test_several_bases_are_searched_together_and_each_hit_names_its_base(firm) -> None:
    address, users = firm
    found = search(address, users["anna"], q="czynsz najmu", bazy=["spory", "umowy"], k=5)
    assert found.status_code == 200, found.text
    hits = found.json()["wyniki"]
    assert {(hit["baza"], hit["plik"]) for hit in hits} == {("spory", "pozew-wzor.md"), ("umowy", "najem-klient.md")}
    assert found.json()["bazy"] == ["spory", "umowy"]
    one = search(address, users["anna"], q="czynsz najmu", bazy="umowy").json()["wyniki"]
    assert [(hit["baza"], hit["plik"]) for hit in one] == [("umowy", "najem-klient.md")]


def test_a_base_the_user_may_not_read_is_not_searched_and_not_named(firm) -> None:
    address, users = firm
    for asked in (["spory", "kadry"], ["kadry"], ["nie-ma-takiej"]):
        refused = search(address, users["anna"], q="urlop", bazy=asked)
        assert refused.status_code == 404 and refused.json()["blad"] == NO_BASE
        assert "regulamin" not in refused.text and "kadry" not in refused.text
    assert search(address, users["ola"], q="urlop", bazy="kadry").json()["wyniki"][0]["baza"] == "kadry"


def test_search_never_crosses_bases_without_asking(firm) -> None:
    address, users = firm
    refused = search(address, users["anna"], q="czynsz najmu")
    assert refused.status_code == 400 and "bazy" in refused.json()["blad"]


def test_a_file_filter_of_one_base_narrows_that_base_and_the_others_say_nothing(firm) -> None:
    address, users = firm
    found = search(address, users["anna"], q="czynsz najmu", bazy=["spory", "umowy"], plik="najem-klient.md")
    assert found.status_code == 200 and [hit["baza"] for hit in found.json()["wyniki"]] == ["umowy"]
    unknown = search(address, users["anna"], q="czynsz", bazy=["spory", "umowy"], plik="nieznany.md")
    alone = httpx.get(f"{address}/b/umowy/api/szukaj", params={"q": "czynsz", "plik": "nieznany.md"},
                      headers=users["anna"], timeout=60)
    assert unknown.status_code == alone.status_code == 404 and "nieznany.md" in unknown.json()["blad"]
