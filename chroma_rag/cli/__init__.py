"""Wiersz poleceń ``chroma-rag``: cienka warstwa nad ``chroma_rag.api`` (nigdy nad Chromą).

Aplikacja i kolejność poleceń (``app``), polecenia: ``indexing`` (indeksuj, sprawdz, lista, podglad, usun),
``search`` (szukaj, pokaz, ocena), ``ask`` (pytaj), ``serve`` (serwuj, mcp); wspólne opcje (``options``), wyjście
w terminalu i potoku (``output``), postęp indeksowania (``progress``), pomoc i błędy wywołania po polsku
(``help``, ``usage``) oraz uzupełnianie w powłoce (``completion``)."""
