"""Indeks pochodny, między magazynem (``storage``: Chroma, rejestr, blokady, dziennik zmian) a wyszukiwaniem
(``retrieval``: ranking, fuzja, plan): migawka wektorów z metadanymi (``snapshot``, ``coarse_index``) i indeks słów
BM25 na lematach (``keyword``, ``keyword_scoring``) – kopie fragmentów Chromy ułożone do szybkiego czytania,
odtwarzane z niej przez ten sam dziennik zmian.

Reszta pakietu widzi tylko to, co stąd eksportowane: ``DerivedIndex`` (otwarcie, dociągnięcie zmian, wybór
fragmentów filtra, najbliższe, wyniki słów, treść fragmentów), wspólny typ wyboru ``RowSet``, ``KeywordIndex``
z jego lematyzacją i parametry (``params``). Opis i reguły: docs/ARCHITEKTURA.md."""

from .index import DerivedIndex, forget_loaded, keyword_folder
from .keyword import (
    DEFAULT_LEMMATIZER,
    LEMMATIZERS,
    STOPWORDS,
    KeywordHit,
    KeywordIndex,
    lemmatizer,
    query_terms,
    tokenize,
    words,
)
from .params import DEFAULT_PARAMS, DerivedParams, KeywordParams, SnapshotParams
from .rows import RowSet

__all__ = [
    "DEFAULT_LEMMATIZER",
    "DEFAULT_PARAMS",
    "LEMMATIZERS",
    "STOPWORDS",
    "DerivedIndex",
    "DerivedParams",
    "KeywordHit",
    "KeywordIndex",
    "KeywordParams",
    "RowSet",
    "SnapshotParams",
    "forget_loaded",
    "keyword_folder",
    "lemmatizer",
    "query_terms",
    "tokenize",
    "words",
]
