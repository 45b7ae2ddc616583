"""Publiczne API Pythona; CLI jest cienką warstwą nad nim.

    from chroma_rag import Index
    index = Index("chroma_db")
    index.add(["dane/"])
    for hit in index.search("Ile dni urlopu?", k=3, filters=SearchFilters(types=["dokument"])):
        print(hit.file, hit.art, hit.similarity)
    print(index.ask("Ile dni urlopu?").text)
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .answering.answer import Answer, ask, searched_again
from .answering.conversation import (
    CONVERSATIONS_FOLDER,
    DEFAULT_LIMITS,
    Conversation,
    ConversationLimits,
    ConversationStore,
    Turn,
)
from .answering.conversation import now as conversation_time
from .derived import DEFAULT_LEMMATIZER
from .embedding.embedder import DEFAULT_MODEL, Embedder, get_embedder, known_dim
from .errors import Surface, UsageError
from .filters import SearchFilters
from .indexing.consistency import ConsistencyReport, check
from .indexing.removal import remove_file
from .indexing.report import IndexReport, Progress
from .indexing.sync import SyncOptions, sync
from .ingest.ocr import OcrEngine
from .ingest.preview import preview as preview  # re-exported: chroma_rag.api.preview(path)
from .llm import LlmSettings
from .models import Exchange, Plan, SearchResult, ShownNames
from .retrieval.planning import Planner, PlanningStats
from .retrieval.search import DEFAULT_MODE, DEFAULT_THRESHOLD, SearchRequest
from .retrieval.service import Planning, Retrieval
from .retrieval.units import Unit
from .retrieval.validation import normalize_type
from .storage.documents import owner_of
from .storage.locking import DEFAULT_WAIT, read_session
from .storage.registry import Registry
from .storage.store import Store


@dataclass
class FileInfo:
    """Zaindeksowany plik: nazwa, rodzaj, rok, liczba fragmentów, modele, którymi go zaindeksowano, i akt: tytuł
    z metadanych fragmentów (``tytul``), nazwa, pod jaką się go cytuje (``act``: „Kodeks postępowania cywilnego”,
    „o własności lokali”; pusta dla dokumentu, który nie jest aktem), i zwyczajowy skrót (``short``: „k.p.c.”)."""

    name: str
    path: str
    type: str
    year: int
    chunks: int
    models: list[str] = field(default_factory=list)
    other_paths: list[str] = field(default_factory=list)  # the same document (content) under other paths
    title: str = ""
    act: str = ""
    short: str = ""

    @classmethod
    def titled(cls, name: str, path: str, doc_type: str, year: int, chunks: int, title: str) -> FileInfo:
        from .ingest.acts import act_name, short_name

        return cls(name, path, doc_type, year, chunks, title=title, act=act_name(title), short=short_name(title))

    @property
    def label(self) -> str:
        """Nazwa do pokazania: „Kodeks pracy”, „Ustawa o własności lokali”, tytuł dokumentu użytkownika."""
        from .retrieval.act_labels import act_label

        return act_label(self.title)

    def to_json(self) -> dict[str, object]:
        return {
            "plik": self.name,
            "sciezka": self.path,
            "typ": self.type,
            "rok": self.year or None,  # 0: the document gives no year
            "fragmenty": self.chunks,
            "modele": self.models,
            "inne_sciezki": self.other_paths,
            "tytul": self.title,
            "akt": self.act,
            "skrot": self.short,
        }


class Index:
    """Indeks dokumentów w folderze bazy Chromy albo na serwerze Chromy (``server="http://host:8000"``,
    albo zmienna ``CHROMA_RAG_SERWER``; token ``token`` / ``CHROMA_RAG_SERWER_TOKEN``).

    Model embeddingów: opis ``model`` (i ``dimensions``) albo gotowy obiekt ``embedder`` (``Embedder``: własny
    model albo już wczytany, wspólny dla kilku indeksów – bez drugiego wczytywania)."""

    def __init__(
        self,
        path: str | Path | None = None,
        model: str | None = None,
        dimensions: int | None = None,
        lemmatizer: str = DEFAULT_LEMMATIZER,
        server: str | None = None,
        token: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if embedder is not None and (model is not None or dimensions is not None):
            raise UsageError("Podaj gotowy model embeddingów albo jego opis (model, wymiary), nie jedno i drugie.")
        config.apply()  # chroma-rag.toml and .env, as in the CLI (only where the environment sets nothing)
        self.store = Store(Path(path) if path else None, server=server, token=token)
        self._model_spec = model
        self._dimensions = dimensions
        self._embedder = embedder
        self._model_lock = threading.Lock()  # two first requests of a server would load the model twice
        self.retrieval = Retrieval(self.store, lambda: self.embedder, lemmatizer)

    def _resolve_model_spec(self) -> str:
        """Model jawnie podany, z ``CHROMA_RAG_MODEL``, a gdy baza ma jedną kolekcję – ten, którym ją
        zbudowano."""
        spec = self._model_spec or os.environ.get("CHROMA_RAG_MODEL")
        if spec:
            return spec
        models = list(self.store.indexed_models())
        return models[0] if len(models) == 1 else DEFAULT_MODEL

    @property
    def embedder(self) -> Embedder:
        return self._get_embedder(DEFAULT_WAIT)

    def _get_embedder(self, wait: float, on_wait: Callable[[str], None] | None = None) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        with self._model_lock:
            if self._embedder is None:
                if self.store.exists() and not (self._model_spec or os.environ.get("CHROMA_RAG_MODEL")):
                    with read_session(self.store, wait, on_wait):
                        spec = self._resolve_model_spec()
                else:
                    spec = self._resolve_model_spec()
                self._embedder = get_embedder(spec, self._dimensions)
            return self._embedder

    def add(
        self,
        paths: Iterable[str | Path],
        doc_type: str | None = None,
        progress: Progress | None = None,
        prune: bool = False,
        force: bool = False,
        wait: float = DEFAULT_WAIT,
        on_wait: Callable[[str], None] | None = None,
        ocr: OcrEngine | None = None,
    ) -> IndexReport:
        """Synchronizuje indeks z plikami i folderami (rekurencyjnie): niezmienione pomija, zmienione zastępuje,
        ``prune`` usuwa pliki, które zniknęły z podanych folderów (pusty folder tylko z ``force``). Strony PDF bez
        warstwy tekstowej czyta ``ocr`` (domyślnie ``tesseract`` z PATH)."""
        self.store.require_writable()
        doc_type = normalize_type(doc_type) if doc_type is not None else None
        options = SyncOptions(doc_type=doc_type, prune=prune, force=force, wait=wait, ocr=ocr or OcrEngine())
        embedder = self._get_embedder(wait, on_wait)
        known_dim(embedder)  # a remote model's errors surface before the DB is created or changed
        report = sync([Path(p) for p in paths], self.store, embedder, options, progress, on_wait)
        started = time.perf_counter()
        self._refresh_keywords(wait, on_wait)
        report.seconds["indeks slow"] = time.perf_counter() - started
        return report

    def _refresh_keywords(self, wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None) -> None:
        """Po zmianie kolekcji indeks słów dogania ją (dodane, zastąpione, usunięte fragmenty)."""
        with read_session(self.store, wait, on_wait):
            if self.embedder.model_id in self.store.indexed_models():
                self.sync_keywords()

    def search(
        self,
        question: str,
        k: int = 5,
        filters: SearchFilters | None = None,
        mode: str = DEFAULT_MODE,
        threshold: float | None = DEFAULT_THRESHOLD,
        *,
        rewrite: bool = False,
        fresh_plan: bool = False,
        settings: LlmSettings | None = None,
        earlier: Sequence[Exchange] = (),
    ) -> SearchResult:
        """Fragmenty najlepiej pasujące do pytania, spełniające filtry (najlepszy pierwszy); pusta lista
        z powodem (``reason``), gdy nic nie przekracza progu pewności (``threshold=None`` wyłącza próg).

        ``rewrite``: najpierw plan zapytania od modelu czatu (``settings`` albo ``CHROMA_RAG_LLM_*``), zob.
        ``planning``; plan jest w ``SearchResult.plan``, a jego błąd tylko ostrzega (wyszukiwanie bez planu).
        ``fresh_plan``: pomija plany zapamiętane na dysku. ``earlier``: pytanie dopowiada rozmowę o tych turach –
        model planujący dostaje je w tym samym zapytaniu i pisze pytanie samodzielne (``Plan.standalone``), którego
        się potem szuka."""
        return self.retrieval.search(SearchRequest(question, k, filters, mode, threshold),
                                     Planning(rewrite, fresh_plan, settings), earlier)

    def planner(self, settings: LlmSettings | None = None) -> Planner:
        """Planista zapytań tej bazy (plany zapamiętane w jej katalogu danych pochodnych, ``plany/``)."""
        return self.retrieval.planner(settings)

    def planning_messages(
        self, question: str, filters: SearchFilters | None = None, mode: str = DEFAULT_MODE,
        history: Sequence[Turn] = (),
    ) -> list[dict[str, str]]:
        """Wiadomości zapytania planowania dla pytania (``pytaj --pokaz-prompt``), bez pytania modelu; ``history`` –
        wcześniejsze tury rozmowy, już przycięte limitami (``Conversation.history``)."""
        return self.retrieval.planning_messages(question, filters, mode, exchanges(history))

    @property
    def planning_stats(self) -> PlanningStats:
        return self.retrieval.planning_stats

    def ask(
        self,
        question: str,
        k: int = 5,
        filters: SearchFilters | None = None,
        threshold: float | None = DEFAULT_THRESHOLD,
        *,
        mode: str = DEFAULT_MODE,
        rewrite: bool | None = None,
        fresh_plan: bool = False,
        on_token: Callable[[str], None] | None = None,
        on_plan: Callable[[Plan], None] | None = None,
        on_sources: Callable[[SearchResult], None] | None = None,
        settings: LlmSettings | None = None,
        surface: Surface = "cli",
        conversation: Conversation | None = None,
        limits: ConversationLimits = DEFAULT_LIMITS,
    ) -> Answer:
        """Odpowiedź modelu czatu na podstawie ``k`` najlepszych fragmentów, z cytatami [plik, art. N].

        ``rewrite``: wyszukiwanie planowane tym samym modelem (``search(rewrite=True)``); domyślnie tak,
        chyba że ``CHROMA_RAG_PRZEPISZ=0`` (``LlmSettings.planning``).
        Gdy nic nie pasuje do filtrów albo nic nie przekracza progu ``threshold``, odpowiedź to
        „Nie ma tego w dokumentach.” bez pytania modelu o odpowiedź. Model: ``settings`` albo zmienne
        ``CHROMA_RAG_LLM_*`` / plik ``.env`` (zob. ``LlmSettings.from_env``). ``on_plan`` dostaje plan zaraz
        po wyszukiwaniu, przed odpowiedzią (CLI pokazuje go nad strumieniem odpowiedzi), ``on_sources`` – znalezione
        fragmenty, zanim model zacznie pisać (strona pokazuje źródła od razu). ``conversation``: pytanie
        dopowiada tę rozmowę – model dostaje jej ostatnie tury (``limits``), a wyszukiwanie pytanie samodzielne;
        rozmowę z nową turą zapisuje ``remember``. ``surface``: czyim
        językiem ``on_token`` dostaje zdanie o filtrach, które nic nie wybrały (``Answer.message``)."""
        settings = settings or LlmSettings.from_env()
        planned = rewrite if rewrite is not None else settings.planning is not False
        # without a usable chat model the answer's own request says so; a planning warning would repeat it
        planned = planned and not (settings.needs_key and not settings.key)

        failed_plan = False  # a model that could not plan this question is not asked for a plan again

        def retrieve(query: str, earlier: list[Turn]) -> SearchResult:
            nonlocal failed_plan
            found = self.search(query, k, filters, mode, threshold, rewrite=planned and not failed_plan,
                                fresh_plan=fresh_plan, settings=settings, earlier=exchanges(earlier))
            failed_plan = failed_plan or found.plan_failed
            if on_plan is not None and found.plan is not None:
                on_plan(found.plan)
            # the page shows sources as soon as they are known: not those of a search ``ask`` repeats
            if on_sources is not None and not searched_again(found, earlier):
                on_sources(found)
            return found

        history, dropped = conversation.history(limits) if conversation is not None else ([], 0)
        return ask(question, retrieve, settings=settings, on_token=on_token, surface=surface, history=history,
                   dropped_turns=dropped, limits=limits, planned=planned)

    @property
    def conversations(self) -> ConversationStore:
        """Zapisane rozmowy tej bazy (w folderze danych bazy, ``rozmowy/``)."""
        return ConversationStore(self.store.work_dir / CONVERSATIONS_FOLDER)

    def remember(self, conversation: Conversation, question: str, answer: Answer) -> None:
        """Dopisuje do rozmowy turę z pytaniem i odpowiedzią (z jej fragmentami) i zapisuje rozmowę."""
        # sources named as the team sees them: a saved conversation opens by a link, on the page, without server paths
        conversation.add(Turn(question=question.strip(), standalone=answer.standalone or question.strip(),
                              answer=answer.message("web"),
                              sources=self.shown_names().hits(hit.to_json() for hit in answer.hits),
                              invented=[str(c) for c in answer.invalid_citations], at=conversation_time(),
                              documents=self.documents_version()))
        self.conversations.save(conversation)

    def shown_names(self) -> ShownNames:
        """Nazwy zaindeksowanych plików, pod którymi widzi je zespół zamiast ścieżek serwera: jak w cytatach
        i ``lista`` („regulamin.md”, „it/regulamin.md” przy imienniku); pod nimi plik przyjmują ``unit`` i filtr
        plików. Pusta baza – bez nazw (ścieżka ma wtedy samą nazwę pliku, ``ShownNames.name``)."""
        if not self.store.exists():
            return ShownNames()
        with read_session(self.store):
            indexed, copies = self.retrieval.file_names()
        return ShownNames.of({path for _, path in indexed if path not in copies}, copies)

    def documents_version(self) -> str:
        """Znacznik ostatniej zmiany plików indeksu (zaindeksowanie, usunięcie); pusty, gdy nieznany."""
        if not self.store.exists():
            return ""
        with read_session(self.store):
            return Registry.version(self.store.client)

    def unit(self, file: str, art: str) -> Unit:
        """Cała jednostka ``art`` pliku ``file`` (nazwa jak w ``files()`` albo pełna ścieżka, gdy ta sama nazwa
        należy do kilku różnych plików): wszystkie jej części sklejone, ścieżka nagłówków, strony i brzmienia
        (obecne i przyszłe osobno)."""
        return self.retrieval.unit(file, art)

    def evaluate(
        self,
        questions: Path,
        k: int = 10,
        mode: str = DEFAULT_MODE,
        threshold: float | None = DEFAULT_THRESHOLD,
        *,
        rewrite: bool = False,
        fresh_plan: bool = False,
        settings: LlmSettings | None = None,
    ) -> dict[str, Any]:
        """``ocena``: hit@1/3/5/10, MRR, odmowy progu i pudła dla pytań z pliku JSONL; z ``rewrite`` –
        wyszukiwanie planowane i koszt planowania (``planowanie``)."""
        return self.retrieval.evaluate(questions, k, mode, threshold, Planning(rewrite, fresh_plan, settings))

    def sync_keywords(self) -> None:
        """Indeks słów zgodny z fragmentami kolekcji (dodane, zastąpione, usunięte). Pełne porównanie wersji
        fragmentów tylko wtedy, gdy znacznik zmiany kolekcji różni się od zapisanego z indeksem."""
        self.retrieval.sync_keywords()

    def files(self) -> list[FileInfo]:
        """Zaindeksowane pliki (wg rejestru: tylko zapisane w całości) ze wszystkich modeli bazy."""
        self.store.require_existing()
        with read_session(self.store):
            records = Registry(self.store.client).records()
            # the act's title as its fragments carry it; read once per collection version (Retrieval.file_titles)
            titles: dict[str, dict[str, str]] = {
                model: self.retrieval.file_titles(model, dim) for model, dim in self.store.indexed_models().items()
            }
        infos: dict[str, FileInfo] = {}
        for record in sorted(records, key=lambda r: (r.same_as is not None, r.model)):
            owner = owner_of(records, record) or record
            title = titles.get(owner.model, {}).get(owner.name) or ""
            info = infos.setdefault(
                owner.path,
                FileInfo.titled(owner.name, owner.path, owner.doc_type, owner.year, len(owner.chunk_ids), title),
            )
            if record.model not in info.models:
                info.models.append(record.model)
            if record.path != owner.path and record.path not in info.other_paths:
                info.other_paths.append(record.path)
        return sorted(infos.values(), key=lambda info: (info.name, info.path))

    def remove(self, name: str, wait: float = DEFAULT_WAIT) -> int:
        """Usuwa plik (nazwa albo ścieżka) ze wszystkich kolekcji; zwraca liczbę usuniętych fragmentów (0, gdy
        ten sam dokument zostaje pod inną ścieżką). Nazwa kilku plików w różnych folderach to błąd z ich listą."""
        self.store.require_existing()
        self.store.require_writable()
        return remove_file(
            self.store, self.indexed_file(name), wait, self.retrieval.sync_keywords,
            lambda: [info.name for info in self.files()]
        )

    def indexed_file(self, name: str) -> str:
        """Plik indeksu, który użytkownik ma na myśli: ścieżka, nazwa (z folderem przy imiennikach, jak w cytacie),
        nazwa bez rozszerzenia albo jednoznaczny początek nazwy; nieznany – ``UnknownFile`` z najbliższymi."""
        return self.retrieval.indexed_file(name)

    def check(self, repair: bool = False, wait: float = DEFAULT_WAIT) -> ConsistencyReport:
        """Zgodność rejestru z kolekcjami i odnajdywalność fragmentów; ``repair`` naprawia, co się da."""
        if repair:
            self.store.require_writable()
        return check(self.store, repair, wait)


def exchanges(turns: Iterable[Turn]) -> list[Exchange]:
    """Tury rozmowy tak, jak je widzi model planujący: pytanie i odpowiedź."""
    return [Exchange(turn.question, turn.answer) for turn in turns]
