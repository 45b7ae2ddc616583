"""Indeks słów kluczowych (BM25, ``bm25s``) na polskich lematach – druga noga wyszukiwania hybrydowego.

Indeks obejmuje dokładnie te same fragmenty co kolekcja Chromy i jest z nią synchronizowany po id
i skrócie pliku (``hash`` w metadanych): dodane, zastąpione i usunięte fragmenty wektorów trafiają tu
przy następnej synchronizacji, więc przerwane indeksowanie nie zostawia rozjechanych indeksów.
Zapis w folderze bazy: ``slowa-<kolekcja>-<lematyzator>/`` (tokeny fragmentów + macierz BM25).
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..storage.collection import ChunkCollection

LEMMATIZERS = ("morfeusz", "simplemma", "stempel", "brak")
DEFAULT_LEMMATIZER = "morfeusz"
FORMAT_VERSION = 4  # zmiana tokenizacji albo zapisu = nowy numer, indeks buduje się od nowa
MANIFEST = "fragmenty.json"
# Tokens of every chunk, one JSON line each in the order of ``ids`` after a header line with the save's id;
# byte offsets are in the manifest. A cold search reads only the few lines it needs (at 100k chunks the whole
# file is ~80 MB, seconds to parse).
TOKENS = "tokeny.jsonl"
COLLECTION_VERSION = "kolekcja.json"  # the collection's change marker this index was last synced at

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
        import morfeusz2

        analyser = morfeusz2.Morfeusz(generate=False, expand_tags=False)

        def morfeusz(word: str) -> tuple[str, ...]:
            lemmas = {a[2][1].split(":")[0].lower() for a in analyser.analyse(word)}
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
    readings = (
        tuple(lemma for lemma in lemmatize(word) if lemma not in STOPWORDS)
        for word in words(text)
        if word not in STOPWORDS  # "lub" must not come back as the lemma "lubić"
    )
    return [r for r in readings if r]


def query_terms(question: str, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> list[tuple[str, ...]]:
    """Słowa pytania do BM25: każde słowo raz, jako zbiór jego możliwych lematów."""
    return list(dict.fromkeys(word_readings(question, lemmatizer_name)))


def keyword_text(text: str, metadata: dict[str, Any]) -> str:
    """Tekst indeksowany słowami: treść + tytuł aktu + rozdział, jak w nagłówku embeddingu."""
    return "\n".join(str(part) for part in (metadata.get("tytul"), metadata.get("rozdzial"), text) if part)


@dataclass
class KeywordHit:
    id: str
    score: float


class KeywordIndex:
    """BM25 nad lematami fragmentów jednej kolekcji, trzymany w folderze ``path`` (``None``: tylko w pamięci)."""

    def __init__(self, path: Path | None, lemmatizer_name: str = DEFAULT_LEMMATIZER) -> None:
        self.path = path
        self.lemmatizer_name = lemmatizer_name
        self.ids: list[str] = []
        self.versions: dict[str, str] = {}
        self._tokens: dict[str, list[str]] | None = {}
        self._bm25: Any = None
        self._positions: dict[str, int] = {}
        self._document_frequency: Counter[str] = Counter()
        self.collection_version = ""
        self._saved_as = ""  # random id of the saved copy this object mirrors
        # Tokens of that copy, opened at load: a concurrent sync may replace the folder, the open file stays.
        self._token_file: Any = None
        self._offsets: list[int] = []
        if path is not None:
            self._load()

    @property
    def tokens(self) -> dict[str, list[str]]:
        """Tokeny wszystkich fragmentów (z dysku dopiero wtedy, gdy są potrzebne – przy synchronizacji)."""
        if self._tokens is None:
            self._token_file.seek(self._offsets[0])
            self._tokens = {i: json.loads(line) for i, line in zip(self.ids, self._token_file, strict=True)}
        return self._tokens

    def _tokens_of(self, chunk_id: str) -> list[str]:
        if self._tokens is not None or chunk_id not in self._positions:
            return self.tokens.get(chunk_id, [])
        position = self._positions[chunk_id]
        self._token_file.seek(self._offsets[position])
        return json.loads(self._token_file.read(self._offsets[position + 1] - self._offsets[position]))

    # --- synchronizacja z kolekcją -------------------------------------------------------------

    def sync(self, versions: dict[str, str], fetch_texts: Callable[[list[str]], dict[str, str]],
             collection_version: str = "") -> bool:
        """Doprowadza indeks do stanu kolekcji: ``versions`` to id → wersja (skrót pliku) wszystkich
        fragmentów, ``fetch_texts`` daje teksty wskazanych id, ``collection_version`` – znacznik zmiany
        kolekcji odczytany przed ``versions`` (zapamiętany: ten sam znacznik = nie trzeba porównywać).
        Zwraca, czy coś się zmieniło."""
        changed = [i for i, version in versions.items() if self.versions.get(i) != version]
        removed = [i for i in self.versions if i not in versions]
        if not changed and not removed and self._bm25 is not None:
            self._save_collection_version(collection_version)
            return False
        for i in removed:
            self.versions.pop(i, None)
            self.tokens.pop(i, None)
        texts = fetch_texts(changed) if changed else {}
        for i in changed:
            self.tokens[i] = tokenize(texts[i], self.lemmatizer_name)
            self.versions[i] = versions[i]
        self._rebuild()
        self._save()
        self._save_collection_version(collection_version)
        return True

    def _rebuild(self) -> None:
        import bm25s

        self.ids = sorted(self.tokens)
        self._positions = {i: n for n, i in enumerate(self.ids)}
        self._bm25 = bm25s.BM25()
        if self.ids:
            self._bm25.index([self.tokens[i] or [""] for i in self.ids], show_progress=False)
        self._count_documents()

    # --- wyszukiwanie ---------------------------------------------------------------------------

    def search(self, question: str, k: int, allowed: Iterable[str] | None = None) -> list[KeywordHit]:
        """Najlepsze fragmenty wg BM25; ``allowed`` (id spełniające filtry) ogranicza wynik."""
        terms = query_terms(question, self.lemmatizer_name)
        if not self.ids or not terms:
            return []
        scores = self._scores(terms)
        if allowed is not None:
            mask = np.zeros(len(self.ids), dtype=bool)
            mask[[self._positions[i] for i in allowed if i in self._positions]] = True
            scores = np.where(mask, scores, 0.0)
        top = np.argsort(-scores, kind="stable")[:k]
        return [KeywordHit(self.ids[n], float(scores[n])) for n in top if scores[n] > 0]

    def _scores(self, terms: list[tuple[str, ...]]) -> np.ndarray:
        """Suma BM25 po słowach pytania; słowo wieloznaczne liczy się raz – najlepszym odczytaniem. Suma po
        wszystkich lematach dawałaby słowu o czterech odczytaniach („danych”: dana, dane, dany, dać)
        czterokrotną wagę."""
        total = np.zeros(len(self.ids), dtype=np.float64)
        vocabulary = self._bm25.vocab_dict
        for readings in terms:
            known = [r for r in readings if r in vocabulary]
            if known:
                total += np.max([self._bm25.get_scores([r]) for r in known], axis=0)
        return total

    def coverage(self, question: str, chunk_ids: Iterable[str]) -> float:
        """Jaka część „wagi” pytania (suma IDF jego słów) występuje we wskazanych fragmentach. Słowo nieznane
        całemu zbiorowi waży najwięcej – pytanie o rzecz spoza dokumentów ma niskie pokrycie."""
        present = {t for i in chunk_ids for t in self._tokens_of(i)}
        lemmatize = lemmatizer(self.lemmatizer_name)
        n = max(len(self.ids), 1)
        total = covered = 0.0
        for word in dict.fromkeys(words(question)):
            readings = [lemma for lemma in lemmatize(word) if lemma not in STOPWORDS]
            if word in STOPWORDS or not readings:
                continue
            # The most common reading of an ambiguous word decides its weight.
            weight = min(math.log(1 + n / (self._document_frequency[r] + 0.5)) for r in readings)
            total += weight
            covered += weight if any(r in present for r in readings) else 0.0
        return covered / total if total else 0.0

    def __len__(self) -> int:
        return len(self.ids)

    # --- zapis w folderze bazy ----------------------------------------------------------------

    def _load(self) -> None:
        assert self.path is not None
        for _ in range(3):  # a concurrent sync swapped the folder between our reads: read it again
            try:
                data = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
                tokens = (self.path / TOKENS).open("rb")
            except (OSError, ValueError):
                return
            if json.loads(tokens.readline() or b'""') == data.get("zapis"):
                break
            tokens.close()
        else:
            return
        if data.get("wersja_formatu") != FORMAT_VERSION or data.get("lematyzator") != self.lemmatizer_name:
            tokens.close()
            return
        self._token_file, self._offsets = tokens, data["pozycje_tokenow"]
        self._saved_as = str(data.get("zapis", ""))
        try:
            label = json.loads((self.path / COLLECTION_VERSION).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            label = {}
        # A label written for another save of this folder (a concurrent sync swapped it) is not trusted.
        if self._saved_as and label.get("zapis") == self._saved_as:
            self.collection_version = str(label.get("znacznik", ""))
        if data["kolejnosc"]:
            try:
                self._load_matrix(data["kolejnosc"])
            except OSError:  # the folder was swapped under the matrix read: start empty, the sync rebuilds it
                tokens.close()
                self._token_file, self._offsets, self._saved_as, self.collection_version = None, [], "", ""
                return
            self.versions = data["wersje"]
            self._tokens = None
        else:
            self.versions = data["wersje"]
            self._tokens = {}
            self._rebuild()

    def _load_matrix(self, ids: list[str]) -> None:
        import bm25s

        assert self.path is not None
        self._bm25 = bm25s.BM25.load(str(self.path), show_progress=False)
        self.ids = ids
        self._positions = {i: n for n, i in enumerate(ids)}
        self._count_documents()

    def _count_documents(self) -> None:
        """W ilu fragmentach występuje każdy lemat – z macierzy BM25 (kolumna lematu ma wpis dla każdego
        fragmentu, który go zawiera), bez czytania tokenów."""
        if not self.ids:
            self._document_frequency = Counter()
            return
        indptr = np.asarray(self._bm25.scores["indptr"])
        counts = np.diff(indptr)
        # bm25s may add the empty token to the vocabulary without a column
        self._document_frequency = Counter(
            {t: int(counts[c]) for t, c in self._bm25.vocab_dict.items() if c < len(counts)}
        )

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
        if self.ids:
            self._bm25.save(str(staging), show_progress=False)
        self._saved_as = uuid.uuid4().hex
        with (staging / TOKENS).open("wb") as lines:
            offsets = [lines.write(json.dumps(self._saved_as).encode() + b"\n")]
            for i in self.ids:
                line = json.dumps(self.tokens[i], ensure_ascii=False).encode() + b"\n"
                offsets.append(offsets[-1] + lines.write(line))
        manifest = {
            "zapis": self._saved_as,
            "pozycje_tokenow": offsets,
            "wersja_formatu": FORMAT_VERSION,
            "lematyzator": self.lemmatizer_name,
            "kolejnosc": self.ids,
            "wersje": self.versions,
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
            self._token_file = None

    def _save_collection_version(self, version: str) -> None:
        """Znacznik obok indeksu, podmieniany atomowo (zapis całego indeksu przy 100 tys. to sekundy)."""
        self.collection_version = version
        if self.path is None or not self.path.exists():
            return
        staging = self.path / f"{COLLECTION_VERSION}.{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # another writer may swap the folder meanwhile: its index stands, unmarked, and the next search resyncs it
        with contextlib.suppress(FileNotFoundError):
            staging.write_text(json.dumps({"znacznik": version, "zapis": self._saved_as}), encoding="utf-8")
            os.replace(staging, self.path / COLLECTION_VERSION)


def chunk_versions(collection: ChunkCollection) -> dict[str, str]:
    """Wersja fragmentu do synchronizacji: skrót pliku, z którego pochodzi (zmienia się z plikiem); z migawki,
    bez pobierania metadanych wszystkich fragmentów."""
    return {i: str(v) for i, v in collection.column("hash", "").items()}


def index_folder(db_path: Path, collection_name: str, lemmatizer_name: str) -> Path:
    return db_path / f"slowa-{collection_name}-{lemmatizer_name}"


def collection_texts(collection: ChunkCollection, ids: list[str]) -> dict[str, str]:
    """Id → tekst do indeksu słów dla fragmentów kolekcji."""
    return {hit.id: keyword_text(hit.text, hit.metadata) for hit in collection.hits(ids)}
