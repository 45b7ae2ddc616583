"""Indeks dzielony przez wątki serwera: wyszukiwania biegną równolegle, wyłączne jest tylko odświeżenie
buforów po zmianie bazy.

Co jest bezpieczne wątkowo, a co nie (sprawdzone w kodzie, Chroma 1.5.9):
- klient Chromy (``PersistentClient``) – tak, zapytania z wielu wątków jednego procesu; niebezpieczna jest
  tylko wymiana klienta po zapisie innego procesu (zamknięcie klienta, którego używa inny wątek) – tę
  szereguje ``Store.opened`` (``storage/store.py``);
- model embeddingu (onnxruntime ``InferenceSession.run``) – tak, sesja jest współdzielona; leniwe pierwsze
  wczytanie modelu szereguje ``Index`` (``api.py``);
- indeks pochodny (migawka i indeks słów w pamięci) – do odczytu tak (tablice numpy, niezmieniane po
  zbudowaniu); budowę migawki szereguje ``derived/index.py``, a budowę wyszukiwarki i dociągnięcie indeksu słów
  – ``retrieval/service.py``.
Wersja kolekcji w folderze zmienia się tylko pod wyłączną blokadą pliku (``storage/locking.py``), a każde
wyszukiwanie trzyma współdzieloną przez całą sesję odczytu – więc póki jakiś wątek czyta, nikt nie podmienia
mu wyszukiwarki ani klienta. Plan od modelu czatu i odpowiedź modelu płyną bez żadnej blokady.

``Index`` jest więc sam w sobie bezpieczny dla wątków; ta nazwa mówi serwerowi, że na tym polega."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..api import Index
from ..storage.store import parse_server

SharedIndex = Index


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
