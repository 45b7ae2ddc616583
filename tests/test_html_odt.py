"""HTML, ODT i RTF (issue 41): pliki pisane przez sam test – akt z ``<div>`` na artykuł, menu, stopką, skryptem
i stylem w cp1250; ODT z nagłówkami i tabelą zbudowany zipfile'em; RTF w cp1250 – wczytanie, cięcie, metadane,
złe pliki jednym zdaniem i prawdziwe ``indeksuj`` + ``szukaj`` (prawdziwa Chroma na dysku i model)."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from conftest import run_cli

from chroma_rag.errors import UnreadableFile
from chroma_rag.ingest.chunking import chunk_document
from chroma_rag.ingest.loading import is_supported, load_document
from chroma_rag.ingest.metadata import detect_title, detect_type, detect_year

ACT_HTML = """<!DOCTYPE html>
<html lang="pl"><head>
<meta http-equiv="Content-Type" content="text/html; charset=windows-1250">
<title>ISAP – Internetowy System Aktów Prawnych</title>
<style>body {{ font-family: Arial; }} .menu {{ color: #c00; }}</style>
<script>var sledzenie = "Strona główna"; function pokaz() {{ return 1; }}</script>
</head><body>
<div class="menu"><ul><li><a href="/">Strona główna</a></li><li><a href="/du">Dziennik Ustaw</a></li>
<li><a href="/mp">Monitor Polski</a></li><li><a href="/szukaj">Wyszukiwarka</a></li></ul></div>
<div id="tresc">
<h1>Ustawa z dnia 12 marca 2021 r. o ochronie zieleni miejskiej</h1>
<h2>Rozdział 1 Przepisy ogólne</h2>
<div class="art">Art. 1. Ustawa określa zasady ochrony drzew i krzewów rosnących na terenach miejskich.</div>
<div class="art">Art. 2. 1. Gmina prowadzi rejestr drzew pomnikowych rosnących w parkach i na skwerach.<br>
2. Rejestr jest jawny i udostępniany w Biuletynie Informacji Publicznej gminy.</div>
<div class="art">Art. 2<sup>1</sup>. Wycinka drzewa pomnikowego wymaga zgody rady gminy.</div>
<div class="art">Art. 3. Ustawa wchodzi w życie<sup>1)</sup> po upływie 14 dni od dnia ogłoszenia.</div>
</div>
<footer>© Kancelaria Sejmu | Polityka prywatności | Deklaracja dostępności</footer>
<script>console.log("licznik odwiedzin");</script>
</body></html>
"""
BOILERPLATE = ("Strona główna", "Monitor Polski", "Polityka prywatności", "font-family", "console.log", "sledzenie")

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'
)
ODT_BODY = """<text:sequence-decls><text:sequence-decl text:name="Table"/></text:sequence-decls>
<text:p text:style-name="P1">Regulamin parkingu osiedlowego</text:p>
<text:h text:outline-level="1">Postanowienia ogólne</text:h>
<text:p>Parking jest czynny<text:s text:c="2"/>całą dobę przez wszystkie dni tygodnia.<text:note
 text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Przypis.</text:p>
</text:note-body></text:note><text:line-break/>Wjazd na kartę mieszkańca.</text:p>
<text:h text:outline-level="2">Opłaty</text:h>
<text:list><text:list-item><text:p>abonament miesięczny</text:p></text:list-item>
<text:list-item><text:p>bilet jednorazowy</text:p><text:list><text:list-item><text:p>ulgowy</text:p></text:list-item>
</text:list></text:list-item></text:list>
<table:table table:name="Cennik"><table:table-column table:number-columns-repeated="3"/>
<table:table-header-rows><table:table-row><table:table-cell><text:p>Rodzaj</text:p></table:table-cell>
<table:table-cell><text:p>Cena</text:p></table:table-cell><table:table-cell table:number-columns-repeated="1"/>
</table:table-row></table:table-header-rows>
<table:table-row><table:table-cell><text:p>Abonament nocny dla kierowców ciężarówek</text:p></table:table-cell>
<table:table-cell><text:p>185 zł</text:p></table:table-cell></table:table-row>
</table:table>
<text:tracked-changes><text:changed-region><text:deletion><text:p>Tekst usunięty w recenzji.</text:p>
</text:deletion></text:changed-region></text:tracked-changes>"""
TABLE_CELL = "Abonament nocny dla kierowców ciężarówek"

RTF = (
    r"{\rtf1\ansi\ansicpg1250\deff0{\fonttbl{\f0 Times New Roman;}}"
    r"{\pard Zarz\'b9dzenie w sprawie pracy zdalnej\par}"
    r"{\pard \'a7 1. Pracownik mo\u380\'bfe pracowa\'e6 zdalnie dwa dni w tygodniu.\par}"
    r"{\pard \'a7 2. Wniosek sk\'b3ada si\'ea prze\'b3o\'bfonemu.\par}"
    r"{\pard \'a7 2{\super 1}. Wniosek mo\u380\'bfna z\u322\'b3o\u380\'bfy\u263\'e6 poczt\u261\'b9.\par}"
    r"{\pard \'a7 2\super 2\nosupersub . Odpowied\u378\'9f w 7 dni.\par}"
    "\n}"
)


def write_odt(path: Path, body: str, *, title_style: bool = True) -> Path:
    styles = (
        '<office:automatic-styles><style:style style:name="P1" style:family="paragraph" '
        'style:parent-style-name="Title"/><style:style style:name="T1" style:family="text">'
        '<style:text-properties style:text-position="33% 80%"/></style:style></office:automatic-styles>'
        if title_style else ""
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_NS} office:version="1.3">{styles}'
        f"<office:body><office:text>{body}</office:text></office:body></office:document-content>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return path


def write_act(path: Path) -> Path:
    path.write_bytes(ACT_HTML.format().encode("cp1250"))
    return path


def test_new_formats_are_supported_case_insensitively():
    for name in ("akt.html", "AKT.HTM", "pismo.odt", "Pismo.ODT", "stare.rtf", "STARE.RTF"):
        assert is_supported(Path(name)), name
    assert not is_supported(Path("~$pismo.odt")) and not is_supported(Path(".~lock.pismo.odt#"))


def test_html_act_main_text_one_article_per_chunk(tmp_path: Path):
    path = write_act(tmp_path / "akt.html")
    os.utime(path, (1_000_000_000, 1_000_000_000))  # 2001: the file's date never gives the year
    document = load_document(path)
    text = document.text
    assert "Gmina prowadzi rejestr drzew pomnikowych" in text and "ł" in text and "ó" in text  # cp1250 by the meta
    assert not any(word in text for word in BOILERPLATE), text
    assert text.startswith("# Ustawa z dnia 12 marca 2021 r. o ochronie zieleni miejskiej\n")
    assert "\nRozdział 1 Przepisy ogólne\n" in text  # a division heading stays a plain line for the statute parser
    chunks = chunk_document(document)
    assert [c.art for c in chunks] == ["1", "2", "2^1", "3"]
    assert chunks[1].text.startswith("Art. 2. 1. Gmina") and "2. Rejestr jest jawny" in chunks[1].text
    assert "wchodzi w życie po upływie" in chunks[3].text  # the footnote mark left out
    assert all(c.heading.startswith("Rozdział 1") for c in chunks)
    title = detect_title(text)
    assert title == "Ustawa z dnia 12 marca 2021 r. o ochronie zieleni miejskiej"
    assert detect_year(path, text) == 2021 and detect_type(title, text) == "ustawa"


def test_html_title_from_title_tag_and_year_unknown_without_one(tmp_path: Path):
    page = tmp_path / "regulamin.htm"
    page.write_text(
        '<html><head><meta charset="utf-8"><title>Regulamin pracy zdalnej</title></head><body>'
        '<nav><a href="/">Start</a></nav><div id="sidebar"><a href="/a">Aktualności</a><a href="/b">Kadry</a></div>'
        "<div><h2>Zasady ogólne</h2><p>Pracownik może pracować zdalnie\n po złożeniu wniosku.</p>"
        "<h2>Sprzęt</h2><ul><li>laptop służbowy</li><li>telefon <b>komórkowy</b></li></ul>"
        "<table><tr><th>Dzień</th><th>Godziny</th></tr><tr><td>Poniedziałek</td><td>8–16</td></tr></table>"
        "</div></body></html>",
        encoding="utf-8",
    )
    os.utime(page, (1_600_000_000, 1_600_000_000))
    text = load_document(page).text
    assert text.split("\n")[0] == "# Regulamin pracy zdalnej"
    assert "## Zasady ogólne" in text and "## Sprzęt" in text
    assert "Pracownik może pracować zdalnie po złożeniu wniosku." in text  # a line break in the source is a space
    assert "- laptop służbowy\n- telefon komórkowy" in text and "Dzień | Godziny\nPoniedziałek | 8–16" in text
    assert "Start" not in text and "Aktualności" not in text
    assert detect_year(page, text) == 0 and detect_title(text) == "Regulamin pracy zdalnej"


def test_html_wrapper_named_like_a_sidebar_keeps_the_act(tmp_path: Path):
    page = tmp_path / "akt.html"
    page.write_text(
        '<html><body><div class="menu"><a href="/">Start</a></div><div class="tresc with-sidebar">'
        "<p>Art. 1. Pierwszy przepis ustawy o czymś.</p><p>Art. 2. Drugi przepis ustawy o czymś innym.</p>"
        '<div class="sidebar">Zobacz też</div></div></body></html>',
        encoding="utf-8",
    )
    document = load_document(page)
    assert [c.art for c in chunk_document(document)] == ["1", "2"]
    assert "Start" not in document.text and "Zobacz też" not in document.text


def test_html_saved_from_word(tmp_path: Path):
    page = tmp_path / "regulamin.htm"
    page.write_bytes(
        '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head>'
        '<meta http-equiv=Content-Type content="text/html; charset=windows-1250"><title>Dokument1</title>'
        "<!--[if gte mso 9]><xml><o:DocumentProperties><o:Author>Jan Autor</o:Author></o:DocumentProperties></xml>"
        "<![endif]--><style><!-- p.MsoNormal {margin:0cm;} --></style></head><body><div class=WordSection1>"
        "<p class=MsoTitle>Regulamin pracy</p><p class=MsoNormal align=center><b>§ 1.<o:p></o:p></b></p>"
        "<p class=MsoNormal>Pracownik jest obowiązany przestrzegać czasu pracy.<o:p></o:p></p>"
        "<p class=MsoListParagraph><![if !supportLists]><span>1)<span>&nbsp;&nbsp; </span></span><![endif]>"
        "punktualnie przychodzić,<o:p></o:p></p>"
        "<p class=MsoNormal><b>§ 2.</b> Regulamin wchodzi w życie po 14 dniach.<o:p></o:p></p></div></body></html>"
        .encode("cp1250")
    )
    document = load_document(page)
    assert document.text.startswith("# Regulamin pracy\n") and "Jan Autor" not in document.text
    assert "1) punktualnie przychodzić," in document.text and "MsoNormal" not in document.text
    assert [c.art for c in chunk_document(document)] == ["§ 1", "§ 2"]


def test_html_exported_by_an_editor_table_cells_with_paragraphs(tmp_path: Path):
    page = tmp_path / "swietlica.html"
    page.write_text(
        "<html><head><title>- no title specified</title></head><body>"
        '<p style="border-bottom: 1pt solid">Regulamin świetlicy</p><h1 class="western">Rozdział 1 Przepisy ogólne</h1>'
        "<p>§ 1. Świetlica jest czynna w dni robocze.</p><h2>Opłaty</h2>"
        '<table><col width="200"/><tr><td><p>Rodzaj</p></td><td><p>Kwota</p></td></tr>'
        "<tr><td><p>Obiad szkolny</p><p>dla ucznia</p></td><td><p>12 zł</p></td></tr></table>"
        "<p>§ 2. Regulamin wchodzi w życie z dniem podpisania.</p></body></html>",
        encoding="utf-8",
    )
    document = load_document(page)
    assert document.text.startswith("Regulamin świetlicy\n")  # an <h1> further down is a section, not the title
    assert "Rodzaj | Kwota\nObiad szkolny dla ucznia | 12 zł" in document.text
    assert detect_title(document.text) == "Regulamin świetlicy"
    assert [c.art for c in chunk_document(document)] == ["§ 1", "§ 2"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ('<meta charset="ISO-8859-2"><p>Zażółć gęślą jaźń</p>'.encode("iso-8859-2"), "Zażółć gęślą jaźń"),
        (b"\xef\xbb\xbf" + "<p>Zażółć gęślą jaźń</p>".encode(), "Zażółć gęślą jaźń"),
        ("<html><body><p>Zażółć gęślą jaźń</p></body></html>".encode("cp1250"), "Zażółć gęślą jaźń"),  # undeclared
        ('<meta charset="windows-1250"><p>Zażółć gęślą jaźń</p>'.encode(), "Zażółć gęślą jaźń"),  # re-saved UTF-8
        ('<?xml version="1.0" encoding="utf-8"?><html><body><p>Łódź</p></body></html>'.encode(), "Łódź"),
    ],
)
def test_html_encoding_from_the_document(tmp_path: Path, data: bytes, expected: str):
    path = tmp_path / "strona.html"
    path.write_bytes(data)
    assert expected in load_document(path).text


def test_odt_headings_lists_and_table(tmp_path: Path):
    path = write_odt(tmp_path / "regulamin.odt", ODT_BODY)
    document = load_document(path)
    text = document.text
    assert text.startswith("# Regulamin parkingu osiedlowego\n\n# Postanowienia ogólne\n")
    assert "\n## Opłaty\n" in text
    assert "Parking jest czynny całą dobę przez wszystkie dni tygodnia.\nWjazd na kartę mieszkańca." in text
    assert "- abonament miesięczny\n- bilet jednorazowy\n  - ulgowy" in text
    assert f"Rodzaj | Cena\n{TABLE_CELL} | 185 zł" in text
    assert "Przypis" not in text and "usunięty" not in text
    chunks = chunk_document(document)
    assert any(TABLE_CELL in c.text and c.heading.endswith("Opłaty") for c in chunks)
    assert detect_title(text) == "Regulamin parkingu osiedlowego" and detect_year(path, text) == 0


def test_odt_statute_headings_stay_units(tmp_path: Path):
    body = (
        '<text:h text:outline-level="1">USTAWA</text:h><text:p>z dnia 3 lutego 2020 r.</text:p>'
        "<text:p>o próbnych dokumentach</text:p>"
        '<text:h text:outline-level="2">Art. 1.</text:h><text:p>Ustawa dotyczy dokumentów próbnych.</text:p>'
        '<text:h text:outline-level="2">Art. 2.</text:h><text:p>Ustawa wchodzi w życie z dniem ogłoszenia.</text:p>'
    )
    document = load_document(write_odt(tmp_path / "ustawa.odt", body, title_style=False))
    assert [c.art for c in chunk_document(document)] == ["1", "2"]
    assert detect_title(document.text) == "USTAWA z dnia 3 lutego 2020 r. o próbnych dokumentach"
    assert detect_year(document.path, document.text) == 2020


def test_odt_heading_styled_paragraphs_and_superscript_unit_numbers(tmp_path: Path):
    body = (
        '<text:p text:style-name="Heading_20_1">Ustawa z dnia 3 lutego 2020 r. o próbach</text:p>'
        '<text:p text:style-name="Heading_20_2">Rozdział 1</text:p>'
        "<text:p>Art. 5. Pierwszy przepis.</text:p>"
        '<text:p>Art. 5<text:span text:style-name="T1">1</text:span>. Przepis dodany nowelizacją.</text:p>'
        "<text:p>Art. 6. Ostatni przepis.</text:p>"
    )
    document = load_document(write_odt(tmp_path / "proby.odt", body))
    assert document.text.startswith("# Ustawa z dnia 3 lutego 2020 r. o próbach\n\nRozdział 1\n")
    assert [c.art for c in chunk_document(document)] == ["5", "5^1", "6"]


def test_odt_numbered_heading_in_a_list_keeps_its_level(tmp_path: Path):
    body = (
        '<text:list><text:list-item><text:h text:outline-level="2">Obowiązki najemcy</text:h></text:list-item>'
        "<text:list-item><text:p>płacić czynsz</text:p></text:list-item></text:list>"
    )
    assert load_document(write_odt(tmp_path / "umowa.odt", body)).text == "## Obowiązki najemcy\n\n- płacić czynsz\n"


def test_rtf_in_cp1250_as_text_with_paragraph_units(tmp_path: Path):
    path = tmp_path / "zarzadzenie.rtf"
    path.write_bytes(RTF.encode("ascii"))
    document = load_document(path)
    assert document.text.startswith("Zarządzenie w sprawie pracy zdalnej\n")
    assert [c.art for c in chunk_document(document)] == ["§ 1", "§ 2", "§ 2^1", "§ 2^2"]  # superscripts kept
    for words in ("może pracować zdalnie", "złożyć pocztą", "składa się przełożonemu", "Odpowiedź w 7 dni"):
        assert words in document.text, document.text


def _bad_files(folder: Path) -> dict[str, str]:
    """Złe pliki nowych typów → słowo, które musi być w powodzie."""
    act = ACT_HTML.format().encode("cp1250")
    (folder / "ucieta.html").write_bytes(act[: len(act) // 2])
    (folder / "smieci.html").write_bytes(os.urandom(5000))
    (folder / "bez-tresci.html").write_text(
        "<html><head><title>Menu</title><script>var a = 1;</script><style>p {}</style></head><body>"
        '<nav><a href="/">Start</a> <a href="/o-nas">O nas</a></nav><footer>Stopka</footer></body></html>',
        encoding="utf-8",
    )
    (folder / "pusta.htm").write_bytes(b"")
    (folder / "nie-zip.odt").write_bytes(b"To nie jest archiwum, tylko tekst udajacy ODT.")
    with zipfile.ZipFile(folder / "bez-tresci.odt", "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("styles.xml", "<x/>")
    with zipfile.ZipFile(folder / "zly-xml.odt", "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", '<?xml version="1.0"?><office:document-content><office:body>')
    write_odt(folder / "pusty-dokument.odt", "<text:p/><text:h text:outline-level='1'> </text:h>")
    whole = (folder / "pusty-dokument.odt").read_bytes()
    (folder / "obcieta.odt").write_bytes(whole[: len(whole) // 2])  # a zip cut in half
    (folder / "nie-rtf.rtf").write_text("Zwykły tekst z rozszerzeniem RTF.", encoding="utf-8")
    (folder / "ucieta.rtf").write_bytes(RTF.encode("ascii")[:60])  # ends with "}}" of the font table
    return {
        "ucieta.html": "ucięty",
        "smieci.html": "binarny",
        "bez-tresci.html": "treści głównej",
        "pusta.htm": "pusty",
        "nie-zip.odt": "uszkodzony plik ODT",
        "bez-tresci.odt": "content.xml",
        "zly-xml.odt": "XML",
        "pusty-dokument.odt": "nie zawiera tekstu",
        "obcieta.odt": "uszkodzony plik ODT",
        "nie-rtf.rtf": "nie jest plik RTF",
        "ucieta.rtf": "ucięty",
    }


def test_bad_files_one_polish_sentence_each(tmp_path: Path):
    for name, word in _bad_files(tmp_path).items():
        with pytest.raises(UnreadableFile) as caught:
            load_document(tmp_path / name)
        message = str(caught.value)
        assert message.startswith(f"{name}: ") and word in message, message
        assert "\n" not in message and message.endswith("."), message


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """Jedno prawdziwe ``indeksuj`` folderu z aktem HTML, ODT, RTF i złymi plikami (kilka fragmentów)."""
    folder = tmp_path_factory.mktemp("html-odt") / "dokumenty"
    folder.mkdir()
    write_act(folder / "akt.html")
    write_odt(folder / "regulamin.odt", ODT_BODY)
    (folder / "zarzadzenie.RTF").write_bytes(RTF.encode("ascii"))
    bad = _bad_files(folder)
    return folder, tmp_path_factory.mktemp("html-odt-db") / "db", bad


def test_index_and_search_html_and_odt(capsys: pytest.CaptureFixture[str], indexed):
    folder, db, bad = indexed
    code, out, err = run_cli(capsys, "indeksuj", folder, "--baza", db)
    assert code == 3, out + err  # done, some files skipped
    assert "Traceback" not in out + err
    for name, word in bad.items():
        lines = [line for line in err.splitlines() if name in line]
        assert len(lines) == 1 and word in lines[0], err
    listed = {f["plik"] for f in json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])}
    assert listed == {"akt.html", "regulamin.odt", "zarzadzenie.RTF"}

    code, out, err = run_cli(capsys, "szukaj", "rejestr drzew pomnikowych", "--art", "2", "--json", "--baza", db)
    assert code == 0, err
    hits = json.loads(out)["wyniki"]
    assert hits and hits[0]["plik"] == "akt.html" and hits[0]["art"] == "2"
    assert hits[0]["rok"] == 2021 and hits[0]["typ"] == "ustawa" and "Gmina prowadzi rejestr" in hits[0]["tekst"]
    assert not any(word in hit["tekst"] for hit in hits for word in BOILERPLATE)

    code, out, err = run_cli(capsys, "szukaj", "abonament nocny dla ciężarówek", "--json", "--baza", db)
    assert code == 0, err
    hits = json.loads(out)["wyniki"]
    assert hits[0]["plik"] == "regulamin.odt" and TABLE_CELL in hits[0]["tekst"]
    assert hits[0]["tytul"] == "Regulamin parkingu osiedlowego"

    # by content: a touched file is unchanged, an edited one is re-cut (only it)
    os.utime(folder / "akt.html", (1_000_000_000, 1_000_000_000))
    code, out, err = run_cli(capsys, "indeksuj", folder, "--baza", db)
    assert code == 3 and "akt.html" not in out + err and "bez zmian: 3" in " ".join(out.split()), out + err
    write_odt(folder / "regulamin.odt", ODT_BODY.replace("185 zł", "210 zł"))
    code, out, err = run_cli(capsys, "indeksuj", folder, "--baza", db)
    assert code == 3 and "bez zmian: 2" in " ".join(out.split()) and "regulamin.odt" in out, out + err
    code, out, err = run_cli(capsys, "szukaj", "abonament nocny dla ciężarówek", "--json", "--baza", db)
    assert f"{TABLE_CELL} | 210 zł" in json.loads(out)["wyniki"][0]["tekst"]


def test_podglad_shows_html_and_odt_chunks(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    code, out, err = run_cli(capsys, "podglad", write_act(tmp_path / "akt.html"), "--json")
    assert code == 0, err
    assert [row["art"] for row in json.loads(out)] == ["1", "2", "2^1", "3"]
    code, out, err = run_cli(capsys, "podglad", write_odt(tmp_path / "regulamin.odt", ODT_BODY), "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert any(TABLE_CELL in row["tekst"] for row in rows) and rows[0]["tytul"] == "Regulamin parkingu osiedlowego"
    code, out, err = run_cli(capsys, "podglad", write_odt(tmp_path / "regulamin.odt", ODT_BODY))
    assert code == 0 and "regulamin.odt: 2 fragmenty" in out, err
    code, _, err = run_cli(capsys, "podglad", write_odt(tmp_path / "pusty.odt", "<text:p/>"))
    assert code != 0 and "nie zawiera tekstu" in err and "Traceback" not in err


def test_served_web_page_is_shown_in_a_sandbox_never_run(capsys: pytest.CaptureFixture[str], indexed):
    """Zapisana strona może nieść skrypty, formularze i przekierowania: serwer pokazuje ją w piaskownicy (własne
    pochodzenie, bez skryptów), pod własnym adresem nic z niej nie działa; PDF i ODT – jak dotąd."""
    import requests
    from serving_support import running_server

    folder, db, _ = indexed
    if not (db / "chroma.sqlite3").exists():
        run_cli(capsys, "indeksuj", folder, "--baza", db)
    with running_server(db) as base:
        page = requests.get(f"{base}/dokumenty/akt.html", timeout=30)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert policy.startswith("sandbox;") and "script-src" not in policy and "default-src 'none'" in policy
        other = requests.get(f"{base}/dokumenty/regulamin.odt", timeout=30)
        assert other.status_code == 200 and not other.headers["content-security-policy"].startswith("sandbox")
