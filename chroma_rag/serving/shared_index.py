"""Indeks dzielony przez wątki serwera: wyszukiwania biegną równolegle, wyłączne jest tylko odświeżenie
buforów po zmianie bazy.

Co jest bezpieczne wątkowo, a co nie (sprawdzone w kodzie, Chroma 1.5.9):
- klient Chromy (``PersistentClient``) – tak, zapytania z wielu wątków jednego procesu; niebezpieczna jest
  tylko wymiana klienta po zapisie innego procesu (zamknięcie klienta, którego używa inny wątek) – tę
  szereguje ``Store.opened`` (``storage/store.py``);
- model embeddingu (onnxruntime ``InferenceSession.run``) – tak, sesja jest współdzielona; leniwe pierwsze
  wczytanie modelu szereguje ten moduł;
- migawka (``Snapshot``) i indeks słów w pamięci – do odczytu tak (tablice numpy, niezmieniane po zbudowaniu);
  budowę migawki szereguje ``storage/collection.py``, a budowę wyszukiwarki i dociągnięcie indeksu słów – ten
  moduł.
Wersja kolekcji w folderze zmienia się tylko pod wyłączną blokadą pliku (``storage/locking.py``), a każde
wyszukiwanie trzyma współdzieloną przez całą sesję odczytu – więc póki jakiś wątek czyta, nikt nie podmienia
mu wyszukiwarki ani klienta. Plan od modelu czatu i odpowiedź modelu płyną bez żadnej blokady."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import Index
from ..embedding.embedder import Embedder
from ..retrieval.keyword import KeywordIndex
from ..retrieval.search import DEFAULT_MODE, Searcher
from ..retrieval.service import Retrieval
from ..storage.collection import ChunkCollection
from ..storage.store import parse_server


class _ThreadedRetrieval(Retrieval):
    """``Retrieval``, w którym tylko budowa/odświeżenie wyszukiwarki i indeksu słów są po jednym naraz."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refresh = threading.RLock()  # searcher() calls sync_keywords()

    def searcher(self, mode: str = DEFAULT_MODE) -> Searcher:
        with self._refresh:
            return super().searcher(mode)

    def sync_keywords(self, collection: ChunkCollection | None = None) -> KeywordIndex:
        with self._refresh:
            return super().sync_keywords(collection)


class SharedIndex(Index):
    """``Index`` dla wielu wątków: czytelnicy nie czekają na siebie (zob. opis modułu)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._model_lock = threading.Lock()
        plain = self.retrieval
        self.retrieval = _ThreadedRetrieval(plain.store, lambda: self.embedder, plain._lemmatizer)

    def _get_embedder(self, wait: float, on_wait: Callable[[str], None] | None = None) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        with self._model_lock:  # two first requests would load the model twice
            return super()._get_embedder(wait, on_wait)


@dataclass(frozen=True)
class BaseLocation:
    """Gdzie leży baza serwera z kilkoma bazami (``serwuj --bazy NAZWA=FOLDER`` albo ``NAZWA=URL``): folder albo
    serwer Chromy (``chroma run``) – na nim, jak przy ``--serwer``, kolekcja modelu."""

    folder: Path | None = None
    server: str | None = None

    def open(self, model: str | None) -> SharedIndex:
        return SharedIndex(self.folder, model=model, server=self.server)

    def place(self) -> str:
        """Folder albo adres serwera w jednej postaci (``127.0.0.1:8000`` i ``http://127.0.0.1:8000/`` to to samo):
        dwie bazy w jednym miejscu byłyby jedną bazą pod dwiema nazwami."""
        return str(self.folder) if self.server is None else parse_server(self.server).url
