"""Publiczne API Pythona: to samo co CLI, bez warstwy tekstowej."""

from conftest import PATIENTS

from chroma_rag import Index
from chroma_rag.filters import SearchFilters


def test_search_with_filters_returns_hits(two_acts_db):
    index = Index(two_acts_db)
    hits = index.search("zgoda pacjenta na zabieg operacyjny", k=3, filters=SearchFilters(files=[PATIENTS]))
    assert len(hits) == 3 and all(h.file == PATIENTS for h in hits)
    assert hits[0].similarity >= hits[-1].similarity


def test_files_and_remove(two_acts_copy):
    index = Index(two_acts_copy)
    names = [f.name for f in index.files()]
    assert PATIENTS in names
    assert index.remove(PATIENTS) > 0
    assert PATIENTS not in [f.name for f in index.files()]
