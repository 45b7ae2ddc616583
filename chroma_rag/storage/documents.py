"""Dokument to treść, nie ścieżka: ten sam plik widziany pod kilkoma ścieżkami (kopia w Pobranych, wspólny
folder zamontowany u kolegi gdzie indziej) ma fragmenty raz – pod ścieżką „właściciela” – a pozostałe ścieżki
są w rejestrze wpisami ``same_as`` bez własnych fragmentów.

Usunięcie (albo zmiana treści) ścieżki właściciela, gdy inne ścieżki zostają, przenosi fragmenty na jedną
z nich (nowe id i metadane ``plik``/``sciezka``, te same wektory – bez liczenia), więc dokument nie znika,
dopóki ma choć jedną ścieżkę."""

from __future__ import annotations

import hashlib
import os
import socket

from .collection import ChunkCollection
from .registry import FileRecord, Registry


def path_tag(key: str) -> str:
    """Skrót ścieżki w id fragmentu: pliki o tej samej nazwie w różnych folderach się nie nadpisują."""
    return hashlib.sha1(key.encode()).hexdigest()[:10]


def this_host() -> str:
    return socket.gethostname()


def on_disk(path: str) -> bool:
    """Pod zapisaną ścieżką (w rejestrze zawsze już rozwiązaną) nadal leży plik – ona sama, nie link: plik albo
    folder podmieniony na link prowadzi gdzie indziej, więc to już nie ten dokument."""
    return os.path.realpath(path) == path and os.path.isfile(path)


def standing(record: FileRecord) -> bool:
    """Ścieżka nadal jest dokumentem: plik leży na dysku albo zaindeksował go inny komputer (kolega z udziałem
    zamontowanym gdzie indziej) – wtedy brak pliku tutaj nie znaczy, że zniknął albo został przeniesiony."""
    return on_disk(record.path) or bool(record.host and record.host != this_host())


def aliases(registry: Registry, owner: FileRecord) -> list[FileRecord]:
    """Inne ścieżki tego samego dokumentu (najpierw te, które są na dysku)."""
    found = [r for r in registry.records(owner.model) if r.same_as == owner.path]
    return sorted(found, key=lambda r: (not on_disk(r.path), r.path))


def owner_of(records: list[FileRecord], record: FileRecord) -> FileRecord | None:
    """Wpis z fragmentami dokumentu, do którego należy ``record`` (on sam, gdy nie jest aliasem)."""
    if record.same_as is None:
        return record
    return next((r for r in records if r.path == record.same_as and r.model == record.model), None)


def rehome(collection: ChunkCollection, registry: Registry, owner: FileRecord, heir: FileRecord) -> None:
    """Fragmenty ``owner`` przechodzą na ścieżkę ``heir`` (aliasu tego samego dokumentu). Kolejność jak przy
    zapisie pliku: nowe fragmenty, wpis dziedzica, pozostałe aliasy, usunięcie wpisu i fragmentów właściciela –
    przerwanie w dowolnej chwili zostawia co najwyżej sieroty, które sprząta następny przebieg."""
    stored = collection.records(ids=owner.chunk_ids)
    ids = [i for i in owner.chunk_ids if i in stored]
    new_ids = [f"{path_tag(heir.path)}:{heir.name}::{i.split('::', 1)[1]}" for i in ids]
    metadatas = [{**stored[i][0], "plik": heir.name, "sciezka": heir.path} for i in ids]
    if ids:
        import numpy as np

        vectors = np.stack([stored[i][2] for i in ids])
        collection.upsert(new_ids, vectors, [stored[i][1] for i in ids], metadatas)
    registry.put(_as_owner(heir, owner, new_ids))
    for other in aliases(registry, owner):
        if other.path != heir.path:
            other.same_as = heir.path
            registry.put(other)
    registry.delete([owner])
    collection.delete(sorted(set(owner.chunk_ids) - set(new_ids)))


def _as_owner(heir: FileRecord, owner: FileRecord, chunk_ids: list[str]) -> FileRecord:
    return FileRecord(
        path=heir.path, name=heir.name, size=heir.size, mtime=heir.mtime, hash=heir.hash, chunker=owner.chunker,
        model=heir.model, indexed_at=heir.indexed_at, doc_type=owner.doc_type, year=owner.year,
        forced_type=heir.forced_type, chunk_ids=chunk_ids, host=heir.host,
    )
