"""Etap 3, magazyn: fragmenty z wektorami w kolekcji Chromy (folder albo ``chroma run``) i wszystko, co czyta je
szybko i bezpiecznie.

Otwarcie bazy (``store``), zapis i odczyt kolekcji (``collection``) z dziennikiem zmian dla indeksu pochodnego
(``journal``, ``journal_pages``, ``records``), ranking z filtrem prosto z Chromy (``filtered_ranking``, ``where``),
rejestr plików (``registry``), dokumenty o tej samej treści pod kilkoma ścieżkami (``documents``), blokady między
procesami (``locking``), folder tylko do odczytu (``readonly``) i pamięć podręczna wektorów (``vector_cache``).
Szybkie odczyty (migawka, indeks słów) to osobny składnik: ``chroma_rag.derived``."""
