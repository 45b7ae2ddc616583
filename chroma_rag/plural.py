"""Polska odmiana rzeczowników po liczebnikach: 1 fragment, 2 fragmenty, 5 fragmentów, 22 fragmenty."""

from __future__ import annotations

# Forms: (1, 2–4, 5+) – "fragment", "fragmenty", "fragmentów".
FRAGMENT = ("fragment", "fragmenty", "fragmentów")
FILE = ("plik", "pliki", "plików")
TOKEN = ("token", "tokeny", "tokenów")
DIMENSION = ("wymiar", "wymiary", "wymiarów")
ORPHAN = ("fragment-sierota", "fragmenty-sieroty", "fragmentów-sierot")
UNFINDABLE = ("nieodnajdywalny fragment", "nieodnajdywalne fragmenty", "nieodnajdywalnych fragmentów")
QUESTION = ("pytanie", "pytania", "pytań")
TURN = ("tura", "tury", "tur")
CHARACTER = ("znak", "znaki", "znaków")


def form(n: int, forms: tuple[str, str, str]) -> str:
    """Forma rzeczownika dla liczby ``n``: pojedyncza dla 1, druga dla 2–4 (oprócz 12–14), trzecia dla reszty."""
    one, few, many = forms
    n = abs(n)
    if n == 1:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def count(n: int, forms: tuple[str, str, str]) -> str:
    """„1 fragment”, „3 fragmenty”, „12 fragmentów”."""
    return f"{n} {form(n, forms)}"
