# chroma-rag: `make install` i `make test` wystarczą na świeżym klonie.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zainstalowano

.PHONY: install run test test-wolne lint bench

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
