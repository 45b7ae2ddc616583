"""Etap 4, indeksowanie (``indeksuj``): folder → przyrostowo zsynchronizowana kolekcja.

Przebieg synchronizacji (``sync``): znalezienie plików i ich odcisków (``discovery``), przygotowanie fragmentów
(``preparing``), wektory z ponownym użyciem niezmienionych (``vector_reuse``), zapis i usunięcie pliku w całości
(``file_writes``), raport i postęp (``report``) oraz sprawdzenie spójności bazy (``consistency``, ``sprawdz``).
Łączy etapy 1–3; wyszukiwanie z niego nie korzysta."""
