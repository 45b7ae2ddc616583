"""Rejestr ustawień (``KEYS``: zmienna środowiska = klucz pliku, opcja CLI, wartość domyślna – to, co wypisuje
``chroma-rag konfiguracja``) i ich odczyt z plików: ``chroma-rag.toml`` (w bieżącym folderze lub wyżej, potem
w folderze konfiguracji użytkownika) i ``.env`` (w bieżącym folderze lub wyżej).

Kolejność: opcja w wierszu poleceń > zmienna środowiska > ``.env`` > najbliższy ``chroma-rag.toml`` >
``chroma-rag.toml`` użytkownika > wartość domyślna. Wartości z plików trafiają do ``os.environ`` tylko tam,
gdzie zmiennej nie ustawiono, więc kod czytający środowisko (``Store``, modele embeddingów) widzi je bez zmian,
a opcje wiersza poleceń nadal mają pierwszeństwo; ``values`` podaje je bez zmieniania środowiska."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError

# Próg pewności (patrz ``search.confidence``) skalibrowany na zbiorze dev (docs/BENCHMARKS.md): najwyższy, przy
# którym żadne pytanie z trafieniem nie jest odrzucane; poniżej – „nic trafnego”. Tu, a nie w ``search``, bo
# pomoc CLI go podaje, a nie może importować wyszukiwania (ciężkie moduły).
DEFAULT_THRESHOLD = 0.83
DEFAULT_COUNT = 5  # szukaj -k, pytaj -k
# Defaults of the settings below, here so that the code that uses them and `konfiguracja` share one value.
DEFAULT_DB = "chroma_db"
DEFAULT_EMBEDDING_MODEL = "lokalny"
DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_LLM_URL = "https://openrouter.ai/api/v1"
DEFAULT_LLM_MODEL = "google/gemini-2.5-flash"
DEFAULT_LLM_TIMEOUT_S = 60
DEFAULT_LLM_RETRIES = 3
DEFAULT_EMBED_TIMEOUT_S = 120
DEFAULT_EMBED_RETRIES = 4
# Texts per request to an embedding server: Ollama answers one request at a time, an OpenAI-style server batches.
DEFAULT_EMBED_BATCH = {"ollama": 32, "openai": 64}

CONFIG_NAME = "chroma-rag.toml"
APP_NAME = "chroma-rag"


@dataclass(frozen=True)
class Key:
    """Jedno ustawienie: zmienna środowiska i klucz pliku ustawień o tej samej nazwie."""

    name: str
    meaning: str
    default: str | int | float | None = None  # what the code uses when nothing sets it; None: nothing
    default_words: str | None = None  # the default as the user reads it, where the value alone does not say it
    option: str = ""  # the command-line option that wins over the setting
    secret: bool = False  # shown masked
    path: bool = False  # in a file: relative to that file, not to the current folder

    @property
    def shown_default(self) -> str:
        if self.default_words is not None:
            return self.default_words
        return "brak" if self.default is None else str(self.default)


_ZALEZNIE = "zależnie od modelu"
# Every setting chroma-rag reads, in the order `konfiguracja` lists them (tests/test_ustawienia.py checks that the
# code reads no other CHROMA_RAG_* variable).
KEYS: dict[str, Key] = {key.name: key for key in (
    Key("CHROMA_RAG_BAZA", "folder bazy Chromy", DEFAULT_DB, f"./{DEFAULT_DB}", option="--baza", path=True),
    Key("CHROMA_RAG_SERWER", "adres serwera Chromy zamiast folderu", None, "brak (folder)", option="--serwer"),
    Key("CHROMA_RAG_SERWER_TOKEN", "token serwera Chromy", secret=True),
    Key("CHROMA_RAG_CACHE", "folder danych pochodnych w trybie serwera", None, "~/.cache/chroma-rag", path=True),
    Key("CHROMA_RAG_MODEL", "model embeddingów", DEFAULT_EMBEDDING_MODEL,
        f"model, którym zbudowano bazę, albo {DEFAULT_EMBEDDING_MODEL}", option="--model"),
    Key("CHROMA_RAG_EMBED_URL", "adres serwera embeddingów openai:"),
    Key("CHROMA_RAG_EMBED_KEY", "klucz serwera embeddingów openai:", None, "OPENAI_API_KEY", secret=True),
    Key("OLLAMA_URL", "adres Ollamy dla modeli ollama:", DEFAULT_OLLAMA_URL),
    Key("CHROMA_RAG_EMBED_PACZKA", "ile tekstów w jednym zapytaniu do serwera embeddingów", None,
        ", ".join(f"{size} ({provider}:)" for provider, size in DEFAULT_EMBED_BATCH.items())),
    Key("CHROMA_RAG_EMBED_TIMEOUT", "limit czasu zapytania do serwera embeddingów, s", DEFAULT_EMBED_TIMEOUT_S),
    Key("CHROMA_RAG_EMBED_PROBY", "ponowienia zapytania do serwera embeddingów", DEFAULT_EMBED_RETRIES),
    Key("CHROMA_RAG_EMBED_MAKS_ZNAKOW", "najdłuższy tekst dla serwera embeddingów, znaki", None, _ZALEZNIE),
    Key("CHROMA_RAG_EMBED_INPUT_TYPE", "pole input_type dla modeli, które je znają (1/0)", "1"),
    Key("CHROMA_RAG_PREFIKS_ZAPYTANIA", "prefiks pytania dla serwera embeddingów", None, _ZALEZNIE),
    Key("CHROMA_RAG_PREFIKS_FRAGMENTU", "prefiks fragmentu dla serwera embeddingów", None, _ZALEZNIE),
    Key("CHROMA_RAG_LLM_URL", "adres API modelu czatu (pytaj)", DEFAULT_LLM_URL),
    Key("CHROMA_RAG_LLM_MODEL", "model czatu", DEFAULT_LLM_MODEL),
    Key("CHROMA_RAG_LLM_KEY", "klucz API modelu czatu", None, "OPENROUTER_API_KEY / OPENAI_API_KEY", secret=True),
    Key("OPENROUTER_API_KEY", "klucz OpenRouter", secret=True),
    Key("OPENAI_API_KEY", "klucz OpenAI", secret=True),
    Key("CHROMA_RAG_LLM_TIMEOUT", "limit czasu zapytania do modelu czatu, s", DEFAULT_LLM_TIMEOUT_S),
    Key("CHROMA_RAG_LLM_RETRIES", "ponowienia zapytania do modelu czatu", DEFAULT_LLM_RETRIES),
    # pytaj asks the chat model anyway, so it plans unless told not to; szukaj and ocena only when asked
    Key("CHROMA_RAG_PRZEPISZ", "plan zapytania od modelu czatu (1/0)", None, "pytaj: 1, szukaj i ocena: 0",
        option="--przepisz / --bez-planu"),
    Key("CHROMA_RAG_PROG", "próg pewności szukaj/pytaj/ocena (0 wyłącza)", DEFAULT_THRESHOLD, option="--prog"),
    Key("CHROMA_RAG_K", "ile fragmentów szukaj pokazuje i pytaj daje modelowi", DEFAULT_COUNT, option="-k"),
    Key("CHROMA_RAG_TOKEN", "wspólny token strony, API i MCP (serwuj)", secret=True, option="--token-plik"),
)}
_injected: set[str] = set()  # keys that apply() copied from files into os.environ


@dataclass(frozen=True)
class Setting:
    key: str
    value: str | None
    source: str  # "zmienna środowiska", "plik /ścieżka/chroma-rag.toml", "domyślnie"

    @property
    def shown(self) -> str:
        """Wartość do wypisania: klucze i tokeny zamaskowane."""
        if self.value is None:
            return KEYS[self.key].shown_default
        return mask(self.value) if KEYS[self.key].secret else self.value


def mask(secret: str) -> str:
    """„sk-o…7f3a”: tyle, żeby rozpoznać klucz, za mało, żeby go użyć."""
    return f"{secret[:4]}…{secret[-4:]}" if len(secret) >= 16 else "…"


def user_config_file() -> Path:
    import platformdirs

    return platformdirs.user_config_path(APP_NAME) / CONFIG_NAME


def find_upward(name: str, start: Path | None = None) -> Path | None:
    """Najbliższy plik ``name`` w folderze ``start`` (domyślnie bieżącym) albo w którymś wyżej."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / name
        if path.is_file():
            return path
    return None


def config_files(start: Path | None = None) -> list[Path]:
    """Pliki ustawień od najważniejszego: ``.env``, najbliższy ``chroma-rag.toml``, plik użytkownika."""
    files = [find_upward(".env", start), find_upward(CONFIG_NAME, start), user_config_file()]
    return [path for path in files if path is not None and path.is_file()]


def read_file(path: Path) -> dict[str, str]:
    """Klucze jednego pliku (``.env`` albo TOML) jako napisy, jak w zmiennych środowiska."""
    if path.suffix != ".toml":
        from dotenv import dotenv_values

        return {key: value for key, value in dotenv_values(path).items() if value is not None}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"Nie da się odczytać pliku ustawień {path}: {exc}. Popraw go albo usuń.") from exc
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise UserError(
            f"Plik ustawień {path} ma nieznane klucze: {', '.join(unknown)}; dozwolone są nazwy zmiennych "
            f"środowiska, np. CHROMA_RAG_BAZA, CHROMA_RAG_LLM_MODEL (lista: chroma-rag konfiguracja)."
        )
    values = {}
    for key, value in data.items():
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif not isinstance(value, str | int | float):
            raise UserError(f"W pliku {path} klucz {key} musi być napisem, liczbą albo true/false.")
        value = str(value)
        if KEYS[key].path and value and not Path(value).expanduser().is_absolute():
            value = str(path.parent / value)
        values[key] = value
    return values


def resolve(environ: MutableMapping[str, str] | None = None, start: Path | None = None) -> dict[str, Setting]:
    """Skuteczna wartość i źródło każdego klucza (bez opcji wiersza poleceń – te zna tylko CLI)."""
    if environ is None:
        environ = {key: value for key, value in os.environ.items() if key not in _injected}
    settings = {key: Setting(key, environ[key], "zmienna środowiska") for key in KEYS if environ.get(key)}
    for path in config_files(start):
        for key, value in read_file(path).items():
            if key in KEYS and key not in settings and value:
                settings[key] = Setting(key, value, f"plik {path}")
    return {key: settings.get(key, Setting(key, None, "domyślnie")) for key in KEYS}


def values(start: Path | None = None) -> dict[str, str]:
    """Ustawione wartości (środowisko, potem pliki) bez zmieniania ``os.environ`` – dla kodu, który czyta
    ustawienia także poza CLI i ``Index`` (``LlmSettings.from_env``)."""
    return {key: setting.value for key, setting in resolve(start=start).items() if setting.value is not None}


def apply(environ: MutableMapping[str, str] | None = None, start: Path | None = None) -> list[str]:
    """Wpisuje do środowiska wartości z plików tam, gdzie zmiennej nie ma; zwraca wpisane klucze."""
    target = os.environ if environ is None else environ
    added = []
    for setting in resolve(environ, start).values():
        if setting.value is not None and setting.key not in target:
            target[setting.key] = setting.value
            added.append(setting.key)
    if environ is None:
        _injected.update(added)
    return added


@contextmanager
def applied() -> Iterator[None]:
    """Ustawienia z plików na czas jednego wywołania CLI (po nim środowisko wraca do stanu sprzed)."""
    added = apply()
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)
            _injected.discard(key)
