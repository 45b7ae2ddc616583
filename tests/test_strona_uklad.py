"""Układ strony w prawdziwym chromium (issue 38): źródło w panelu obok odpowiedzi (na telefonie – arkusz od dołu),
filtry zwinięte na telefonie, lista plików w obrębie formularza, postęp indeksowania obserwowanego folderu,
zapisana rozmowa po zmianie dokumentów; zrzut docs/strona.png."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import PATIENTS, REPO
from llm_server import HOLD_LIMIT, FakeLlm
from test_strona import CHROMIUM, accessibility_violations, browser, choose, opened, search, until

from chroma_rag.indexing.report import Progress

__all__ = ["browser"]  # the module's browser fixture, shared with test_strona

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="brak /usr/bin/chromium – uruchom: make przegladarka")

FITS = "document.documentElement.scrollWidth <= window.innerWidth"
PHONE = {"width": 390, "height": 740}  # as opened(width=390)


def box(page, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found, selector
    return found


def asked(page, question: str = "prawo do informacji o stanie zdrowia") -> None:
    page.fill("#pytanie", question)
    page.click("#zapytaj")
    page.wait_for_selector("#odpowiedz[data-gotowa='tak']")


def cited_passage_in_sight(page) -> bool:
    """Zaznaczony cytowany fragment jest w widocznej części panelu (panel przewija się do niego)."""
    panel, mark = box(page, "#jednostka"), box(page, "#jednostka mark.cytowany")
    return mark["y"] < panel["y"] + panel["height"] and mark["y"] + mark["height"] > panel["y"]


# --- źródło obok odpowiedzi -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_cited_unit_opens_beside_the_answer_and_esc_gives_the_focus_back(browser, base: str, scheme: str,
                                                                         tmp_path: Path) -> None:
    page = opened(browser, base, width=1280)
    page.emulate_media(color_scheme=scheme)
    asked(page)
    page.focus("#odpowiedz-tekst a.cytat")
    page.keyboard.press("Enter")  # the keyboard opens it as the mouse does
    page.wait_for_selector("#jednostka[open] .wersja mark.cytowany")
    assert page.evaluate("document.activeElement.closest('#jednostka') !== null"), "fokus w panelu"
    # beside the answer, not over it: the answer is readable and usable while the panel is open
    assert not page.evaluate("document.getElementById('jednostka').matches(':modal')")
    panel, answer = box(page, "#jednostka"), box(page, "#odpowiedz")
    assert answer["x"] + answer["width"] <= panel["x"] and panel["x"] + panel["width"] <= 1280
    assert cited_passage_in_sight(page)
    link = page.locator("#jednostka-dokument a")
    assert link.inner_text().startswith("PDF, str. ") and "#page=" in (link.get_attribute("href") or "")
    assert page.evaluate(FITS)
    assert accessibility_violations(page) == []
    if scheme == "light":  # docs/strona.png: the page with an answer and its source beside it
        shot = REPO / "docs" / "strona.png" if os.environ.get("ZAPISZ_ZRZUT") else tmp_path / "strona.png"
        page.screenshot(path=str(shot))
    page.locator("#zrodla li").first.hover()  # the page under the panel still answers the mouse
    page.keyboard.press("Escape")
    page.wait_for_selector("#jednostka", state="hidden")
    # the focus goes back to the citation and the page takes the room back: both follow the panel's "close" event,
    # which comes a moment after the panel hides
    page.wait_for_function("document.activeElement.classList.contains('cytat')")
    page.wait_for_function("width => document.getElementById('odpowiedz').getBoundingClientRect().width > width",
                           arg=answer["width"])

    source = page.locator("#zrodla li").nth(1).locator(".cala-jednostka")  # a source opens beside it too
    label = source.get_attribute("aria-label") or ""
    source.click()
    page.wait_for_selector("#jednostka[open] .wersja")
    unit = page.inner_text("#jednostka-naglowek").split(" · ")[1]
    assert label.startswith("cały ") and f", {unit}" in label, (label, unit)
    page.click("#jednostka .zamknij")
    page.wait_for_selector("#jednostka", state="hidden")
    page.wait_for_function("document.activeElement.classList.contains('cala-jednostka')")  # after "close"
    page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_cited_unit_opens_as_a_sheet_from_the_bottom_on_a_phone(browser, base: str, scheme: str) -> None:
    page = opened(browser, base, width=PHONE["width"])
    page.emulate_media(color_scheme=scheme)
    asked(page)
    page.click("#odpowiedz-tekst a.cytat")
    page.wait_for_selector("#jednostka[open] .wersja mark.cytowany")
    assert page.evaluate("document.getElementById('jednostka').matches(':modal')")
    sheet = box(page, "#jednostka")
    assert sheet["x"] == 0 and sheet["width"] == PHONE["width"]
    assert abs(sheet["y"] + sheet["height"] - PHONE["height"]) <= 1 and sheet["y"] > 0  # from the bottom
    assert cited_passage_in_sight(page) and page.locator("#jednostka-dokument a").is_visible()
    assert page.evaluate(FITS)
    assert accessibility_violations(page) == []
    page.keyboard.press("Escape")
    page.wait_for_selector("#jednostka", state="hidden")
    page.wait_for_function("document.activeElement.classList.contains('cytat')")  # after "close"
    page.close()


def test_an_open_panel_follows_the_window_across_the_breakpoint(browser, base: str) -> None:
    """Okno zwężone przy otwartym panelu (obrót tabletu, pół ekranu): panel staje się arkuszem i z powrotem, otwarty,
    a zamknięty oddaje fokus cytatowi."""
    page = opened(browser, base, width=1280)
    asked(page)
    page.focus("#odpowiedz-tekst a.cytat")
    page.keyboard.press("Enter")
    page.wait_for_selector("#jednostka[open] .wersja mark.cytowany")
    modal = "document.getElementById('jednostka').matches(':modal')"
    beside = "document.body.classList.contains('z-panelem')"
    assert not page.evaluate(modal) and page.evaluate(beside)
    page.set_viewport_size(PHONE)
    page.wait_for_selector("#jednostka:modal")
    assert page.evaluate(f"document.getElementById('jednostka').open && !{beside}") and page.evaluate(FITS)
    page.set_viewport_size({"width": 1280, "height": 740})
    page.wait_for_selector("#jednostka[open]:not(:modal)")
    assert page.evaluate(f"document.getElementById('jednostka').open && {beside}")
    page.keyboard.press("Escape")
    page.wait_for_selector("#jednostka", state="hidden")
    page.wait_for_function("document.activeElement.classList.contains('cytat')")  # the focus back, after "close"
    page.close()


# --- filtry na telefonie --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_filters_fold_behind_one_button_on_a_phone(browser, base: str, scheme: str) -> None:
    page = opened(browser, base, width=PHONE["width"])
    page.emulate_media(color_scheme=scheme)
    toggle = page.locator("#filtry-przelacz")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert page.locator("#filtry").is_hidden()
    search(page, "prawo do informacji o stanie zdrowia")
    assert box(page, "#wyniki > li:first-child")["y"] < PHONE["height"], "pierwszy wynik na pierwszym ekranie"

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true" and page.locator("#filtry").is_visible()
    choose(page, PATIENTS)
    page.fill("#od_roku", "2000")
    assert toggle.inner_text() == "Filtry (2)"  # folded again, a set filter is not forgotten
    assert page.evaluate(FITS) and accessibility_violations(page) == []
    toggle.click()
    assert page.locator("#filtry").is_hidden() and toggle.inner_text() == "Filtry (2)"

    shared = opened(browser, f"{base}/?q=zdrowie&plik={PATIENTS}", width=PHONE["width"])  # a link's filter too
    assert shared.inner_text("#filtry-przelacz") == "Filtry (1)"
    shared.close()
    page.set_viewport_size({"width": 1280, "height": 800})  # a wide screen shows them, without the button
    assert page.locator("#filtry").is_visible() and toggle.is_hidden()
    page.close()


# --- lista plików na pulpicie ---------------------------------------------------------------------------------

# Real library acts with long names (../shared/dane/biblioteka), each cut after art. 3: a cheap index with the
# names a library really has.
LONG_NAMES = [
    "o-ochronie-praw-lokatorow-mieszkaniowym-zasobie-DU-2001-733.txt",
    "o-planowaniu-i-zagospodarowaniu-przestrzennym-DU-2003-717.txt",
    "o-zastawie-rejestrowym-i-rejestrze-zastawow-DU-1996-703.txt",
    "o-postepowaniu-egzekucyjnym-w-administracji-DU-1966-151.txt",
    "o-odpowiedzialnosci-podmiotow-zbiorowych-DU-2002-1661.txt",
    "o-kosztach-sadowych-w-sprawach-cywilnych-DU-2005-1398.txt",
    "o-podatku-dochodowym-od-osob-fizycznych-DU-1991-350.txt",
    "o-prawie-autorskim-i-prawach-pokrewnych-DU-1994-83.txt",
]


@pytest.fixture(scope="module")
def long_names_base(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLlm) -> str:
    from library_support import BIBLIOTEKA
    from serving_support import running_server

    from chroma_rag import Index

    root = tmp_path_factory.mktemp("dlugie-nazwy")
    docs = root / "dokumenty"
    docs.mkdir()
    for name in LONG_NAMES:
        lines = (BIBLIOTEKA / name).read_text(encoding="utf-8").splitlines()
        end = next(i for i, line in enumerate(lines) if line.startswith("Art. 4."))
        (docs / name).write_text("\n".join(lines[:end]) + "\n", encoding="utf-8")
    Index(root / "db").add([docs])
    with running_server(root / "db") as url:
        yield url


def inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (inner["x"] >= outer["x"] and inner["y"] >= outer["y"]
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"]
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"])


@pytest.mark.parametrize("width", [1280, 390])
def test_file_list_and_chosen_files_stay_inside_the_form(browser, long_names_base: str, width: int) -> None:
    # The open list lay over the page: at 1280 px it hung ~200 px out of the form, over its buttons and below.
    page = opened(browser, long_names_base, width=width)
    if width < 500:
        page.click("#filtry-przelacz")
    choose(page, *LONG_NAMES[:3])
    page.fill("#plik-szukaj", "o-")
    assert page.locator("#plik-lista .opcja").count() == len(LONG_NAMES)
    form = box(page, "#formularz")
    for selector in ("#plik-lista", "#plik-wybrane", ".przyciski"):
        assert inside(box(page, selector), form), selector
    for chip in page.locator("#plik-wybrane .zeton").all():
        found = chip.bounding_box()
        assert found and inside(found, form)
    assert box(page, "#plik-lista")["y"] + box(page, "#plik-lista")["height"] <= box(page, ".przyciski")["y"]
    assert page.evaluate(FITS)
    page.close()


# --- postęp indeksowania ---------------------------------------------------------------------------------------


class HeldProgress(Progress):
    """Postęp obserwatora, który zatrzymuje synchronizację po zaindeksowaniu pliku ``name``, aż test ustawi
    ``release`` – strona ma wtedy co pokazać, bez zgadywania, ile sekund to trwa."""

    def __init__(self, inner: Progress, name: str, arrived: threading.Event, release: threading.Event) -> None:
        self.inner, self.name, self.arrived, self.release = inner, name, arrived, release

    def reading(self, path: Path) -> None:
        self.inner.reading(path)

    def start(self, files: int, chunks: int) -> None:
        self.inner.start(files, chunks)

    def start_file(self, path: Path, chunks: int) -> None:
        self.inner.start_file(path, chunks)

    def advance(self, chunks: int) -> None:
        self.inner.advance(chunks)

    def finish_file(self, path: Path) -> None:
        self.inner.finish_file(path)
        if path.name == self.name:
            self.arrived.set()
            self.release.wait(HOLD_LIMIT)


def test_page_shows_what_the_watcher_indexes_and_then_offers_the_new_file(browser, two_acts_copy: Path,
                                                                         tmp_path: Path) -> None:
    from serving_support import running_server

    from chroma_rag import Index
    from chroma_rag.indexing.watch import BackgroundWatch

    folder = tmp_path / "obserwowany-folder"
    folder.mkdir()
    (folder / "regulamin-biura.md").write_text("# Regulamin biura\n\n§ 1. Biuro jest czynne od ósmej.\n",
                                                encoding="utf-8")
    new = "regulamin-pracy-zdalnej.md"
    arrived, release = threading.Event(), threading.Event()
    writer = Index(two_acts_copy)  # the watcher's own index, as in serwuj --obserwuj
    watcher = BackgroundWatch(
        [folder], lambda progress: writer.add([folder], prune=True, progress=HeldProgress(progress, new, arrived,
                                                                                           release)),
        polling=True,
    )
    watcher.start()
    try:
        with running_server(two_acts_copy, status=watcher.state.to_json) as url:
            page = opened(browser, url)
            # the two acts and the folder's first file, indexed by the watcher's first synchronization
            until(page, "document.getElementById('plik').dataset.gotowe === '3'", 120)
            (folder / new).write_text("# Regulamin pracy zdalnej\n\n§ 1. Praca zdalna wymaga zgody.\n",
                                      encoding="utf-8")
            assert arrived.wait(HOLD_LIMIT), "obserwator nie zaindeksował nowego pliku"
            until(page, f"document.getElementById('obserwowanie').textContent.includes('indeksuję: {new}')", 30)
            shown = page.inner_text("#obserwowanie")
            assert "gotowe 1 z 1" in shown, shown
            assert str(tmp_path) not in shown and "obserwowany-folder" in shown, shown  # no server path
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                assert accessibility_violations(page) == [], scheme
            release.set()
            until(page, "document.getElementById('plik').dataset.gotowe === '4'", 60)
            page.fill("#plik-szukaj", "pracy zdalnej")
            assert page.inner_text("#plik-lista .opcja.aktywna .nazwa") == new
            until(page, "document.getElementById('obserwowanie').textContent.includes('indeks aktualny')", 30)
            page.close()
    finally:
        release.set()
        watcher.stop()


# --- zapisana rozmowa po zmianie dokumentów --------------------------------------------------------------------


def test_saved_conversation_link_says_the_documents_changed_since(browser, two_acts_copy: Path, fake_llm: FakeLlm,
                                                                 tmp_path: Path) -> None:
    from serving_support import running_server
    from test_rozmowa import FIRST, FIRST_ANSWER, responder

    from chroma_rag import Index

    fake_llm.responder = responder([FIRST_ANSWER])
    try:
        with running_server(two_acts_copy) as url:
            page = opened(browser, url)
            asked(page, FIRST)
            link = page.get_attribute("#rozmowa-link", "href")
            same = opened(browser, url + link)
            same.wait_for_selector("#odpowiedz[data-gotowa='tak']")
            until(same, "document.getElementById('komunikat').textContent.includes('bez pytania modelu')")
            assert "zmieniły się" not in same.inner_text("#komunikat")
            same.close()

            added = tmp_path / "regulamin-pracy.md"
            added.write_text("# Regulamin pracy\n\nArt. 1. Praca zaczyna się o ósmej.\n", encoding="utf-8")
            Index(two_acts_copy).add([added])
            later = opened(browser, url + link)
            later.wait_for_selector("#odpowiedz[data-gotowa='tak']")
            until(later, "document.getElementById('komunikat').textContent.includes('zmieniły się')")
            assert FIRST_ANSWER.split("[")[0].strip() in later.inner_text("#odpowiedz-tekst")
            assert "Dokumenty zmieniły się od tej rozmowy" in later.inner_text("#komunikat")
            later.close()
            page.close()
    finally:
        fake_llm.responder = None
