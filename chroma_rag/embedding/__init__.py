"""Etap 2, wektory: tekst fragmentu lub pytania → wektor.

Domyślny model offline i wybór dostawcy (``embedder``), serwery Ollama i zgodne z OpenAI (``remote``) oraz opis
modelu zapisywany w bazie, żeby nie pomieszać wektorów różnych modeli (``spec``)."""
