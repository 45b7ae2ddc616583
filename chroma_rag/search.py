"""Wyszukiwanie: pytanie → noga wektorowa (Chroma) i słowna (BM25 na lematach) → fuzja RRF → próg
„nic trafnego”. Obie nogi dostają te same filtry; odwołania z pytania (``art. 23``, nazwa aktu) dokładają
własne, zawężone listy do fuzji."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from .config import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD  # re-exported
from .embedding import Embedder
from .errors import UsageError, UserError
from .filters import SearchFilters, build_where
from .keyword import KeywordIndex
from .models import Hit, SearchResult
from .references import References, find_references
from .store import ChunkCollection

if TYPE_CHECKING:
    import numpy as np

MODES = ("hybryda", "wektor", "slowa")
DEFAULT_MODE = "hybryda"


@dataclass(frozen=True)
class FusionSettings:
    """Parametry fuzji dostrojone na zbiorze dev (``chroma-rag ocena``, ``bench/quality.py``)."""

    rrf_k: int = 60
    vector_weight: float = 1.0
    keyword_weight: float = 1.5
    reference_weight: float = 1.0
    depth: int = 50
    one_per_unit: bool = True


DEFAULT_FUSION = FusionSettings()
COVERAGE_DEPTH = 3  # ile pierwszych wyników sprawdza pokrycie słów pytania


@dataclass
class SearchRequest:
    """Jedno wyszukiwanie tak, jak je zadaje użytkownik."""

    question: str
    k: int = 5
    filters: SearchFilters | None = None
    mode: str = DEFAULT_MODE
    threshold: float | None = None


@dataclass
class Searcher:
    """Wyszukiwarka jednej kolekcji: noga wektorowa, słowna (``keywords``; tylko tryb ``wektor`` jej nie
    potrzebuje) i parametry fuzji."""

    collection: ChunkCollection
    embedder: Embedder
    keywords: KeywordIndex | None
    fusion: FusionSettings = DEFAULT_FUSION
    _allowed_ids: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @cached_property
    def titles(self) -> dict[str, str]:
        """Nazwa pliku → tytuł aktu, do rozpoznawania nazw aktów w pytaniu."""
        return self.collection.file_titles()

    def _allowed(self, where: dict | None) -> list[str] | None:
        """Id spełniające filtr – dla nogi słownej; zapamiętane, bo ``ocena`` pyta wiele razy z tym samym."""
        if where is None:
            return None
        key = json.dumps(where, sort_keys=True)
        if key not in self._allowed_ids:
            self._allowed_ids[key] = self.collection.ids(where)
        return self._allowed_ids[key]

    def search(self, request: SearchRequest) -> SearchResult:
        """Najlepsze fragmenty (najlepszy pierwszy); gdy nic nie jest wystarczająco trafne – pusta lista
        z powodem ``"prog"``, gdy same filtry nie pasują do żadnego fragmentu – z powodem ``"filtry"``."""
        hits = self.rank(request)
        filters = request.filters
        if not hits and filters is not None and filters.where_conditions() and not self.collection.ids(
            build_where(filters)
        ):
            return SearchResult([], reason="filtry")
        if self.refuses(request.question, hits, request.threshold):
            return SearchResult([], reason="prog")
        return SearchResult(hits)

    def refuses(self, question: str, hits: list[Hit], threshold: float | None) -> bool:
        """„Nic trafnego”: najlepszy wynik jest semantycznie słaby (podobieństwo poniżej progu) i nie
        wszystkie słowa pytania występują w pierwszych wynikach. Pełne pokrycie ratuje krótkie zapytania
        hasłowe („dane”, „urlop”), dla których e5 daje niskie podobieństwo, choć tekst je zawiera."""
        if not refuses(hits, threshold):
            return False
        if self.keywords is None:
            return True
        return self.keywords.coverage(question, [h.id for h in hits[:COVERAGE_DEPTH]]) < 1.0

    def rank(self, request: SearchRequest) -> list[Hit]:
        """Ranking bez progu; każdy wynik ma podobieństwo kosinusowe i wynik fuzji (``score``)."""
        validate(request)
        collection, fusion = self.collection, self.fusion
        filters = request.filters or SearchFilters()
        check_known_files(self.titles, filters.files)
        query_vector = self.embedder.embed_query(request.question)
        where = build_where(filters)
        depth = max(fusion.depth, request.k)
        if request.mode == "wektor":
            return _dedupe(collection.query(query_vector, depth, where), fusion)[: request.k]
        assert self.keywords is not None, "tryb słowny wymaga indeksu słów"
        lists: list[tuple[float, list[str]]] = [
            (fusion.keyword_weight, [h.id for h in self.keywords.search(request.question, depth, self._allowed(where))])
        ]
        if request.mode == "hybryda":
            lists.append((fusion.vector_weight, self.vector_ids(request.question, query_vector, depth, where)))
            refs = find_references(request.question, self.titles)
            for ref_filters in reference_filters(refs, filters):
                ref_ranked = collection.ranked(query_vector, depth, build_where(ref_filters))
                lists.append((fusion.reference_weight, [i for i, _ in ref_ranked]))
        scores = rrf(lists, fusion.rrf_k)
        ordered = sorted(scores, key=lambda i: -scores[i])[:depth]
        hits = collection.hits(ordered, query_vector)
        for hit in hits:
            hit.score = scores[hit.id]
        return _dedupe(hits, fusion)[: request.k]

    def vector_ids(self, question: str, query_vector: np.ndarray, depth: int, where: dict | None) -> list[str]:
        """Lista nogi wektorowej hybrydy; osobna metoda, bo ``bench/quality_ideas.py`` podmienia ją na
        porównywane warianty."""
        return [i for i, _ in self.collection.ranked(query_vector, depth, where)]


def refuses(hits: list[Hit], threshold: float | None) -> bool:
    """Czy pewność najlepszego wyniku jest poniżej progu (warunek semantyczny odmowy)."""
    return threshold is not None and bool(hits) and confidence(hits[0]) < threshold


def validate(request: SearchRequest) -> None:
    if not request.question.strip():
        raise UsageError("Pytanie jest puste – wpisz, czego szukasz.")
    if request.k < 1:
        raise UsageError("Liczba wyników (-k/--ile) musi być dodatnia.")
    if request.mode not in MODES:
        raise UsageError(f"Nieznany tryb „{request.mode}”; dostępne: {', '.join(MODES)}.")


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
    if refs.articles:
        narrowed.append(replace(filters, articles=refs.articles, files=named_files or filters.files))
    if named_files:
        narrowed.append(replace(filters, files=named_files))
    return narrowed


def _dedupe(hits: list[Hit], fusion: FusionSettings) -> list[Hit]:
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
    close = difflib.get_close_matches(name, indexed, n=3, cutoff=0.4)
    hint = f" Może chodziło o: {', '.join(close)}?" if close else ""
    raise UserError(f"W indeksie nie ma pliku „{name}”.{hint} Listę plików pokazuje: chroma-rag lista.")

