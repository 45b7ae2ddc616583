# chroma-rag: `make install` i `make test` wystarczą na świeżym klonie.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zainstalowano

.PHONY: install run test test-wolne lint bench bench-skala bench-czystosc bench-serwuj bench-plan bench-indeksowanie ocena ocena-plan ocena-biblioteka ocena-biblioteka-pomysly serwer serwuj przegladarka narzedzia-js inspektor-mcp ocr bench-ocr

# OCR skanów (Tesseract z modelem polskim) instalowany, gdzie się da (apt, uprawnienia); gdzie nie – skany są pomijane
# z jednym zdaniem, co zainstalować, a reszta działa.
install: $(STAMP)
	@$(MAKE) --no-print-directory ocr >/dev/null 2>&1 || echo "Uwaga: nie udało się zainstalować Tesseracta (OCR \
	skanów) – skany będą pomijane; zainstaluj: apt-get install tesseract-ocr tesseract-ocr-pol (albo make ocr)."

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/chroma-rag indeksuj dane/
	$(VENV)/bin/chroma-rag szukaj "Ile dni urlopu przysługuje pracownikowi?"

test: $(STAMP) przegladarka narzedzia-js inspektor-mcp ocr
	$(PY) -m pytest

# Test strony (tests/test_strona.py) steruje Debianowym chromium przez Playwright – bez pobierania przeglądarki.
przegladarka:
	@test -x /usr/bin/chromium || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

# OCR skanów (ingest/ocr.py): Debianowy Tesseract z modelem polskim, doinstalowany tylko, gdy go brak.
ocr:
	@tesseract --list-langs 2>/dev/null | grep -qx pol || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y tesseract-ocr tesseract-ocr-pol)

# axe-core (dostępność strony) w wersji z tests/js/package-lock.json
narzedzia-js: tests/js/node_modules/axe-core/axe.min.js

tests/js/node_modules/axe-core/axe.min.js: tests/js/package.json tests/js/package-lock.json
	cd tests/js && npm ci --no-audit --no-fund
	touch $@

# MCP Inspector (niezależny klient MCP dla tests/test_mcp_inspector.py) w wersji z tests/mcp-inspector/package-lock.json
INSPEKTOR := tests/mcp-inspector/node_modules/.bin/mcp-inspector
inspektor-mcp: $(INSPEKTOR)

$(INSPEKTOR): tests/mcp-inspector/package.json tests/mcp-inspector/package-lock.json
	cd tests/mcp-inspector && npm ci --no-audit --no-fund
	touch $@

test-wolne: $(STAMP)
	$(PY) -m pytest -m wolne

lint: $(STAMP)
	$(VENV)/bin/ruff check chroma_rag tests bench

# Pomiary do docs/BENCHMARKS.md: podstawy (start, wyszukiwanie, etapy indeksowania), potem skala.
bench: $(STAMP)
	$(PY) -m bench.run
	$(MAKE) bench-skala

# Ocena jakości wyszukiwania na pytaniach dev: baza z 11 wspólnymi PDF-ami budowana raz (kilka-kilkanaście
# minut embeddingu), potem tylko pytania (kilka sekund).
OCENA_BAZA ?= chroma_db_ocena
USTAWY ?= ../shared/dane/ustawy
PYTANIA ?= ../shared/dane/pytania-dev.jsonl

# Baza z 11 wspólnymi PDF-ami: budowana raz, gdy jej brak (z niej też próbki tekstu pomiaru skali).
$(OCENA_BAZA)/chroma.sqlite3: | $(STAMP)
	$(VENV)/bin/chroma-rag indeksuj $(USTAWY) --baza $(OCENA_BAZA)

ocena: $(STAMP) $(OCENA_BAZA)/chroma.sqlite3
	$(VENV)/bin/chroma-rag ocena $(PYTANIA) --baza $(OCENA_BAZA)

# Biblioteka (issue 37): 11 wspólnych PDF-ów i 66 aktów z ../shared/dane/biblioteka w jednej bazie (ok. 23 tys.
# fragmentów; pierwsze zbudowanie na 2 rdzeniach to 40+ min, przerwane wznawia się, potem tylko zmienione pliki),
# potem oba zbiory egzaminów, pytania mieszane i potoczne bez planu i z odtwarzanymi planami, zbiór odwołań
# bench/odwolania-dev.jsonl; ZAPISZ=1 wpisuje tabelę do docs/BENCHMARKS.md.
BIBLIOTEKA_BAZA ?= chroma_db_biblioteka
BIBLIOTEKA ?= ../shared/dane/biblioteka
ocena-biblioteka: $(STAMP)
	$(VENV)/bin/chroma-rag indeksuj $(USTAWY) $(BIBLIOTEKA) --baza $(BIBLIOTEKA_BAZA)
	$(PY) -m bench.biblioteka --baza $(BIBLIOTEKA_BAZA) $(if $(ZAPISZ),--zapisz)

# Warianty rankingu w bibliotece (wybór aktu, sąsiednie artykuły, wagi, głębokość) na tej samej bazie, poza produktem.
ocena-biblioteka-pomysly: $(STAMP)
	$(PY) -m bench.biblioteka_pomysly --baza $(BIBLIOTEKA_BAZA) $(if $(ZAPISZ),--zapisz)

# Wyszukiwanie planowane (issue 12) bez sieci: plany silnego modelu z $(PLANY) odtwarza testowy serwer czatu
# (tests/plan_replay.py); ZAMIEN=1 oddaje każdemu pytaniu plan następnego (plany błędne).
PLANY ?= ../shared/dane/plany-dev.jsonl
ZAMIEN ?= 0
ocena-plan: $(STAMP) $(OCENA_BAZA)/chroma.sqlite3
	$(PY) tests/plan_replay.py $(PLANY) --zamien $(ZAMIEN) -- \
		$(VENV)/bin/chroma-rag ocena $(PYTANIA) --baza $(OCENA_BAZA) --przepisz

# Fuzja planowana na wszystkich zbiorach dev: plany właściwe, błędne i słabsze, wybór ustawień walidacją krzyżową po aktach;
# ZAPISZ=1 wpisuje wynik do docs/BENCHMARKS.md.
bench-plan: $(STAMP) $(OCENA_BAZA)/chroma.sqlite3
	$(PY) -m bench.planning --baza $(OCENA_BAZA) $(if $(ZAPISZ),--zapisz)

# Skala (issue 23): FRAGMENTY fragmentów w folderze i przez `chroma run` na tym samym katalogu – nasze
# wyszukiwanie (p95 na 200 pytaniach odłożonych na filtr, recall@10 odłożonych i 60 dev osobno), pamięć, zimny
# start, dodanie pliku i surowa Chroma (rozgrzana, 20 pytań na filtr) w jednym przebiegu; ostatnia linia to JSON,
# ZAPISZ=1 wpisuje tabelę do docs/BENCHMARKS.md. Kolekcja budowana raz w $(SCRATCH) (przy 1 mln 35–70 min
# na 2 rdzeniach, dane pochodne ok. 15 min), kolejne przebiegi – minuty.
# 10k i 100k w folderze i na serwerze (issue 8): python -m bench.scale --scratch $(SCRATCH).
SCRATCH ?= .bench-cache/skala
FRAGMENTY ?= 1000000
bench-skala: $(STAMP) $(OCENA_BAZA)/chroma.sqlite3
	$(PY) -m bench.scale --scratch $(SCRATCH) --fragmenty $(FRAGMENTY) --json $(if $(ZAPISZ),--zapisz)

# Czystość fragmentów 11 wspólnych PDF-ów (issue 3): wczytanie i cięcie bez embeddingu, ~25 s.
# Skan sprawdza rozbite słowa słownikiem simplemma (niezależnym od naprawy), więc doinstalowuje ten dodatek.
bench-czystosc: $(STAMP)
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev,lematyzatory]'
	$(PY) -m bench.czystosc --zapisz

# Indeksowanie biblioteki w tempie modelu (issue 37): sam model i pełne `indeksuj` (świeża baza tymczasowa) na tych
# samych fragmentach 66 ustaw z ../shared/dane/biblioteka, fragm./s obu, stosunek i etapy; na 2 rdzeniach ok. 35 min
# na każdy pomiar. PLIKI=N – pierwsze N plików (szybka próba), POWTORZENIA=R – na przemian, mediany; PORCJE=P –
# pary model–indeksuj na P porcjach plików do wspólnej bazy (krótkie pary, mniej cudzego szumu), sumy;
# ZAPISZ=1 wpisuje wynik do docs/BENCHMARKS.md.
PLIKI ?= 0
POWTORZENIA ?= 1
PORCJE ?= 1
bench-indeksowanie: $(STAMP)
	$(PY) -m bench.indeksowanie --pliki $(PLIKI) --powtorzenia $(POWTORZENIA) --porcje $(PORCJE) $(if $(ZAPISZ),--zapisz)

# OCR skanów (issue 41): strony ze środka 11 wspólnych PDF-ów jako skany 300 i 150 dpi i krzywo o 1,5°, CER wobec
# warstwy tekstowej i odsetek jednostek znalezionych w skanie; kilka minut na 2 rdzeniach. ZAPISZ=1 wpisuje tabelę
# do docs/BENCHMARKS.md.
bench-ocr: $(STAMP) ocr
	$(PY) -m bench.ocr $(if $(ZAPISZ),--zapisz)

# Serwer Chromy dla trybu zespołowego (--serwer http://127.0.0.1:8000), zob. docs/SERWER.md.
serwer: $(STAMP)
	$(VENV)/bin/chroma run --path chroma_db_serwer --host 127.0.0.1 --port 8000

# Strona, JSON API i MCP dla zespołu na http://127.0.0.1:8080/ nad domyślną bazą (zob. README, „Dla zespołu”).
serwuj: $(STAMP)
	$(VENV)/bin/chroma-rag serwuj

# Czasy /api/szukaj (p50/p95, 1 i 8 klientów) na bazie $(OCENA_BAZA) – do docs/BENCHMARKS.md.
bench-serwuj: $(STAMP)
	$(PY) -m bench.serwuj --baza $(OCENA_BAZA)
