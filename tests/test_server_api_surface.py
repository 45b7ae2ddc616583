"""Kod magazynu używa tylko tych metod Chromy, które ma klient HTTP (``HttpClient``, ten sam protokół co
``CloudClient``): wywołania na kliencie i kolekcji w ``chroma_rag/storage/`` zebrane z kodu źródłowego
porównane z metodami prawdziwego klienta połączonego z ``chroma run``."""

from __future__ import annotations

import ast
from pathlib import Path

from chroma_rag.storage.store import Store

STORAGE = Path(__file__).resolve().parents[1] / "chroma_rag" / "storage"
CLIENT_NAMES = {"client", "_client"}
COLLECTION_NAMES = {"_collection"}


def _called_methods(receivers: set[str]) -> set[str]:
    """Nazwy metod wołanych na ``x.client``/``client`` (albo ``_collection``) w plikach ``storage/``."""
    found = set()
    for source in STORAGE.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                receiver = node.func.value
                name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", None)
                if name in receivers:
                    found.add(node.func.attr)
    return found


def test_storage_uses_only_methods_of_the_http_client(chroma_server):
    client_calls, collection_calls = _called_methods(CLIENT_NAMES), _called_methods(COLLECTION_NAMES)
    # a new call must be checked against the server modes: this list is what was checked on Chroma 1.5.9
    assert client_calls == {"close", "create_collection", "delete_collection", "get_collection", "get_max_batch_size",
                            "get_or_create_collection", "list_collections"}
    assert collection_calls == {"count", "delete", "get", "modify", "query", "upsert"}
    store = Store(server=chroma_server)
    client = store.client
    assert type(client).__name__ == "Client" and "FastAPI" in type(client._server).__name__
    collection = client.get_or_create_collection("sprawdzenie-api")
    assert [m for m in sorted(client_calls) if not callable(getattr(client, m, None))] == []
    assert [m for m in sorted(collection_calls) if not callable(getattr(collection, m, None))] == []
    assert client.get_max_batch_size() > 0  # answered by the server, not computed locally
