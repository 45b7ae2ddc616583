"""Indeks słów (BM25 na lematach): lematyzacja, cykl życia razem z wektorami, filtry, zapis na dysku."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chroma_rag import Index
from chroma_rag.derived import DEFAULT_PARAMS, DerivedIndex, RowSet, keyword
from chroma_rag.derived.keyword import KeywordIndex, query_terms, tokenize
from chroma_rag.derived.snapshot import Snapshot
from chroma_rag.filters import SearchFilters, build_where
from chroma_rag.storage.collection import ChunkCollection
from chroma_rag.storage.store import Store

ACT_A = """USTAWA
z dnia 1 stycznia 2020 r.
o hodowli pszczół

Art. 1.
Pszczelarz prowadzi pasiekę w odległości co najmniej 10 metrów od drogi publicznej.

Art. 2.
Ule ustawia się tak, aby wylotki nie były skierowane w stronę sąsiednich budynków.
"""

ACT_B = """USTAWA
z dnia 2 lutego 2021 r.
o łowiectwie miejskim

Art. 1.
Dziki w granicach miasta odławia straż miejska.

Art. 2.
Za dokarmianie dzików w mieście grozi grzywna.
"""


def test_polish_lemmatisation_matches_declined_forms():
    assert tokenize("pszczelarzowi ulach dzików") == tokenize("pszczelarz ul dzik")
    assert "czy" not in tokenize("Czy pies może")


def test_in_memory_index_add_replace_remove():
    index = KeywordIndex(None)
    texts = {"a": "Dziki odławia straż miejska.", "b": "Pasieka stoi przy drodze."}
    assert index.sync({"a": "v1", "b": "v1"}, lambda ids: {i: texts[i] for i in ids})
    assert [h.id for h in index.search("dzików", 5)] == ["a"]
    texts["a"] = "Koty odławia schronisko."
    assert index.sync({"a": "v2", "b": "v1"}, lambda ids: {i: texts[i] for i in ids})
    assert index.search("dzików", 5) == [] and [h.id for h in index.search("kotów", 5)] == ["a"]
    assert index.sync({"b": "v1"}, lambda ids: {i: texts[i] for i in ids})
    assert len(index) == 1 and index.search("kotów", 5) == []
    assert not index.sync({"b": "v1"}, lambda ids: pytest.fail("nic się nie zmieniło"))
    assert [h.id for h in index.search("pasieka", 5, allowed=RowSet.listed(["b"]))] == ["b"]
    assert index.search("pasieka", 5, allowed=RowSet.listed(["a"])) == []


@pytest.fixture()
def acts(tmp_path):
    folder = tmp_path / "akty"
    folder.mkdir()
    (folder / "pszczoly.txt").write_text(ACT_A, encoding="utf-8")
    (folder / "dziki.txt").write_text(ACT_B, encoding="utf-8")
    return folder


def keyword_arts(index: Index, question: str, **filters) -> list[tuple[str, str]]:
    hits = index.search(question, k=5, filters=SearchFilters(**filters), mode="slowa", threshold=None)
    return [(h.file, h.art) for h in hits]


def test_keyword_index_follows_vectors_through_add_replace_remove(acts, tmp_path):
    db = tmp_path / "db"
    index = Index(db)
    index.add([acts])
    folders = list(db.glob("slowa-*-morfeusz"))
    assert len(folders) == 1 and (folders[0] / "fragmenty.json").exists()
    assert keyword_arts(index, "dokarmianiu dzika")[0] == ("dziki.txt", "2")
    assert keyword_arts(index, "ulami") == [("pszczoly.txt", "2")]

    # Same filters as the vector leg.
    assert keyword_arts(index, "grzywna dzik", files=["pszczoly.txt"]) == []
    assert keyword_arts(index, "grzywna dzik", articles=["1"]) == [("dziki.txt", "1")]

    # Re-indexing a changed file replaces its words.
    (acts / "pszczoly.txt").write_text(ACT_A.replace("Ule ustawia", "Barcie ustawia"), encoding="utf-8")
    index.add([acts / "pszczoly.txt"])
    assert keyword_arts(index, "ulami") == []
    assert keyword_arts(index, "barcie") == [("pszczoly.txt", "2")]

    # Another process (new Index) reads the saved index; removal drops the file's words.
    index.remove("dziki.txt")
    fresh = Index(db)
    assert keyword_arts(fresh, "dzików") == []
    assert keyword_arts(fresh, "barcie") == [("pszczoly.txt", "2")]


def test_a_word_of_the_acts_title_alone_matches_none_of_its_articles(acts, tmp_path):
    """Tytuł aktu jest wspólny dla wszystkich jego fragmentów: w indeksie słów robił z każdego artykułu trafienie
    słowa tytułu, a w bibliotece wielu aktów słowo pytania z tytułu obcego aktu wypychało właściwe artykuły
    (docs/historia/POMIARY.md, ósma sesja). Słowa tytułu liczą się tam, gdzie stoją w treści; akt wskazany
    nazwą w pytaniu wybierają odwołania, nie noga słów."""
    index = Index(tmp_path / "db")
    index.add([acts])
    assert keyword_arts(index, "hodowla") == []  # "o hodowli pszczół" – only in the title
    assert keyword_arts(index, "łowiectwo") == []
    assert keyword_arts(index, "pasieka") == [("pszczoly.txt", "1")]
    assert keyword_arts(index, "dziki w mieście")[0] == ("dziki.txt", "1")


def test_keyword_index_rebuilt_from_collection_after_loss(acts, tmp_path):
    db = tmp_path / "db"
    Index(db).add([acts / "dziki.txt"])
    for folder in db.glob("slowa-*"):
        shutil.rmtree(folder)  # e.g. a crash between the vector write and the keyword write
    assert keyword_arts(Index(db), "dokarmianie")[0] == ("dziki.txt", "2")


def test_ambiguous_word_counts_once():
    # "danych" has four readings (dana, dane, dany, dać); summed, they would outweigh two matched words.
    index = KeywordIndex(None)
    texts = {"a": "Zbiór danych.", "b": "Kot i pies.", "c": "Zebra.", "d": "Kot."}
    index.sync(dict.fromkeys(texts, "v1"), lambda ids: {i: texts[i] for i in ids})
    assert index.search("danych kot pies", 5)[0].id == "b"
    assert query_terms("danych, danych i kota") == [query_terms("danych")[0], query_terms("kot")[0]]


def test_lazily_loaded_tokens_survive_a_concurrent_save(tmp_path):
    """Tokeny czytane leniwie pochodzą z tej kopii indeksu, którą obiekt wczytał, nawet gdy inny proces
    podmienił już folder; znacznik kolekcji wraca po wczytaniu tylko dla tej samej kopii."""
    texts = {"a": "Pacjent ma prawo do dokumentacji medycznej.", "b": "Administrator przetwarza dane osobowe.",
             "c": "Urlop wypoczynkowy trwa 26 dni."}
    fetch = lambda ids: {i: texts[i] for i in ids}  # noqa: E731
    folder = tmp_path / "slowa"
    KeywordIndex(folder, "morfeusz").sync({"a": "1", "b": "1"}, fetch, "v1")
    reader = KeywordIndex(folder, "morfeusz")
    assert reader.collection_version == "v1"
    assert reader.coverage("dokumentacja pacjenta", ["a"]) == 1.0  # one line read from the file
    KeywordIndex(folder, "morfeusz").sync({"b": "1", "c": "1"}, fetch, "v2")  # another process
    assert reader.sync({"a": "1", "b": "2", "c": "1"}, fetch, "v3")
    assert len(reader) == 3 and reader.coverage("dokumentacja pacjenta", ["a"]) == 1.0
    again = KeywordIndex(folder, "morfeusz")
    assert again.collection_version == "v3" and [h.id for h in again.search("urlop", 3)] == ["c"]


def test_concurrent_saves_of_one_index_do_not_fail(tmp_path):
    # Two processes refresh the same derived index after their writes (both under a shared read lock).
    import threading

    folder = tmp_path / "slowa"
    texts = {f"id{i}": f"pracownik urlop wypoczynkowy dni {i}" for i in range(40)}
    errors: list[BaseException] = []

    def refresh(version: str) -> None:
        try:
            for round_ in range(15):
                index = KeywordIndex(folder, "morfeusz")
                index.sync({i: f"{version}{round_}" for i in texts}, lambda ids: {i: texts[i] for i in ids}, "v")
        except BaseException as exc:
            errors.append(exc)

    writers = [threading.Thread(target=refresh, args=(name,)) for name in ("a", "b")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert errors == []
    assert KeywordIndex(folder, "morfeusz").search("urlop", 3)


def test_small_change_goes_to_the_delta_without_rebuilding_the_matrix(tmp_path, monkeypatch):
    """Dopisanie/zastąpienie/usunięcie kilku fragmentów dużego indeksu nie przebudowuje macierzy BM25 (dopiska
    na dysku, wygaszone wiersze), inny proces widzi to samo, a za duża dopiska kończy się przebudową."""
    import bm25s

    texts = {f"d{i:02d}": f"Przepis {i} dotyczy podatku od nieruchomości numer {i}." for i in range(40)}
    texts["d07"] = "Pszczelarz prowadzi pasiekę przy drodze."
    fetch = lambda ids: {i: texts[i] for i in ids}  # noqa: E731
    folder = tmp_path / "slowa"
    first = KeywordIndex(folder, params=replace(DEFAULT_PARAMS.keywords, delta_min=6))
    first.sync(dict.fromkeys(texts, "1"), fetch, "v1")
    before = {h.id: h.score for h in first.search("pasieka pszczelarz", 3)}
    rebuilt = []
    original = bm25s.BM25.index
    monkeypatch.setattr(bm25s.BM25, "index", lambda self, *a, **kw: rebuilt.append(1) or original(self, *a, **kw))
    texts.update({"n1": "Dziki w mieście odławia straż miejska.", "n2": "Grzywna za dokarmianie dzików."})
    versions = {**dict.fromkeys(texts, "1"), "d07": "2"}  # d07 re-indexed with the same text
    del versions["d03"], texts["d03"]
    assert first.sync(versions, fetch, "v2") and not rebuilt
    assert (folder / keyword.DELTA).exists()
    for index in (first, KeywordIndex(folder)):  # this process and a fresh one (loads matrix + delta)
        assert index.collection_version == "v2" and len(index) == 41
        assert [h.id for h in index.search("dzików", 5)][:2] in (["n2", "n1"], ["n1", "n2"])
        assert index.search("numer 3", 40, allowed=RowSet.listed(["d03"])) == []
        assert [h.id for h in index.search("dziki", 5, allowed=RowSet.listed(["n1", "d01"]))] == ["n1"]
        # the same text in the delta scores as it did in the matrix (same BM25 formula and statistics)
        again = {h.id: h.score for h in index.search("pasieka pszczelarz", 3)}
        assert again.keys() == before.keys() and abs(again["d07"] - before["d07"]) < 1e-6
        assert index.coverage("straż miejska", ["n1"]) == 1.0
    # removing a delta chunk, then a change beyond the delta limit: one rebuild, same answers
    del versions["n2"]
    assert first.sync(versions, fetch, "v3") and not rebuilt
    assert [h.id for h in first.search("dzików", 5)] == ["n1"]
    texts.update({f"m{i}": f"Opłata targowa numer {i}." for i in range(6)})
    versions.update(dict.fromkeys([f"m{i}" for i in range(6)], "1"))
    assert first.sync(versions, fetch, "v4") and rebuilt == [1]
    fresh = KeywordIndex(folder)
    assert fresh.collection_version == "v4" and len(fresh) == len(versions) and not (folder / keyword.DELTA).exists()
    assert [h.id for h in fresh.search("dzików", 5)] == ["n1"] and fresh.search("opłata targowa", 10)


def test_morfeusz_keeps_working_next_to_faiss():
    # a big index's snapshot brings faiss into the process: two SWIG modules, and lemmatising died with a
    # segfault (CI: tests/test_serwuj_api.py with faiss imported after morfeusz2, tests/test_api.py before it)
    for before in ("import faiss\n", ""):
        script = (
            before + "from chroma_rag.derived import lemmatizer\n"
            "lemmas = lemmatizer('morfeusz')\n"
            "assert 'urlop' in lemmas('urlopu')\n"
            "import faiss\n"
            "words = ['pracownikowi', 'przedawnienia', 'roszczenia', 'kodeksu', 'cywilnego', 'wypoczynkowego']\n"
            "assert all(len(lemmas(w)) for w in words * 50) and 'pracownik' in lemmas('pracownikowi')\n"
            "print('ok')\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "ok", (before, done.returncode, done.stderr[-500:])


def dense_hits(index: KeywordIndex, question: str, k: int, allowed: list[str] | None = None) -> list[tuple[str, float]]:
    """Wzorzec: dawne gęste liczenie (tablica długości całego indeksu na każde odczytanie słowa)."""
    import math

    import numpy as np

    size, added = len(index.ids) + len(index._added), list(index._added)
    total = np.zeros(size)
    for readings in query_terms(question):
        per_reading = []
        for reading in readings:
            scores = np.zeros(size)
            if reading in index._bm25.vocab_dict:
                scores[: len(index.ids)] = index._bm25.get_scores([reading])
            if reading in index._added_postings:
                docs, counts = index._added_postings[reading]
                n, df = len(index.ids), index.document_frequency(reading)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                lengths = index._added_lengths[docs] / index._average_length
                k1, b = index._bm25.k1, index._bm25.b
                scores[len(index.ids) + docs] = idf * counts / (k1 * ((1 - b) + b * lengths) + counts)
            if reading in index._bm25.vocab_dict or reading in index._added_postings:
                per_reading.append(scores)
        if per_reading:
            total += np.max(per_reading, axis=0)
    names = [i.decode() for i in index.ids.tolist()] + added
    total[[names.index(i) for i in index._dead]] = 0.0
    if allowed is not None:
        total[[n for n, i in enumerate(names) if i not in set(allowed)]] = 0.0
    order = np.lexsort((np.arange(size), -total))[:k]
    return [(names[n], float(total[n])) for n in order if total[n] > 0]


SENTENCES = [
    "Pracownik ma prawo do urlopu wypoczynkowego w wymiarze 26 dni.",
    "Administrator przetwarza dane osobowe zgodnie z prawem.",
    "Zbiór danych osobowych prowadzi administrator danych.",
    "Pracodawca udziela urlopu na wniosek pracownika.",
    "Roszczenie o zapłatę przedawnia się z upływem trzech lat.",
    "Kto dokarmia dziki w mieście, podlega karze grzywny.",
    "Straż miejska odławia dziki w granicach miasta.",
    "Pszczelarz prowadzi pasiekę przy drodze publicznej.",
]
QUESTIONS = ["urlop pracownika", "danych osobowych administratora", "dziki grzywna w mieście",
             "przedawnienie roszczenia o zapłatę", "pasieka", "zupełnie obce słowo"]


def mixed_text(n: int) -> str:
    """Tekst fragmentu ``n``: jedno do trzech zdań, powtarzalnie (dużo wspólnych słów, więc i remisów)."""
    return " ".join(SENTENCES[(n * j) % len(SENTENCES)] for j in range(1, 2 + n % 3))


# lists summed by sorting / on a dense array; every filter narrow (scored at its positions) / none is
@pytest.mark.parametrize("dense_share", [0, 10**9])
def test_sparse_scoring_matches_the_dense_formula(tmp_path, monkeypatch, dense_share):
    """Rzadkie liczenie (listy wystąpień) daje te same trafienia i wyniki co gęsta suma po całym indeksie:
    słowa wieloznaczne, filtry, dopiska i wygaszone wiersze, remisy rozstrzygane pozycją; także wąski filtr
    liczony tylko na swoich pozycjach i pominięte listy częstych lematów (MaxScore)."""
    from chroma_rag.derived import keyword_scoring

    params = replace(DEFAULT_PARAMS.keywords, dense_share=dense_share, delta_min=20)
    pruned, outcomes = keyword_scoring.pruned, []
    monkeypatch.setattr(keyword_scoring, "pruned", lambda *a: outcomes.append(pruned(*a)) or outcomes[-1])

    texts = {f"f{i:03d}": mixed_text(i) for i in range(60)}
    texts["f050"] = texts["f010"]  # equal scores: ties broken by position
    fetch = lambda ids: {i: texts[i] for i in ids}  # noqa: E731
    folder = tmp_path / "slowa"
    index = KeywordIndex(folder, params=params)
    index.sync(dict.fromkeys(texts, "1"), fetch, "v1")
    some = sorted(texts)[::3]

    def same(index: KeywordIndex) -> None:
        for question in QUESTIONS:
            for allowed in (None, some, some[:2], []):
                for k in (1, 3, 100):
                    rows = None if allowed is None else RowSet.listed(allowed)
                    got = [(h.id, h.score) for h in index.search(question, k, allowed=rows)]
                    want = dense_hits(index, question, k, allowed)
                    assert [i for i, _ in got] == [i for i, _ in want], (question, allowed, k)
                    assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want, strict=True))

    same(index)
    assert any(len(r) > 1 for r in query_terms("danych"))  # an ambiguous word is among the questions
    texts.update({"n1": "Pracownik bierze urlop, dane osobowe chroni administrator.", "n2": "Dziki w mieście."})
    texts["f020"] = "Pasieka stoi przy drodze, pracownik ma urlop."
    versions = {**dict.fromkeys(texts, "1"), "f020": "2"}
    del versions["f005"]
    assert index.sync(versions, fetch, "v2")
    assert index._added and index._dead
    for again in (index, KeywordIndex(folder, params=params)):
        same(again)
    (folder / keyword.CEILINGS).unlink()  # an index saved before the column ceilings were: read from the columns
    same(KeywordIndex(folder, params=params))
    assert any(o is not None for o in outcomes) and any(o is None for o in outcomes)  # pruned, and not always


# --- zapis kolumnami (.npy) i mapa wierszy migawki --------------------------------------------------------------

DIM = 8
FILES = ("kodeks-pracy.pdf", "rodo.pdf", "łowiectwo-żubry.pdf")  # ids of different lengths, utf-8 beyond ascii


def put(collection: ChunkCollection, texts: dict[str, str], version: str) -> None:
    """Fragmenty do prawdziwej kolekcji (wektory losowe – noga słowna ich nie używa); ``hash`` to wersja."""
    ids = list(texts)
    vectors = np.random.default_rng(len(ids)).normal(size=(len(ids), DIM)).astype(np.float32)
    collection.upsert(ids, vectors, [texts[i] for i in ids], [{"plik": i.split("#")[0], "hash": version} for i in ids])


@pytest.fixture()
def chunks(tmp_path: Path) -> ChunkCollection:
    """Kolekcja w folderze z migawką: filtr daje ``RowSet`` wierszy migawki, jak przy dużej bazie."""
    collection = Store(tmp_path / "dane").chunks("test:slowa", DIM, create=True)
    put(collection, {f"{FILES[n % 3]}#{n}": mixed_text(n) for n in range(60)}, "1")
    return collection


def synced(index: KeywordIndex, collection: ChunkCollection) -> bool:
    derived = DerivedIndex(collection)
    return index.sync(derived.chunk_versions(), derived.keyword_texts, collection.version())


def hits(index: KeywordIndex, question: str, allowed: RowSet | list[str] | None = None) -> list[tuple[str, float]]:
    rows = RowSet.listed(allowed) if isinstance(allowed, list) else allowed
    return [(h.id, h.score) for h in index.search(question, 10, allowed=rows)]


def write_previous_format(folder: Path) -> None:
    """Przepisuje folder indeksu słów na format 5: id, pozycje tokenów i wersje jako JSON w manifeście."""
    index = KeywordIndex(folder)
    names = [i.decode() for i in index.ids.tolist()]
    label = json.loads((folder / keyword.COLLECTION_VERSION).read_text(encoding="utf-8"))
    lines = [json.dumps("stary-zapis").encode() + b"\n"]
    lines += [json.dumps(index.tokens[i], ensure_ascii=False).encode() + b"\n" for i in names]
    manifest = {"zapis": "stary-zapis", "pozycje_tokenow": list(itertools.accumulate(map(len, lines))),
                "wersja_formatu": 5, "lematyzator": "morfeusz", "kolejnosc": names, "wersje": index.versions,
                "srednia_dlugosc": index._average_length}
    (folder / keyword.TOKENS).write_bytes(b"".join(lines))
    (folder / keyword.MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    # the collection's marker still matches: only the format tells this index apart
    (folder / keyword.COLLECTION_VERSION).write_text(json.dumps({**label, "zapis": "stary-zapis"}), encoding="utf-8")
    for name in (keyword.IDS, keyword.TOKEN_OFFSETS, keyword.VERSION_CODES):
        (folder / name).unlink()


def test_index_saved_in_the_previous_format_is_rebuilt_by_the_next_sync(acts, tmp_path):
    db = tmp_path / "db"
    Index(db).add([acts])
    [folder] = db.glob("slowa-*-morfeusz")
    write_previous_format(folder)
    old = KeywordIndex(folder)
    assert len(old) == 0 and old.collection_version == "" and old.search("dzików", 5) == []
    assert keyword_arts(Index(db), "dokarmianiu dzika")[0] == ("dziki.txt", "2")
    assert keyword_arts(Index(db), "ulami") == [("pszczoly.txt", "2")]
    manifest = json.loads((folder / keyword.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["wersja_formatu"] == keyword.FORMAT_VERSION and "kolejnosc" not in manifest
    rebuilt = KeywordIndex(folder)
    assert rebuilt.collection_version and len(rebuilt) == manifest["fragmenty"] > 0
    assert rebuilt.search("dokarmianie dzików", 1)


def test_fresh_load_maps_the_columns_and_builds_no_id_dictionary(chunks, tmp_path):
    """Świeży proces mapuje id, pozycje tokenów i kody wersji z plików .npy: ani słownik id → wersja, ani tokeny
    nie powstają przy wczytaniu ani przy wyszukiwaniu (bez filtra i z filtrem z migawki), a wyniki – także
    z dopiską – są te same co u obiektu, który indeks zapisał."""
    folder = tmp_path / "slowa"
    saver = KeywordIndex(folder)
    assert synced(saver, chunks)
    put(chunks, {"rodo.pdf#4": "Pszczelarz prowadzi pasiekę. Administrator danych też.", "rodo.pdf#nowy":
                 "Pracownik przetwarza dane osobowe w pasiece."}, "2")
    chunks.delete(["rodo.pdf#7"])
    assert synced(saver, chunks) and saver._added and saver._dead  # a delta on disk: added and switched-off rows
    fresh = KeywordIndex(folder)
    selection = DerivedIndex(chunks).rows(build_where(SearchFilters(files=["rodo.pdf"])))
    assert isinstance(selection.space, Snapshot)
    for question in QUESTIONS:
        for allowed in (None, selection):
            assert hits(fresh, question, allowed) == hits(saver, question, allowed), (question, allowed)
    # an id longer than every matrix id is not found through its cut-off prefix
    longest = max((i.decode() for i in fresh.ids.tolist()), key=lambda i: len(i.encode()))
    own_text = mixed_text(int(longest.split("#")[1]))
    assert hits(fresh, own_text, [longest]) and hits(fresh, own_text, [longest + "0"]) == []
    assert isinstance(fresh.ids, np.memmap) and fresh._version_map is None and fresh._tokens is None
    assert fresh.coverage("pasieka", ["rodo.pdf#4", "kodeks-pracy.pdf#0"]) == 1.0 and fresh._tokens is None
    # built when a sync needs it: the matrix's versions without the switched-off rows, plus the delta's
    current = DerivedIndex(chunks).chunk_versions()
    assert fresh.versions == saver.versions == current
    assert not fresh.sync(current, lambda ids: pytest.fail("nic się nie zmieniło"), chunks.version())


def expected_row_map(index: KeywordIndex, snapshot: Snapshot) -> list[int]:
    """Wzorzec mapy wiersz migawki → pozycja indeksu, wprost z napisów (dopiska po macierzy)."""
    names = [i.decode() for i in index.ids.tolist()] + list(index._added)
    position = {i: n for n, i in enumerate(names)}  # a replaced chunk: its delta position, the matrix row is off
    return [position.get(i.decode(), -1) if alive else -1
            for i, alive in zip(snapshot.ids.tolist(), snapshot.alive.tolist(), strict=True)]


def test_row_map_without_bisection_equals_the_bisection(chunks, tmp_path):
    """Mapa wiersz migawki → pozycja: gdy macierz ma dokładnie id kolekcji, kolejne liczby bez bisekcji; gdy
    dopiska dodała albo usunęła fragmenty – bisekcja. Obie drogi zgadzają się ze wzorcem i z filtrem jako listą."""
    index = KeywordIndex(tmp_path / "slowa")
    assert synced(index, chunks)
    where = build_where(SearchFilters(files=["rodo.pdf", "łowiectwo-żubry.pdf"]))

    def check(same_ids: bool) -> None:
        snapshot = DerivedIndex(chunks).snapshot()
        assert np.array_equal(index.ids, snapshot.sorted_ids) == same_ids  # the way _sorted_positions goes
        assert index._row_map(snapshot, list(index._added)).tolist() == expected_row_map(index, snapshot)
        selection = DerivedIndex(chunks).rows(where)
        for question in QUESTIONS:
            assert hits(index, question, selection) == hits(index, question, list(selection)), question

    check(same_ids=True)
    # the bisection on the same ids gives the same numbers, also against wider items than the matrix's
    sorted_ids = DerivedIndex(chunks).snapshot().sorted_ids
    wider = sorted_ids.astype(f"S{sorted_ids.itemsize + 5}")
    assert keyword._find(index.ids, sorted_ids).tolist() == index._sorted_positions(wider).tolist() == list(
        range(len(index.ids)))
    put(chunks, {"rodo.pdf#1": "Straż miejska odławia dziki."}, "2")  # replaced: same ids, new text in the delta
    assert synced(index, chunks) and index._dead == {"rodo.pdf#1"}
    check(same_ids=True)
    # one added, one removed: as many ids as the matrix has, but not the same ones
    put(chunks, {"łowiectwo-żubry.pdf#nowy": "Dziki i żubry w granicach miasta."}, "1")
    chunks.delete(["rodo.pdf#4"])
    assert synced(index, chunks) and len(index._added) == len(index._dead) == 2
    assert len(DerivedIndex(chunks).snapshot().sorted_ids) == len(index.ids)
    check(same_ids=False)


def test_keyword_index_catches_up_from_the_journal_without_comparing_every_chunk(acts, tmp_path, monkeypatch):
    """Po zapisie (nowy, zmieniony i usunięty plik) indeks słów dogania kolekcję z dziennika zmian migawki – tylko
    dotknięte fragmenty, bez porównania wersji wszystkich (przy milionie ~2 s po każdym pliku) – u piszącego
    i u czytelnika z indeksem sprzed zapisu; wyniki jak po przebudowie od zera."""
    db = tmp_path / "db"
    Index(db).add([acts])
    reader = Index(db)
    assert keyword_arts(reader, "ulami") == [("pszczoly.txt", "2")]
    compared = []
    every_version = DerivedIndex.chunk_versions
    monkeypatch.setattr(DerivedIndex, "chunk_versions", lambda self: compared.append(1) or every_version(self))
    (acts / "pszczoly.txt").write_text(ACT_A.replace("Ule ustawia", "Barcie ustawia"), encoding="utf-8")
    (acts / "sowy.txt").write_text(ACT_B.replace("Dziki", "Sowy").replace("dzików", "sów"), encoding="utf-8")
    writer = Index(db)
    writer.add([acts])
    writer.remove("dziki.txt")
    questions = ["ulami", "barcie", "dzików", "sów", "grzywna", "pasieka"]
    caught_up = {index: [keyword_arts(index, q) for q in questions] for index in (reader, writer)}
    assert compared == []
    assert caught_up[reader] == caught_up[writer]
    assert [{file for file, _ in found} for found in caught_up[reader][:4]] == [set(), {"pszczoly.txt"}, set(),
                                                                                {"sowy.txt"}]
    for folder in db.glob("slowa-*"):
        shutil.rmtree(folder)
    assert [keyword_arts(Index(db), q) for q in questions] == caught_up[reader]
    assert compared == [1]  # the rebuild compared every chunk: there was no index to catch up


def test_threads_reading_tokens_from_disk_each_get_their_own_line(tmp_path):
    """Wątki serwera czytają tokeny z jednego otwartego pliku; seek jednego między seek a read drugiego
    dawał mu cudzą linię (w CI: 500 z JSONDecodeError przy równoległych wyszukiwaniach)."""
    import threading

    texts = {f"id{i:03d}": f"{'pracownik urlop' if i % 2 else 'pacjent dokumentacja'} sprawa {i}" for i in range(200)}
    folder = tmp_path / "slowa"
    KeywordIndex(folder, "morfeusz").sync(dict.fromkeys(texts, "1"), lambda ids: {i: texts[i] for i in ids}, "v1")
    reader = KeywordIndex(folder, "morfeusz")
    expected = {i: reader.coverage("pracownik urlop", [i]) for i in texts}
    start, errors = threading.Barrier(4), []

    def read() -> None:
        start.wait()
        try:
            for _ in range(20):
                for i, value in expected.items():
                    assert reader.coverage("pracownik urlop", [i]) == value
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
