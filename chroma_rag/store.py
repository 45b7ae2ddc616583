"""Kolekcje Chromy (HNSW, cosinus), jedna na model embeddingów: w folderze bazy albo na serwerze
``chroma run`` (tryb zespołowy, ``--serwer URL``)."""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .errors import UserError
from .models import Hit

DEFAULT_DB = "chroma_db"
COLLECTION_PREFIX = "fragmenty-"
# The Rust server of chromadb 1.x reports its HTTP API version (1.x), not the package version.
SUPPORTED_SERVER_MAJOR = 1
TOKEN_HEADER = "X-Chroma-Token"
# Filtered search (see ChunkCollection.query): thresholds measured with bench/scale.py at 100k chunks.
EXACT_LIMIT = 2000
MIN_CANDIDATES = 100
OVERSAMPLE = 4


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


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chroma-rag"


class Store:
    """Kolekcje fragmentów w folderze bazy albo na serwerze Chromy; klient tworzony leniwie.

    Serwer wybiera ``server`` albo zmienna ``CHROMA_RAG_SERWER`` (token: ``CHROMA_RAG_SERWER_TOKEN``);
    bez nich baza to folder ``path`` (albo ``CHROMA_RAG_BAZA``, domyślnie ``./chroma_db``).
    """

    def __init__(self, path: Path | None = None, server: str | None = None, token: str | None = None) -> None:
        server = server or os.environ.get("CHROMA_RAG_SERWER") or None
        if server and path is not None:
            raise UserError("Podaj albo --baza (folder), albo --serwer (adres serwera Chromy), nie oba naraz.")
        self.server = parse_server(server) if server else None
        self.token = token or os.environ.get("CHROMA_RAG_SERWER_TOKEN") or None
        self.path = Path(path) if path else default_db_path()
        self._client: Any = None

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
            return self.path
        root = Path(os.environ["CHROMA_RAG_CACHE"]) if os.environ.get("CHROMA_RAG_CACHE") else default_cache_root()
        return root / f"serwer-{self.server.slug}"

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

    def _open_folder(self) -> Any:
        import chromadb
        from chromadb.config import Settings

        return chromadb.PersistentClient(path=str(self.path), settings=Settings(anonymized_telemetry=False))

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
                metadata={"model": model_id, "wymiar": dim},
            )
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
        return ChunkCollection(collection, self.client.get_max_batch_size())


class ChunkCollection:
    """Operacje na fragmentach jednej kolekcji, z podziałem na porcje wg limitu klienta."""

    def __init__(self, collection: Any, max_batch: int) -> None:
        self._collection = collection
        self._max_batch = max_batch

    @property
    def model_id(self) -> str:
        return str(self._collection.metadata["model"])

    def count(self) -> int:
        return int(self._collection.count())

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        for start in range(0, len(ids), self._max_batch):
            end = start + self._max_batch
            self._collection.upsert(
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),
            )

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._max_batch):
            self._collection.delete(ids=list(ids[start : start + self._max_batch]))

    def metadatas(
        self, where: dict[str, Any] | None = None, limit: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Metadane fragmentów (spełniających ``where``) według id."""
        result = self._collection.get(where=where, limit=limit, include=["metadatas"])
        return dict(zip(result["ids"], result["metadatas"], strict=True))

    def query(self, embedding: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        """Najbliższe ``k`` fragmentów spełniających ``where`` (najlepszy pierwszy).

        Wbudowane filtrowane HNSW Chromy 1.5.9 jest przy 100 tys. fragmentów wolne i niedokładne
        (recall@5 ≈ 0,2 przy filtrze na połowę kolekcji), dlatego strategię wybieramy wg selektywności:
        filtr pasujący do najwyżej ``EXACT_LIMIT`` fragmentów liczymy dokładnie (numpy na ich wektorach),
        szerszy – zwykłym HNSW bez filtra z nadpróbkowaniem i sprawdzeniem ``where`` na kandydatach.
        """
        if where is None:
            ranked = self._hnsw_candidates(embedding, max(k, MIN_CANDIDATES))[:k]
        else:
            matching = self._collection.get(where=where, limit=EXACT_LIMIT + 1, include=[])["ids"]
            if len(matching) <= EXACT_LIMIT:
                ranked = self._exact(embedding, k, matching)
            else:
                ranked = self._oversampled(embedding, k, where)
        return self._hits(ranked)

    def _exact(self, embedding: np.ndarray, k: int, ids: list[str]) -> list[tuple[str, float]]:
        if not ids:
            return []
        result = self._collection.get(ids=ids, include=["embeddings"])
        vectors = np.asarray(result["embeddings"], dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        query = np.asarray(embedding, dtype=np.float32)
        similarities = vectors @ (query / max(float(np.linalg.norm(query)), 1e-12))
        return _top(result["ids"], similarities, k)

    def _hnsw_candidates(self, embedding: np.ndarray, n: int) -> list[tuple[str, float]]:
        result = self._collection.query(query_embeddings=[embedding], n_results=n, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]

    def _oversampled(self, embedding: np.ndarray, k: int, where: dict[str, Any]) -> list[tuple[str, float]]:
        """HNSW bez filtra, potem ``where`` na kandydatach; kandydatów dobieramy, aż k-ty pasujący leży
        w pierwszej ``1/OVERSAMPLE`` listy (ogon listy HNSW jest najmniej dokładny)."""
        total = self.count()
        n = min(total, max(MIN_CANDIDATES, OVERSAMPLE * k))
        while True:
            candidates = self._hnsw_candidates(embedding, n)
            allowed = set(self._collection.get(ids=[i for i, _ in candidates], where=where, include=[])["ids"])
            matched = [c for c in candidates if c[0] in allowed]
            needed = math.ceil(OVERSAMPLE * k * n / max(len(matched), 1))
            if n >= total or (len(matched) >= k and n >= needed):
                return sorted(matched, key=lambda c: (-c[1], c[0]))[:k]
            n = min(total, max(needed, 2 * n))

    def _hits(self, ranked: list[tuple[str, float]]) -> list[Hit]:
        if not ranked:
            return []
        result = self._collection.get(ids=[i for i, _ in ranked], include=["documents", "metadatas"])
        found = {i: (doc, meta) for i, doc, meta in zip(result["ids"], result["documents"], result["metadatas"],
                                                          strict=True)}
        return [Hit(id=i, text=found[i][0], metadata=found[i][1], similarity=sim) for i, sim in ranked]


def _top(ids: Sequence[str], similarities: np.ndarray, k: int) -> list[tuple[str, float]]:
    """``k`` najlepszych (remisy wg id, żeby wynik był powtarzalny)."""
    order = sorted(range(len(ids)), key=lambda j: (-float(similarities[j]), ids[j]))[:k]
    return [(ids[j], float(similarities[j])) for j in order]
