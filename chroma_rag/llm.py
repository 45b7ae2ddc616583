"""Dostęp do modelu czatu przez dowolny serwer zgodny z API OpenAI (OpenRouter, OpenAI, Ollama, llama.cpp).

Tu jest tylko konfiguracja i transport; treść promptów buduje ``answering``. Klucz API nigdy nie trafia
do komunikatów, logów ani ``repr`` ustawień.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from . import config
from .config import DEFAULT_LLM_MODEL, DEFAULT_LLM_RETRIES, DEFAULT_LLM_TIMEOUT_S, DEFAULT_LLM_URL
from .errors import ServiceError, UserError, without_credentials

# A provider's own key goes only to that provider; any other OpenAI-compatible server gets the
# conventional OPENAI_API_KEY, never an OpenRouter key meant for someone else.
_KEY_VARS_BY_HOST = {
    "openrouter.ai": ("CHROMA_RAG_LLM_KEY", "OPENROUTER_API_KEY"),
    "api.openai.com": ("CHROMA_RAG_LLM_KEY", "OPENAI_API_KEY"),
}
_KEY_VARS_OTHER = ("CHROMA_RAG_LLM_KEY", "OPENAI_API_KEY")
# Local servers (Ollama, llama.cpp) ignore the key but the client insists on sending one.
_DUMMY_KEY = "brak-klucza"


@dataclass(frozen=True)
class LlmSettings:
    """Adres, model i klucz serwera czatu; ``timeout`` w sekundach, ``max_retries`` przy 429/5xx/timeout."""

    url: str = DEFAULT_LLM_URL
    model: str = DEFAULT_LLM_MODEL
    key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_LLM_TIMEOUT_S
    max_retries: int = DEFAULT_LLM_RETRIES
    planning: bool | None = None  # CHROMA_RAG_PRZEPISZ: plan queries by default (None: not set)

    @property
    def configured(self) -> bool:
        """Czy użytkownik wskazał model czatu: własny adres serwera albo klucz API."""
        return self.key is not None or self.url != DEFAULT_LLM_URL

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    @property
    def shown_url(self) -> str:
        return without_credentials(self.url)

    @property
    def needs_key(self) -> bool:
        """Znane serwery w chmurze wymagają klucza; lokalny serwer działa bez niego."""
        return self.host in _KEY_VARS_BY_HOST

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LlmSettings:
        """Ustawienia ``CHROMA_RAG_LLM_*`` ze środowiska i plików ustawień (``config.values``: ``.env``,
        ``chroma-rag.toml``), albo tylko z podanego ``environ``."""
        values = config.values() if environ is None else environ
        url = (values.get("CHROMA_RAG_LLM_URL") or DEFAULT_LLM_URL).strip().rstrip("/")
        host = (urlsplit(url).hostname or "").lower()
        key_vars = _KEY_VARS_BY_HOST.get(host, _KEY_VARS_OTHER)
        key = next((values[name].strip() for name in key_vars if (values.get(name) or "").strip()), None)
        return cls(
            url=url,
            model=(values.get("CHROMA_RAG_LLM_MODEL") or DEFAULT_LLM_MODEL).strip(),
            key=key,
            timeout=_number(values, "CHROMA_RAG_LLM_TIMEOUT", float, DEFAULT_LLM_TIMEOUT_S),
            max_retries=_number(values, "CHROMA_RAG_LLM_RETRIES", int, DEFAULT_LLM_RETRIES),
            planning=_flag(values, PLANNING_ENV),
        )


# The page and MCP are used by the team, not by whoever configures the server: no variables, no .env.
NO_CHAT_MODEL_FOR_TEAM = (
    "Ten serwer nie ma skonfigurowanego modelu czatu, więc odpowiedzi nie powstaną – wyszukiwanie fragmentów "
    "działa; poproś administratora serwera o ustawienie modelu czatu."
)


def missing_key_message(settings: LlmSettings) -> str:
    """Jak skonfigurować model czatu, gdy brak klucza: dla domyślnego OpenRouter – wszystkie trzy drogi."""
    host = settings.host
    variable = _KEY_VARS_BY_HOST[host][1]
    where = "w środowisku, w pliku .env albo w chroma-rag.toml (chroma-rag konfiguracja pokazuje ustawienia)"
    if host != "openrouter.ai":
        return f"Brak klucza API do {host}: ustaw CHROMA_RAG_LLM_KEY (albo {variable}) {where}."
    return (
        f"Brak klucza API do {host}, a bez niego pytaj nie ma modelu czatu. Ustaw {where}: {variable} (albo "
        "CHROMA_RAG_LLM_KEY) z https://openrouter.ai/keys, albo CHROMA_RAG_LLM_URL=https://api.openai.com/v1 "
        "z OPENAI_API_KEY, albo adres lokalnego serwera, który klucza nie potrzebuje: "
        "CHROMA_RAG_LLM_URL=http://localhost:11434/v1 (Ollama) lub http://localhost:8080/v1 (llama.cpp)."
    )


PLANNING_ENV = "CHROMA_RAG_PRZEPISZ"
_TRUE = ("1", "tak", "true")
_FALSE = ("0", "nie", "false")


def _flag(values: Mapping[str, str], name: str) -> bool | None:
    raw = (values.get(name) or "").strip().lower()
    if not raw:
        return None
    if raw in _TRUE or raw in _FALSE:
        return raw in _TRUE
    raise UserError(f"Zmienna {name} przyjmuje 1/0, tak/nie albo true/false, a ma wartość „{raw}”.")


def _number(values: Mapping[str, str], name: str, kind: type, default: float) -> Any:
    raw = (values.get(name) or "").strip()
    if not raw:
        return default
    try:
        number = kind(raw)
    except ValueError:
        number = -1
    if number < 0:
        raise UserError(f"Zmienna {name} musi być nieujemną liczbą, a ma wartość „{raw}”.")
    return number


@dataclass
class Usage:
    """Zużycie tokenów; ``cost`` tylko gdy serwer go podaje (OpenRouter, w USD)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens, cost
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "tokeny_wejscia": self.prompt_tokens,
            "tokeny_wyjscia": self.completion_tokens,
            "koszt": self.cost,
        }


@dataclass
class Completion:
    text: str
    usage: Usage
    model: str


class ChatClient:
    """Jedno zapytanie czatu = jedna metoda; błędy serwera zamieniane na ``ServiceError`` po polsku."""

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self._client: Any = None

    def complete(
        self,
        messages: list[dict[str, str]],
        on_token: Callable[[str], None] | None = None,
        json_object: bool = False,
    ) -> Completion:
        """Odpowiedź modelu; z ``on_token`` strumieniowo (każdy kawałek tekstu od razu do ``on_token``).

        ``json_object``: prośba o jeden obiekt JSON (``response_format``); serwer, który jej nie zna i odrzuca
        zapytanie (400), dostaje je raz jeszcze bez niej."""
        import openai

        client = self._connect()
        request: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        if self.settings.host == "openrouter.ai":
            request["extra_body"] = {"usage": {"include": True}}  # OpenRouter reports cost only on request
        try:
            if json_object:
                try:
                    return self._complete_whole(client, {**request, "response_format": {"type": "json_object"}})
                except openai.BadRequestError:
                    pass
            if on_token is None:
                return self._complete_whole(client, request)
            return self._complete_streamed(client, request, on_token)
        except openai.OpenAIError as exc:
            raise _service_error(exc, self.settings) from exc

    def _connect(self) -> Any:
        if self._client is None:
            if self.settings.needs_key and not self.settings.key:
                raise UserError(missing_key_message(self.settings), web=NO_CHAT_MODEL_FOR_TEAM, kind="brak_modelu")
            import openai

            self._client = openai.OpenAI(
                api_key=self.settings.key or _DUMMY_KEY,
                base_url=self.settings.url,
                timeout=self.settings.timeout,
                max_retries=self.settings.max_retries,
            )
        return self._client

    def _complete_whole(self, client: Any, request: dict[str, Any]) -> Completion:
        response = client.chat.completions.create(**request)
        if not response.choices:
            raise _failed(self.settings, lambda server: f"Serwer {server} zwrócił odpowiedź bez treści.")
        return Completion(
            text=response.choices[0].message.content or "",
            usage=_usage(response.usage),
            model=response.model or self.settings.model,
        )

    def _complete_streamed(
        self, client: Any, request: dict[str, Any], on_token: Callable[[str], None]
    ) -> Completion:
        stream = client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )
        parts: list[str] = []
        usage, model = Usage(), self.settings.model
        # on_token may raise (the reader went away): closing the stream then stops the model's (billed) answer
        with stream:
            for chunk in stream:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    piece = choice.delta.content if choice.delta else None
                    if piece:
                        parts.append(piece)
                        on_token(piece)
        return Completion(text="".join(parts), usage=usage, model=model)


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    cost = getattr(raw, "cost", None)
    return Usage(
        prompt_tokens=raw.prompt_tokens or 0,
        completion_tokens=raw.completion_tokens or 0,
        cost=float(cost) if isinstance(cost, int | float) else None,
    )


def _failed(settings: LlmSettings, sentence: Callable[[str], str], operator_step: str = "") -> ServiceError:
    """Błąd serwera modelu: ``sentence`` dostaje nazwę serwera – w CLI „modelu <adres bez danych logowania>”,
    na stronie i w MCP „modelu czatu”, bo członek zespołu nie ma po co znać wewnętrznego adresu serwera.
    ``operator_step`` (zmienna do sprawdzenia) jest dla tego, kto konfiguruje – w CLI; zespół słyszy, komu to
    powiedzieć."""
    said = sentence(f"modelu {settings.shown_url}")
    team = sentence("modelu czatu")
    if operator_step:
        said = f"{said.rstrip('.')}: {operator_step}"
        team = f"{team.rstrip('.')} – powiedz o tym osobie, która prowadzi ten serwer."
    return ServiceError(said, web=team)


def _service_error(exc: Exception, settings: LlmSettings) -> ServiceError:
    """Jedno zdanie po polsku; celowo bez treści odpowiedzi serwera, bo ta potrafi powtórzyć klucz."""
    import openai

    retries, status = settings.max_retries, getattr(exc, "status_code", None)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return _failed(settings, lambda server: f"Serwer {server} odrzucił klucz API (błąd {status}).",
                       "sprawdź CHROMA_RAG_LLM_KEY.")
    if isinstance(exc, openai.NotFoundError):
        return _failed(settings, lambda server: f"Serwer {server} nie zna modelu „{settings.model}” (błąd 404).",
                       "sprawdź CHROMA_RAG_LLM_MODEL i czy adres CHROMA_RAG_LLM_URL kończy się na /v1.")
    if isinstance(exc, openai.RateLimitError):
        return _failed(
            settings,
            lambda server: f"Serwer {server} odrzuca zapytania z powodu limitu (błąd 429) także po {retries} "
            "ponowieniach – spróbuj za chwilę.",
        )
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return _failed(
            settings,
            lambda server: f"Serwer {server} zgłasza błąd {status} także po {retries} ponowieniach "
            "– spróbuj później.",
        )
    if isinstance(exc, openai.APIStatusError):
        return _failed(settings, lambda server: f"Serwer {server} odrzucił zapytanie (błąd {status}).")
    if isinstance(exc, openai.APITimeoutError):
        return ServiceError(
            f"Serwer modelu {settings.shown_url} nie odpowiedział w ciągu {settings.timeout:g} s "
            f"(prób: {retries + 1}) – spróbuj później albo zwiększ CHROMA_RAG_LLM_TIMEOUT.",
            web=f"Serwer modelu czatu nie odpowiedział w ciągu {settings.timeout:g} s – spróbuj później.",
        )
    if isinstance(exc, openai.APIConnectionError):
        return _failed(settings, lambda server: f"Nie można połączyć się z serwerem {server}.",
                       "sprawdź, czy działa, i zmienną CHROMA_RAG_LLM_URL.")
    if isinstance(exc, openai.APIError):  # an error event in the middle of a stream
        return _failed(settings, lambda server: f"Serwer {server} przerwał odpowiedź błędem – spróbuj ponownie.")
    kind = type(exc).__name__
    return _failed(settings, lambda server: f"Serwer {server} zwrócił nieoczekiwaną odpowiedź ({kind}).")
