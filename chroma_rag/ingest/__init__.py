"""Etap 1, wczytanie: plik (PDF, DOCX, ODT, RTF, HTML, TXT, MD) → czysty tekst → jednostki (artykuł, §, ustęp)
z metadanymi.

Tekst stron z PDF-a (``pdftext``), wczytanie dowolnego obsługiwanego pliku (``loading``), naprawa tekstu z PDF-ów
(``cleaning``), rozpoznanie struktury aktu prawnego (``statute``), cięcie na fragmenty z zakładką (``chunking``),
rodzaj, rok i tytuł dokumentu (``metadata``) oraz podgląd cięcia bez zapisu (``preview``). Nic tu nie liczy
wektorów ani nie dotyka bazy."""
