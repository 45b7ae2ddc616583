"""Modele embeddingów na serwerze: Ollama (``POST /api/embed``) i dowolny endpoint zgodny z OpenAI.

Wspólne dla obu: prefiksy zapytanie/fragment według rodziny modelu, przycinanie wejścia do limitu modelu,
paczki, ponawianie z odczekaniem przy 429/5xx/przekroczeniu czasu, normalizacja L2. Konstruktor niczego
nie wysyła – pierwszy błąd sieci widać dopiero przy pierwszym liczeniu, jako ``ServiceError``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..config import DEFAULT_EMBED_BATCH, DEFAULT_EMBED_RETRIES, DEFAULT_EMBED_TIMEOUT_S, DEFAULT_OLLAMA_URL
from ..errors import ServiceError, UserError, without_credentials
from .spec import ModelSpec, Progress

RETRY_AFTER_CAP_S = 30.0
EMBEDDING_SERVER_FAILED = (
    "Serwer embeddingów, który zamienia pytania na wektory, nie odpowiada albo odrzucił zapytanie – spróbuj za "
    "chwilę, a jeśli to się powtarza, powiedz administratorowi serwera."
)

_E5_QUERY, _E5_PASSAGE = "query: ", "passage: "
_RETRIEVAL_QUERY = "Represent this sentence for searching relevant passages: "
_E5_INSTRUCT_QUERY = "Instruct: Given a question, retrieve passages that answer the question\nQuery: "
# EmbeddingGemma model card (prompts "Retrieval-query" / "Retrieval-document"); its context is 2K tokens.
_GEMMA_QUERY, _GEMMA_DOCUMENT = "task: search result | query: ", "title: none | text: "


@dataclass(frozen=True)
class Family:
    """Jak podawać tekst modelom danej rodziny; ``max_chars`` ≈ limit tokenów × ~3 znaki (polski)."""

    query_prefix: str = ""
    passage_prefix: str = ""
    max_chars: int = 8000
    # e5 na serwerze zgodnym z OpenAI: rozróżnienie przez pole ``input_type`` (serwer sam dokleja prefiks)
    input_type: bool = False


# Pierwsze dopasowanie wygrywa; wzorce sprawdzane na nazwie modelu małymi literami.
FAMILIES: tuple[tuple[str, Family], ...] = (
    (r"e5[^/]*instruct", Family(_E5_INSTRUCT_QUERY, "", 2048)),
    (r"(^|[^a-z0-9])m?e5([^a-z0-9]|$)", Family(_E5_QUERY, _E5_PASSAGE, 2048, input_type=True)),
    (r"bge-m3", Family(max_chars=24000)),
    (r"embeddinggemma", Family(_GEMMA_QUERY, _GEMMA_DOCUMENT, 6000)),
    (r"nomic-embed", Family("search_query: ", "search_document: ", 6000)),
    (r"mxbai-embed|snowflake-arctic-embed", Family(_RETRIEVAL_QUERY, "", 1500)),
    (r"text-embedding-3|text-embedding-ada", Family(max_chars=24000)),
)


def family_for(name: str) -> Family:
    """Rodzina modelu z nazwy; nadpisują ją ``CHROMA_RAG_PREFIKS_*`` i ``CHROMA_RAG_EMBED_MAKS_ZNAKOW``."""
    lowered = name.lower()
    family = next((fam for pattern, fam in FAMILIES if re.search(pattern, lowered)), Family())
    query = os.environ.get("CHROMA_RAG_PREFIKS_ZAPYTANIA")
    passage = os.environ.get("CHROMA_RAG_PREFIKS_FRAGMENTU")
    use_input_type = family.input_type and os.environ.get("CHROMA_RAG_EMBED_INPUT_TYPE", "1") != "0"
    if query is not None or passage is not None:
        use_input_type = False  # własne prefiksy zastępują input_type, żeby nie dokleić dwóch
    return Family(
        query_prefix=family.query_prefix if query is None else query,
        passage_prefix=family.passage_prefix if passage is None else passage,
        max_chars=_env_int("CHROMA_RAG_EMBED_MAKS_ZNAKOW", family.max_chars),
        input_type=use_input_type,
    )


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) <= 0:
        raise UserError(f"Zmienna {name} musi być dodatnią liczbą całkowitą, a ma wartość „{value}”.")
    return int(value)


class TransientError(Exception):
    """Błąd, który może minąć (429, 5xx, przekroczony czas); ``message`` widać po ostatniej próbie."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), RETRY_AFTER_CAP_S) if value is not None else None
    except ValueError:
        return None  # data HTTP zamiast sekund: zostaje zwykłe odczekanie


class HttpEmbedder:
    """Wspólna logika modeli zdalnych; podklasy implementują tylko ``_request`` (jedna paczka → wektory)."""

    provider = ""
    supports_input_type = False

    def __init__(
        self,
        name: str,
        dimensions: int | None = None,
        *,
        batch_size: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.spec = ModelSpec(self.provider, name, dimensions)
        self.name = name
        self.dimensions = dimensions
        self.family = family_for(name)
        self.batch_size = batch_size or _env_int("CHROMA_RAG_EMBED_PACZKA", DEFAULT_EMBED_BATCH[self.provider])
        self.timeout = timeout or float(_env_int("CHROMA_RAG_EMBED_TIMEOUT", DEFAULT_EMBED_TIMEOUT_S))
        self.retries = _env_int("CHROMA_RAG_EMBED_PROBY", DEFAULT_EMBED_RETRIES) if retries is None else retries
        self.backoff = backoff
        self._sleep = sleep  # tests see the pauses asked for instead of measuring them
        self.dim: int | None = dimensions

    @property
    def model_id(self) -> str:
        return self.spec.model_id

    @property
    def url(self) -> str:
        raise NotImplementedError

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            parts.append(self._embed(batch, is_query=False))
            if progress:
                progress(len(batch))
        return np.concatenate(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], is_query=True)[0]

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        fam = self.family
        use_input_type = fam.input_type and self.supports_input_type
        # Przy input_type serwer sam dokleja prefiks – tekstowy byłby drugim.
        prefix = "" if use_input_type else fam.query_prefix if is_query else fam.passage_prefix
        prepared = [prefix + t[: max(fam.max_chars - len(prefix), 1)] for t in texts]
        input_type = ("query" if is_query else "passage") if use_input_type else None
        try:
            vectors = self._with_retries(lambda: self._request(prepared, input_type))
            return self._check(vectors, len(texts))
        except ServiceError as exc:
            # the page and MCP speak to a team member, who can't fix the embedding server and needn't know its address
            raise ServiceError(str(exc).replace(self.url, without_credentials(self.url)),
                               web=EMBEDDING_SERVER_FAILED) from None

    def _with_retries(self, call: Callable[[], list[list[float]]]) -> list[list[float]]:
        for attempt in range(self.retries + 1):
            try:
                return call()
            except TransientError as exc:
                if attempt == self.retries:
                    raise ServiceError(f"{exc.message} (prób: {self.retries + 1}).") from None
                wait = exc.retry_after
                self._sleep(self.backoff * 2**attempt if wait is None else wait)
        raise AssertionError("unreachable")

    def _check(self, vectors: list[list[float]], expected: int) -> np.ndarray:
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except ValueError:
            arr = np.empty(0, dtype=np.float32)  # wektory różnej długości
        if arr.ndim != 2 or arr.shape[0] != expected or arr.shape[1] == 0:
            raise ServiceError(
                f"Serwer {self.url} zwrócił dla modelu {self.model_id} nieprawidłowe wektory (oczekiwano {expected})."
            )
        got = arr.shape[1]
        if self.dimensions and got != self.dimensions:
            raise ServiceError(
                f"Model {self.model_id} zwrócił wektory o {got} wymiarach zamiast {self.dimensions} – "
                "ten model lub serwer nie obsługuje parametru --wymiary."
            )
        if self.dim is not None and got != self.dim:
            raise ServiceError(f"Model {self.model_id} zmienił liczbę wymiarów z {self.dim} na {got}.")
        self.dim = got
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return arr / np.where(norms == 0, 1.0, norms)

    def _request(self, texts: list[str], input_type: str | None) -> list[list[float]]:
        raise NotImplementedError


def _server_message(response) -> str:
    """Treść błędu z odpowiedzi Ollamy (``{"error": "..."}``) albo surowy tekst."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            err = err.get("message")
        if err:
            return str(err)
    return str(body)[:200]


def _could_not_connect(exc: Exception) -> bool:
    """Odmowa połączenia lub zła nazwa hosta (nie ma po co ponawiać), a nie zerwanie w trakcie odpowiedzi.

    requests opakowuje wtedy ``NewConnectionError`` z urllib3 (po nazwie – bez importu urllib3)."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return any(cls.__name__ == "NewConnectionError" for cls in type(reason).__mro__)


class OllamaEmbedder(HttpEmbedder):
    """Ollama: ``POST {OLLAMA_URL}/api/embed`` z listą tekstów w ``input`` (jedno zapytanie na paczkę)."""

    provider = "ollama"

    def __init__(self, name: str, dimensions: int | None = None, *, base_url: str | None = None, **kw) -> None:
        super().__init__(name, dimensions, **kw)
        url = (base_url or os.environ.get("OLLAMA_URL") or DEFAULT_OLLAMA_URL).strip().rstrip("/")
        self._url = url if "://" in url else f"http://{url}"
        self._session = None

    @property
    def url(self) -> str:
        return self._url

    def _request(self, texts: list[str], input_type: str | None) -> list[list[float]]:
        import requests

        if self._session is None:
            self._session = requests.Session()
        payload: dict = {"model": self.name, "input": texts, "truncate": True}
        if self.dimensions:
            payload["dimensions"] = self.dimensions
        where = f"Ollama pod adresem {self.url}"
        try:
            response = self._session.post(f"{self.url}/api/embed", json=payload, timeout=self.timeout)
        except requests.Timeout:
            raise TransientError(f"{where} nie odpowiedziała w ciągu {self.timeout:g} s") from None
        except requests.ConnectionError as exc:
            if not _could_not_connect(exc):
                raise TransientError(f"{where} zerwała połączenie") from None
            raise ServiceError(
                f"Nie można połączyć się z Ollamą pod adresem {self.url} – uruchom ją („ollama serve”), "
                f"pobierz model („ollama pull {self.name}”) albo ustaw właściwy OLLAMA_URL."
            ) from None
        status = response.status_code
        if status == 200:
            try:
                return response.json()["embeddings"]
            except (ValueError, KeyError, TypeError):
                raise ServiceError(f"{where} zwróciła odpowiedź bez pola „embeddings”.") from None
        message = _server_message(response)
        if status == 429:
            raise TransientError(
                f"{where} odrzuca zapytania: za dużo naraz (429)",
                parse_retry_after(response.headers.get("Retry-After")),
            )
        if status >= 500:
            raise TransientError(f"{where} zwraca błąd serwera {status}: {message}")
        if status == 404 and "model" in message:
            raise ServiceError(
                f"{where} nie ma modelu „{self.name}” – pobierz go poleceniem „ollama pull {self.name}”."
            )
        if status == 404:
            raise ServiceError(f"{where} nie obsługuje /api/embed – zaktualizuj Ollamę do wersji 0.3 lub nowszej.")
        raise ServiceError(f"{where} odrzuciła zapytanie o embeddingi modelu „{self.name}” ({status}: {message}).")


class OpenAIEmbedder(HttpEmbedder):
    """Dowolny endpoint ``/v1/embeddings`` zgodny z OpenAI, przez pakiet ``openai``.

    Adres: ``CHROMA_RAG_EMBED_URL`` (domyślnie API OpenAI), klucz: ``CHROMA_RAG_EMBED_KEY`` lub
    ``OPENAI_API_KEY``. Ponawianiem zajmujemy się sami (``max_retries=0``), żeby było takie jak dla Ollamy.
    """

    provider = "openai"
    supports_input_type = True

    def __init__(
        self,
        name: str,
        dimensions: int | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        **kw,
    ) -> None:
        super().__init__(name, dimensions, **kw)
        self._base_url = (base_url or os.environ.get("CHROMA_RAG_EMBED_URL") or "").strip().rstrip("/") or None
        self._api_key = api_key or os.environ.get("CHROMA_RAG_EMBED_KEY") or os.environ.get("OPENAI_API_KEY")
        self._client = None

    @property
    def url(self) -> str:
        return self._base_url or "https://api.openai.com/v1"

    def _get_client(self):
        if self._client is None:
            if not self._api_key and not self._base_url:
                raise UserError(
                    f"Brak klucza API dla modelu {self.model_id} – ustaw CHROMA_RAG_EMBED_KEY lub "
                    "OPENAI_API_KEY (albo CHROMA_RAG_EMBED_URL dla własnego serwera)."
                )
            if self._api_key and not self._api_key.isascii():
                raise UserError(
                    "Klucz API zawiera znaki spoza ASCII – sprawdź CHROMA_RAG_EMBED_KEY lub OPENAI_API_KEY."
                )
            from openai import OpenAI

            # Własne serwery zwykle nie sprawdzają klucza, ale klient OpenAI wymaga niepustego.
            self._client = OpenAI(
                base_url=self.url, api_key=self._api_key or "brak", max_retries=0, timeout=self.timeout
            )
        return self._client

    def _request(self, texts: list[str], input_type: str | None) -> list[list[float]]:
        import openai

        client = self._get_client()
        options: dict = {"model": self.name, "input": texts, "encoding_format": "float"}
        if self.dimensions:
            options["dimensions"] = self.dimensions
        if input_type:
            options["extra_body"] = {"input_type": input_type}
        where = f"Serwer embeddingów {self.url}"
        try:
            response = client.embeddings.create(**options)
        except openai.APITimeoutError:
            raise TransientError(f"{where} nie odpowiedział w ciągu {self.timeout:g} s") from None
        except openai.APIConnectionError as exc:
            # Nazwa, nie klasa: openai bywa zbudowane na httpx albo httpx2.
            if type(exc.__cause__).__name__ == "ConnectError":
                raise ServiceError(
                    f"Nie można połączyć się z serwerem embeddingów {self.url} – sprawdź, czy działa, "
                    "i ustawienie CHROMA_RAG_EMBED_URL."
                ) from None
            raise TransientError(f"{where} zerwał połączenie") from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        return [item.embedding for item in sorted(response.data, key=lambda item: item.index)]

    def _status_error(self, exc) -> Exception:
        status = exc.status_code
        where = f"Serwer embeddingów {self.url}"
        message = _server_message(exc.response)
        if status == 429:
            return TransientError(
                f"{where} odrzuca zapytania: za dużo naraz lub wyczerpany limit (429)",
                parse_retry_after(exc.response.headers.get("Retry-After")),
            )
        if status >= 500:
            return TransientError(f"{where} zwraca błąd serwera {status}: {message}")
        if status == 401:
            return ServiceError(f"{where} odrzucił klucz API (401) – sprawdź CHROMA_RAG_EMBED_KEY lub OPENAI_API_KEY.")
        if status == 403:
            return ServiceError(f"{where} odmówił dostępu do modelu „{self.name}” (403) – sprawdź uprawnienia klucza.")
        if status == 404:
            return ServiceError(f"{where} nie zna modelu „{self.name}” (404) – sprawdź nazwę w --model.")
        return ServiceError(f"{where} odrzucił zapytanie o embeddingi modelu „{self.name}” ({status}: {message}).")
