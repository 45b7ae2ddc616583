"""Jedyne miejsca, w których plik wchodzi do indeksu i z niego znika (fragmenty i wpis rejestru w ustalonej
kolejności), oraz fragmenty bez wpisu – ślad przerwanego zapisu.
"""

from __future__ import annotations

import numpy as np

from ..storage.collection import ChunkCollection
from ..storage.documents import aliases, rehome
from ..storage.registry import FileRecord, Registry
from .preparing import PreparedFile


def write_file(collection: ChunkCollection, registry: Registry, record: FileRecord, prepared: PreparedFile,
               vectors: np.ndarray) -> None:
    """Jedyne miejsce, w którym fragmenty pliku są wstawiane/zastępowane (tu podpina się każdy indeks
    pochodny): najpierw wszystkie nowe fragmenty, potem usunięcie nieaktualnych, na końcu wpis rejestru.

    Nieaktualne to fragmenty z poprzedniego wpisu rejestru. Fragmenty tej ścieżki bez wpisu (ślad przerwanego
    zapisu) to sieroty jak każde inne: usuwa je sprzątanie na końcu ``indeksuj`` (``orphan_ids``). Pytanie Chromy
    o fragmenty ścieżki przy każdym pliku kosztowało przy milionie fragmentów 0,1–2,5 s (filtr metadanych)."""
    collection.upsert(prepared.ids, vectors, prepared.texts, prepared.metadatas)
    previous = registry.get(record.model, record.path)
    stale = set(previous.chunk_ids if previous else []) - set(prepared.ids)
    if stale:
        collection.delete(sorted(stale))
    registry.put(record)


def drop_file(collection: ChunkCollection | None, registry: Registry, record: FileRecord) -> int:
    """Jedyne miejsce, w którym plik znika z indeksu: najpierw wpis rejestru (plik przestaje się liczyć),
    potem jego fragmenty – te z wpisu; fragmenty ścieżki bez wpisu (przerwany zapis) to sieroty, które usuwa
    sprzątanie (``orphan_ids``). Gdy ten sam dokument ma inne ścieżki, fragmenty przechodzą na jedną z nich
    (``documents.rehome``) i nic nie jest usuwane. Zwraca liczbę usuniętych fragmentów."""
    record = registry.get(record.model, record.path) or record  # an earlier step may have changed it
    heirs = aliases(registry, record) if record.same_as is None else []
    if heirs and collection is not None:
        rehome(collection, registry, record, heirs[0])
        return 0
    registry.delete([record])
    if collection is None:
        return 0
    owned = sorted(set(record.chunk_ids))
    collection.delete(owned)
    return len(owned)


def orphan_ids(collection: ChunkCollection, records: list[FileRecord], *, certain: bool = True) -> set[str]:
    """Fragmenty, których nie obejmuje żaden wpis rejestru (przerwany zapis albo usunięcie).

    Bez ``certain`` najpierw liczba: zapis wstawia fragmenty przed wpisem rejestru, a usunięcie zdejmuje wpis przed
    fragmentami, więc fragmenty z rejestru są w Chromie i sieroty są tylko wtedy, gdy Chroma ma ich więcej. Lista
    wszystkich id to przy milionie fragmentów sekundy po każdym ``indeksuj``; brakujące fragmenty (uszkodzenie
    z zewnątrz) znajduje ``sprawdz``, który liczy dokładnie."""
    owned = {i for record in records for i in record.chunk_ids}
    if not certain and collection.count() <= len(owned):
        return set()
    return set(collection.stored_ids()) - owned
