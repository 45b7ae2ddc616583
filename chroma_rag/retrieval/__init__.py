"""Etap 5, wyszukiwanie (``szukaj``, ``ocena``): pytanie → uszeregowane fragmenty z powodem, gdy nic nie pasuje.

Ranking hybrydowy wektory + BM25 i fuzja list (``search``; obie nogi z indeksu pochodnego, ``chroma_rag.derived``),
odwołania „art. 5” w pytaniu (``references``), plan zapytania od modelu czatu (``planning``), sprawdzenie filtrów
i nazw plików (``validation``), całe jednostki do pokazania (``units``), hit@k / MRR na zbiorze pytań
(``evaluation``) i wszystko to dla jednej bazy (``service``)."""
