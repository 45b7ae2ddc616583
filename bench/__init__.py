"""Pomiary do docs/BENCHMARKS.md. Uruchamiane z katalogu repozytorium jako moduły: ``python -m bench.NAZWA``
(``make bench``, ``make bench-plan`` …); dublery serwerów testów biorą z ``tests`` (np. ``tests.llm_server``)."""
