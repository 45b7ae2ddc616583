"""Indeks słów kluczowych (BM25, ``bm25s``) na polskich lematach – druga noga wyszukiwania hybrydowego.

Indeks obejmuje dokładnie te same fragmenty co kolekcja Chromy i jest z nią synchronizowany po id
i skrócie pliku (``hash`` w metadanych): dodane, zastąpione i usunięte fragmenty wektorów trafiają tu
przy następnej synchronizacji, więc przerwane indeksowanie nie zostawia rozjechanych indeksów.
Zapis w folderze bazy: ``slowa-<kolekcja>-<lematyzator>/`` (tokeny fragmentów + macierz BM25).

Drobna zmiana (plik dopisany albo usunięty z dużej kolekcji) nie przebudowuje macierzy: nowe fragmenty trafiają
do małej „dopiski” (``dopisane.json``, liczonej tym samym wzorem BM25 przy statystykach macierzy), usunięte
i zastąpione są w macierzy wygaszane. Gdy dopiska urośnie ponad ``KeywordParams.delta_fraction`` macierzy, indeks
buduje się od nowa (wtedy też odświeżają się statystyki: liczba fragmentów, częstości słów, średnia długość).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import morphology
from . import keyword_scoring as scoring
from . import phrases
from .memo import remember
from .params import DEFAULT_PARAMS, KeywordParams
from .rows import RowSet, RowSpace

LEMMATIZERS = ("morfeusz", "simplemma", "stempel", "brak")
DEFAULT_LEMMATIZER = "morfeusz"
FORMAT_VERSION = 7  # zmiana tokenizacji albo zapisu = nowy numer, indeks buduje się od nowa
MANIFEST = "fragmenty.json"  # small fields only: read by every fresh process
# Tokens of every chunk, one JSON line each in the order of ``ids`` after a header line with the save's id;
# byte offsets are in TOKEN_OFFSETS. A cold search reads only the few lines it needs (at 100k chunks the whole
# file is ~80 MB, seconds to parse).
TOKENS = "tokeny.jsonl"
# Per-chunk columns in the order of ``ids``, mapped at load: as JSON in the manifest they were 65 MB at 1M chunks,
# 0.6 s to parse in every fresh process, and a search needs only the ids of its hits.
IDS = "id.npy"  # utf-8 bytes (numpy "S"), sorted
TOKEN_OFFSETS = "pozycje_tokenow.npy"  # int64, len(ids) + 1
VERSION_CODES = "wersje.npy"  # int32: index into the manifest's list of distinct versions
COLLECTION_VERSION = "kolekcja.json"  # the collection's change marker this index was last synced at
CEILINGS = "maksima.npy"  # float32: highest score of each matrix column (bound for pruning frequent lemmas)
DELTA = "dopisane.json"  # chunks added (and matrix rows switched off) since the matrix was built

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Function words that every legal text repeats; BM25's IDF alone leaves them noisy in short questions.
STOPWORDS = frozenset(
    {
        "a", "aby", "albo", "ale", "ani", "bo", "by", "być", "czy", "dla", "do", "gdy", "i", "ich", "jak", "jaki",
        "jest", "już", "lub", "mi", "mnie", "mój", "na", "nie", "o", "od", "oraz", "po", "pod", "przez", "przy", "się",
        "są", "sobie", "tak", "także", "te", "ten", "to", "tylko", "tym", "w", "we", "z", "za", "ze", "że", "co",
        "ktoś", "który", "która", "które", "czyli", "mieć", "móc", "musieć"
    }
)


def words(text: str) -> list[str]:
    """Słowa tekstu małymi literami (cyfry i numery jednostek też są słowami: ``178a``)."""
    return _WORD.findall(text.lower())


@lru_cache(maxsize=4)
def lemmatizer(name: str) -> Callable[[str], tuple[str, ...]]:
    """Funkcja słowo → lematy (kilka, gdy słowo jest wieloznaczne: indeksujemy wszystkie)."""
    if name == "morfeusz":
        morphology.analyser()  # loaded here, so a missing dictionary fails when the index is opened

        def morfeusz(word: str) -> tuple[str, ...]:
            lemmas = {found.lemma.split(":")[0].lower() for found in morphology.interpretations(word)}
            return tuple(sorted(lemmas)) or (word,)

        return lru_cache(maxsize=200_000)(morfeusz)
    if name == "simplemma":
        import simplemma

        return lru_cache(maxsize=200_000)(lambda word: (simplemma.lemmatize(word, lang="pl").lower(),))
    if name == "stempel":
        from pystempel import Stemmer

        stemmer = Stemmer.polimorf()
        return lru_cache(maxsize=200_000)(lambda word: ((stemmer(word) or word).lower(),))
    if name == "brak":
        return lambda word: (word,)
    raise ValueError(f"nieznany lematyzator {name!r}; dostępne: {', '.join(LEMMATIZERS)}")


def tokenize(text: str, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> list[str]:
    """Lematy słów tekstu bez słów funkcyjnych."""
    return [lemma for readings in word_readings(text, lemmatizer_name) for lemma in readings]


def word_readings(text: str, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> list[tuple[str, ...]]:
    """Dla każdego słowa treściowego tekstu (w kolejności) – jego możliwe lematy bez słów funkcyjnych."""
    lemmatize = lemmatizer(lemmatizer_name)
    return [r for r in (content_reading(word, lemmatize) for word in words(text)) if r]


def content_reading(word: str, lemmatize: Callable[[str], tuple[str, ...]]) -> tuple[str, ...]:
    """Lematy słowa bez słów funkcyjnych; pusta krotka – słowo funkcyjne."""
    if word in STOPWORDS:  # "lub" must not come back as the lemma "lubić"
        return ()
    return tuple(lemma for lemma in lemmatize(word) if lemma not in STOPWORDS)


def word_forms(text: str, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> list[phrases.Forms]:
    """Każde słowo tekstu, także funkcyjne – zapisane i jego lematy (do cytatów: ``phrases.quoted_run``)."""
    return [_forms(word, lemmatizer_name) for word in words(text)]


@lru_cache(maxsize=200_000)
def _forms(word: str, lemmatizer_name: str) -> phrases.Forms:
    return frozenset(lemmatizer(lemmatizer_name)(word)) | {word}


def query_terms(question: str, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> list[tuple[str, ...]]:
    """Słowa pytania do BM25: każde słowo raz, jako zbiór jego możliwych lematów."""
    return list(dict.fromkeys(word_readings(question, lemmatizer_name)))


def keyword_text(text: str, metadata: dict[str, Any]) -> str:
    """Tekst indeksowany słowami: rozdział + treść. Bez tytułu aktu: wspólny dla wszystkich fragmentów aktu, robił
    z każdego trafienie słowa tytułu, a wśród wielu aktów słowo pytania z tytułu obcego aktu wypychało właściwe
    (pytania potoczne w bibliotece: hit@5 0.344 → 0.366, POMIARY, ósma sesja); akt nazwany w pytaniu wybierają
    odwołania."""
    return "\n".join(str(part) for part in (metadata.get("rozdzial"), text) if part)


@dataclass
class Usable:
    """Pozycje indeksu, które filtr dopuszcza (bez wygaszonych): mapa bitów i – dla wąskiego filtra – lista."""

    marks: np.ndarray
    positions: np.ndarray | None


@dataclass
class KeywordHit:
    id: str
    score: float


class KeywordIndex:
    """BM25 nad lematami fragmentów jednej kolekcji, trzymany w folderze ``path`` (``None``: tylko w pamięci)."""

    def __init__(self, path: Path | None, lemmatizer_name: str = DEFAULT_LEMMATIZER,
                 params: KeywordParams = DEFAULT_PARAMS.keywords) -> None:
        self.path = path
        self.lemmatizer_name = lemmatizer_name
        self.params = params
        self.ids: np.ndarray = _encoded([])  # matrix rows: utf-8 bytes (numpy "S"), sorted
        self._tokens: dict[str, list[str]] | None = {}
        self._bm25: Any = None
        self._ceilings: np.ndarray | None = None  # highest score of each matrix column
        self._read_ceilings: dict[int, float] = {}  # the same, read from columns of an index saved without them
        # id → version, built from the saved columns (and the loaded delta's versions) only when needed
        self._version_map: dict[str, str] | None = {}
        self._version_names: list[str] = []
        self._version_codes = np.zeros(0, dtype=np.int32)
        self._delta_versions: dict[str, str] = {}
        self.collection_version = ""
        self._saved_as = ""  # random id of the saved copy this object mirrors
        # chunks outside the matrix: id → tokens (scored with the matrix's statistics), and matrix rows switched off
        self._added: dict[str, list[str]] = {}
        self._dead: set[str] = set()
        self._delta_id = ""
        self._pending_delta: dict[str, Any] = {}  # read at load, applied once the matrix is there
        self._added_postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._added_lengths = np.zeros(0)
        self._dead_positions = np.zeros(0, dtype=np.int64)
        self._average_length = 1.0
        self._row_maps: dict[tuple[int, str], tuple[RowSpace, np.ndarray]] = {}
        self._marks: dict[tuple[int, str], tuple[Any, Usable]] = {}  # (id(allowed), state) → (allowed, positions)
        self._live_marks = np.zeros(0, dtype=bool)  # False: a switched-off matrix row
        # Tokens of that copy, opened at load: a concurrent sync may replace the folder, the open file stays.
        self._token_file: Any = None
        self._offsets = np.zeros(0, dtype=np.int64)
        if path is not None:
            self._load()

    @property
    def tokens(self) -> dict[str, list[str]]:
        """Tokeny fragmentów macierzy (z dysku dopiero wtedy, gdy są potrzebne – przy przebudowie)."""
        if self._tokens is None:
            start, end = int(self._offsets[0]), int(self._offsets[-1])
            lines = self._read_tokens(start, end).splitlines()
            self._tokens = {i: json.loads(line) for i, line in zip(self._id_list(), lines, strict=True)}
        return self._tokens

    @property
    def versions(self) -> dict[str, str]:
        """Id → wersja fragmentów indeksu (macierz bez wygaszonych i dopiska), budowane dopiero przy potrzebie –
        przy synchronizacji i zapisie; wyszukiwanie go nie potrzebuje (przy 1 mln id to ~0,6 s)."""
        if self._version_map is None:
            names = self._version_names
            found = dict(zip(self._id_list(), [names[c] for c in self._version_codes.tolist()], strict=True))
            for i in self._dead:
                found.pop(i, None)
            found.update(self._delta_versions)
            self._version_map = found
            self._version_names, self._version_codes, self._delta_versions = [], np.zeros(0, dtype=np.int32), {}
        return self._version_map

    def _id_list(self) -> list[str]:
        return [i.decode() for i in self.ids.tolist()]

    def _matrix_positions(self, chunk_ids: list[str]) -> np.ndarray:
        """Pozycje fragmentów w macierzy (-1: nie ma ich tam) – bisekcją w posortowanych id, bez słownika
        id → pozycja (przy 1 mln id to ~0,6 s i ~100 MB)."""
        encoded = [i.encode() for i in chunk_ids]
        # Longer than every matrix id: not there. The rest in the matrix's item size, or numpy would copy the
        # whole (mapped) id array into the wider type on every lookup.
        fits = np.array([len(e) <= self.ids.itemsize for e in encoded], dtype=bool)
        return np.where(fits, _find(self.ids, np.array(encoded, dtype=self.ids.dtype)), -1)

    def document_frequency(self, token: str) -> int:
        """W ilu fragmentach macierzy występuje lemat – długość jego kolumny w macierzy BM25 (bez liczenia
        słownika całego indeksu przy wczytaniu)."""
        column = self._bm25.vocab_dict.get(token) if self._bm25 is not None and len(self.ids) else None
        indptr = self._bm25.scores["indptr"] if column is not None else ()
        # bm25s may add the empty token to the vocabulary without a column
        return int(indptr[column + 1] - indptr[column]) if column is not None and column + 1 < len(indptr) else 0

    def _tokens_of(self, chunk_id: str) -> list[str]:
        if chunk_id in self._added:
            return self._added[chunk_id]
        if self._tokens is not None:
            return self._tokens.get(chunk_id, [])
        position = int(self._matrix_positions([chunk_id])[0])
        if position < 0:
            return []
        start, end = int(self._offsets[position]), int(self._offsets[position + 1])
        return json.loads(self._read_tokens(start, end))

    def _read_tokens(self, start: int, end: int) -> bytes:
        # pread, not seek + read: searches of the server's threads share this file, and a seek of one thread
        # between another's seek and read hands it someone else's line
        return os.pread(self._token_file.fileno(), end - start, start)

    # --- synchronizacja z kolekcją -------------------------------------------------------------

    def sync(self, versions: dict[str, str], fetch_texts: Callable[[list[str]], dict[str, str]],
             collection_version: str = "") -> bool:
        """Doprowadza indeks do stanu kolekcji: ``versions`` to id → wersja (skrót pliku) wszystkich
        fragmentów, ``fetch_texts`` daje teksty wskazanych id, ``collection_version`` – znacznik zmiany
        kolekcji odczytany przed ``versions`` (zapamiętany: ten sam znacznik = nie trzeba porównywać).
        Zwraca, czy coś się zmieniło."""
        changed = [i for i, version in versions.items() if self.versions.get(i) != version]
        removed = [i for i in self.versions if i not in versions]
        return self._catch_up(changed, removed, versions, fetch_texts, collection_version)

    def sync_changes(self, changes: dict[str, str | None], fetch_texts: Callable[[list[str]], dict[str, str]],
                     collection_version: str) -> bool:
        """Jak ``sync``, gdy wiadomo, których fragmentów mogła dotknąć zmiana od znacznika indeksu (dziennik
        zmian migawki): ``changes`` – id → obecna wersja albo ``None`` (fragmentu już nie ma). Porównanie wersji
        wszystkich fragmentów to przy milionie ~2 s po każdym dopisanym pliku; tu tylko dotknięte."""
        current = self._versions_of(list(changes))
        changed = [i for i, version in changes.items() if version is not None and current[i] != version]
        removed = [i for i, version in changes.items() if version is None and current[i] is not None]
        present = {i: version for i, version in changes.items() if version is not None}
        return self._catch_up(changed, removed, present, fetch_texts, collection_version)

    def _catch_up(self, changed: list[str], removed: list[str], versions: dict[str, str],
                  fetch_texts: Callable[[list[str]], dict[str, str]], collection_version: str) -> bool:
        if not changed and not removed and self._bm25 is not None:
            self._save_collection_version(collection_version)
            return False
        if self._bm25 is not None and len(self.ids) and (
            len(self._added) + len(self._dead) + len(changed) + len(removed)
            <= max(self.params.delta_min, self.params.delta_fraction * len(self.ids))
        ) and self._folder_is_ours():
            self._apply_delta(changed, removed, versions, fetch_texts)
            self._save_collection_version(collection_version)
            return True
        _ = self.versions  # the lazy form reads the matrix's ids: built before the matrix is rebuilt
        self._fold_delta()
        for i in removed:
            self.versions.pop(i, None)
            self.tokens.pop(i, None)
        self.tokens.update(self._tokenized(changed, versions, fetch_texts))
        self._rebuild()
        self._save()
        self._save_collection_version(collection_version)
        return True

    def _versions_of(self, chunk_ids: list[str]) -> dict[str, str | None]:
        """Obecne wersje wskazanych fragmentów (``None``: nie ma ich w indeksie), bez budowania ``versions``."""
        if self._version_map is not None:
            return {i: self._version_map.get(i) for i in chunk_ids}
        names, codes = self._version_names, self._version_codes
        positions = self._matrix_positions(chunk_ids).tolist()
        return {i: self._delta_versions[i] if i in self._delta_versions
                else (names[codes[p]] if p >= 0 and i not in self._dead else None)
                for i, p in zip(chunk_ids, positions, strict=True)}

    def _set_version(self, chunk_id: str, version: str | None) -> None:
        """Wersja fragmentu dopiski (``None``: zapomniana) – w ``versions`` albo, póki go nie zbudowano, obok."""
        target = self._version_map if self._version_map is not None else self._delta_versions
        if version is None:
            target.pop(chunk_id, None)
        else:
            target[chunk_id] = version

    def _apply_delta(self, changed: list[str], removed: list[str], versions: dict[str, str],
                     fetch_texts: Callable[[list[str]], dict[str, str]]) -> None:
        """Mała zmiana bez przebudowy macierzy: usunięte i zastąpione wiersze macierzy gasną, nowe teksty idą
        do dopiski; zapis samej dopiski."""
        stale = [*removed, *changed]
        for i, in_matrix in zip(stale, (self._matrix_positions(stale) >= 0).tolist(), strict=True):
            self._set_version(i, None)
            if self._added.pop(i, None) is None and in_matrix:
                self._dead.add(i)
        self._added.update(self._tokenized(changed, versions, fetch_texts))
        self._index_added()
        self._save_delta()

    def _tokenized(self, changed: list[str], versions: dict[str, str],
                   fetch_texts: Callable[[list[str]], dict[str, str]]) -> dict[str, list[str]]:
        """Tokeny zmienionych fragmentów (ich wersje zapisane); dokąd trafią, decyduje wołający."""
        texts = fetch_texts(changed) if changed else {}
        for i in changed:
            self._set_version(i, versions[i])
        return {i: tokenize(texts[i], self.lemmatizer_name) for i in changed}

    def _folder_is_ours(self) -> bool:
        """Czy w folderze leży wciąż ta macierz, którą mamy (inny proces mógł zapisać swoją): tylko do niej
        wolno dopisać dopiskę; inaczej pełny zapis."""
        if self.path is None:
            return True
        try:
            with (self.path / TOKENS).open("rb") as lines:
                return bool(self._saved_as) and json.loads(lines.readline() or b'""') == self._saved_as
        except (OSError, ValueError):
            return False

    def _fold_delta(self) -> None:
        """Przed przebudową: dopiska wchodzi do tokenów macierzy, wygaszone wiersze z nich wypadają."""
        if not self._added and not self._dead:
            return
        tokens = self.tokens
        for i in self._dead:
            tokens.pop(i, None)
        tokens.update(self._added)
        self._added, self._dead = {}, set()
        self._index_added()

    def _index_added(self) -> None:
        """Odwrócony indeks dopiski: lemat → (numery fragmentów dopiski, liczba wystąpień), długości fragmentów."""
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for n, tokens in enumerate(self._added.values()):
            for token, count in Counter(tokens).items():
                docs, counts = postings.setdefault(token, ([], []))
                docs.append(n)
                counts.append(count)
        self._added_postings = {t: (np.array(d), np.array(c, dtype=np.float64)) for t, (d, c) in postings.items()}
        self._added_lengths = np.array([max(len(t), 1) for t in self._added.values()], dtype=np.float64)
        # every change of the switched-off rows ends here
        self._dead_positions = self._matrix_positions(sorted(self._dead))
        self._live_marks = ~_marks(self._dead_positions, len(self.ids) + len(self._added))
        self._row_maps.clear()

    def _rebuild(self) -> None:
        import bm25s

        names = sorted(self.tokens)
        self.ids = _encoded(names)
        self._bm25 = bm25s.BM25()
        if names:
            self._bm25.index([self.tokens[i] or [""] for i in names], show_progress=False)
        self._average_length = float(np.mean([max(len(self.tokens[i]), 1) for i in names])) if names else 1.0
        self._ceilings = scoring.column_ceilings(self._bm25.scores) if names else None
        self._read_ceilings = {}
        self._row_maps.clear()

    # --- wyszukiwanie ---------------------------------------------------------------------------

    def search(self, question: str, k: int, allowed: RowSet | None = None) -> list[KeywordHit]:
        """Najlepsze fragmenty wg BM25; ``allowed`` (fragmenty spełniające filtry) ogranicza wynik."""
        terms = query_terms(question, self.lemmatizer_name)
        if not len(self) or not terms:
            return []
        words, bounds = self._term_postings(terms)
        size = len(self.ids) + len(self._added)
        added = list(self._added)
        usable = self._usable(allowed, added)
        if usable is not None and usable.positions is not None:
            docs, scores = scoring.restricted(words, usable.positions)
        else:
            marks = usable.marks if usable is not None else self._live_marks if len(self._dead_positions) else None
            found = scoring.pruned(words, bounds, k, size, marks, self.params)
            docs, scores = found if found is not None else scoring.summed(words, size, self.params.dense_share)
            keep = scores > 0
            if marks is not None:
                keep &= marks[docs]
            docs, scores = docs[keep], scores[keep]
        everything = len(self.ids)
        best = scoring.top(docs, scores, k)
        return [KeywordHit(self.ids[n].decode() if n < everything else added[n - everything], score)
                for n, score in zip(docs[best].tolist(), scores[best].tolist(), strict=True)]

    def _usable(self, allowed: RowSet | None, added: list[str]) -> Usable | None:
        """Dozwolone pozycje filtra bez wygaszonych wierszy (``None``: bez filtra); zapamiętane dla ``params.marks``
        ostatnich filtrów (ten sam filtr to ten sam obiekt ``allowed`` u wyszukiwarki) – przy milionie
        fragmentów filtr na prawie wszystko to ~5 ms na każde pytanie."""
        if allowed is None:
            return None
        key = (id(allowed), self._saved_as + self._delta_id)
        found = self._marks.get(key)
        if found is not None and found[0] is allowed:
            return found[1]
        size = len(self.ids) + len(added)
        marks = _marks(self._allowed_positions(allowed, added), size)
        if len(self._dead_positions):
            marks &= self._live_marks
        count = int(np.count_nonzero(marks))
        usable = Usable(marks, np.flatnonzero(marks) if count * self.params.dense_share <= size else None)
        # the filter kept: its id is not reused meanwhile
        remember(self._marks, key, (allowed, usable), self.params.marks)
        return usable

    def _allowed_positions(self, allowed: RowSet, added: list[str]) -> np.ndarray:
        """Pozycje (macierz, potem dopiska) wybranych fragmentów – przez mapę wiersz → pozycja liczoną raz na
        numerację wyboru (wersję migawki) i stan indeksu."""
        mapping = self._row_map(allowed.space, added)
        found = mapping[allowed.selected_rows()]  # order is irrelevant: positions become marks
        return found[found >= 0]

    def _row_map(self, space: RowSpace, added: list[str]) -> np.ndarray:
        """Wiersz numeracji ``space`` → pozycja (macierz, potem dopiska; -1: brak). Fragment zastąpiony ma pozycję
        w dopisce: jego wiersz macierzy jest wygaszony."""
        key = (id(space), self._saved_as + self._delta_id)
        cached = self._row_maps.get(key)
        if cached is not None and cached[0] is space:
            return cached[1]
        found = np.full(space.row_count(), -1, dtype=np.int64)
        sorted_rows, sorted_ids = space.id_order()
        found[sorted_rows] = self._sorted_positions(sorted_ids)
        rows = space.rows(added)
        found[rows[rows >= 0]] = len(self.ids) + np.flatnonzero(rows >= 0)
        self._row_maps = {key: (space, found)}  # one version at a time; the space kept: its id is not reused
        return found

    def _sorted_positions(self, sorted_ids: np.ndarray) -> np.ndarray:
        """Pozycje w macierzy posortowanych id (-1: brak). Gdy od zbudowania macierzy nic nie przybyło ani nie
        ubyło, kolekcja ma dokładnie jej id: wtedy to kolejne liczby, bez bisekcji po 1 mln napisów."""
        if len(sorted_ids) == len(self.ids) and np.array_equal(sorted_ids, self.ids):
            return np.arange(len(self.ids))
        return _find(self.ids, sorted_ids)

    def _term_postings(self, terms: list[tuple[str, ...]]) -> tuple[list[scoring.Word], list[float]]:
        """Listy wystąpień słów pytania (w jego kolejności) i najwyższy wynik każdego słowa w indeksie; słowo
        wieloznaczne liczy się raz – najlepszym odczytaniem. Suma po wszystkich lematach dawałaby słowu o czterech
        odczytaniach („danych”: dana, dane, dany, dać) czterokrotną wagę."""
        vocabulary = self._bm25.vocab_dict if self._bm25 is not None and len(self.ids) else {}
        words, bounds = [], []
        for readings in terms:
            found = [p for r in readings if (p := self._reading_postings(r, vocabulary)) is not None]
            if found:
                # the matrix part and the delta part of a reading hold different chunks: as two lists of one word
                # they give the same best-reading sums without copying a long column
                words.append([part for parts, _ in found for part in parts])
                bounds.append(max(ceiling for _, ceiling in found))
        return words, bounds

    def _reading_postings(self, reading: str, vocabulary: dict[str, int]) -> tuple[scoring.Word, float] | None:
        """BM25 jednego lematu tam, gdzie występuje (lista z macierzy i z dopiski), i jego najwyższy wynik: macierz
        (bm25s) i dopiska – tym samym wzorem (Lucene, k1, b biblioteki) przy statystykach macierzy (liczba
        fragmentów, częstość lematu, średnia długość)."""
        parts, ceiling = [], 0.0
        if reading in vocabulary:
            parts.append(scoring.column_postings(self._bm25.scores, vocabulary[reading]))
            ceiling = self._column_ceiling(vocabulary[reading])
        if reading in self._added_postings:
            docs, counts = self._added_postings[reading]
            n, df = max(len(self.ids), 1), self.document_frequency(reading)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            k1, b = (self._bm25.k1, self._bm25.b) if self._bm25 is not None else (1.5, 0.75)
            lengths = self._added_lengths[docs] / self._average_length
            scores = idf * counts / (k1 * ((1 - b) + b * lengths) + counts)
            parts.append((len(self.ids) + docs, scores))
            ceiling = max(ceiling, float(scores.max()))
        return (parts, ceiling) if parts else None

    def _column_ceiling(self, column: int) -> float:
        """Najwyższy wynik w kolumnie macierzy: zapisany przy budowie (``CEILINGS``), a w indeksie zapisanym
        bez niego – z samej kolumny."""
        if self._ceilings is not None and column < len(self._ceilings):
            return float(self._ceilings[column])
        if column not in self._read_ceilings:  # one read of a long column per process, not per question
            self._read_ceilings[column] = float(scoring.column_postings(self._bm25.scores, column)[1].max(initial=0.0))
        return self._read_ceilings[column]

    def coverage(self, question: str, chunk_ids: Iterable[str]) -> float:
        """Jaka część „wagi” pytania (suma IDF jego słów) występuje we wskazanych fragmentach. Słowo nieznane
        całemu zbiorowi waży najwięcej – pytanie o rzecz spoza dokumentów ma niskie pokrycie."""
        present = {t for i in chunk_ids for t in self._tokens_of(i)}
        lemmatize = lemmatizer(self.lemmatizer_name)
        total = covered = 0.0
        for word in dict.fromkeys(words(question)):
            readings = content_reading(word, lemmatize)
            if not readings:
                continue
            weight = self._word_weight(readings)
            total += weight
            covered += weight if any(r in present for r in readings) else 0.0
        return covered / total if total else 0.0

    def phrase_scores(self, question: str, chunk_ids: Iterable[str], ignored_text: str = "",
                      window: int = 2) -> dict[str, float]:
        """Fragmenty spośród ``chunk_ids``, w których stoją obok siebie pary sąsiednich słów pytania, z udziałem
        wagi tych par w wadze wszystkich par pytania – od 0 do 1 (``phrases``); słowa ``ignored_text`` (tytuł aktu,
        który pytanie nazwało) par nie tworzą."""
        pairs = phrases.question_pairs(word_readings(question, self.lemmatizer_name), self._lemmas(ignored_text))
        if not pairs:
            return {}
        weights = phrases.pair_weights(pairs, self._word_weight)
        total = sum(weights)
        # only fragments holding both words of some pair are read: a named act has thousands of fragments
        holding = self._holding_both(pairs)
        found = {i: phrases.phrase_score(pairs, weights, self._tokens_of(i), window)
                 for i in dict.fromkeys(chunk_ids) if i in holding}
        return {i: score / total for i, score in found.items() if score > 0}

    def _holding_both(self, pairs: list[tuple[phrases.Reading, phrases.Reading]]) -> set[str]:
        """Id fragmentów, w których stoją oba słowa którejś pary (z list wystąpień, bez czytania tokenów)."""
        positions = {n for first, second in pairs
                     for n in np.intersect1d(self._holding(first), self._holding(second)).tolist()}
        everything, added = len(self.ids), list(self._added)
        return {self.ids[n].decode() if n < everything else added[n - everything] for n in positions}

    def _holding(self, readings: phrases.Reading) -> np.ndarray:
        """Pozycje fragmentów (macierz, potem dopiska) z którymkolwiek odczytaniem słowa (mogą się powtarzać)."""
        words, _ = self._term_postings([readings])
        return np.concatenate([docs for docs, _ in words[0]]) if words else np.zeros(0, dtype=np.int64)

    def quote_scores(self, question: str, texts: Mapping[str, str], ignored_text: str,
                     min_words: int) -> dict[str, float]:
        """Teksty (id → treść fragmentu), które cytują pytanie: ciąg co najmniej ``min_words`` jego kolejnych słów
        stoi w nich kolejno (``phrases.quoted_run``), z udziałem tego ciągu w wadze słów pytania (IDF, słowa
        funkcyjne 0) – od 0 do 1. Słowa ``ignored_text`` (tytuł aktu, który pytanie nazwało), jak w zwrotach,
        rozdzielają pytanie i nie ważą."""
        lemmatize = lemmatizer(self.lemmatizer_name)
        ignored = self._lemmas(ignored_text)
        question_forms = [frozenset() if forms & ignored else forms
                          for forms in word_forms(question, self.lemmatizer_name)]
        weights = [self._word_weight(reading) if forms and (reading := content_reading(word, lemmatize)) else 0.0
                   for word, forms in zip(words(question), question_forms, strict=True)]
        total = sum(weights)
        if not total:
            return {}
        found = {i: phrases.quoted_run(question_forms, weights, word_forms(text, self.lemmatizer_name), min_words)
                 for i, text in texts.items()}
        return {i: run / total for i, run in found.items() if run > 0}

    def _lemmas(self, text: str) -> frozenset[str]:
        """Lematy słów treściowych tekstu (tytuł nazwanego aktu, pomijany w zwrotach i cytatach)."""
        return frozenset(lemma for reading in word_readings(text, self.lemmatizer_name) for lemma in reading)

    def _word_weight(self, readings: tuple[str, ...]) -> float:
        """IDF słowa; o wadze wieloznacznego decyduje jego najczęstszy odczyt. Słowo nieznane całemu zbiorowi
        waży najwięcej."""
        n = max(len(self.ids), 1)
        return min(math.log(1 + n / (self.document_frequency(r) + 0.5)) for r in readings)

    def __len__(self) -> int:
        return len(self.ids) - len(self._dead) + len(self._added)

    # --- zapis w folderze bazy ----------------------------------------------------------------

    def _load(self) -> None:
        assert self.path is not None
        for _ in range(3):  # a concurrent sync swapped the folder between our reads: read it again
            try:
                data = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
                if data.get("wersja_formatu") != FORMAT_VERSION or data.get("lematyzator") != self.lemmatizer_name:
                    return  # another format or lemmatizer: as if there were no index, the sync rebuilds it
                ids, offsets, codes = self._read_columns(int(data["fragmenty"]))
                tokens = (self.path / TOKENS).open("rb")
            except (OSError, ValueError, KeyError):
                return
            # the columns were opened between the manifest and the tokens, so the same save id means one save
            if json.loads(tokens.readline() or b'""') == data.get("zapis"):
                break
            tokens.close()
        else:
            return
        self._token_file, self._offsets = tokens, offsets
        self._saved_as = str(data.get("zapis", ""))
        try:
            label = json.loads((self.path / COLLECTION_VERSION).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            label = {}
        self._average_length = float(data.get("srednia_dlugosc", 1.0))
        self._load_delta()
        # A label written for another save of this folder or delta (a concurrent sync swapped it) is not trusted.
        if self._saved_as and label.get("zapis") == self._saved_as and label.get("dopisane", "") == self._delta_id:
            self.collection_version = str(label.get("znacznik", ""))
        if len(ids):
            try:
                self._load_matrix(ids)
            except OSError:  # the folder was swapped under the matrix read: start empty, the sync rebuilds it
                tokens.close()
                self._token_file, self._saved_as, self.collection_version = None, "", ""
                self._offsets = np.zeros(0, dtype=np.int64)
                return
            self._version_map, self._version_names, self._version_codes = None, list(data["wersje"]), codes
            self._tokens = None
            self._apply_loaded_delta()
        else:
            self._tokens = {}
            self._rebuild()

    def _read_columns(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Id, pozycje tokenów i kody wersji zapisu – zmapowane: wyszukiwanie czyta z nich tylko swoje trafienia."""
        assert self.path is not None
        ids, offsets, codes = (np.load(self.path / name, mmap_mode="r") for name in (IDS, TOKEN_OFFSETS, VERSION_CODES))
        if ids.dtype.kind != "S" or ids.shape != (count,) or offsets.shape != (count + 1,) or codes.shape != (count,):
            raise ValueError("niezgodne kolumny indeksu słów")
        return ids, offsets, codes

    def _load_delta(self) -> None:
        """Dopiska tego zapisu macierzy (inna – z poprzedniego zapisu – jest pomijana: synchronizacja nadrobi)."""
        assert self.path is not None
        try:
            delta = json.loads((self.path / DELTA).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(delta, dict) and delta.get("zapis") == self._saved_as:
            self._pending_delta, self._delta_id = delta, str(delta.get("id", ""))

    def _apply_loaded_delta(self) -> None:
        delta, self._pending_delta = self._pending_delta, {}
        if not delta:
            return
        self._added = {str(i): list(t) for i, t in delta["dopisane"].items()}
        dead = [str(i) for i in delta["martwe"]]
        self._dead = {i for i, p in zip(dead, self._matrix_positions(dead).tolist(), strict=True) if p >= 0}
        self._delta_versions = {str(i): str(v) for i, v in delta["wersje"].items()}  # for the lazy ``versions``
        self._index_added()

    def _save_delta(self) -> None:
        """Sama dopiska, podmieniana atomowo (kilkaset fragmentów zamiast całej macierzy)."""
        self._delta_id = uuid.uuid4().hex
        self._row_maps.clear()
        if self.path is None or not self.path.exists():
            return
        delta = {"zapis": self._saved_as, "id": self._delta_id, "dopisane": self._added,
                 "martwe": sorted(self._dead), "wersje": self._versions_of(list(self._added))}
        staging = self.path / f"{DELTA}.{os.getpid()}-{uuid.uuid4().hex[:8]}"
        with contextlib.suppress(FileNotFoundError):  # the folder was swapped meanwhile: the next sync catches up
            staging.write_text(json.dumps(delta, ensure_ascii=False), encoding="utf-8")
            os.replace(staging, self.path / DELTA)

    def _load_matrix(self, ids: np.ndarray) -> None:
        import bm25s

        assert self.path is not None
        # mapped, not read: a cold search touches only the columns of its words (at 1M chunks the matrix is
        # hundreds of MiB)
        self._bm25 = bm25s.BM25.load(str(self.path), show_progress=False, mmap=True)
        self.ids = ids
        try:
            self._ceilings = np.load(self.path / CEILINGS, mmap_mode="r")
        except (OSError, ValueError):  # saved before the ceilings were: each is read from its column when needed
            self._ceilings = None
        self._read_ceilings = {}

    def _save(self) -> None:
        """Całość (tokeny + macierz BM25) do folderu obok, potem podmiana folderów: przerwany zapis
        zostawia poprzednią wersję, a następna synchronizacja z kolekcją nadrabia różnicę."""
        if self.path is None:
            return
        # own names: two processes may save after their writes at once (both hold only the shared lock)
        writer = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staging = self.path.with_name(f"{self.path.name}.nowy-{writer}")
        old = self.path.with_name(f"{self.path.name}.stary-{writer}")
        staging.mkdir(parents=True)
        if len(self.ids):
            self._bm25.save(str(staging), show_progress=False)
            if self._ceilings is not None:
                np.save(staging / CEILINGS, self._ceilings)
        self._saved_as, self._delta_id = uuid.uuid4().hex, ""
        names = self._id_list()
        with (staging / TOKENS).open("wb") as lines:
            offsets = [lines.write(json.dumps(self._saved_as).encode() + b"\n")]
            for i in names:
                line = json.dumps(self.tokens[i], ensure_ascii=False).encode() + b"\n"
                offsets.append(offsets[-1] + lines.write(line))
        distinct = list(dict.fromkeys(self.versions[i] for i in names))  # a few per file, not per chunk
        code = {version: n for n, version in enumerate(distinct)}
        np.save(staging / IDS, self.ids)
        np.save(staging / TOKEN_OFFSETS, np.array(offsets, dtype=np.int64))
        np.save(staging / VERSION_CODES, np.array([code[self.versions[i]] for i in names], dtype=np.int32))
        manifest = {
            "zapis": self._saved_as,
            "wersja_formatu": FORMAT_VERSION,
            "lematyzator": self.lemmatizer_name,
            "fragmenty": len(names),
            "wersje": distinct,
            "srednia_dlugosc": self._average_length,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
        with contextlib.suppress(FileNotFoundError):  # another writer may have just moved it aside
            os.rename(self.path, old)
        try:
            os.rename(staging, self.path)
        except OSError:  # another writer put its index in place meanwhile: keep it, the next sync catches up
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
        if self._token_file is not None:  # the tokens are in memory now
            self._token_file.close()
            self._token_file, self._offsets = None, np.zeros(0, dtype=np.int64)

    def _save_collection_version(self, version: str) -> None:
        """Znacznik obok indeksu, podmieniany atomowo (zapis całego indeksu przy 100 tys. to sekundy)."""
        self.collection_version = version
        if self.path is None or not self.path.exists():
            return
        staging = self.path / f"{COLLECTION_VERSION}.{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # another writer may swap the folder meanwhile: its index stands, unmarked, and the next search resyncs it
        with contextlib.suppress(FileNotFoundError):
            staging.write_text(json.dumps({"znacznik": version, "zapis": self._saved_as, "dopisane": self._delta_id}),
                               encoding="utf-8")
            os.replace(staging, self.path / COLLECTION_VERSION)


def _encoded(ids: list[str]) -> np.ndarray:
    """Id jako tablica bajtów utf-8 (numpy "S"): porządek bajtów utf-8 to porządek napisów, więc posortowane
    zostają posortowane."""
    return np.array([i.encode() for i in ids], dtype="S")


def _find(sorted_ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Pozycje ``wanted`` w posortowanych ``sorted_ids`` (-1: brak). Obie tablice "S"; długości elementów mogą
    się różnić – numpy porównuje napisy dopełnione zerami."""
    if not len(sorted_ids):
        return np.full(len(wanted), -1, dtype=np.int64)
    found = np.minimum(np.searchsorted(sorted_ids, wanted), len(sorted_ids) - 1)
    return np.where(sorted_ids[found] == wanted, found, -1)


def _marks(positions: np.ndarray, size: int) -> np.ndarray:
    """Mapa bitów pozycji całego indeksu (1 MB przy 1 mln) zamiast sortowania – tanio i dla filtra na 0,1 %,
    i na połowę kolekcji."""
    mask = np.zeros(size, dtype=bool)
    mask[positions] = True
    return mask
