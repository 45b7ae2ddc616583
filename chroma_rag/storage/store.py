"""Kolekcje Chromy (HNSW, cosinus), jedna na model embeddingów: w folderze bazy albo na serwerze
``chroma run`` (tryb zespołowy, ``--serwer URL``)."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import DEFAULT_DB
from ..errors import ServiceError, UsageError, UserError
from .collection import VERSION_KEY, ChunkCollection
from .readonly import is_read_only, readable_copy

CHANGE_MARK = "chroma-rag.zmiana"  # rewritten by every write session, so readers know their client is stale
COLLECTION_PREFIX = "fragmenty-"
# The HNSW graph of chunk collections. With Chroma's defaults (16 links, ef_construction 100) a fresh index of
# 2000 vectors whose similarities sit in one narrow band, as e5's do, cannot reach 4-11 of them even with 1000
# results; 32 links and 200 reach all, and after three rounds of deletes and upserts lose 0-5 instead of 20-36
# (tests/test_chroma_7758.py data, chromadb 1.5.9). Inserting costs more, which the embedding model hides.
HNSW_CONFIGURATION = {"space": "cosine", "max_neighbors": 32, "ef_construction": 200}
# The graph ``rebuild_chunks`` builds to repair a collection that lost chunks. On the same data after two churn
# rounds, a fresh graph of HNSW_CONFIGURATION still left a chunk unreachable in 10 of 12 builds (so three attempts
# failed for 7 of 60 churned collections: the flaky repair test), 64 links in 7 of 45, 64 links with a search list
# of 200 in 1 of 45, 96 links and ef_construction 400 in 0 of 45 but at several times the insert cost. A repair is
# rare and product search doesn't query Chroma's graph, so the wider search list is cheap where it is used.
REPAIR_HNSW_CONFIGURATION = {**HNSW_CONFIGURATION, "max_neighbors": 64, "ef_search": 200}
# Suffixes of the two extra collections while ``rebuild_chunks`` swaps a collection for its fresh copy.
REBUILT_SUFFIX, REPLACED_SUFFIX = "-nowa", "-stara"
# The Rust server of chromadb 1.x reports its HTTP API version (1.x), not the package version.
SUPPORTED_SERVER_MAJOR = 1
TOKEN_HEADER = "X-Chroma-Token"
# what a team member reads (page, API, MCP) before anything is indexed: neither the server's folder nor a command
NOTHING_INDEXED_YET = ("W bazie nie ma jeszcze zaindeksowanych dokumentów – poczekaj, aż osoba prowadząca serwer je "
                       "zaindeksuje.")


# One reading client per DB folder in this process, with the change mark it was opened at (Store.opened).
_READ_CLIENTS: dict[str, tuple[str, Any]] = {}
# server threads open read sessions at once: one of them swaps a stale client, the others wait and reuse the new one
_READ_CLIENTS_LOCK = threading.Lock()


def default_db_path() -> Path:
    return Path(os.environ.get("CHROMA_RAG_BAZA") or DEFAULT_DB)


def collection_name(model_id: str) -> str:
    """Nazwa kolekcji z identyfikatora modelu (Chroma dopuszcza tylko [a-zA-Z0-9._-])."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id).strip("-._")[:40]
    digest = hashlib.sha1(model_id.encode()).hexdigest()[:8]
    return f"{COLLECTION_PREFIX}{slug}-{digest}"


@dataclass(frozen=True)
class ServerAddress:
    """Adres serwera Chromy z ``--serwer``: ``http://host:port``, ``https://host`` albo ``host:port``."""

    host: str
    port: int
    ssl: bool

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-zA-Z0-9.-]+", "-", f"{self.host}-{self.port}")


def parse_server(raw: str) -> ServerAddress:
    text = raw.strip()
    parts = urlsplit(text if "://" in text else f"http://{text}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1 or parts.path not in ("", "/"):
        raise UserError(f"Niepoprawny adres serwera „{raw}” – podaj np. http://127.0.0.1:8000.")
    ssl = parts.scheme == "https"
    return ServerAddress(parts.hostname, port or (443 if ssl else 8000), ssl)


def check_server_version(version: str, url: str) -> None:
    """Klient chromadb 1.x rozmawia tylko z serwerem API 1.x (starsze serwery 0.x mają inne API)."""
    major = version.strip().strip('"').split(".")[0]
    if major != str(SUPPORTED_SERVER_MAJOR):
        raise ServiceError(
            f"Serwer Chromy „{url}” ma wersję {version}, a chroma-rag wymaga serwera Chromy 1.x "
            "(chromadb 1.5.9, polecenie `chroma run`) – zaktualizuj serwer."
        )


def cache_root() -> Path:
    """Folder danych pochodnych poza bazą: ``$CHROMA_RAG_CACHE`` albo ``~/.cache/chroma-rag``."""
    return Path(os.environ["CHROMA_RAG_CACHE"]) if os.environ.get("CHROMA_RAG_CACHE") else default_cache_root()


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chroma-rag"


class Store:
    """Kolekcje fragmentów w folderze bazy albo na serwerze Chromy; klient tworzony leniwie.

    Serwer wybiera ``server`` albo zmienna ``CHROMA_RAG_SERWER`` (token: ``CHROMA_RAG_SERWER_TOKEN``);
    bez nich baza to folder ``path`` (albo ``CHROMA_RAG_BAZA``, domyślnie ``./chroma_db``).
    """

    def __init__(self, path: Path | None = None, server: str | None = None, token: str | None = None) -> None:
        if server and path is not None:
            raise UsageError("Podaj albo --baza (folder), albo --serwer (adres serwera Chromy), nie oba naraz.")
        if path is None:  # an explicit --baza outranks a server from the environment or the config file
            server = server or os.environ.get("CHROMA_RAG_SERWER") or None
        self.server = parse_server(server) if server else None
        self.token = token or os.environ.get("CHROMA_RAG_SERWER_TOKEN") or None
        self.path = Path(path) if path else default_db_path()
        if not self.server and self.path.exists() and not self.path.is_dir():
            raise UserError(
                f"„{self.path}” to plik, a nie folder bazy – podaj w --baza folder (istniejący albo nowy, "
                "np. chroma_db)."
            )
        self._client: Any = None
        self._read_copy: Path | None = None

    @property
    def is_server(self) -> bool:
        return self.server is not None

    @property
    def location(self) -> str:
        """Opis bazy do komunikatów: folder albo serwer."""
        return f"baza na serwerze „{self.server.url}”" if self.server else f"baza „{self.path}”"

    @property
    def work_dir(self) -> Path:
        """Lokalny katalog na dane pochodne (np. indeks słów kluczowych, znaczniki, pamięć podręczna).

        W trybie folderu to sam folder bazy; w trybie serwera – ``$CHROMA_RAG_CACHE`` albo
        ``~/.cache/chroma-rag/serwer-<host>-<port>/`` (każdy członek zespołu ma własną kopię, więc dane
        pochodne trzeba umieć odbudować z zawartości serwera). Katalog nie jest tworzony tutaj.
        """
        if not self.server:
            return self.readable_path
        return cache_root() / f"serwer-{self.server.slug}"

    @property
    def read_only(self) -> bool:
        """Folder bazy bez prawa zapisu (nośnik albo montaż tylko do odczytu)."""
        return not self.server and is_read_only(self.path)

    @property
    def readable_path(self) -> Path:
        """Folder, który otwiera Chroma: sam folder bazy albo – gdy jest tylko do odczytu – jego kopia."""
        if not self.read_only:
            return self.path
        if self._read_copy is None:
            self._read_copy = readable_copy(self.path, cache_root())
        return self._read_copy

    def require_writable(self) -> None:
        if self.read_only:
            raise UserError(
                f"Folder bazy „{self.path}” jest tylko do odczytu – szukać w nim można, ale indeksować i usuwać "
                "tylko w folderze z prawem zapisu (np. skopiuj bazę i podaj kopię w --baza)."
            )

    @property
    def needs_lock(self) -> bool:
        """Blokada zapisu w folderze bazy; serwer sam szereguje zapisy, więc przy nim jej nie ma."""
        return not self.server

    def exists(self) -> bool:
        if self.server:
            return any(c.name.startswith(COLLECTION_PREFIX) for c in self.client.list_collections())
        return (self.path / "chroma.sqlite3").exists()

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._connect_server() if self.server else self._open_folder()
        return self._client

    def close(self) -> None:
        if self._client is not None:
            for key, (_, client) in list(_READ_CLIENTS.items()):
                if client is self._client:
                    del _READ_CLIENTS[key]
            self._client.close()
            self._client = None

    def generation(self) -> str:
        """Znacznik ostatniego zapisu do folderu bazy (pusty, gdy jeszcze nic nie zapisano)."""
        try:
            return (self.path / CHANGE_MARK).read_text(encoding="ascii")
        except FileNotFoundError:
            return ""

    def mark_changed(self) -> str:
        """Nowy znacznik zapisu (w trybie serwera nic – pusty napis)."""
        if self.server or not self.path.is_dir():
            return ""
        generation = uuid.uuid4().hex
        (self.path / CHANGE_MARK).write_text(generation, encoding="ascii")
        return generation

    @contextmanager
    def opened(self, reuse: bool = False) -> Iterator[None]:
        """Klient na czas jednej operacji (``reuse``: odczyt, inaczej zapis, po którym znacznik zmiany jest nowy).

        Otwarty klient trzyma w pamięci własną kopię indeksu HNSW (Chroma dzieli ją między klientów tego samego
        folderu w procesie), więc po zapisie innego procesu trzeba ją otworzyć od nowa – przy milionie fragmentów
        to ~2 s (z zimnej pamięci podręcznej więcej). Proces trzyma więc jednego klienta na folder, dopóki znacznik
        zmiany jest ten, przy którym go otworzył albo który sam zapisał: zapis pod blokadą wyłączną nie wpuszcza
        nikogo innego, więc jego klient zostaje aktualny i dostają go następne odczyty i zapisy tego procesu
        (``indeksuj``: wektory do ponownego użycia, zapis, sprzątanie, indeks słów; obserwowanie folderu – każda
        kolejna zmiana). Zamknięcie nieaktualnego klienta niczego na dysku nie zmienia (sprawdzone na Chromie
        1.5.9); zapis przerwany wyjątkiem zamyka swojego klienta."""
        if self.server:  # the server is the single owner of its data: one client is always current
            yield
            return
        key = str(self.path.resolve())
        with _READ_CLIENTS_LOCK:
            current = self.generation()
            cached = _READ_CLIENTS.get(key)
            if cached is not None and cached[0] != current:
                _READ_CLIENTS.pop(key)[1].close()
                cached = None
            if cached is None:
                self._client = None
                if reuse:
                    _READ_CLIENTS[key] = (current, self.client)
            else:
                self._client = cached[1]
        if reuse:
            yield
            return
        try:
            yield
        except BaseException:
            self.mark_changed()
            self.close()
            raise
        generation = self.mark_changed()
        with _READ_CLIENTS_LOCK:
            if self._client is not None:
                _READ_CLIENTS[key] = (generation, self._client)

    def _open_folder(self) -> Any:
        import chromadb
        from chromadb.config import Settings

        return chromadb.PersistentClient(path=str(self.readable_path), settings=Settings(anonymized_telemetry=False))

    def _connect_server(self) -> Any:
        """Najpierw jedno lekkie zapytanie o wersję, żeby niedostępny serwer, zły token i niezgodna
        wersja były jednym polskim zdaniem zamiast wyjątku z głębi klienta."""
        import chromadb
        import httpx
        from chromadb.config import Settings

        assert self.server
        url = self.server.url
        headers = {TOKEN_HEADER: self.token} if self.token else {}
        try:
            response = httpx.get(f"{url}/api/v2/version", headers=headers, timeout=10.0)
        except httpx.HTTPError as exc:
            raise ServiceError(
                f"Nie można połączyć się z serwerem Chromy „{url}” ({type(exc).__name__}) – sprawdź, czy serwer "
                "działa (make serwer / chroma run) i czy adres oraz port są poprawne."
            ) from exc
        if response.status_code in (401, 403):
            raise ServiceError(
                f"Serwer Chromy „{url}” odrzucił dostęp (HTTP {response.status_code}) – sprawdź token "
                "w CHROMA_RAG_SERWER_TOKEN."
            )
        if response.status_code in (404, 410):
            raise ServiceError(
                f"Pod adresem „{url}” nie odpowiada serwer Chromy 1.x (HTTP {response.status_code}) – "
                "chroma-rag wymaga serwera chromadb 1.5.9 (`chroma run`)."
            )
        if response.status_code != 200:
            raise ServiceError(f"Serwer Chromy „{url}” odpowiedział błędem HTTP {response.status_code}.")
        check_server_version(response.text, url)
        return chromadb.HttpClient(
            host=self.server.host,
            port=self.server.port,
            ssl=self.server.ssl,
            headers=headers,
            settings=Settings(anonymized_telemetry=False),
        )

    def require_existing(self) -> None:
        if self.exists():
            return
        if self.server:
            raise UserError(
                f"Na serwerze „{self.server.url}” nie ma jeszcze zaindeksowanych dokumentów – najpierw: "
                f"chroma-rag indeksuj ŚCIEŻKA --serwer {self.server.url}.", web=NOTHING_INDEXED_YET
            )
        raise UserError(
            f"Baza „{self.path}” jeszcze nie istnieje – najpierw zaindeksuj dokumenty: chroma-rag indeksuj ŚCIEŻKA.",
            web=NOTHING_INDEXED_YET,
        )

    def indexed_models(self) -> dict[str, int]:
        """Modele, którymi zbudowano kolekcje w tej bazie, z wymiarem wektorów."""
        if not self.server and not self.exists():
            return {}
        models = {}
        for collection in self.client.list_collections():
            meta = collection.metadata or {}
            model = str(meta.get("model"))
            # the kept original of a swap cut short between its two renames counts until a writer puts it back
            if collection.name in (collection_name(model), collection_name(model) + REPLACED_SUFFIX):
                models[model] = int(meta.get("wymiar", 0))
        return models

    def rebuild_chunks(self, model_id: str, dim: int) -> ChunkCollection:
        """Kolekcja modelu zbudowana od nowa z tych samych fragmentów (pod blokadą wyłączną).

        Po usunięciach i nadpisaniach HNSW Chromy 1.5.9 potrafi zgubić żywe fragmenty – ``query`` nie zwraca
        ich nawet własnym wektorem (chroma-core/chroma#7758), a ponowne wstawienie samych zgubionych psuje
        inne. Świeża kolekcja z samych wstawień ma graf bez usunięć. Ta sama treść i ten sam znacznik zmiany:
        migawka i indeks słów zostają aktualne. Zamiana przez dwie zmiany nazwy; przerwaną kończy
        ``finish_rebuild`` (zwykły odczyt widzi w tym czasie oryginał)."""
        self.finish_rebuild(model_id)
        name = collection_name(model_id)
        old = self.client.get_collection(name, embedding_function=None)
        fresh = self.client.create_collection(name + REBUILT_SUFFIX, embedding_function=None,
                                              configuration={"hnsw": REPAIR_HNSW_CONFIGURATION},
                                              metadata=old.metadata)
        batch = self.client.get_max_batch_size()
        ids = ChunkCollection(old, batch).stored_ids()
        for start in range(0, len(ids), batch):
            part = old.get(ids=ids[start : start + batch], include=["embeddings", "documents", "metadatas"])
            fresh.upsert(ids=part["ids"], embeddings=part["embeddings"], documents=part["documents"],
                         metadatas=part["metadatas"])
        old.modify(name=name + REPLACED_SUFFIX)
        fresh.modify(name=name)
        self.client.delete_collection(name + REPLACED_SUFFIX)
        return self.chunks(model_id, dim)

    def finish_rebuild(self, model_id: str) -> None:
        """Sprząta po przerwanej ``rebuild_chunks`` (pod blokadą wyłączną): niedokończona kopia znika, oryginał
        odłożony przed zmianą nazwy kopii wraca na swoje miejsce."""
        name = collection_name(model_id)
        names = {c.name for c in self.client.list_collections()}
        if name + REBUILT_SUFFIX in names and name + REPLACED_SUFFIX in names and name not in names:
            self.client.get_collection(name + REPLACED_SUFFIX, embedding_function=None).modify(name=name)
            names = (names - {name + REPLACED_SUFFIX}) | {name}
        for leftover in (REBUILT_SUFFIX, REPLACED_SUFFIX):
            if name + leftover in names and name in names:
                self.client.delete_collection(name + leftover)

    def chunks(self, model_id: str, dim: int, create: bool = False) -> ChunkCollection:
        """Kolekcja fragmentów danego modelu; inny wymiar niż zapisany to błąd, nie ciche śmieci."""
        name = collection_name(model_id)
        if create:
            self.finish_rebuild(model_id)
            collection = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": HNSW_CONFIGURATION},
                metadata={"model": model_id, "wymiar": dim, VERSION_KEY: uuid.uuid4().hex},
            )
            if VERSION_KEY not in (collection.metadata or {}):  # built before the marker existed
                ChunkCollection(collection, 1).publish_version(uuid.uuid4().hex)
        else:
            self.require_existing()
            models = self.indexed_models()
            if model_id not in models:
                built_with = ", ".join(sorted(models)) or "żadnym"
                place = self.location[0].upper() + self.location[1:]
                raise UserError(
                    f"{place} została zbudowana modelem {built_with}, a pytasz modelem {model_id}: "
                    "użyj --model z tym samym modelem albo zaindeksuj dokumenty tym modelem."
                )
            from chromadb.errors import NotFoundError

            try:
                collection = self.client.get_collection(name, embedding_function=None)
            except NotFoundError:  # a swap of ``rebuild_chunks`` cut short: the original is complete
                collection = self.client.get_collection(name + REPLACED_SUFFIX, embedding_function=None)
        stored_dim = int((collection.metadata or {}).get("wymiar", dim))
        if stored_dim != dim:
            raise UserError(
                f"Kolekcja modelu {model_id} ma wektory o wymiarze {stored_dim}, a model daje {dim}: "
                "zaindeksuj dokumenty ponownie tym modelem w nowej bazie."
            )
        return ChunkCollection(collection, self.client.get_max_batch_size(), self.client,
                               self.work_dir / f"migawka-{name}", journal=not self.server)
