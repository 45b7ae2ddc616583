# chroma-rag: `make install` i `make test` wystarczą na świeżym klonie.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zainstalowano

.PHONY: install run test test-wolne lint bench ocena

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/chroma-rag indeksuj dane/
	$(VENV)/bin/chroma-rag szukaj "Ile dni urlopu przysługuje pracownikowi?"

test: $(STAMP)
	$(PY) -m pytest

test-wolne: $(STAMP)
	$(PY) -m pytest -m wolne

lint: $(STAMP)
	$(VENV)/bin/ruff check chroma_rag tests bench

bench: $(STAMP)
	$(PY) bench/run.py

# Ocena jakości wyszukiwania na pytaniach dev: baza z 11 wspólnymi PDF-ami budowana raz (kilka-kilkanaście
# minut embeddingu), potem tylko pytania (kilka sekund).
OCENA_BAZA ?= chroma_db_ocena
USTAWY ?= ../shared/dane/ustawy
PYTANIA ?= ../shared/dane/pytania-dev.jsonl

ocena: $(STAMP)
	@test -f $(OCENA_BAZA)/chroma.sqlite3 || $(VENV)/bin/chroma-rag indeksuj $(USTAWY) --baza $(OCENA_BAZA)
	$(VENV)/bin/chroma-rag ocena $(PYTANIA) --baza $(OCENA_BAZA)
