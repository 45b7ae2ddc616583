"""Ustawienia z pliku: ``chroma-rag.toml`` (w bieżącym folderze lub wyżej, potem w folderze konfiguracji
użytkownika) i ``.env`` (w bieżącym folderze lub wyżej), z tymi samymi kluczami co zmienne środowiska.

Kolejność: opcja w wierszu poleceń > zmienna środowiska > ``.env`` > najbliższy ``chroma-rag.toml`` >
``chroma-rag.toml`` użytkownika > wartość domyślna. Wartości z plików trafiają do ``os.environ`` tylko tam,
gdzie zmiennej nie ustawiono, więc kod czytający środowisko (``Store``, ``LlmSettings.from_env``, modele
embeddingów) widzi je bez zmian, a opcje wiersza poleceń nadal mają pierwszeństwo."""

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

CONFIG_NAME = "chroma-rag.toml"
APP_NAME = "chroma-rag"

# Key → (what it sets, default as the user reads it). The keys are the environment variables' names.
KEYS: dict[str, tuple[str, str]] = {
    "CHROMA_RAG_BAZA": ("folder bazy Chromy", "./chroma_db"),
    "CHROMA_RAG_SERWER": ("adres serwera Chromy zamiast folderu", "brak (folder)"),
    "CHROMA_RAG_SERWER_TOKEN": ("token serwera Chromy", "brak"),
    "CHROMA_RAG_MODEL": ("model embeddingów", "model, którym zbudowano bazę, albo lokalny"),
    "CHROMA_RAG_EMBED_URL": ("adres serwera embeddingów openai:", "brak"),
    "CHROMA_RAG_EMBED_KEY": ("klucz serwera embeddingów openai:", "OPENAI_API_KEY"),
    "OLLAMA_URL": ("adres Ollamy dla modeli ollama:", "http://localhost:11434"),
    "CHROMA_RAG_LLM_URL": ("adres API modelu czatu (pytaj)", "https://openrouter.ai/api/v1"),
    "CHROMA_RAG_LLM_MODEL": ("model czatu", "google/gemini-2.5-flash"),
    "CHROMA_RAG_LLM_KEY": ("klucz API modelu czatu", "OPENROUTER_API_KEY / OPENAI_API_KEY"),
    "OPENROUTER_API_KEY": ("klucz OpenRouter", "brak"),
    "OPENAI_API_KEY": ("klucz OpenAI", "brak"),
    "CHROMA_RAG_LLM_TIMEOUT": ("limit czasu zapytania do modelu czatu, s", "60"),
    "CHROMA_RAG_LLM_RETRIES": ("ponowienia zapytania do modelu czatu", "3"),
    "CHROMA_RAG_PROG": ("próg pewności szukaj/pytaj/ocena (0 wyłącza)", str(DEFAULT_THRESHOLD)),
    "CHROMA_RAG_K": ("ile fragmentów szukaj pokazuje i pytaj daje modelowi", str(DEFAULT_COUNT)),
    "CHROMA_RAG_PRZEPISZ": ("planowanie zapytania modelem czatu (1/0)", "0"),
    "CHROMA_RAG_CACHE": ("folder danych pochodnych w trybie serwera", "~/.cache/chroma-rag"),
}
_PATH_KEYS = ("CHROMA_RAG_BAZA", "CHROMA_RAG_CACHE")  # relative to the file that sets them, not to the cwd
_SECRET_MARKERS = ("KEY", "TOKEN")
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
            return KEYS[self.key][1]
        if any(marker in self.key for marker in _SECRET_MARKERS):
            return mask(self.value)
        return self.value


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
        if key in _PATH_KEYS and value and not Path(value).expanduser().is_absolute():
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
