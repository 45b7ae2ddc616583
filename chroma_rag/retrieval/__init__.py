"""Etap 5, wyszukiwanie (``szukaj``, ``ocena``): pytanie → uszeregowane fragmenty z powodem, gdy nic nie pasuje.

Ranking hybrydowy wektory + BM25 i fuzja list (``search``), indeks słów na lematach (``keyword``), odwołania
„art. 5” w pytaniu (``references``), plan zapytania od modelu czatu (``planning``), sprawdzenie filtrów i nazw
plików (``validation``), całe jednostki do pokazania (``units``) oraz hit@k / MRR na zbiorze pytań
(``evaluation``)."""
