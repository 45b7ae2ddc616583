"""chroma-rag: pytania do własnych dokumentów prawnych, z cytowaniem pliku i artykułu.

Publiczne API: ``from chroma_rag import Index`` (import leniwy, żeby ``chroma-rag --help`` był szybki).
"""

__version__ = "0.1.0"
__all__ = ["Index", "__version__"]


def __getattr__(name: str):
    if name == "Index":
        from .api import Index

        return Index
    raise AttributeError(name)
