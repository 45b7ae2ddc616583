"""``usun``: plik (nazwa albo ścieżka) znika ze wszystkich kolekcji bazy w jednej sesji zapisu."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError, UserError
from ..storage.collection import ChunkCollection
from ..storage.locking import write_session
from ..storage.registry import Registry
from ..storage.store import Store
from .file_writes import drop_file, orphan_ids


def remove_file(
    store: Store,
    name: str,
    wait: float,
    after_write: Callable[[ChunkCollection], None],
    known_files: Callable[[], list[str]],
) -> int:
    """Usuwa plik ze wszystkich kolekcji; zwraca liczbę usuniętych fragmentów (0, gdy ten sam dokument zostaje
    pod inną ścieżką). ``after_write`` dostaje każdą zmienioną kolekcję (indeks słów ją dogania); nazwa kilku
    plików w różnych folderach albo nieznana nazwa to błąd z listą (``known_files``)."""
    removed, matched = 0, False
    with write_session(store, wait, command="usun"):
        registry = Registry(store.client, create=True)
        models = store.indexed_models()
        records = registry.records()
        key = str(Path(name).expanduser().resolve())
        paths = sorted({r.path for r in records if name == r.name}) or sorted(
            {r.path for r in records if r.path in (name, key)}
        )
        if len(paths) > 1:
            example = "/".join(Path(paths[0]).parts[-2:])
            raise UsageError(
                f"Plików o nazwie „{name}” jest w indeksie kilka: {', '.join(paths)} – podaj ten, który usunąć, "
                f"z folderem albo pełną ścieżką, np. chroma-rag usun {example}."
            )
        for record in records:
            if record.path in paths and record.model in models:
                matched = True
                collection = store.chunks(record.model, models[record.model])
                removed += drop_file(collection, registry, record)
                # leftovers of an interrupted write of this file (or another) go too: nothing of it stays findable
                leftovers = orphan_ids(collection, [r for r in registry.records() if r.model == record.model],
                                       certain=False)
                if leftovers:
                    collection.delete(sorted(leftovers))
                after_write(collection)
    if not matched:
        known = ", ".join(known_files()) or "brak"
        raise UserError(f"W indeksie nie ma pliku „{name}”; zaindeksowane pliki: {known}.")
    return removed
