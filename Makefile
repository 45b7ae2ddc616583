# chroma-rag: `make install` i `make test` wystarczą na świeżym klonie.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zainstalowano

.PHONY: install run test test-wolne lint bench bench-skala serwer

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

# Skala (issue 8): 10k i 100k fragmentów, folder i serwer; kolekcje budowane raz w $(SCRATCH).
SCRATCH ?= /work/scratch-server
bench-skala: $(STAMP)
	$(PY) bench/scale.py --scratch $(SCRATCH)

# Serwer Chromy dla trybu zespołowego (--serwer http://127.0.0.1:8000), zob. docs/SERWER.md.
serwer: $(STAMP)
	$(VENV)/bin/chroma run --path chroma_db_serwer --host 127.0.0.1 --port 8000
