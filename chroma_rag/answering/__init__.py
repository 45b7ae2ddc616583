"""Etap 6, odpowiedź (``pytaj``): fragmenty → odpowiedź modelu czatu z cytatami ``[plik, art. N]`` albo „Nie ma
tego w dokumentach.” (``answer``). Klient modelu czatu, wspólny z planowaniem, to ``chroma_rag.llm``."""

from .answer import Answer, ask

__all__ = ["Answer", "ask"]
