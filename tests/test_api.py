"""Publiczne API Pythona: to samo co CLI, bez warstwy tekstowej."""

import pytest
from conftest import PATIENTS

from chroma_rag import Index
from chroma_rag.errors import UsageError
from chroma_rag.filters import SearchFilters


def test_search_with_filters_returns_hits(two_acts_db):
    index = Index(two_acts_db)
    hits = index.search("zgoda pacjenta na zabieg operacyjny", k=3, filters=SearchFilters(files=[PATIENTS]))
    assert len(hits) == 3 and all(h.file == PATIENTS for h in hits)
    assert hits[0].score >= hits[-1].score  # hybrid mode ranks by the fused score


def test_files_and_remove(two_acts_copy):
    index = Index(two_acts_copy)
    names = [f.name for f in index.files()]
    assert PATIENTS in names
    assert index.remove(PATIENTS) > 0
    assert PATIENTS not in [f.name for f in index.files()]


def test_long_lived_index_sees_what_another_process_wrote(tmp_path):
    """Odczyty zachowują klienta Chromy między pytaniami, ale zapis innego procesu go unieważnia."""
    import subprocess
    import sys

    db = tmp_path / "db"
    first, second = tmp_path / "parking.txt", tmp_path / "kantyna.txt"
    first.write_text("Miejsca dla rowerów są przy bramie B, a dla samochodów na poziomie -1.", encoding="utf-8")
    second.write_text("Kantyna jest czynna od 11:00 do 15:00, obiad kosztuje 25 zł.", encoding="utf-8")
    Index(db).add([first])
    reader = Index(db)
    assert reader.search("Gdzie zostawić rower?", threshold=None)[0].file == "parking.txt"
    command = [sys.executable, "-m", "chroma_rag", "indeksuj", str(second), "--baza", str(db)]
    subprocess.run(command, check=True, capture_output=True)
    hits = reader.search("Ile kosztuje obiad?", threshold=None, filters=SearchFilters(files=["kantyna.txt"]))
    assert hits and hits[0].file == "kantyna.txt"


def test_file_names_are_read_from_the_registry_once_per_write_and_a_new_file_is_found(empty_target, tmp_path,
                                                                                     monkeypatch):
    """Nazwy plików do filtra są zapamiętane do następnej zmiany rejestru (przy milionie fragmentów odczyt
    rejestru to ~0,15 s na każde pytanie z filtrem pliku w folderze, ~70 ms przez ``chroma run``), ale plik
    dopisany przez inny proces znajduje się od razu – w folderze i na serwerze Chromy."""
    import subprocess
    import sys

    from chroma_rag.storage.registry import Registry

    first, second = tmp_path / "parking.txt", tmp_path / "kantyna.txt"
    first.write_text("Miejsca dla rowerów są przy bramie B, a dla samochodów na poziomie -1.", encoding="utf-8")
    second.write_text("Kantyna jest czynna od 11:00 do 15:00, obiad kosztuje 25 zł.", encoding="utf-8")
    empty_target.index().add([first])
    reads = []
    names = Registry.names
    monkeypatch.setattr(Registry, "names", lambda self: reads.append(1) or names(self))
    reader = empty_target.index()
    for _ in range(3):
        hits = reader.search("Gdzie zostawić rower?", threshold=None, filters=SearchFilters(files=["parking.txt"]))
        assert hits[0].file == "parking.txt"
    assert len(reads) == 1
    command = [sys.executable, "-m", "chroma_rag", "indeksuj", str(second), *empty_target.args]
    subprocess.run(command, check=True, capture_output=True)
    hits = reader.search("Ile kosztuje obiad?", threshold=None, filters=SearchFilters(files=["kantyna.txt"]))
    assert hits and {hit.file for hit in hits} == {"kantyna.txt"}
    assert len(reads) == 2
    subprocess.run([sys.executable, "-m", "chroma_rag", "usun", "parking.txt", *empty_target.args], check=True,
                   capture_output=True)
    hits = reader.search("Gdzie zostawić rower?", threshold=None, filters=SearchFilters(files=["kantyna.txt"]))
    assert {hit.file for hit in hits} == {"kantyna.txt"}
    assert len(reads) == 3  # the removal changed the registry: names read again


def test_a_searcher_remembers_the_chunks_of_only_the_recent_filters(two_acts_db):
    """Wybór fragmentów filtra (dla nogi słów) jest zapamiętany, ale tylko dla ostatnich filtrów: serwer trzyma
    jedną wyszukiwarkę na wersję kolekcji, a przy milionie fragmentów jeden wybór to do 8 MB."""
    from chroma_rag.retrieval.search import ALLOWED_FILTERS, SearchRequest

    index = Index(two_acts_db)
    searcher = index.retrieval.searcher()
    first = index.search("urlop", filters=SearchFilters(files=[PATIENTS]), threshold=None)
    for year in range(1990, 1990 + 2 * ALLOWED_FILTERS):
        searcher.search(SearchRequest("zgoda pacjenta", filters=SearchFilters(year=year)))
    assert searcher._rows_where.cache_info().currsize == ALLOWED_FILTERS
    assert index.search("urlop", filters=SearchFilters(files=[PATIENTS]), threshold=None) == first


class CountingEmbedder:
    """Własny model użytkownika: prawdziwy model lokalny, który liczy swoje wywołania."""

    def __init__(self) -> None:
        from chroma_rag.embedding.embedder import LocalE5Embedder

        self.model = LocalE5Embedder()
        self.model_id, self.dim = self.model.model_id, self.model.dim
        self.passages = self.queries = 0

    def embed_passages(self, texts, progress=None):
        self.passages += len(texts)
        return self.model.embed_passages(texts, progress)

    def embed_query(self, text):
        self.queries += 1
        return self.model.embed_query(text)


def test_a_given_model_indexes_and_searches_and_can_serve_two_indexes(tmp_path):
    """``Index(embedder=…)``: gotowy model liczy wektory fragmentów i pytań, bez wczytywania drugiego – także
    dla drugiego indeksu; raport ``add`` podaje czas doganiania indeksu słów."""
    model = CountingEmbedder()
    note = tmp_path / "parking.txt"
    note.write_text("Miejsca dla rowerów są przy bramie B, a dla samochodów na poziomie -1.", encoding="utf-8")
    first, second = Index(tmp_path / "pierwsza", embedder=model), Index(tmp_path / "druga", embedder=model)
    report = first.add([note])
    assert model.passages == report.embedded == 1 and "indeks slow" in report.seconds
    second.add([note])
    assert model.passages == 2
    for index in (first, second):
        assert index.embedder is model
        assert index.search("Gdzie zostawić rower?", threshold=None)[0].file == "parking.txt"
    assert model.queries == 2
    assert first.search("rowerów", mode="slowa", threshold=None)[0].file == "parking.txt"


def test_a_given_model_and_a_model_description_together_are_refused(tmp_path):
    with pytest.raises(UsageError, match="nie jedno i drugie"):
        Index(tmp_path / "db", model="lokalny", embedder=CountingEmbedder())
