"""Wyszukiwanie: pytanie → noga wektorowa (Chroma) i słowna (BM25 na lematach) → fuzja RRF → próg
„nic trafnego”. Obie nogi dostają te same filtry; odwołania z pytania (``art. 23``, nazwa aktu) dokładają
własne, zawężone listy do fuzji."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache, partial
from typing import TypeVar

import numpy as np

from ..derived import DerivedIndex, RowSet
from ..embedding.embedder import Embedder
from ..errors import CitedOutsideFilters, MissingUnit, UnknownFile, UsageError
from ..filters import SearchFilters, article_key, build_where, normalize_article
from ..models import Hit, Plan, SearchResult, unit_label
from .calibration import DEFAULT_CALIBRATION, DEFAULT_FUSION, Calibration, FusionSettings
from .calibration import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD  # re-exported
from .references import References, UnitReference, check_acts, find_references

MODES = ("hybryda", "wektor", "slowa")
DEFAULT_MODE = "hybryda"


T = TypeVar("T")
U = TypeVar("U")
ALLOWED_FILTERS = 8  # filters whose selection of chunks a searcher remembers
# the paragraph ("§ 2") or numbered paragraph ("ust. 3") a cited subunit begins with: the part of the unit to find
_SUBDIVISION = re.compile(r"(§|ust\.)\s*(\d+[a-z]?)")


@dataclass
class SearchRequest:
    """Jedno wyszukiwanie tak, jak je zadaje użytkownik."""

    question: str
    k: int = 5
    filters: SearchFilters | None = None
    mode: str = DEFAULT_MODE
    threshold: float | None = None
    plan: Plan | None = None


@dataclass
class FusionList:
    """Jedna lista fuzji: źródło (``slowa/pytanie``, ``wektor/plan``, ``wektor/dokumenty``, ``jednostki``, …)
    i id fragmentów, najlepszy pierwszy."""

    source: str
    ids: list[str]
    # planned lists: where the question's own ranking puts the list's evidence – the share of fragments the
    # question ranks above it (0: first). A planned query is judged by its first fragment among all fragments,
    # hinted units by their best fragment among the hinted files' fragments.
    percentile: float | None = None
    query_similarity: float | None = None  # a planned query's similarity to the question itself
    # a planned query of a plan that names files: its first fragment within those files, among their fragments
    # – a neighbouring article of the same act is near the question's subject among all fragments, but not
    # within its own act
    hinted_percentile: float | None = None
    # a graded list (the question's phrases and quotes in the act it names): beside each id the share of the
    # question it holds, 0–1; it adds ``weight × share / (k + 1)`` – first place scaled by that share – instead
    # of a place's RRF: a fragment holding one pair of a long question must not count as first
    shares: list[float] | None = None


@dataclass
class Searcher:
    """Wyszukiwarka jednej kolekcji: noga wektorowa i słowna z jej indeksu pochodnego (``derived``; tylko tryb
    ``wektor`` nie potrzebuje w nim indeksu słów) i parametry fuzji."""

    derived: DerivedIndex
    embedder: Embedder
    fusion: FusionSettings = DEFAULT_FUSION

    @cached_property
    def titles(self) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu, do rozpoznawania nazw aktów w pytaniu."""
        return self.derived.file_titles()

    def __post_init__(self) -> None:
        # a server keeps one searcher per collection version: only the recent filters' selections (8 MB each at
        # 1M chunks), thread-safe
        self._rows_where = lru_cache(maxsize=ALLOWED_FILTERS)(lambda key: self.derived.rows(json.loads(key)))
        self._references = lru_cache(maxsize=64)(lambda question: find_references(question, self.titles))

    def _allowed(self, where: dict | None) -> RowSet | None:
        """Fragmenty spełniające filtr – dla nogi słownej; zapamiętane dla ostatnich filtrów, bo ``ocena`` i strona
        pytają wiele razy z tym samym (a indeks słów pamięta mapę bitów tego samego wyboru)."""
        return None if where is None else self._rows_where(json.dumps(where, sort_keys=True))

    @cached_property
    def file_facts(self) -> tuple[dict[str, str], dict[str, int]]:
        """Nazwa pliku → rodzaj i → rok, do listy dokumentów w prośbie o plan; raz na wersję kolekcji, a nie przy
        każdym pytaniu (przejście po kolumnach wszystkich fragmentów)."""
        column = self.derived.column
        files = column("plik", None)
        types = {str(files[i]): str(v) for i, v in column("typ", "").items() if files.get(i) is not None}
        years = {str(files[i]): int(v) for i, v in column("rok", 0).items() if files.get(i) is not None and v}
        return types, years

    @cached_property
    def units(self) -> dict[str, set[str]]:
        """Nazwa pliku → jego jednostki (``normalize_article``: „27”, „§ 3”), do sprawdzania planu."""
        files, arts = self.derived.column("plik", None), self.derived.column("art", None)
        units: dict[str, set[str]] = {}
        for chunk_id, name in files.items():
            art = arts.get(chunk_id)
            if name is not None and art not in (None, "", "None"):
                units.setdefault(str(name), set()).add(normalize_article(str(art)))
        return units

    def search(self, request: SearchRequest) -> SearchResult:
        """Najlepsze fragmenty (najlepszy pierwszy); gdy nic nie jest wystarczająco trafne – pusta lista
        z powodem ``"prog"``, gdy same filtry nie pasują do żadnego fragmentu – z powodem ``"filtry"``."""
        with self.derived.pinned():
            return self._search(request)

    def _search(self, request: SearchRequest) -> SearchResult:
        hits = self.rank(request)
        filters = request.filters
        if not hits and filters is not None and filters.where_conditions() and not self.derived.rows(
            build_where(filters)
        ):
            return SearchResult([], reason="filtry", plan=request.plan)
        if self.refuses(request.question, hits, request.threshold, request.plan, request.filters):
            return SearchResult([], reason="prog", plan=request.plan)
        return SearchResult(hits, plan=request.plan)

    def refuses(
        self,
        question: str,
        hits: list[Hit],
        threshold: float | None,
        plan: Plan | None = None,
        filters: SearchFilters | None = None,
        calibration: Calibration = DEFAULT_CALIBRATION,
        query_vector: np.ndarray | None = None,
    ) -> bool:
        """„Nic trafnego”: najlepszy wynik jest semantycznie słaby (podobieństwo poniżej progu) i nie
        wszystkie słowa pytania występują w pierwszych wynikach. Pełne pokrycie ratuje krótkie zapytania
        hasłowe („dane”, „urlop”), dla których e5 daje niskie podobieństwo, choć tekst je zawiera.

        Jednostka wskazana filtrem (``--art``) nigdy nie jest odmawiana, tak samo jednostka z planu, którą
        potwierdził ranking: jest pierwsza po fuzji, a samo pytanie stawia ją w czołówce wskazanych plików
        (``confirm_gate``; plan błędny nie przepchnie tak pytania spoza dokumentów). Plan bez dokumentów (model
        uznał, że żaden plik nie zawiera odpowiedzi) podnosi próg o ``refusal_bump``. ``query_vector``: wektor
        pytania, jeśli już policzony."""
        if filters is not None and filters.articles:
            return False
        if hits and hits[0].cited:  # a unit the question cited with its act ("art 90 kc")
            return False
        planned = plan is not None and plan.ok
        if planned and hits and confirmed_unit(hits[0], plan):
            vector = self.embedder.embed_query(question) if query_vector is None else query_vector
            hinted = _hinted_filters(plan, filters or SearchFilters())
            where = build_where(hinted) if hinted is not None else None
            if self.share_ranked_above(hits[0].similarity, where, vector) <= calibration.confirm_gate:
                return False
        # planned lists may put first a fragment a little less similar to the question than another one found
        best = [max(hits, key=lambda hit: hit.similarity)] if planned and hits else hits
        nothing_named = planned and not plan.documents
        if threshold is not None and nothing_named:
            threshold += calibration.refusal_bump
        if not refuses(best, threshold):
            return False
        if not self.derived.has_keywords or nothing_named:
            return True
        return self.derived.coverage(question, [h.id for h in hits[: calibration.coverage_depth]]) < 1.0

    def rank(self, request: SearchRequest) -> list[Hit]:
        """Ranking bez progu; każdy wynik ma podobieństwo kosinusowe i wynik fuzji (``score``)."""
        with self.derived.pinned():
            return self._rank(request)

    def _rank(self, request: SearchRequest) -> list[Hit]:
        validate(request)
        check_known_files(self.titles, (request.filters or SearchFilters()).files)
        refs = self.references(request.question)
        check_acts(refs)
        check_cited_within(refs, request.filters)
        query_vector = self.embedder.embed_query(request.question)
        depth = max(self.fusion.depth, request.k)
        if request.mode == "wektor" and not _planned(request):
            hits = self.derived.query(query_vector, depth, build_where(request.filters or SearchFilters()))
            for hit in hits:
                hit.score = hit.similarity
            ranked = dedupe_units(hits, self.fusion)
        else:
            ranked = self.fused_hits(self.fusion_lists(request, query_vector, depth), query_vector, depth)
        return first_cited(self.cited_units(refs, request.filters, query_vector), ranked, self.fusion)[: request.k]

    def references(self, question: str) -> References:
        """Odwołania pytania do jednostek i aktów tej kolekcji (ranking czyta je dwa razy: jednostki wskazane
        z aktem i listy fuzji, więc zapamiętane dla ostatnich pytań)."""
        return self._references(question)

    def cited_units(self, refs: References, filters: SearchFilters | None, query_vector: np.ndarray) -> list[Hit]:
        """Jednostki, które pytanie wskazało z aktem („art 90 kc”), w kolejności z pytania: z każdej najlepsza
        część (z datą kilku aktów – w każdym z nich). Filtry użytkownika obowiązują: jednostka spoza nich nie jest
        dokładana."""
        filters = filters or SearchFilters()
        cited: list[Hit] = []
        left_out: list[str] = []  # cited units that exist but the kind, year or path filters exclude
        for unit in refs.units:
            files, articles = _within(unit, filters)
            if not files or not articles:
                continue
            # a repealed unit the question cites is shown too (marked "uchylony"): it was asked for by number
            where = build_where(replace(filters, files=files, articles=articles, include_repealed=True))
            ranked = self.derived.ranked(query_vector, self.fusion.depth, where)
            if not ranked:
                unfiltered = SearchFilters(files=files, articles=articles, include_repealed=True)
                if not self.derived.ranked(query_vector, 1, build_where(unfiltered)):
                    raise MissingUnit(files[0], unit_label(articles[0]))  # "art. 9999 kc": no such unit in the act
                left_out.append(f"{unit_label(articles[0])} {unit.act}")
                continue
            # per unit and file: a date several acts bear ("ustawy z dnia 6 czerwca 1997 r.") cites the unit of each
            parts: dict[tuple[str, str], list[Hit]] = {}
            for hit in self.derived.hits([i for i, _ in ranked], query_vector):
                parts.setdefault((article_key(hit.art), hit.file), []).append(hit)  # ranked: the best part first
            # the unit alone, nothing more asked: from its first part, not the one most like the act's name
            best = {key: _part_holding(found, unit.subunit) or (_first_part(found) if refs.alone else found[0])
                    for key, found in parts.items()}
            for article in articles:  # in the order the question cited them, each act's by its best part
                for key in [key for key in best if key[0] == article_key(article)]:
                    hit = best.pop(key)
                    # a part the unit doesn't have ("art. 5 ust. 2" of a one-sentence article) is not cited
                    hit.cited, hit.subunit = True, unit.subunit if _has_part(parts[key], unit.subunit) else ""
                    cited.append(hit)
        if left_out and not cited:  # every cited unit is outside the filters; beside one inside, the rest only drop
            raise CitedOutsideFilters(left_out[0], "kind_or_year" if _by_kind_or_year(filters) else "files")
        return cited

    def fused_hits(
        self, lists: list[FusionList], query_vector: np.ndarray, k: int, fusion: FusionSettings | None = None
    ) -> list[Hit]:
        """Listy fuzji → ``k`` fragmentów, jedna część na jednostkę: ``rank`` po ``fusion_lists``; publiczne, żeby
        pomiar (``bench/planning.py``) liczył listy raz i łączył je z różnymi ustawieniami dokładnie tak samo."""
        fusion = fusion or self.fusion
        similarity = self.derived.similarities(list({i for item in lists for i in item.ids}), query_vector)
        scores = fuse(lists, similarity, fusion)
        ordered = sorted(scores, key=lambda i: -scores[i])[: max(fusion.depth, k)]
        hits = self.derived.hits(ordered, query_vector)
        for hit in hits:
            hit.score = scores[hit.id]
        return dedupe_units(hits, fusion)[:k]

    def fusion_lists(self, request: SearchRequest, query_vector: np.ndarray, depth: int) -> list[FusionList]:
        """Listy do fuzji: pytania (słowa, wektor, odwołania z pytania) i – z planem – każdego planowanego
        zapytania, tych zapytań zawężonych do wskazanych plików oraz wskazanych jednostek. Filtry
        użytkownika obowiązują każdą listę; wskazówki planu tylko dokładają listy, niczego nie wycinają."""
        filters = request.filters or SearchFilters()
        where = build_where(filters)
        keyword_leg = None
        if request.mode != "wektor":
            allowed = self._allowed(where)  # here: the filter's rows come from this thread's pinned version
            keyword_leg = partial(self._keyword_leg, request.question, depth, allowed)
        question_lists = partial(self._question_lists, request, query_vector, depth, filters, where)
        keyword_ids, lists = alongside(keyword_leg, question_lists)
        if keyword_ids is not None:
            lists.insert(0, FusionList("slowa/pytanie", keyword_ids))
        plan = request.plan
        if plan is None or not plan.ok:
            return lists
        hinted = _hinted_filters(plan, filters)
        hinted_where = build_where(hinted) if hinted is not None else None
        everywhere = self.pool(where, query_vector)
        within = self.pool(hinted_where, query_vector) if hinted is not None else None
        for query in plan.queries:
            vector = self.embedder.embed_query(query)
            ranked = self.derived.ranked(vector, depth, where)
            share = self.first_share(ranked, everywhere, query_vector)
            hinted_ranked = self.derived.ranked(vector, depth, hinted_where) if hinted is not None else []
            hinted_share = self.first_share(hinted_ranked, within, query_vector) if within is not None else None
            evidence = {"percentile": share, "query_similarity": float(vector @ query_vector),
                        "hinted_percentile": hinted_share}
            if request.mode != "wektor":
                lists.append(FusionList("slowa/plan", self.keyword_ids(query, depth, where), **evidence))
                if hinted is not None:
                    ids = self.keyword_ids(query, depth, hinted_where)
                    lists.append(FusionList("slowa/dokumenty", ids, **evidence))
            if request.mode != "slowa":
                lists.append(FusionList("wektor/plan", [i for i, _ in ranked], **evidence))
                if hinted is not None:
                    lists.append(FusionList("wektor/dokumenty", [i for i, _ in hinted_ranked], **evidence))
        units = [u for u in plan.units if not filters.articles or _same_unit(u, filters.articles)]
        if within is not None and units:
            ranked = self.derived.ranked(query_vector, depth, build_where(replace(hinted, articles=units)))
            if ranked:
                lists.append(FusionList("jednostki", [i for i, _ in ranked], share_above(within, ranked[0][1])))
        return lists

    def _question_lists(self, request: SearchRequest, query_vector: np.ndarray, depth: int, filters: SearchFilters,
                        where: dict | None) -> list[FusionList]:
        """Listy wektorowe pytania: noga wektorowa i – w hybrydzie – odwołania z pytania (jednostka, akt)."""
        lists = []
        if request.mode != "slowa":
            lists.append(FusionList("wektor/pytanie", self.vector_ids(request.question, query_vector, depth, where)))
        if request.mode == "hybryda":
            for ref_filters in reference_filters(self.references(request.question), filters):
                ref_where = build_where(ref_filters)
                ranked_ids = [i for i, _ in self.derived.ranked(query_vector, depth, ref_where)]
                source = "jednostka/pytanie" if ref_filters.articles != filters.articles else "odwolanie/pytanie"
                lists.append(FusionList(source, ranked_ids))
                if source == "odwolanie/pytanie" and self.fusion.reference_keywords and self.derived.has_keywords:
                    # the act the question names, ranked by the question's words too (as the whole index is)
                    keyword_ids = self.keyword_ids(request.question, depth, ref_where)
                    lists.append(FusionList(source, keyword_ids))
                    lists.extend(self.quoted_lists(request.question, ref_filters, ref_where, ranked_ids + keyword_ids))
        return lists

    def quoted_lists(self, question: str, act: SearchFilters, where: dict | None,
                     candidates: list[str]) -> list[FusionList]:
        """Listy stopniowane nazwanego aktu (``act``, jego warunek ``where``): fragmenty ze zwrotami pytania –
        wszystkie fragmenty aktu – i fragmenty, które pytanie cytują (``candidates`` list pytania i fragmenty ze
        zwrotami; treść tylko ich, bo cytat czyta słowa funkcyjne z treści); słowa tytułu aktu ani par, ani cytatów
        nie tworzą."""
        act_titles = " ".join(self.titles.get(f, "") for f in act.files)
        phrases = self.derived.phrase_scores(question, self.derived.rows(where), act_titles,
                                             self.fusion.phrase_window)
        quoted = self.derived.quote_scores(question, list(dict.fromkeys([*candidates, *phrases])), act_titles,
                                           self.fusion.quote_min_words)
        return [graded("frazy/pytanie", phrases), graded("cytat/pytanie", quoted)]

    def first_share(self, ranked: list[tuple[str, float]], pool: np.ndarray, query_vector: np.ndarray) -> float:
        """Gdzie ranking pytania (``pool``) stawia pierwszy fragment listy ``ranked`` innego zapytania."""
        if not ranked:
            return 1.0
        near = self.derived.similarities([ranked[0][0]], query_vector)
        return share_above(pool, near[ranked[0][0]]) if near else 1.0

    def pool(self, where: dict | None, query_vector: np.ndarray) -> np.ndarray:
        """Podobieństwa do pytania fragmentów spełniających ``where``, rosnąco: z migawki bez listy id, przy dużej
        bazie z równomiernej próby (``DerivedIndex.sorted_similarities``) – przy milionie fragmentów lista id
        i słownik podobieństw to sekundy na każde pytanie z planem."""
        found = self.derived.sorted_similarities(query_vector, where)
        if found is not None:
            return found
        return np.sort(np.fromiter(self.derived.similarities(self.derived.rows(where), query_vector).values(),
                                   dtype=np.float64))

    def share_ranked_above(self, similarity: float, where: dict | None, query_vector: np.ndarray) -> float:
        """Jaka część fragmentów spełniających ``where`` jest bliżej pytania niż ``similarity`` (0 – żaden)."""
        return share_above(self.pool(where, query_vector), similarity)

    def keyword_ids(self, query: str, depth: int, where: dict | None) -> list[str]:
        return self._keyword_leg(query, depth, self._allowed(where))

    def _keyword_leg(self, query: str, depth: int, allowed: RowSet | None) -> list[str]:
        return [h.id for h in self.derived.keyword_hits(query, depth, allowed)]

    def vector_ids(self, question: str, query_vector: np.ndarray, depth: int, where: dict | None) -> list[str]:
        """Lista nogi wektorowej hybrydy; osobna metoda, bo ``bench/quality_ideas.py`` podmienia ją na
        porównywane warianty."""
        return [i for i, _ in self.derived.ranked(query_vector, depth, where)]


def alongside(background: Callable[[], T] | None, here: Callable[[], U]) -> tuple[T | None, U]:
    """Wynik ``background`` (liczonego w osobnym wątku; ``None`` – nic) i ``here`` (w tym wątku: widzi jego
    ustaloną wersję kolekcji), liczonych naraz. Noga słów i listy wektorowe większość czasu liczą bez GIL (numpy,
    faiss), więc na dwóch rdzeniach jedne nie czekają na drugie (przy milionie fragmentów: docs/BENCHMARKS.md,
    sekcja o skali)."""
    if background is None:
        return None, here()
    _single_threaded_blas()
    with ThreadPoolExecutor(1) as pool:
        started = pool.submit(background)
        result = here()  # an error here still waits for the background call (leaving the pool)
        return started.result(), result


@lru_cache(maxsize=1)
def _single_threaded_blas() -> None:
    """OpenBLAS numpy po jednym wątku, raz na proces: jego wątki po każdym iloczynie czekają aktywnie i zabierają
    drugi rdzeń nodze słów liczonej obok (przy milionie fragmentów p95 hybrydy bez filtra 42–68 zamiast 30–33 ms,
    docs/BENCHMARKS.md), a iloczyn jednego pytania na drugim wątku nic nie zyskuje. Procesy robocze ``serwuj`` mają
    to samo ze zmiennych środowiska (``serving.workers``)."""
    from threadpoolctl import ThreadpoolController

    ThreadpoolController().select(prefix="libscipy_openblas").limit(limits=1)


def refuses(hits: list[Hit], threshold: float | None) -> bool:
    """Czy pewność najlepszego wyniku jest poniżej progu (warunek semantyczny odmowy)."""
    return threshold is not None and bool(hits) and confidence(hits[0]) < threshold


def confirmed_unit(hit: Hit, plan: Plan) -> bool:
    """Czy najlepszy wynik fuzji to jednostka, którą plan nazwał w pliku, który nazwał. Wtedy plan i rankingi
    zgadzają się co do odpowiedzi: podobieństwo potocznego pytania do języka ustawy bywa niskie właśnie tam,
    gdzie plan jest potrzebny, więc próg nie może takiej odpowiedzi odrzucić."""
    return hit.file in plan.documents and bool(hit.art) and _same_unit(hit.art, plan.units)


def validate(request: SearchRequest) -> None:
    if not request.question.strip():
        raise UsageError("Pytanie jest puste – wpisz, czego szukasz.")
    if request.k < 1:
        raise UsageError("Liczba wyników (-k/--ile) musi być dodatnia.")
    if request.mode not in MODES:
        raise UsageError(f"Nieznany tryb „{request.mode}”; dostępne: {', '.join(MODES)}.")


def share_above(pool: np.ndarray, similarity: float) -> float:
    """Część ``pool`` (podobieństwa rosnąco) większa od ``similarity``: 0 – nic wyżej; pusta pula – 1."""
    if not len(pool):
        return 1.0
    return float(len(pool) - np.searchsorted(pool, similarity, side="right")) / len(pool)


def agrees(item: FusionList, fusion: FusionSettings) -> bool:
    """Czy samo pytanie stawia dowód listy planu w czołówce (``FusionList.percentile`` w bramce rang
    ``query_gate`` albo ``unit_gate``); zapytanie planu, który wskazał pliki, także w czołówce tych plików
    (``hinted_percentile`` w ``hinted_gate``). Pierwszy fragment zapytania w pierwszych ``query_gate`` samych
    wskazanych plików też wystarcza: w dużym akcie to mniej miejsc niż ten sam odsetek wszystkich fragmentów."""
    if item.percentile is None:
        return False
    if item.source == "jednostki":
        return item.percentile <= fusion.unit_gate
    hinted = item.hinted_percentile
    if hinted is None:
        return item.percentile <= fusion.query_gate
    return min(item.percentile, hinted) <= fusion.query_gate and hinted <= fusion.hinted_gate


def fuse(lists: list[FusionList], similarity: dict[str, float], fusion: FusionSettings) -> dict[str, float]:
    """RRF list pytania i planu (``similarity``: id → podobieństwo do pytania). Lista planu, której dowód
    pytanie stawia w czołówce (``agrees``: bramki rang ``query_gate``, ``unit_gate``), liczy się w całości –
    tak nazwana jednostka może dojść do pierwszego miejsca, choć potoczne pytanie jest jej mało podobne.
    Pozostałe listy planu ważą ``disagreement_weight`` razy mniej, tracą fragmenty dalsze od pytania niż
    ``plan_margin`` od jego najlepszego i ważą tyle, jaka część ich czołówki została – a gdy żadnego dowodu
    planu pytanie nie stawia nawet w ``support_gate``, jeszcze ``unsupported_weight`` razy mniej. Listy pytania
    liczą się ze stałą RRF ``rrf_k``, listy planu z ``plan_rrf_k``."""
    own = [similarity.get(i, 0.0) for item in lists if item.source.endswith("/pytanie") for i in item.ids]
    best = max(own) if own else 0.0
    floor = best - fusion.plan_margin
    # a plan none of whose queries and units the question ranks even within ``support_gate`` is probably
    # another question's plan: its lists outside the gates then count ``unsupported_weight`` times less still
    supported = any(item.percentile is None or item.percentile <= fusion.support_gate
                    for item in lists if not item.source.endswith("/pytanie"))
    own_lists: list[tuple[float, list[str]]] = []
    planned_lists: list[tuple[float, list[str]]] = []
    graded_scores: dict[str, float] = {}
    for item in lists:
        ids, weight = item.ids, fusion.weight(item.source)
        if item.shares is not None:
            for chunk_id, share in zip(ids, item.shares, strict=True):
                graded_scores[chunk_id] = graded_scores.get(chunk_id, 0.0) + weight * share / (fusion.rrf_k + 1)
        elif item.source.endswith("/pytanie"):
            own_lists.append((weight, ids))
        elif agrees(item, fusion):
            planned_lists.append((weight, ids))
        elif item.query_similarity is None or item.query_similarity >= best - fusion.query_margin:
            kept = [i for i in ids if similarity.get(i, 0.0) >= floor]
            head = ids[: fusion.agreement_depth]
            # a list whose best fragments are off the question's subject (a wrong plan) counts that much less
            share = sum(similarity.get(i, 0.0) >= floor for i in head) / len(head) if head else 0.0
            if not supported:
                share *= fusion.unsupported_weight
            planned_lists.append((weight * fusion.disagreement_weight * share, kept))
    scores = rrf(own_lists, fusion.rrf_k)
    for chunk_id, score in [*rrf(planned_lists, fusion.plan_rrf_k).items(), *graded_scores.items()]:
        scores[chunk_id] = scores.get(chunk_id, 0.0) + score
    return scores


def graded(source: str, shares: dict[str, float]) -> FusionList:
    """Lista stopniowana (``FusionList.shares``) z id → udział, najwyższy pierwszy."""
    ids = sorted(shares, key=lambda i: -shares[i])
    return FusionList(source, ids, shares=[shares[i] for i in ids])


def rrf(lists: Iterable[tuple[float, list[str]]], k: int) -> dict[str, float]:
    """Reciprocal Rank Fusion: suma wag/(k + pozycja) po listach, w których fragment wystąpił."""
    scores: dict[str, float] = {}
    for weight, ids in lists:
        for position, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + position)
    return scores


def confidence(hit: Hit) -> float:
    """Wielkość porównywana z progiem „nic trafnego”: podobieństwo kosinusowe najlepszego wyniku
    (po fuzji – tego, który wygrał), bo tylko ono ma tę samą skalę dla każdego pytania i trybu."""
    return hit.similarity



def reference_filters(refs: References, filters: SearchFilters) -> list[SearchFilters]:
    """Zawężenia wynikające z odwołań: jednostki wskazane wprost (w akcie z pytania, jeśli go nazwano)
    i sam nazwany akt. Każde daje osobną listę do fuzji, więc pomyłka rozpoznania nie wycina reszty."""
    named_files = refs.files if refs.files and not filters.files else []
    narrowed = []
    with_act = {a for unit in refs.units for a in unit.articles}
    alone = [a for a in refs.articles if a not in with_act]
    if filters.articles:  # the user's --art holds for every reference: one outside it only drops, as in cited_units
        alone = [a for a in alone if _same_unit(a, filters.articles)]
    if alone:
        narrowed.append(replace(filters, articles=alone, files=named_files or filters.files))
    for unit in refs.units:
        files, articles = _within(unit, filters)
        if files and articles:
            narrowed.append(replace(filters, articles=articles, files=files))
    if named_files:
        narrowed.append(replace(filters, files=named_files))
    return narrowed


def check_cited_within(refs: References, filters: SearchFilters | None) -> None:
    """Odwołania z aktem wobec zawężenia do plików i jednostek: gdy wyklucza ono wszystkie wskazane jednostki, pytanie
    i filtry się wykluczają (``CitedOutsideFilters``); gdy choć jedna zostaje, pozostałe odwołania tylko odpadają
    (jak w ``cited_units``)."""
    filters = filters or SearchFilters()
    if refs.units and not any(all(_within(unit, filters)) for unit in refs.units):
        first = refs.units[0]
        raise CitedOutsideFilters(f"{unit_label(first.articles[0])} {first.act}")


def _first_part(parts: list[Hit]) -> Hit:
    return min(parts, key=lambda hit: int(hit.metadata.get("fragment") or 1))


def _part_holding(parts: list[Hit], subunit: str) -> Hit | None:
    """Część długiej jednostki, w której zaczyna się ustęp albo paragraf wskazany w pytaniu („ust. 13” – „13. Jeżeli
    …”, „§ 2” – „§ 2. …”), a nie ta najbardziej podobna do pytania; ``None`` – pytanie go nie wskazało albo żadna
    część go nie zaczyna. Przy dwóch (zakładka cięcia) – ta, w której stoi bliżej początku."""
    found = _SUBDIVISION.match(subunit)
    if found is None or len(parts) < 2:
        return None
    mark = _start_of(*found.groups())
    starts = [(match.start(), hit) for hit in parts if (match := mark.search(hit.text))]
    return min(starts, key=lambda start: start[0])[1] if starts else None


def _has_part(parts: list[Hit], subunit: str) -> bool:
    """Czy jednostka ma ustęp albo paragraf, od którego zaczyna się wskazanie („§ 2 pkt 1”, „ust. 1–3”); wskazanie
    bez nich („pkt 2”, „zd. 2”) zostaje, jak je napisano."""
    found = _SUBDIVISION.match(subunit)
    if found is None:
        return True
    kind, number = found.groups()
    # the first one is often not numbered in the text ("Art. 16. Sądy rejonowe … § 2. (uchylony)")
    numbers = (number, "2") if number == "1" else (number,)
    return any(_start_of(kind, n).search(hit.text) for n in numbers for hit in parts)


def _start_of(kind: str, number: str) -> re.Pattern[str]:
    """Początek ustępu (``kind`` „ust.”) albo paragrafu („§”) o numerze ``number`` w tekście jednostki."""
    number = re.escape(number)
    # "13. Jeżeli …", "13. (uchylony)" begin paragraph 13; "w ust. 13. ", "Art. 13. " or a code's "§ 13. " don't
    return re.compile(rf"§\s*{number}\.\s" if kind == "§" else
                      rf"(?<!ust\. )(?<![Aa]rt\. )(?<!pkt )(?<!§ )(?<![\d.§]){number}\.\s+[A-ZĄĆĘŁŃÓŚŹŻ(„]")


def _by_kind_or_year(filters: SearchFilters) -> bool:
    return bool(filters.types) or any(y is not None for y in (filters.year, filters.year_from, filters.year_to))


def _within(unit: UnitReference, filters: SearchFilters) -> tuple[list[str], list[str]]:
    """Pliki i jednostki odwołania, które zostają w zawężeniu użytkownika (``--plik``/``--akt``, ``--art``)."""
    files = [f for f in unit.files if not filters.files or f in filters.files]
    articles = [a for a in unit.articles if not filters.articles or _same_unit(a, filters.articles)]
    return files, articles


def first_cited(cited: list[Hit], ranked: list[Hit], fusion: FusionSettings) -> list[Hit]:
    """Jednostki wskazane w pytaniu z aktem na początku, potem ranking bez ich powtórzeń."""
    if not cited:
        return ranked
    top = max((hit.score for hit in ranked), default=1.0) or 1.0
    for hit in cited:  # the fusion's best score: shown as "trafność 1.00" like a first result
        hit.score = top
    return dedupe_units([*cited, *ranked], fusion)


def _planned(request: SearchRequest) -> bool:
    return request.plan is not None and request.plan.ok and bool(request.plan.queries or request.plan.documents)


def _same_unit(unit: str, articles: list[str]) -> bool:
    return article_key(unit) in {article_key(a) for a in articles}


def _hinted_filters(plan: Plan, filters: SearchFilters) -> SearchFilters | None:
    """Filtry użytkownika zawężone do plików wskazanych przez plan; ``None``, gdy plan nie wskazał żadnego
    albo wskazane wykluczają filtry użytkownika."""
    files = [name for name in plan.documents if not filters.files or name in filters.files]
    return replace(filters, files=files) if files else None


def dedupe_units(hits: list[Hit], fusion: FusionSettings) -> list[Hit]:
    """Jedna (najlepsza) część na jednostkę: kolejne części tego samego artykułu nie zabierają miejsc."""
    if not fusion.one_per_unit:
        return hits
    seen: set[tuple[str, str]] = set()
    unique = []
    for hit in hits:  # per document (path): a same-named file in another folder is another document
        key = (str(hit.metadata.get("sciezka", hit.file)), hit.art or hit.id)
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    return unique


def check_known_files(indexed_files: Iterable[str], names: Iterable[str]) -> None:
    """Nazwa w ``--plik``, której nie ma w indeksie, to błąd z podpowiedzią najbliższych nazw."""
    indexed = sorted(indexed_files)
    missing = [name for name in names if name not in indexed]
    if not missing:
        return
    name = missing[0]
    # compared without the extension and the Journal of Laws suffix: "prawa-kierowcy" is far from
    # "prawa-pacjenta-DU-2009-417.pdf" as a whole, but close to its "prawa-pacjenta"
    stems: dict[str, str] = {}
    for indexed_name in indexed:
        stems.setdefault(_SUGGESTION_STEM.sub("", indexed_name).lower(), indexed_name)
    close = difflib.get_close_matches(_SUGGESTION_STEM.sub("", name).lower(), list(stems), n=3, cutoff=0.4)
    raise UnknownFile(name, list(dict.fromkeys(stems[c] for c in close)))


_SUGGESTION_STEM = re.compile(r"(-DU-\d{4}-\d+)?(\.[A-Za-z0-9]{1,5})?$", re.IGNORECASE)

