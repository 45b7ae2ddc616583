"""Wyszukiwanie jednej bazy jako jeden obiekt: wyszukiwarki i indeksy słów zapamiętane między pytaniami, plan
zapytania, całe jednostki i ocena. ``chroma_rag.api.Index`` deleguje tu wszystko, co czyta fragmenty: deklaruje
parametry i ich wartości domyślne, a tu przychodzą gotowe ``SearchRequest`` i ``Planning``.

Wątki serwera dzielą jeden obiekt: wyszukiwania biegną równolegle, a budowa wyszukiwarki i dociągnięcie indeksu
słów idą po jednym naraz (``_refresh``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..derived import DEFAULT_PARAMS, DerivedIndex, DerivedParams, KeywordIndex, keyword_folder
from ..embedding.embedder import Embedder, known_dim
from ..errors import UnknownAct, UnknownFile
from ..filters import SearchFilters
from ..llm import ChatClient, LlmSettings
from ..models import Exchange, Hit, Plan, SearchResult
from ..storage.collection import ChunkCollection
from ..storage.locking import read_session
from ..storage.registry import Registry
from ..storage.store import Store, collection_name
from .evaluation import Question, evaluate, load_questions, split_by_index
from .planning import LISTED_DOCUMENTS, Catalog, Planner, PlanningStats, catalog_from, plan_messages
from .references import resolve_act
from .search import DEFAULT_MODE, Searcher, SearchRequest, validate
from .units import Unit, assemble_unit, unit_file, unit_where
from .validation import checked_search, indexed_path, resolve_acts, resolve_files, resolve_name


@dataclass(frozen=True)
class Planning:
    """Wyszukiwanie planowane: najpierw plan zapytania od modelu czatu (``rewrite``; ``settings`` albo
    ``CHROMA_RAG_LLM_*``), z pominięciem planów zapamiętanych na dysku (``fresh``)."""

    rewrite: bool = False
    fresh: bool = False
    settings: LlmSettings | None = None


class Retrieval:
    """Odczyty jednej bazy; ``embedder`` podaje model zapytań (rozpoznawany leniwie przez ``Index``)."""

    def __init__(self, store: Store, embedder: Callable[[], Embedder], lemmatizer: str,
                 params: DerivedParams = DEFAULT_PARAMS) -> None:
        self.store = store
        self._embedder = embedder
        self._lemmatizer = lemmatizer
        self.params = params
        self._keywords: dict[str, KeywordIndex] = {}
        self._searchers: dict[str, tuple[Any, str, Searcher]] = {}
        self._planner: Planner | None = None
        self._file_names: tuple[str, tuple[list[tuple[str, str]], dict[str, str]]] | None = None
        self._file_titles: dict[str, tuple[str, dict[str, str]]] = {}
        self._refresh = threading.RLock()  # searcher() syncs the keyword index

    def collection(self) -> ChunkCollection:
        """Kolekcja modelu zapytań."""
        embedder = self._embedder()
        return self.store.chunks(embedder.model_id, known_dim(embedder))

    def derived(self, model_id: str | None = None, dim: int | None = None) -> DerivedIndex:
        """Indeks pochodny kolekcji modelu zapytań (albo ``model_id`` o wymiarze ``dim``), bez indeksu słów."""
        collection = self.collection() if model_id is None or dim is None else self.store.chunks(model_id, dim)
        return DerivedIndex(collection, params=self.params)

    def _with_keywords(self, collection: ChunkCollection) -> DerivedIndex:
        """Indeks pochodny kolekcji z jej indeksem słów zgodnym z fragmentami (dociągniętym po zmianie)."""
        derived = DerivedIndex(collection, self._keyword_index(collection.model_id), self.params)
        derived.sync_keywords()
        return derived

    def search(self, request: SearchRequest, planning: Planning, earlier: Sequence[Exchange] = ()) -> SearchResult:
        """``Index.search`` dla gotowego zapytania; ``earlier`` – wcześniejsze tury rozmowy."""
        mode, filters = checked_search(request.k, request.mode, request.threshold, request.filters)
        question, k, threshold = request.question, request.k, request.threshold
        rewrite, fresh_plan, settings = planning.rewrite, planning.fresh, planning.settings
        self.store.require_existing()
        _ = self._embedder()  # resolved before the read session: it may need its own short read of the DB
        with read_session(self.store):
            if filters is not None and filters.files:
                filters = resolve_files(filters, *self.file_names())
            searcher = self.searcher(mode)
            if filters is not None and filters.acts:
                filters = resolve_acts(filters, searcher.titles)
            request = SearchRequest(question, k, filters, mode, threshold)
            if not rewrite:
                return searcher.search(request)
            validate(request)
            catalog = self.catalog(searcher, request, earlier)
        # the chat model is asked outside the read session: a slow model holds up no other search
        request.plan = self.ask_planner(request.question, catalog, settings, fresh_plan, earlier)
        request.question = request.plan.standalone or request.question
        with read_session(self.store):
            return self.searcher(mode).search(request)

    def plan(self, searcher: Searcher, request: SearchRequest, settings: LlmSettings | None, fresh: bool) -> Plan:
        """Plan zapytania od modelu czatu dla ``request`` (z pamięci planów, chyba że ``fresh``)."""
        validate(request)
        return self.ask_planner(request.question, self.catalog(searcher, request), settings, fresh)

    def ask_planner(self, question: str, catalog: Catalog, settings: LlmSettings | None, fresh: bool,
                    earlier: Sequence[Exchange] = ()) -> Plan:
        """Plan od modelu czatu dla gotowego katalogu – bez blokady i sesji odczytu, bo to wywołanie sieciowe."""
        planner = self.planner(settings)
        planner.use_cache = not fresh
        return planner.plan(question, catalog, earlier)

    def planner(self, settings: LlmSettings | None = None) -> Planner:
        """Planista zapytań tej bazy (plany zapamiętane w jej katalogu danych pochodnych, ``plany/``)."""
        if self._planner is None or (settings is not None and self._planner.client.settings != settings):
            client = ChatClient(settings or LlmSettings.from_env())
            self._planner = Planner(client, self.store.work_dir / "plany")
        return self._planner

    def planning_messages(
        self, question: str, filters: SearchFilters | None = None, mode: str = DEFAULT_MODE,
        earlier: Sequence[Exchange] = (),
    ) -> list[dict[str, str]]:
        """Wiadomości zapytania planowania dla pytania (``pytaj --pokaz-prompt``), bez pytania modelu."""
        self.store.require_existing()
        _ = self._embedder()
        with read_session(self.store):
            searcher = self.searcher(mode)
            request = SearchRequest(question, 5, filters, mode)
            validate(request)
            return plan_messages(request.question, self.catalog(searcher, request, earlier), earlier)

    @property
    def planning_stats(self) -> PlanningStats:
        return self._planner.stats if self._planner is not None else PlanningStats()

    def catalog(self, searcher: Searcher, request: SearchRequest, earlier: Sequence[Exchange] = ()) -> Catalog:
        """Dokumenty dla promptu planowania; przy wielu plikach najpierw te, które wyszukiwanie bez planu
        stawia najwyżej – dla pytania w rozmowie (``earlier``) razem z wcześniejszymi pytaniami, bo dopytanie
        („a jeśli ustnie?”) samo mało mówi."""
        titles = searcher.titles
        ranked: list[str] = []
        if len(titles) > LISTED_DOCUMENTS:
            ranked_by = " ".join([*(turn.question for turn in earlier), request.question])
            unplanned = SearchRequest(ranked_by, searcher.fusion.depth, request.filters, request.mode)
            ranked = [hit.file for hit in searcher.rank(unplanned)]
        types, years = searcher.file_facts
        return catalog_from(titles, types, years, searcher.units, ranked)

    def unit(self, file: str, art: str) -> Unit:
        """Zob. ``Index.unit``."""
        self.store.require_existing()
        _ = self._embedder()
        with read_session(self.store):
            derived = self.derived()
            try:
                selection = unit_file(file, *self.file_names())
            except UnknownFile:  # "pokaz kpc 505": the act by its name or abbreviation, when it is one file
                acts = self._act_files(file, derived)
                if len(acts) != 1:
                    raise
                selection = SearchFilters(files=acts)
            shown = selection.files[0] if selection.files else file
            return assemble_unit(shown, art, derived.hits(derived.rows(unit_where(selection, art))))

    def indexed_file(self, requested: str) -> str:
        """Zob. ``Index.indexed_file`` – rozpoznana jak w ``pokaz`` i ``--plik``: ścieżka, nazwa z folderem
        („it/regulamin.md”), nazwa bez rozszerzenia albo jednoznaczny początek; nieznana – błąd z najbliższymi."""
        self.store.require_existing()
        with read_session(self.store):
            indexed, _ = self.file_names()
        path = indexed_path(requested, {path for _, path in indexed})
        return path if path is not None else resolve_name(requested, sorted({name for name, _ in indexed}))

    def _act_files(self, spelled: str, derived: DerivedIndex) -> list[str]:
        """Pliki aktu o tej nazwie albo skrócie; pusta lista, gdy to nie jest nazwa zaindeksowanego aktu."""
        try:
            return resolve_act(spelled, derived.file_titles())
        except UnknownAct:
            return []

    def file_names(self) -> tuple[list[tuple[str, str]], dict[str, str]]:
        """Pary (nazwa, ścieżka) z rejestru i druga ścieżka dokumentu → ścieżka z jego fragmentami – do
        rozpoznania pliku, który wpisał użytkownik (``resolve_files``).

        W folderze bazy zapamiętane do następnego zapisu: każda sesja zapisu zmienia ``Store.generation``,
        a odczyt trzyma blokadę współdzieloną, więc zapis nie trwa w jego trakcie. Na serwerze Chromy (piszą
        inni) – do zmiany znacznika rejestru (``Registry.version``; przez HTTP przy 1000 plików jedno lekkie
        zapytanie zamiast ~70 ms metadanych wszystkich wpisów); rejestr bez znacznika – zawsze na świeżo."""
        key = Registry.version(self.store.client) if self.store.is_server else self.store.generation()
        cached = self._file_names
        if key and cached is not None and cached[0] == key:
            return cached[1]
        names = Registry(self.store.client).names()
        if key:
            self._file_names = (key, names)
        return names

    def file_titles(self, model_id: str, dim: int) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu z fragmentów kolekcji modelu (``Index.files``: ``lista``, ``/api/pliki``, MCP);
        zapamiętane do następnego zapisu do kolekcji (jej znacznik zmiany), jak wyszukiwarki."""
        derived = self.derived(model_id, dim)
        version = derived.version()
        cached = self._file_titles.get(model_id)
        if version and cached is not None and cached[0] == version:
            return cached[1]
        titles = derived.file_titles()
        if version:
            self._file_titles[model_id] = (version, titles)
        return titles

    def evaluate(self, questions: Path, k: int, mode: str, threshold: float | None,
                 planning: Planning) -> dict[str, Any]:
        """``Index.evaluate`` z gotowymi ustawieniami."""
        rewrite, fresh_plan, settings = planning.rewrite, planning.fresh, planning.settings
        mode, _ = checked_search(k, mode, threshold, None)
        loaded = load_questions(Path(questions))
        self.store.require_existing()
        _ = self._embedder()
        with read_session(self.store):
            searcher = self.searcher(mode)
            kept, missing = split_by_index(loaded, set(searcher.titles))
            plans: dict[str, Plan | None] = {}
            unknown_acts: set[str] = set()

            def ranker(question: Question) -> list[Hit]:
                request = SearchRequest(question.text, k, question.filters, mode)
                try:
                    if rewrite:
                        request.plan = self.plan(searcher, request, settings, fresh_plan)
                    plans[question.text] = request.plan
                    return searcher.rank(request)
                except UnknownAct:  # "art. 5 k.p.k." without the code indexed: the user is told so – a refusal
                    unknown_acts.add(question.text)
                    return []

            def refuses(question: Question, hits: list[Hit]) -> bool:
                if question.text in unknown_acts:
                    return True
                return searcher.refuses(question.text, hits, threshold, plans.get(question.text), question.filters)

            result = evaluate(kept, ranker, refuses)
        if rewrite:
            result["planowanie"] = self.planning_stats.to_json()
        result["pominiete"] = {"pytania": len(loaded) - len(kept), "pliki": missing}
        return result

    def searcher(self, mode: str = DEFAULT_MODE) -> Searcher:
        """Wyszukiwarka kolekcji modelu zapytań; indeks słów zsynchronizowany, gdy tryb go używa. Zapamiętana do
        następnego zapisu do kolekcji (jej znacznik zmiany – także zapisu kogoś innego na serwerze), więc kolejne
        pytania nie płacą za jej budowę; budowa po jednej naraz (wątki serwera)."""
        with self._refresh:
            client = self.store.client  # searchers hold collections of one client: reuse them only with it
            cached = self._searchers.get(mode)
            if cached is not None and cached[0] is client and cached[2].derived.version() == cached[1]:
                return cached[2]
            collection = self.collection()
            version = collection.version()  # read before the keyword sync: a write during it makes the next rebuild
            plain = mode == "wektor"  # the vector mode needs no keyword index
            derived = DerivedIndex(collection, params=self.params) if plain else self._with_keywords(collection)
            searcher = Searcher(derived, self._embedder())
            self._searchers[mode] = (client, version, searcher)
            return searcher

    def sync_keywords(self, collection: ChunkCollection | None = None) -> None:
        """Indeks słów kolekcji (domyślnie – modelu zapytań) zgodny z jej fragmentami (dodane, zastąpione,
        usunięte)."""
        with self._refresh:
            self._with_keywords(collection or self.collection())

    def _keyword_index(self, model_id: str) -> KeywordIndex:
        """Indeks słów kolekcji modelu, jeden na proces i kolekcję (wczytany raz, potem tylko dociągany)."""
        name = collection_name(model_id)
        keywords = self._keywords.get(name)
        if keywords is None:
            folder = keyword_folder(self.store.work_dir, name, self._lemmatizer)
            keywords = KeywordIndex(folder, self._lemmatizer, self.params.keywords)
            self._keywords[name] = keywords
        return keywords
