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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .answering.answer import Answer, ask
from .embedding.embedder import DEFAULT_MODEL, Embedder, get_embedder, known_dim
from .errors import UserError
from .filters import SearchFilters
from .indexing.consistency import ConsistencyReport, check
from .indexing.file_writes import drop_file
from .indexing.report import IndexReport, Progress
from .indexing.sync import SyncOptions, sync
from .ingest.preview import preview as preview  # re-exported: chroma_rag.api.preview(path)
from .llm import ChatClient, LlmSettings
from .models import Hit, Plan, SearchResult
from .retrieval.evaluation import Question, evaluate, load_questions, split_by_index
from .retrieval.keyword import DEFAULT_LEMMATIZER, KeywordIndex, chunk_versions, collection_texts, index_folder
from .retrieval.planning import LISTED_DOCUMENTS, Catalog, Planner, PlanningStats, catalog_from, plan_messages
from .retrieval.search import DEFAULT_MODE, DEFAULT_THRESHOLD, Searcher, SearchRequest, validate
from .retrieval.units import Unit, assemble_unit, unit_file, unit_where
from .retrieval.validation import checked_search, normalize_type, resolve_files
from .storage.collection import ChunkCollection
from .storage.documents import owner_of
from .storage.locking import DEFAULT_WAIT, read_session, write_session
from .storage.registry import Registry
from .storage.store import Store, collection_name


@dataclass
class FileInfo:
    """Zaindeksowany plik: nazwa, rodzaj, rok, liczba fragmentów i modele, którymi go zaindeksowano."""

    name: str
    path: str
    type: str
    year: int
    chunks: int
    models: list[str] = field(default_factory=list)
    other_paths: list[str] = field(default_factory=list)  # the same document (content) under other paths

    def to_json(self) -> dict[str, object]:
        return {
            "plik": self.name,
            "sciezka": self.path,
            "typ": self.type,
            "rok": self.year,
            "fragmenty": self.chunks,
            "modele": self.models,
            "inne_sciezki": self.other_paths,
        }


class Index:
    """Indeks dokumentów w folderze bazy Chromy albo na serwerze Chromy (``server="http://host:8000"``,
    albo zmienna ``CHROMA_RAG_SERWER``; token ``token`` / ``CHROMA_RAG_SERWER_TOKEN``)."""

    def __init__(
        self,
        path: str | Path | None = None,
        model: str | None = None,
        dimensions: int | None = None,
        lemmatizer: str = DEFAULT_LEMMATIZER,
        server: str | None = None,
        token: str | None = None,
    ) -> None:
        config.apply()  # chroma-rag.toml and .env, as in the CLI (only where the environment sets nothing)
        self.store = Store(Path(path) if path else None, server=server, token=token)
        self._model_spec = model
        self._dimensions = dimensions
        self._embedder: Embedder | None = None
        self._lemmatizer = lemmatizer
        self._keywords: dict[str, KeywordIndex] = {}
        self._searchers: dict[str, tuple[Any, str, Searcher]] = {}
        self._planner: Planner | None = None

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
        if self._embedder is None:
            if self.store.exists() and not (self._model_spec or os.environ.get("CHROMA_RAG_MODEL")):
                with read_session(self.store, wait, on_wait):
                    spec = self._resolve_model_spec()
            else:
                spec = self._resolve_model_spec()
            self._embedder = get_embedder(spec, self._dimensions)
        return self._embedder

    def _collection(self) -> ChunkCollection:
        return self.store.chunks(self.embedder.model_id, known_dim(self.embedder))

    def add(
        self,
        paths: Iterable[str | Path],
        doc_type: str | None = None,
        progress: Progress | None = None,
        prune: bool = False,
        force: bool = False,
        wait: float = DEFAULT_WAIT,
        on_wait: Callable[[str], None] | None = None,
    ) -> IndexReport:
        """Synchronizuje indeks z plikami i folderami (rekurencyjnie): niezmienione pomija, zmienione zastępuje,
        ``prune`` usuwa pliki, które zniknęły z podanych folderów (pusty folder tylko z ``force``)."""
        self.store.require_writable()
        doc_type = normalize_type(doc_type) if doc_type is not None else None
        options = SyncOptions(doc_type=doc_type, prune=prune, force=force, wait=wait)
        embedder = self._get_embedder(wait, on_wait)
        known_dim(embedder)  # a remote model's errors surface before the DB is created or changed
        report = sync([Path(p) for p in paths], self.store, embedder, options, progress, on_wait)
        self._refresh_keywords(wait, on_wait)
        return report

    def _refresh_keywords(self, wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None) -> None:
        """Po zmianie kolekcji indeks słów dogania ją (dodane, zastąpione, usunięte fragmenty)."""
        with read_session(self.store, wait, on_wait):
            if self.embedder.model_id in self.store.indexed_models():
                self.sync_keywords(self._collection())

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
    ) -> SearchResult:
        """Fragmenty najlepiej pasujące do pytania, spełniające filtry (najlepszy pierwszy); pusta lista
        z powodem (``reason``), gdy nic nie przekracza progu pewności (``threshold=None`` wyłącza próg).

        ``rewrite``: najpierw plan zapytania od modelu czatu (``settings`` albo ``CHROMA_RAG_LLM_*``), zob.
        ``planning``; plan jest w ``SearchResult.plan``, a jego błąd tylko ostrzega (wyszukiwanie bez planu).
        ``fresh_plan``: pomija plany zapamiętane na dysku."""
        mode, filters = checked_search(k, mode, threshold, filters)
        self.store.require_existing()
        _ = self.embedder  # resolved before the read session: it may need its own short read of the DB
        with read_session(self.store):
            if filters is not None and filters.files:
                filters = resolve_files(filters, *self._file_names())
            searcher = self.searcher(mode)
            request = SearchRequest(question, k, filters, mode, threshold)
            if rewrite:
                request.plan = self._plan(searcher, request, settings, fresh_plan)
            return searcher.search(request)

    def _plan(
        self, searcher: Searcher, request: SearchRequest, settings: LlmSettings | None, fresh: bool
    ) -> Plan:
        validate(request)
        planner = self.planner(settings)
        planner.use_cache = not fresh
        return planner.plan(request.question, self._catalog(searcher, request))

    def planner(self, settings: LlmSettings | None = None) -> Planner:
        """Planista zapytań tej bazy (plany zapamiętane w jej katalogu danych pochodnych, ``plany/``)."""
        if self._planner is None or (settings is not None and self._planner.client.settings != settings):
            client = ChatClient(settings or LlmSettings.from_env())
            self._planner = Planner(client, self.store.work_dir / "plany")
        return self._planner

    def planning_messages(
        self, question: str, filters: SearchFilters | None = None, mode: str = DEFAULT_MODE
    ) -> list[dict[str, str]]:
        """Wiadomości zapytania planowania dla pytania (``pytaj --pokaz-prompt``), bez pytania modelu."""
        self.store.require_existing()
        _ = self.embedder
        with read_session(self.store):
            searcher = self.searcher(mode)
            request = SearchRequest(question, 5, filters, mode)
            validate(request)
            return plan_messages(request.question, self._catalog(searcher, request))

    @property
    def planning_stats(self) -> PlanningStats:
        return self._planner.stats if self._planner is not None else PlanningStats()

    def _catalog(self, searcher: Searcher, request: SearchRequest) -> Catalog:
        """Dokumenty dla promptu planowania; przy wielu plikach najpierw te, które wyszukiwanie bez planu
        stawia najwyżej."""
        titles = searcher.titles
        ranked: list[str] = []
        if len(titles) > LISTED_DOCUMENTS:
            unplanned = SearchRequest(request.question, searcher.fusion.depth, request.filters, request.mode)
            ranked = [hit.file for hit in searcher.rank(unplanned)]
        types, years = searcher.file_facts
        return catalog_from(titles, types, years, searcher.units, ranked)

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
        settings: LlmSettings | None = None,
    ) -> Answer:
        """Odpowiedź modelu czatu na podstawie ``k`` najlepszych fragmentów, z cytatami [plik, art. N].

        ``rewrite``: wyszukiwanie planowane tym samym modelem (``search(rewrite=True)``); domyślnie tak,
        chyba że ``CHROMA_RAG_PRZEPISZ=0`` (``LlmSettings.planning``).
        Gdy nic nie pasuje do filtrów albo nic nie przekracza progu ``threshold``, odpowiedź to
        „Nie ma tego w dokumentach.” bez pytania modelu o odpowiedź. Model: ``settings`` albo zmienne
        ``CHROMA_RAG_LLM_*`` / plik ``.env`` (zob. ``LlmSettings.from_env``). ``on_plan`` dostaje plan zaraz
        po wyszukiwaniu, przed odpowiedzią (CLI pokazuje go nad strumieniem odpowiedzi)."""
        settings = settings or LlmSettings.from_env()
        planned = rewrite if rewrite is not None else settings.planning is not False
        # without a usable chat model the answer's own request says so; a planning warning would repeat it
        planned = planned and not (settings.needs_key and not settings.key)

        def retrieve(query: str) -> SearchResult:
            found = self.search(
                query, k, filters, mode, threshold, rewrite=planned, fresh_plan=fresh_plan, settings=settings
            )
            if on_plan is not None and found.plan is not None:
                on_plan(found.plan)
            return found

        return ask(question, retrieve, settings=settings, on_token=on_token)

    def unit(self, file: str, art: str) -> Unit:
        """Cała jednostka ``art`` pliku ``file`` (nazwa jak w ``files()`` albo pełna ścieżka, gdy ta sama nazwa
        należy do kilku różnych plików): wszystkie jej części sklejone, ścieżka nagłówków, strony i brzmienia
        (obecne i przyszłe osobno)."""
        self.store.require_existing()
        _ = self.embedder
        with read_session(self.store):
            collection = self._collection()
            selection = unit_file(file, *self._file_names())
            shown = selection.files[0] if selection.files else file
            return assemble_unit(shown, art, collection.hits(collection.ids(unit_where(selection, art))))

    def _file_names(self) -> tuple[list[tuple[str, str]], dict[str, str]]:
        """Pary (nazwa, ścieżka) z rejestru i druga ścieżka dokumentu → ścieżka z jego fragmentami – do
        rozpoznania pliku, który wpisał użytkownik (``resolve_files``)."""
        records = Registry(self.store.client).records()
        return [(r.name, r.path) for r in records], {r.path: r.same_as for r in records if r.same_as}

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
        mode, _ = checked_search(k, mode, threshold, None)
        loaded = load_questions(Path(questions))
        self.store.require_existing()
        _ = self.embedder
        with read_session(self.store):
            searcher = self.searcher(mode)
            kept, missing = split_by_index(loaded, set(searcher.titles))
            plans: dict[str, Plan | None] = {}

            def ranker(question: Question) -> list[Hit]:
                request = SearchRequest(question.text, k, question.filters, mode)
                if rewrite:
                    request.plan = self._plan(searcher, request, settings, fresh_plan)
                plans[question.text] = request.plan
                return searcher.rank(request)

            def refuses(question: Question, hits: list[Hit]) -> bool:
                return searcher.refuses(question.text, hits, threshold, plans.get(question.text), question.filters)

            result = evaluate(kept, ranker, refuses)
        if rewrite:
            result["planowanie"] = self.planning_stats.to_json()
        result["pominiete"] = {"pytania": len(loaded) - len(kept), "pliki": missing}
        return result

    def searcher(self, mode: str = DEFAULT_MODE) -> Searcher:
        """Wyszukiwarka kolekcji tego modelu; indeks słów synchronizowany, gdy tryb go używa. Zapamiętana
        do następnego zapisu do kolekcji (jej znacznik zmiany – także zapisu kogoś innego na serwerze), więc
        kolejne pytania nie płacą za jej budowę."""
        client = self.store.client  # searchers hold collections of one client: reuse them only with it
        cached = self._searchers.get(mode)
        if cached is not None and cached[0] is client and cached[2].collection.version() == cached[1]:
            return cached[2]
        collection = self._collection()
        version = collection.version()
        keywords = self.sync_keywords(collection) if mode != "wektor" else None
        searcher = Searcher(collection, self.embedder, keywords)
        self._searchers[mode] = (client, version, searcher)
        return searcher

    def sync_keywords(self, collection: ChunkCollection | None = None) -> KeywordIndex:
        """Indeks słów zgodny z fragmentami kolekcji (dodane, zastąpione, usunięte). Pełne porównanie wersji
        fragmentów tylko wtedy, gdy znacznik zmiany kolekcji różni się od zapisanego z indeksem."""
        collection = collection or self._collection()
        name = collection_name(collection.model_id)
        keywords = self._keywords.get(name)
        if keywords is None:
            keywords = KeywordIndex(index_folder(self.store.work_dir, name, self._lemmatizer), self._lemmatizer)
            self._keywords[name] = keywords
        version = collection.version()  # read before the chunks: a write after it makes the next check resync
        if not version or version != keywords.collection_version or not len(keywords):
            keywords.sync(chunk_versions(collection), lambda ids: collection_texts(collection, ids), version)
        return keywords

    def files(self) -> list[FileInfo]:
        """Zaindeksowane pliki (wg rejestru: tylko zapisane w całości) ze wszystkich modeli bazy."""
        self.store.require_existing()
        with read_session(self.store):
            records = Registry(self.store.client).records()
        infos: dict[str, FileInfo] = {}
        for record in sorted(records, key=lambda r: (r.same_as is not None, r.model)):
            owner = owner_of(records, record) or record
            info = infos.setdefault(
                owner.path, FileInfo(owner.name, owner.path, owner.doc_type, owner.year, len(owner.chunk_ids))
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
        removed, matched = 0, False
        with write_session(self.store, wait, command="usun"):
            registry = Registry(self.store.client, create=True)
            models = self.store.indexed_models()
            records = registry.records()
            key = str(Path(name).expanduser().resolve())
            paths = sorted({r.path for r in records if name == r.name}) or sorted(
                {r.path for r in records if r.path in (name, key)}
            )
            if len(paths) > 1:
                raise UserError(
                    f"Plików o nazwie „{name}” jest w indeksie kilka: {', '.join(paths)} – podaj ścieżkę tego, "
                    "który usunąć (np. chroma-rag usun ŚCIEŻKA)."
                )
            for record in records:
                if record.path in paths and record.model in models:
                    matched = True
                    collection = self.store.chunks(record.model, models[record.model])
                    removed += drop_file(collection, registry, record)
                    self.sync_keywords(collection)
        if not matched:
            known = ", ".join(info.name for info in self.files()) or "brak"
            raise UserError(f"W indeksie nie ma pliku „{name}”; zaindeksowane pliki: {known}.")
        return removed

    def check(self, repair: bool = False, wait: float = DEFAULT_WAIT) -> ConsistencyReport:
        """Zgodność rejestru z kolekcjami i odnajdywalność fragmentów; ``repair`` naprawia, co się da."""
        if repair:
            self.store.require_writable()
        return check(self.store, repair, wait)
