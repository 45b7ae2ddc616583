"""Wczytywanie plików: błędy z polskim powodem, kodowania tekstu, DOCX, Markdown i zwykły tekst."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfWriter

from chroma_rag.errors import UnreadableFile
from chroma_rag.ingest.chunking import TEXT_CHUNK_CHARS, chunk_document, embedding_text
from chroma_rag.ingest.loading import is_supported, load_document
from chroma_rag.ingest.metadata import detect_publication, detect_title, detect_type

USTAWY = Path(__file__).resolve().parents[1] / ".." / "shared" / "dane" / "ustawy"
REGULAMIN = (
    "Regulamin pracy spółki\n\n§ 1. Pracownik ma prawo do przerwy śniadaniowej w każdym dniu pracy.\n\n"
    "§ 2. Zażółć gęślą jaźń: urlop wypoczynkowy udziela się zgodnie z planem urlopów.\n"
)


def blank_pdf(path: Path, password: str | None = None) -> Path:
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    if password is not None:
        writer.encrypt(user_password=password, owner_password="właściciel")
    with path.open("wb") as handle:
        writer.write(handle)
    return path


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("pusty.pdf", b"", "plik jest pusty"),
        ("strona.pdf", b"<!DOCTYPE html><html><body>Ustawa</body></html>", "nie jest PDF"),
        ("zepsuty.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "PDF"),
        ("pusty.txt", b"   \n", "pusty"),
        ("smieci.txt", bytes(range(256)) * 40, "binarny"),
        ("zepsuty.docx", b"PK\x03\x04 to nie jest docx", "DOCX"),
        ("tabela.xlsx", b"x", "nieobsługiwany"),
    ],
)
def test_unreadable_files_say_why_in_polish(tmp_path: Path, name: str, content: bytes, reason: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UnreadableFile) as err:
        load_document(path)
    message = str(err.value)
    assert message.startswith(f"{name}: ") and reason in message and message.endswith(".")


def test_pdf_of_blank_pages_has_nothing_to_read(tmp_path: Path) -> None:
    # no text layer and no image: nothing for OCR either (scans: tests/test_ocr.py)
    with pytest.raises(UnreadableFile, match="puste strony"):
        load_document(blank_pdf(tmp_path / "puste.pdf"))


def test_encrypted_pdf(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="zaszyfrowany"):
        load_document(blank_pdf(tmp_path / "tajne.pdf", password="tajne"))
    # an empty user password opens the file: we get past encryption to the (missing) text layer
    with pytest.raises(UnreadableFile, match="puste strony"):
        load_document(blank_pdf(tmp_path / "otwarte.pdf", password=""))


@pytest.mark.parametrize("encoding", ["utf-8-sig", "cp1250", "iso-8859-2"])
def test_text_encodings_and_line_ends(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "regulamin.txt"
    path.write_bytes(REGULAMIN.replace("\n", "\r\n").encode(encoding))
    doc = load_document(path)
    assert doc.text == REGULAMIN
    chunks = chunk_document(doc)
    assert [c.art for c in chunks] == ["§ 1", "§ 2"]
    assert (
        chunks[1].text == "§ 2. Zażółć gęślą jaźń: urlop wypoczynkowy udziela się zgodnie z planem urlopów."
    )


def test_company_regulation_with_articles(tmp_path: Path) -> None:
    path = tmp_path / "statut.md"
    path.write_text(
        "# Statut\n\nArt. 1. Spółka działa.\n\nArt. 2. Zarząd jest jednoosobowy.\n", encoding="utf-8"
    )
    assert [(c.art, c.text) for c in chunk_document(load_document(path))] == [
        ("1", "Art. 1. Spółka działa."),
        ("2", "Art. 2. Zarząd jest jednoosobowy."),
    ]


def test_markdown_chapter_heading_starts_its_own_section() -> None:
    sample = Path(__file__).resolve().parents[1] / "dane" / "regulamin-pracy-zielony-las.md"
    chunks = {c.art: c for c in chunk_document(load_document(sample))}
    assert chunks["§ 2"].text.endswith("upoważniona na piśmie.")
    assert chunks["§ 2"].heading == "Rozdział 1. Przepisy ogólne"
    assert chunks["§ 3"].heading == "Rozdział 2. Czas pracy"
    assert chunks["§ 10"].heading == "Rozdział 4. Bezpieczeństwo i porządek"
    assert not [c.art for c in chunks.values() if "#" in c.text or "Rozdział" in c.text]


def test_markdown_sections_with_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "procedura.md"
    long = " ".join(f"Zdanie numer {i} opisuje krok procedury." for i in range(60))
    path.write_text(
        f"# Procedura\n\nWstęp.\n\n## Zgłoszenie\n\n{long}\n\n## Zamknięcie\n\nKoniec.\n", encoding="utf-8"
    )
    chunks = chunk_document(load_document(path))
    assert chunks[0].heading == "Procedura" and chunks[0].text == "Wstęp."
    middle = [c for c in chunks if c.heading == "Procedura › Zgłoszenie"]
    assert len(middle) >= 3 and all(len(c.text) <= TEXT_CHUNK_CHARS for c in middle)
    assert middle[1].text[:30] in middle[0].text  # ~150 characters of overlap
    assert chunks[-1].heading == "Procedura › Zamknięcie" and chunks[-1].text == "Koniec."
    assert all(c.art is None and c.extra == {"uchylony": False} for c in chunks)


def test_docx_headings_paragraphs_and_tables(tmp_path: Path) -> None:
    from docx import Document as DocxDocument

    docx = DocxDocument()
    docx.add_heading("Regulamin urlopów", level=1)
    docx.add_paragraph("Urlop planuje się z wyprzedzeniem.")
    docx.add_heading("Wnioski", level=2)
    docx.add_paragraph("Wniosek składa się kierownikowi.")
    table = docx.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Dni", "26"
    path = tmp_path / "urlopy.docx"
    docx.save(str(path))
    chunks = chunk_document(load_document(path))
    assert [(c.heading, c.text) for c in chunks] == [
        ("Regulamin urlopów", "Urlop planuje się z wyprzedzeniem."),
        ("Regulamin urlopów › Wnioski", "Wniosek składa się kierownikowi. Dni | 26"),
    ]


def test_large_text_file_is_chunked_quickly(tmp_path: Path) -> None:
    path = tmp_path / "duzy.txt"
    paragraph = "To jest akapit długiego dokumentu firmowego, bez artykułów i paragrafów. " * 10
    path.write_text((paragraph + "\n\n") * 6000, encoding="utf-8")  # ~4.5 MB
    chunks = chunk_document(load_document(path))
    assert len(chunks) > 5000 and max(len(c.text) for c in chunks) <= TEXT_CHUNK_CHARS


def test_supported_suffixes() -> None:
    assert all(is_supported(Path(f"a{s}")) for s in (".pdf", ".PDF", ".docx", ".txt", ".md"))
    assert not is_supported(Path("a.xlsx"))


def test_metadata_from_text() -> None:
    doc = load_document(USTAWY / "prawa-pacjenta-DU-2009-417.pdf")
    title = detect_title(doc.text)
    assert title == "USTAWA z dnia 6 listopada 2008 r. o prawach pacjenta i Rzeczniku Praw Pacjenta"
    assert detect_type(title, doc.text) == "ustawa"
    assert detect_publication(doc.text) == "Dz.U. 2009 Nr 52 poz. 417"
    ppsa = load_document(USTAWY / "nowelizacja-ppsa-DU-2015-658.pdf")
    assert detect_type(detect_title(ppsa.text), ppsa.text) == "nowelizacja"
    assert detect_publication(ppsa.text) == "Dz.U. 2015 poz. 658"
    medyczna = load_document(USTAWY / "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf")
    assert detect_publication(medyczna.text) == "Dz.U. 2010 Nr 252 poz. 1697"
    assert detect_type(detect_title(medyczna.text), medyczna.text) == "rozporzadzenie"
    assert detect_type("Regulamin pracy", "Regulamin pracy\n§ 1. Coś.") == "regulamin"
    assert detect_publication("Regulamin pracy") == ""


def test_embedding_text_has_context_header() -> None:
    doc = load_document(USTAWY / "prawa-pacjenta-DU-2009-417.pdf")
    chunk = next(c for c in chunk_document(doc) if c.art == "33")
    text = embedding_text(chunk, detect_title(doc.text))
    assert text.startswith("USTAWA z dnia 6 listopada 2008 r. o prawach pacjenta i Rzeczniku Praw Pacjenta\n")
    assert (
        f"\n{chunk.heading}\n" in text and text.endswith(chunk.text) and chunk.heading.startswith("Rozdział")
    )
