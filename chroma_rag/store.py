"""Kolekcje Chromy (HNSW, cosinus), jedna na model embeddingów: w folderze bazy albo na serwerze
``chroma run`` (tryb zespołowy, ``--serwer URL``)."""

from __future__ import annotations

import hashlib
import math
import os
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from . import snapshot as snapshots
from .errors import UsageError, UserError
from .models import Hit
from .readonly import is_read_only, readable_copy
from .where import matches_where, narrowing_part, supported

DEFAULT_DB = "chroma_db"
CHANGE_MARK = "chroma-rag.zmiana"  # rewritten by every write session, so readers know their client is stale
COLLECTION_PREFIX = "fragmenty-"
# The Rust server of chromadb 1.x reports its HTTP API version (1.x), not the package version.
SUPPORTED_SERVER_MAJOR = 1
TOKEN_HEADER = "X-Chroma-Token"
# Filtered search (see ChunkCollection.query): thresholds measured with bench/scale.py at 100k chunks.
# First HNSW round. Asking for n results raises the HNSW search breadth (ef) to n: at 100k chunks ef=100
# (Chroma's default) gives recall@5 0.91, ef=500 0.975–0.99, ef=1000 1.0 for a few ms more (bench/scale.py).
MIN_CANDIDATES = 1000
MAX_CANDIDATES = 2000  # a filter that would need more HNSW candidates is narrow: score its chunks exactly
EXACT_LIMIT = 8000  # ...unless it matches more chunks than this after all (then HNSW keeps growing)
OVERSAMPLE = 4
# With a local snapshot (snapshot.py): up to this many matching chunks are scored exactly with numpy, more go
# through HNSW with candidates checked against the snapshot's filter mask (bench/scale.py).
SNAPSHOT_EXACT_ROWS = 5000
VERSION_KEY = "zmiana"  # collection metadata: a new uuid after every write through ChunkCollection


# One reading client per DB folder in this process, with the change mark it was opened at (Store.opened).
_READ_CLIENTS: dict[str, tuple[str, Any]] = {}
# Loaded snapshots by folder: the id → row map is built once per process and collection version.
_SNAPSHOTS: dict[str, snapshots.Snapshot] = {}


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
        raise UserError(
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

    def mark_changed(self) -> None:
        if not self.server and self.path.is_dir():
            (self.path / CHANGE_MARK).write_text(uuid.uuid4().hex, encoding="ascii")

    @contextmanager
    def opened(self, reuse: bool = False) -> Iterator[None]:
        """Klient na czas jednej operacji. Otwarty klient trzyma w pamięci własną kopię indeksu HNSW (Chroma
        dzieli ją między klientów tego samego folderu w procesie), więc po zapisie innego procesu trzeba ją
        otworzyć od nowa. Odczyty (``reuse``) używają jednego klienta na folder w procesie, dopóki znacznik
        zmiany jest ten sam (zamknięcie nieaktualnego klienta niczego na dysku nie zmienia – sprawdzone na
        Chromie 1.5.9); zapis zamyka go i pracuje na świeżym kliencie."""
        if self.server:  # the server is the single owner of its data: one client is always current
            yield
            return
        key = str(self.path.resolve())
        if reuse:
            current = self.generation()
            cached = _READ_CLIENTS.get(key)
            if cached is not None and cached[0] != current:
                _READ_CLIENTS.pop(key)[1].close()
                cached = None
            if cached is None:
                self._client = None
                _READ_CLIENTS[key] = (current, self.client)
            self._client = _READ_CLIENTS[key][1]
            yield
            return
        stale = _READ_CLIENTS.pop(key, None)
        if stale is not None:
            stale[1].close()
        self._client = None
        try:
            yield
        finally:
            self.close()

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
            raise UserError(
                f"Nie można połączyć się z serwerem Chromy „{url}” ({type(exc).__name__}) – sprawdź, czy serwer "
                "działa (make serwer / chroma run) i czy adres oraz port są poprawne."
            ) from exc
        if response.status_code in (401, 403):
            raise UserError(
                f"Serwer Chromy „{url}” odrzucił dostęp (HTTP {response.status_code}) – sprawdź token "
                "w CHROMA_RAG_SERWER_TOKEN."
            )
        if response.status_code in (404, 410):
            raise UserError(
                f"Pod adresem „{url}” nie odpowiada serwer Chromy 1.x (HTTP {response.status_code}) – "
                "chroma-rag wymaga serwera chromadb 1.5.9 (`chroma run`)."
            )
        if response.status_code != 200:
            raise UserError(f"Serwer Chromy „{url}” odpowiedział błędem HTTP {response.status_code}.")
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
                f"chroma-rag indeksuj ŚCIEŻKA --serwer {self.server.url}."
            )
        raise UserError(
            f"Baza „{self.path}” jeszcze nie istnieje – najpierw zaindeksuj dokumenty: chroma-rag indeksuj ŚCIEŻKA."
        )

    def indexed_models(self) -> dict[str, int]:
        """Modele, którymi zbudowano kolekcje w tej bazie, z wymiarem wektorów."""
        if not self.server and not self.exists():
            return {}
        models = {}
        for collection in self.client.list_collections():
            if collection.name.startswith(COLLECTION_PREFIX):
                meta = collection.metadata or {}
                models[str(meta.get("model"))] = int(meta.get("wymiar", 0))
        return models

    def chunks(self, model_id: str, dim: int, create: bool = False) -> ChunkCollection:
        """Kolekcja fragmentów danego modelu; inny wymiar niż zapisany to błąd, nie ciche śmieci."""
        name = collection_name(model_id)
        if create:
            collection = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
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
            collection = self.client.get_collection(name, embedding_function=None)
        stored_dim = int((collection.metadata or {}).get("wymiar", dim))
        if stored_dim != dim:
            raise UserError(
                f"Kolekcja modelu {model_id} ma wektory o wymiarze {stored_dim}, a model daje {dim}: "
                "zaindeksuj dokumenty ponownie tym modelem w nowej bazie."
            )
        return ChunkCollection(collection, self.client.get_max_batch_size(), self.client,
                               self.work_dir / f"migawka-{name}", journal=not self.server)


class ChunkCollection:
    """Operacje na fragmentach jednej kolekcji, z podziałem na porcje wg limitu klienta; z ``snapshot_dir``
    wyszukiwanie z filtrem korzysta z lokalnej migawki (``snapshot.py``)."""

    def __init__(self, collection: Any, max_batch: int, client: Any = None, snapshot_dir: Path | None = None,
                 journal: bool = False) -> None:
        self._collection = collection
        self._max_batch = max_batch
        self._client = client
        self._snapshot_dir = snapshot_dir
        self._journal = journal  # folder mode: writes are serialized by the lock, so the journal is a chain

    @property
    def model_id(self) -> str:
        return str(self._collection.metadata["model"])

    def count(self) -> int:
        return int(self._collection.count())

    def version(self) -> str:
        """Znacznik zmiany kolekcji, czytany na świeżo (pusty w kolekcji sprzed znaczników). Każdy zapis przez
        ``upsert``/``delete`` ustawia nowy – także cudzy zapis na serwerze, więc dane pochodne (indeks słów,
        migawka) wiedzą, kiedy są nieaktualne."""
        current = (
            self._client.get_collection(self._collection.name, embedding_function=None)
            if self._client else self._collection
        )
        return str((current.metadata or {}).get(VERSION_KEY, ""))

    def announce_version(self, ids: list[str]) -> str:
        """Znacznik dla zapisu, który zaraz zmieni ``ids``; w trybie folderu najpierw wpis w dzienniku zmian
        migawki (``snapshot.journal``), dzięki któremu czytelnik dociąga tylko zmienione fragmenty."""
        marker = uuid.uuid4().hex
        if self._journal and self._snapshot_dir is not None:
            snapshots.journal(self._snapshot_dir, self.version(), marker, ids)
        return marker

    def publish_version(self, marker: str) -> None:
        """Nowy znacznik – zawsze po zapisie danych: czytelnik, który zobaczy nowy znacznik, widzi już dane.
        Chroma 1.5.9 zastępuje całe metadane kolekcji, więc przepisujemy model i wymiar."""
        self._collection.modify(metadata={**(self._collection.metadata or {}), VERSION_KEY: marker})

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        for start in range(0, len(ids), self._max_batch):
            end = start + self._max_batch
            marker = self.announce_version(list(ids[start:end]))
            self._collection.upsert(
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),
            )
            self.publish_version(marker)

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._max_batch):
            batch = list(ids[start : start + self._max_batch])
            marker = self.announce_version(batch)
            self._collection.delete(ids=batch)
            self.publish_version(marker)

    def snapshot(self) -> snapshots.Snapshot | None:
        """Migawka bieżącej wersji kolekcji: z pamięci, z dysku albo zbudowana od nowa (przy 100 tys.
        fragmentów kilkanaście sekund, raz na zmianę kolekcji). ``None``, gdy kolekcja nie ma znacznika,
        migawki nie da się zapisać albo kolekcja zmieniła się w trakcie budowy (wtedy zapytanie idzie starą
        ścieżką przez Chromę). W trybie folderu nowa wersja powstaje zwykle z poprzedniej i dziennika zmian
        (pobierane są tylko zmienione fragmenty)."""
        if self._snapshot_dir is None:
            return None
        marker = self.version()
        if not marker:
            return None
        key = str(self._snapshot_dir)
        found = _SNAPSHOTS.get(key)
        if found is not None and found.marker == marker:
            return found
        previous = found
        found = snapshots.load(self._snapshot_dir, marker)
        if found is None:
            try:
                found = self._next_snapshot(marker, previous)
            except (OSError, TypeError, ValueError):
                return None
            if self.version() != marker:
                return None
        _SNAPSHOTS[key] = found
        return found

    def _next_snapshot(self, marker: str, previous: snapshots.Snapshot | None) -> snapshots.Snapshot:
        assert self._snapshot_dir is not None
        dim = int(self._collection.metadata.get("wymiar", 0))
        previous = previous or snapshots.latest(self._snapshot_dir, marker)
        changed = snapshots.changed_since(self._snapshot_dir, previous.marker, marker) if previous else None
        if previous is None or changed is None:
            return snapshots.build(self._snapshot_dir, marker, dim, self._get(["embeddings", "metadatas"]))
        pages = self._get(["embeddings", "metadatas"], ids=sorted(changed))
        return snapshots.update(previous, self._snapshot_dir, marker, dim, changed, pages)

    def column(self, key: str, default: Any) -> dict[str, Any]:
        """Id → wartość metadanej ``key`` wszystkich fragmentów (z migawki, bez pobierania metadanych)."""
        found = self.snapshot()
        if found is not None and key in snapshots.COLUMNS:
            return found.column(key, default)
        return {i: meta.get(key, default) for i, meta in self.metadatas().items()}

    def file_titles(self) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu."""
        found = self.snapshot()
        if found is None:
            pairs = {(m.get("plik"), m.get("tytul")) for m in self.metadatas().values()}
        else:
            pairs = found.pairs("plik", "tytul")
        return {str(name): str(title or "") for name, title in sorted(pairs, key=str) if name is not None}

    def _get(
        self,
        include: list[str],
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Wyniki ``get`` porcjami po ``max_batch``: Chroma 1.5.9 przy ~100 tys. fragmentów naraz kończy się
        błędem SQLite „too many SQL variables”."""
        if ids is not None:
            for start in range(0, len(ids), self._max_batch):
                yield self._collection.get(ids=list(ids[start : start + self._max_batch]), where=where, include=include)
            return
        offset = 0
        while limit is None or offset < limit:
            size = self._max_batch if limit is None else min(self._max_batch, limit - offset)
            result = self._collection.get(where=where, limit=size, offset=offset, include=include)
            yield result
            offset += len(result["ids"])
            if len(result["ids"]) < size:
                return

    def metadatas(
        self, where: dict[str, Any] | None = None, limit: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Metadane fragmentów (spełniających ``where``) według id."""
        return {
            i: meta
            for result in self._get(["metadatas"], where=where, limit=limit)
            for i, meta in zip(result["ids"], result["metadatas"], strict=True)
        }

    def records(
        self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> dict[str, tuple[dict[str, Any], str, np.ndarray]]:
        """Pełne fragmenty (metadane, tekst, wektor) według id – do ponownego użycia wektorów i kontroli."""
        if ids is not None and not ids:
            return {}
        out: dict[str, tuple[dict[str, Any], str, np.ndarray]] = {}
        for result in self._get(["metadatas", "documents", "embeddings"], ids=ids, where=where):
            for i, meta, doc, vector in zip(
                result["ids"], result["metadatas"], result["documents"], result["embeddings"], strict=True
            ):
                out[i] = (meta, doc, np.asarray(vector, dtype=np.float32))
        return out

    def nearest_ids(self, embeddings: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Dla każdego wektora: k najbliższych (id, odległość)."""
        result = self._collection.query(query_embeddings=embeddings, n_results=k, include=["distances"])
        pairs = zip(result["ids"], result["distances"], strict=True)
        return [list(zip(ids, dists, strict=True)) for ids, dists in pairs]

    def ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Id fragmentów spełniających ``where`` (bez pobierania treści)."""
        found = self.snapshot() if where is None or supported(where) else None
        if found is not None and found.covers(where):
            return found.id_list(np.flatnonzero(found.mask(where)))
        return self.stored_ids(where)

    def stored_ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Id prosto z Chromy, bez migawki: dla zapisu (po nim migawka i tak jest nieaktualna) i kontroli
        spójności – o tym, co usunąć, nie decydują dane pochodne."""
        return [i for result in self._get([], where=where) for i in result["ids"]]

    def hits(self, ids: Sequence[str], query_embedding: np.ndarray | None = None) -> list[Hit]:
        """Fragmenty o podanych id (w tej kolejności); z wektorem pytania – z ich podobieństwem do niego."""
        found: dict[str, Hit] = {}
        include = ["documents", "metadatas", *(["embeddings"] if query_embedding is not None else [])]
        for start in range(0, len(ids), self._max_batch):
            result = self._collection.get(ids=list(ids[start : start + self._max_batch]), include=include)
            vectors = result["embeddings"] if query_embedding is not None else [None] * len(result["ids"])
            for i, doc, meta, vector in zip(
                result["ids"], result["documents"], result["metadatas"], vectors, strict=True
            ):
                similarity = float(np.dot(vector, query_embedding)) if vector is not None else 0.0
                found[i] = Hit(id=i, text=doc, metadata=meta, similarity=similarity)
        return [found[i] for i in ids if i in found]

    def similarities(self, ids: Sequence[str], embedding: np.ndarray) -> dict[str, float]:
        """Podobieństwo kosinusowe wektora do fragmentów o podanych id (z migawki, bez pobierania treści)."""
        found = self.snapshot()
        if found is None:
            return {hit.id: hit.similarity for hit in self.hits(ids, embedding)}
        rows = found.rows(list(ids))
        known = rows >= 0
        values = np.asarray(found.vectors[rows[known]] @ embedding).tolist()
        return dict(zip([i for i, ok in zip(ids, known.tolist(), strict=True) if ok], values, strict=True))

    def query(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        """Najbliższe ``k`` fragmentów spełniających ``where`` (najlepszy pierwszy) z treścią i metadanymi."""
        return self._hits(self.ranked(embedding, k, where))

    def ranked(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]]:
        """(id, podobieństwo) najbliższych ``k`` fragmentów spełniających ``where``, jak pełne przeszukanie
        z filtrem – bez pobierania treści (listy fuzji potrzebują tylko id).

        Filtrowane HNSW Chromy 1.5.9 jest przy 100 tys. fragmentów wolne i niedokładne (recall@5 ≈ 0,2 przy
        filtrze na połowę kolekcji), ``get(ids=…, where=…)`` kosztuje setki ms, a metadane ok. 0,1 ms na
        fragment. Dlatego: zwykłe HNSW bez filtra z nadpróbkowaniem, ``where`` sprawdzane w Pythonie na
        metadanych kolejnych kandydatów (tylko tylu, ilu trzeba do ``k`` trafień); gdy z kandydatów wynika,
        że filtr jest wąski (potrzeba by ponad ``MAX_CANDIDATES`` kandydatów), pasujące fragmenty liczymy
        dokładnie (numpy na ich wektorach). Progi: bench/scale.py i docs/BENCHMARKS.md.

        Z lokalną migawką (``snapshot``) to samo bez pytania Chromy o metadane i wektory: maska filtra na
        kolumnach migawki, dokładne iloczyny na pasujących wierszach (do ``SNAPSHOT_EXACT_ROWS``), a dla
        filtrów szerszych HNSW z kandydatami sprawdzanymi maską; z Chromy tylko treść ``k`` wyników.
        """
        if where is not None and not supported(where):
            return self._native(embedding, k, where)
        found = self.snapshot()
        if found is not None and found.covers(where):
            return self._from_snapshot(found, embedding, k, where)
        total = self.count()
        n = min(total, max(MIN_CANDIDATES, OVERSAMPLE * k))
        checked: dict[str, bool] = {}
        tried_exact = False
        while n > 0:
            candidates = self._hnsw_candidates(embedding, n)
            matched, seen = self._first_matches(candidates, k, where, checked, give_up=not tried_exact)
            # The k-th match must lie in the first 1/OVERSAMPLE of the list: the HNSW tail is the least exact.
            needed = math.ceil(OVERSAMPLE * seen * k / max(len(matched), 1))
            complete = n >= total and (len(matched) >= k or seen == len(candidates))
            if complete or (len(matched) >= k and n >= needed):
                return matched
            if needed > MAX_CANDIDATES and not tried_exact:
                tried_exact = True
                ranked = self._exact(embedding, k, where)
                if ranked is not None:
                    return ranked
            n = min(total, max(needed, 2 * n))
        return []

    def _from_snapshot(
        self, found: snapshots.Snapshot, embedding: np.ndarray, k: int, where: dict[str, Any] | None
    ) -> list[tuple[str, float]]:
        mask = found.mask(where)
        rows = np.flatnonzero(mask)
        if len(rows) <= SNAPSHOT_EXACT_ROWS:
            return found.top(embedding, rows, k)
        total = len(found)
        n = min(total, max(MIN_CANDIDATES, math.ceil(OVERSAMPLE * k * total / len(rows))))
        while True:
            candidates = self._hnsw_candidates(embedding, n)
            rows = found.rows([i for i, _ in candidates])
            matched = np.flatnonzero((rows >= 0) & mask[rows]).tolist()
            # As above: the k-th match must lie in the first 1/OVERSAMPLE of the list.
            if n >= total or (len(matched) >= k and OVERSAMPLE * (matched[k - 1] + 1) <= n):
                return [candidates[p] for p in matched[:k]]
            n = min(total, 2 * n)

    def _hnsw_candidates(self, embedding: np.ndarray, n: int) -> list[tuple[str, float]]:
        result = self._collection.query(query_embeddings=[embedding], n_results=n, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]

    def _first_matches(
        self,
        candidates: list[tuple[str, float]],
        k: int,
        where: dict[str, Any] | None,
        checked: dict[str, bool],
        give_up: bool = False,
    ) -> tuple[list[tuple[str, float]], int]:
        """Pierwsze ``k`` kandydatów spełniających ``where`` i liczba przejrzanych kandydatów; metadane
        pobieramy porcjami rosnącymi od ``OVERSAMPLE*k`` (i pamiętamy między rundami). ``give_up``:
        przestań, gdy już widać, że filtr jest wąski (dokładne liczenie będzie tańsze)."""
        matched: list[tuple[str, float]] = []
        start, batch = 0, OVERSAMPLE * k
        while start < len(candidates):
            pending = [i for i, _ in candidates[start : start + batch] if i not in checked]
            if pending and where is not None:
                result = self._collection.get(ids=pending, include=["metadatas"])
                checked.update((i, matches_where(m or {}, where)) for i, m in zip(result["ids"], result["metadatas"],
                                                                                   strict=True))
            for position, (i, similarity) in enumerate(candidates[start : start + batch], start=start + 1):
                if where is None or checked.get(i, False):
                    matched.append((i, similarity))
                    if len(matched) == k:
                        return matched, position
            start, batch = start + batch, batch * 2
            if give_up and start < len(candidates) and OVERSAMPLE * start * k > MAX_CANDIDATES * max(len(matched), 1):
                return matched, start
        return matched, len(candidates)

    def _exact(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[tuple[str, float]] | None:
        """Dokładny ranking fragmentów pasujących do ``where``; ``None``, gdy filtr okazał się szeroki.

        Chroma dostaje tylko warunki zawężające: wykluczenia (``$ne``/``$nin``, np. uchylone jednostki)
        kosztują ją przejście po całej kolekcji, więc sprawdzamy je sami na najlepszych wynikach."""
        narrowing = narrowing_part(where)
        if narrowing is None:
            return None
        result = self._collection.get(where=narrowing, limit=EXACT_LIMIT + 1, include=["embeddings"])
        if len(result["ids"]) > EXACT_LIMIT:
            return None
        if not result["ids"]:
            return []
        vectors = np.asarray(result["embeddings"], dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        query = np.asarray(embedding, dtype=np.float32)
        similarities = vectors @ (query / max(float(np.linalg.norm(query)), 1e-12))
        ids = np.asarray(result["ids"])
        order = np.lexsort((ids, -similarities))  # best first, ties by id so the result is repeatable
        ranked = [(str(ids[j]), float(similarities[j])) for j in order]
        return self._first_matches(ranked, k, where if narrowing is not where else None, {})[0]

    def _native(self, embedding: np.ndarray, k: int, where: dict[str, Any]) -> list[tuple[str, float]]:
        """Filtr z operatorami, których nie sprawdzamy sami – zostawiamy go Chromie."""
        result = self._collection.query(query_embeddings=[embedding], n_results=k, where=where, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]

    def _hits(self, ranked: list[tuple[str, float]]) -> list[Hit]:
        if not ranked:
            return []
        result = self._collection.get(ids=[i for i, _ in ranked], include=["documents", "metadatas"])
        found = {i: (doc, meta) for i, doc, meta in zip(result["ids"], result["documents"], result["metadatas"],
                                                          strict=True)}
        # a chunk deleted by a concurrent writer since the ranking is simply left out
        return [Hit(id=i, text=found[i][0], metadata=found[i][1], similarity=sim) for i, sim in ranked if i in found]
