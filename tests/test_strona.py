"""Strona `chroma-rag serwuj` w prawdziwej przeglądarce: Debianowy chromium (make przegladarka) sterowany
Playwrightem; pytanie, filtr, wyniki, cały artykuł, odpowiedź strumieniem z działającym linkiem cytatu."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from conftest import PATIENTS, REPO
from conftest import SERVED_ANSWER as ANSWER
from llm_server import FakeLlm, Reply

CHROMIUM = Path("/usr/bin/chromium")
# Root in CI: no sandbox; nothing may reach the network or start background services of the browser.
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]
TIMEOUT_MS = 60_000
INVENTED = f"Tak [{PATIENTS}, art. 9], a także [wymyslona-ustawa.pdf, art. 99]."  # an answer citing a made-up act

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="brak /usr/bin/chromium – uruchom: make przegladarka")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profil-chromium")),  # a fresh profile for every run
            executable_path=str(CHROMIUM), headless=True, args=FLAGS, viewport={"width": 1100, "height": 900},
        )
        context.set_default_timeout(TIMEOUT_MS)
        yield context
        context.close()


def opened(browser, base: str, width: int | None = None):
    """Nowa karta ze stroną, po wczytaniu filtrów z indeksu."""
    page = browser.new_page()
    if width:
        page.set_viewport_size({"width": width, "height": 740})
    page.goto(base)
    page.wait_for_selector("#plik[data-gotowe]", state="attached")  # filters filled from the index
    return page


def choose(page, *names: str) -> None:
    """Wybiera pliki w polu wyboru: wpisana nazwa, pierwsza pozycja listy, Enter."""
    for name in names:
        page.fill("#plik-szukaj", name)
        assert page.inner_text("#plik-lista .opcja.aktywna .nazwa") == name
        page.press("#plik-szukaj", "Enter")
        page.wait_for_selector(f"#plik-wybrane .zeton .nazwa:text-is('{name}')")


def chosen(page) -> list[str]:
    """Wybrane pliki (żetony pod polem wyboru), w kolejności wyboru."""
    return page.locator("#plik-wybrane .zeton .nazwa").all_inner_texts()


def unchoose(page, name: str) -> None:
    page.locator("#plik-wybrane .zeton", has=page.locator(f".nazwa:text-is('{name}')")).locator(".usun").click()
    page.wait_for_selector(f"#plik-wybrane .zeton .nazwa:text-is('{name}')", state="detached")


def answered(browser, base: str, fake_llm: FakeLlm, text: str, scheme: str | None = None):
    """Strona po odpowiedzi zastępczego modelu ``text`` na pytanie o prawo do informacji (model wraca potem do
    zwykłej odpowiedzi)."""
    fake_llm.default = Reply(text=text)
    try:
        page = opened(browser, base)
        if scheme:
            page.emulate_media(color_scheme=scheme)
        page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
        page.click("#zapytaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    finally:
        fake_llm.default = Reply(text=ANSWER)
    return page


def search(page, question: str) -> None:
    page.fill("#pytanie", question)
    page.click("#szukaj")
    page.wait_for_selector("#wyniki li")


def test_search_unit_and_streamed_answer(browser, base: str) -> None:
    page = opened(browser, base)
    choose(page, PATIENTS)
    search(page, "prawo do informacji o stanie zdrowia")
    headers = page.locator("#wyniki li .naglowek").all_inner_texts()
    assert headers and all(PATIENTS in header for header in headers)
    assert "art. 9" in headers[0]

    page.locator("#wyniki li .cala-jednostka").first.click()
    page.wait_for_selector("#jednostka[open] .wersja")
    assert page.inner_text("#jednostka-naglowek") == f"{PATIENTS} · art. 9 u.p.p."
    unit_text = page.inner_text("#jednostka-tresc")
    assert "Pacjent ma prawo do informacji o swoim stanie zdrowia" in unit_text
    assert "rokowaniu" in unit_text  # a later part of the article, joined to the first
    page.click("#jednostka .zamknij")
    page.wait_for_selector("#jednostka", state="hidden")

    page.evaluate(
        """() => { window.zmiany = 0;
        new MutationObserver(() => window.zmiany++).observe(document.getElementById('odpowiedz-tekst'),
          {childList: true, characterData: true, subtree: true}); }"""
    )
    page.click("#zapytaj")
    page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    assert page.evaluate("window.zmiany") > 3, "odpowiedź ma pojawiać się kawałkami"
    assert page.inner_text("#odpowiedz-tekst") == ANSWER.replace(f"[{PATIENTS}, art. 9]", "[1]")
    citation = page.locator("#odpowiedz-tekst a.cytat")
    assert citation.inner_text() == "[1]" and citation.get_attribute("title") == f"[{PATIENTS}, art. 9]"
    assert citation.get_attribute("href") == "#zrodlo-1" and page.locator("#zrodla li#zrodlo-1").count() == 1
    citation.click()  # the whole unit in the side panel, the cited passage marked
    page.wait_for_selector("#jednostka[open] .wersja mark.cytowany")
    assert page.inner_text("#jednostka-naglowek") == f"{PATIENTS} · art. 9 u.p.p."
    href = page.locator("#jednostka-dokument a").get_attribute("href")
    assert href.startswith(f"dokumenty/{PATIENTS}#page=")  # a name of one file alone: no folder to tell apart
    page.click("#jednostka .zamknij")
    pdf = page.request.get(f"{base}/{href.split('#')[0]}")
    assert pdf.status == 200 and pdf.headers["content-type"] == "application/pdf"
    assert page.locator("#zrodla li").count() >= 1
    page.close()


def test_messages_for_no_results_and_no_chat_model(browser, base: str, fake_llm: FakeLlm) -> None:
    page = opened(browser, base)
    page.fill("#pytanie", "zxqv wkrj")
    page.click("#szukaj")
    page.wait_for_selector("#komunikat.blad")
    assert "Nie znaleziono nic trafnego" in page.inner_text("#komunikat")

    fake_llm.default = Reply(status=401)
    try:
        page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
        page.click("#zapytaj")
        page.wait_for_selector("#zapytaj:enabled")  # the click disabled it until the answer or error arrived
    finally:
        fake_llm.default = Reply(text=ANSWER)
    assert page.get_attribute("#komunikat", "class") == "blad"
    message = page.inner_text("#komunikat")
    assert message and "Traceback" not in message and "Error" not in message
    page.close()


def test_a_reference_the_chosen_files_leave_out_is_said_in_the_pages_words(browser, base: str) -> None:
    """Przepis ustawy o ochronie danych osobowych przy wybranej samej ustawie o prawach pacjenta: zdanie strony
    (wybrane pliki, bez opcji CLI) zamiast wyników z innego aktu."""
    page = opened(browser, base, width=390)
    page.click("#filtry-przelacz")  # a phone folds the filters
    choose(page, PATIENTS)
    page.fill("#pytanie", "art. 3 ustawy o ochronie danych osobowych")
    page.click("#szukaj")
    page.wait_for_selector("#komunikat.blad")
    said = page.inner_text("#komunikat")
    assert "wykluczają" in said and "wybrane pliki" in said and "--" not in said, said
    assert page.locator("#wyniki li").count() == 0
    page.close()


def test_page_fits_a_phone(browser, base: str) -> None:
    page = opened(browser, base, width=375)
    fits = "document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits)
    search(page, "prawo do informacji o stanie zdrowia")
    assert page.evaluate(fits)
    page.close()


def test_citation_of_a_same_named_file_links_to_that_file(browser, same_named_db: Path, fake_llm: FakeLlm) -> None:
    from serving_support import running_server

    fake_llm.default = Reply(text="Administratorowi [it/regulamin.md, art. 1].")
    try:
        with running_server(same_named_db) as url:
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("#plik[data-gotowe]", state="attached")
            search(page, "Komu zgłasza się urlop od pracy przy serwerach?")
            shown = {page.locator("#wyniki li", has_text=said).locator(".naglowek .plik").inner_text()
                     for said in ("administratorowi", "kierownik")}
            assert shown == {"it/regulamin.md", "kadry/regulamin.md"}  # named as in citations, not by server paths
            for folder, said, other in (("kadry", "kierownik", "administratorowi"),
                                        ("it", "administratorowi", "kierownik")):
                page.locator("#wyniki li", has_text=said).locator(".cala-jednostka").click()
                page.wait_for_selector(f"#jednostka[open] .wersja >> text={said}")
                assert page.inner_text("#jednostka-naglowek") == f"{folder}/regulamin.md · art. 1"
                assert other not in page.inner_text("#jednostka-tresc")
                page.click("#jednostka .zamknij")
            page.fill("#pytanie", "Komu zgłasza się urlop od pracy przy serwerach?")
            page.click("#zapytaj")
            page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
            page.locator("#odpowiedz-tekst a.cytat").click()
            page.wait_for_selector("#jednostka[open] .wersja")
            assert "administratorowi" in page.inner_text("#jednostka-tresc")
            href = page.locator("#jednostka-dokument a").get_attribute("href")
            assert href == "dokumenty/regulamin.md?sciezka=it%2Fregulamin.md"
            document = page.request.get(f"{url}/{href.split('#')[0]}")
            assert document.status == 200 and "administratorowi" in document.text()
            assert str(same_named_db.parent) not in page.content()
    finally:
        fake_llm.default = Reply(text=ANSWER)



def test_files_indexed_from_windows_are_named_and_chosen_on_the_page(browser, same_named_from_windows: str,
                                                                    fake_llm: FakeLlm) -> None:
    """Wspólny serwer Chromy, na który pliki zaindeksował komputer z Windows: na stronie (wąskiej, w trybie ciemnym,
    jak na telefonie zespołu) pliki mają nazwy z folderem, nazwa wybiera plik, cytat otwiera jego artykuł, linku do
    pliku, którego serwer nie ma na dysku, nie ma, a stary link do niego mówi to zdaniem – ścieżka
    „C:\\Kancelaria\\…” nie pojawia się nigdzie."""
    from serving_support import running_app

    from chroma_rag.serving.app import build_app
    from chroma_rag.serving.shared_index import SharedIndex

    fake_llm.default = Reply(text="Administratorowi [it/regulamin.md, art. 1].")
    try:
        with running_app(build_app(SharedIndex(server=same_named_from_windows))) as url:
            page = opened(browser, url, width=390)
            page.emulate_media(color_scheme="dark")
            page.click("#filtry-przelacz")  # a phone folds the filters
            page.fill("#plik-szukaj", "regulamin")
            labels = page.locator("#plik-lista .opcja .nazwa").all_inner_texts()
            assert sorted(labels) == ["it/regulamin.md", "kadry/regulamin.md"], labels
            choose(page, "it/regulamin.md")
            search(page, "Komu zgłasza się urlop?")
            names = page.locator("#wyniki li .naglowek .plik").all_inner_texts()
            assert names and set(names) == {"it/regulamin.md"}, names
            assert page.locator("#wyniki a[href*='dokumenty']").count() == 0  # no link the server can't open
            unchoose(page, "it/regulamin.md")
            page.fill("#pytanie", "Komu zgłasza się urlop od pracy przy serwerach?")
            page.click("#zapytaj")
            page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
            page.locator("#odpowiedz-tekst a.cytat").click()
            page.wait_for_selector("#jednostka[open] .wersja")
            assert page.inner_text("#jednostka-naglowek") == "it/regulamin.md · art. 1"
            assert "administratorowi" in page.inner_text("#jednostka-tresc")
            assert page.locator("#jednostka a[href*='dokumenty'], #zrodla a[href*='dokumenty']").count() == 0
            document = page.context.new_page()  # a link kept from before, e.g. in a note
            document.goto(f"{url}/dokumenty/regulamin.md?sciezka=it%2Fregulamin.md")
            said = document.inner_text("main")
            assert "na innym komputerze" in said and "Wróć do wyszukiwania" in said, said
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            for shown in (page.content(), document.content()):
                assert "Kancelaria" not in shown and "C:\\" not in shown
            document.click("text=Wróć do wyszukiwania")
            document.wait_for_selector("#plik[data-gotowe]", state="attached")  # the search page again
            document.close()
            page.close()
    finally:
        fake_llm.default = Reply(text=ANSWER)


# --- issue 21: błędy widziane na stronie ------------------------------------------------------------------------

PAGE_RANGE = r"str\. \d+(–\d+)?"


def test_page_ranges_are_numbers_in_results_and_sources(browser, base: str) -> None:
    import re

    page = opened(browser, base)
    choose(page, PATIENTS)
    search(page, "prawo do informacji o stanie zdrowia")
    headers = page.locator("#wyniki li .naglowek").all_inner_texts()
    assert headers and all(re.search(PAGE_RANGE, header) for header in headers), headers
    page.click("#zapytaj")
    page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    sources = page.locator("#zrodla li").all_inner_texts()
    assert sources and all(re.search(PAGE_RANGE, source) for source in sources), sources
    assert "undefined" not in page.inner_text("body")
    page.close()


def test_invented_citation_is_warned_and_new_search_clears_the_answer(browser, base: str, fake_llm: FakeLlm) -> None:
    page = answered(browser, base, fake_llm, INVENTED)
    warning = page.inner_text("#odpowiedz .ostrzezenie")
    assert "wymyslona-ustawa.pdf, art. 99" in warning and "nie ma wśród fragmentów" in warning
    assert page.locator("#odpowiedz-tekst .cytat-niepasujacy").inner_text() == "[wymyslona-ustawa.pdf, art. 99]"

    search(page, "przetwarzanie danych osobowych")
    assert page.locator("#odpowiedz").is_hidden(), "nowe wyszukiwanie nie może zostawić starej odpowiedzi"
    page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_invented_citation_warning_is_readable_in_both_schemes(browser, base: str, fake_llm: FakeLlm,
                                                               scheme: str) -> None:
    # In dark mode the base rules came after the dark ones and won: light text on cream, contrast 1.11:1.
    page = answered(browser, base, fake_llm, INVENTED, scheme=scheme)
    assert page.locator("#odpowiedz .ostrzezenie").is_visible()
    assert accessibility_violations(page) == []
    page.close()


def test_no_chat_model_message_fits_a_phone_at_390(browser, base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("URL", "MODEL", "KEY"):
        monkeypatch.delenv(f"CHROMA_RAG_LLM_{name}", raising=False)
    monkeypatch.setenv("CHROMA_RAG_LLM_URL", "https://openrouter.ai/api/v1")
    page = opened(browser, base, width=390)
    page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
    page.click("#zapytaj")
    page.wait_for_selector("#komunikat.blad")
    message = page.inner_text("#komunikat")
    assert "CHROMA_RAG_LLM" not in message and ".env" not in message, message
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.close()


def test_fragment_with_a_long_line_fits_a_phone(browser, tmp_path: Path) -> None:
    import re

    from serving_support import running_server

    from chroma_rag import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    long_line = "x" * 20_000
    (docs / "dlugi.txt").write_text(f"Art. 1. Umowa najmu lokalu {long_line}\n\nArt. 2. Czynsz.\n", encoding="utf-8")
    Index(tmp_path / "db").add([docs])
    with running_server(tmp_path / "db") as url:
        page = browser.new_page()
        page.set_viewport_size({"width": 390, "height": 740})
        page.goto(url)
        page.wait_for_selector("#plik[data-gotowe]", state="attached")
        search(page, "umowa najmu lokalu")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        headers = page.locator("#wyniki li .naglowek").all_inner_texts()
        assert any(re.search(r"część \d+/\d+", header) for header in headers), headers  # a part starts mid-sentence
        link = page.locator("#wyniki li .akcje a").first.inner_text()
        assert "PDF" not in link and "str." not in link, link  # a .txt file has no PDF pages
        page.locator("#wyniki li .cala-jednostka").first.click()
        page.wait_for_selector("#jednostka[open] .wersja")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.close()


def test_an_emptied_index_speaks_to_a_team_member(browser, tmp_path: Path) -> None:
    """Baza, z której usunięto wszystkie dokumenty: strona mówi, na co czekać, a nie polecenie CLI."""
    from serving_support import running_server

    from chroma_rag import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "umowa.txt").write_text("Art. 1. Umowa najmu lokalu.\n", encoding="utf-8")
    index = Index(tmp_path / "db")
    index.add([docs])
    index.remove("umowa.txt")
    with running_server(tmp_path / "db") as url:
        page = opened(browser, url)
        said = page.locator("#komunikat").inner_text()
        assert "osoba prowadząca serwer" in said and "chroma-rag" not in said, said
        page.close()


def test_same_named_files_are_told_apart_in_the_filter(browser, same_named_db: Path) -> None:
    from serving_support import running_server

    with running_server(same_named_db) as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#plik[data-gotowe]", state="attached")
        page.fill("#plik-szukaj", "regulamin")
        labels = page.locator("#plik-lista .opcja .nazwa").all_inner_texts()
        assert len(labels) == 2 and labels[0] != labels[1], labels
        assert all(label.endswith("/regulamin.md") for label in labels), labels
        page.locator("#plik-lista .opcja").nth(1).click()
        assert chosen(page) == [labels[1]]
        search(page, "urlop")
        names = page.locator("#wyniki li .naglowek .plik").all_inner_texts()
        assert names and set(names) == {labels[1]}, names  # the chosen file only, shown with its folder
        page.close()


def test_page_speaks_its_own_language_not_the_cli_options(browser, base: str) -> None:
    page = opened(browser, base)
    page.fill("#art", "9999")
    page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
    page.click("#zapytaj")
    page.wait_for_selector("#zapytaj:enabled")
    page.wait_for_selector("#komunikat.blad")
    message = page.inner_text("#komunikat")
    assert "filtr" in message and "--" not in message and "chroma-rag" not in message, message
    assert page.locator("#odpowiedz").is_hidden() and page.locator("#zrodla-naglowek").is_hidden()
    page.close()


# --- issue 21: strona na cały dzień ------------------------------------------------------------------------------


def until(page, condition: str, seconds: float = 60) -> None:
    """Czeka, aż wyrażenie JS będzie prawdziwe (wait_for_function wykonuje napis przez eval, a CSP strony
    tego zabrania)."""
    import time

    deadline = time.monotonic() + seconds
    while not page.evaluate(f"() => Boolean({condition})"):
        assert time.monotonic() < deadline, f"nie doczekano się: {condition}"
        time.sleep(0.1)


def test_search_lives_in_the_address_and_back_forward_work(browser, base: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    page = browser.new_page()
    page.goto(f"{base}/?q=prawo+do+informacji+o+stanie+zdrowia&plik={PATIENTS}")  # a shared link
    page.wait_for_selector("#wyniki li")
    assert page.input_value("#pytanie") == "prawo do informacji o stanie zdrowia"
    assert chosen(page) == [PATIENTS]
    headers = page.locator("#wyniki li .naglowek").all_inner_texts()
    assert headers and all(PATIENTS in header for header in headers)

    unchoose(page, PATIENTS)
    page.fill("#pytanie", "przetwarzanie danych osobowych")
    page.press("#pytanie", "Enter")  # Enter searches
    until(page, "document.getElementById('pytanie').value && location.search.includes('przetwarzanie')")
    assert parse_qs(urlsplit(page.url).query) == {"q": ["przetwarzanie danych osobowych"]}
    page.wait_for_selector("#wyniki li")

    page.go_back()
    until(page, "document.getElementById('pytanie').value === 'prawo do informacji o stanie zdrowia'")
    assert chosen(page) == [PATIENTS]
    until(page,
        f"[...document.querySelectorAll('#wyniki li .plik')].every((e) => e.textContent === '{PATIENTS}')"
        " && document.querySelectorAll('#wyniki li').length > 0"
    )
    page.go_forward()
    until(page, "document.getElementById('pytanie').value === 'przetwarzanie danych osobowych'")
    page.close()


def test_stop_ends_the_answer_and_the_server_stops_reading_the_model(browser, base: str, fake_llm: FakeLlm) -> None:
    import time

    words = " ".join(f"słowo{n}" for n in range(200))
    fake_llm.default = Reply(text=f"{words} [{PATIENTS}, art. 9].", piece_delay=0.05)
    fake_llm.streamed.clear()
    try:
        page = opened(browser, base)
        page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
        page.press("#pytanie", "Control+Enter")  # Ctrl+Enter asks
        until(page, "document.getElementById('odpowiedz-tekst').textContent.includes('słowo5')")
        assert page.locator("#szukaj").is_disabled() and page.locator("#zapytaj").is_disabled()
        # a turning spinner beside the text, not only the text
        spinner = "getComputedStyle(document.querySelector('#komunikat.czeka'), '::before').animationName"
        assert page.evaluate(spinner) == "obrot"
        page.click("#zatrzymaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='zatrzymana']")
        assert page.locator("#zatrzymaj").is_hidden() and page.locator("#szukaj").is_enabled()
        assert "Zatrzymano" in page.inner_text("#komunikat")
        deadline = time.monotonic() + 20
        while not fake_llm.streamed and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        fake_llm.default = Reply(text=ANSWER)
    assert fake_llm.streamed and fake_llm.streamed[0] < 150, fake_llm.streamed  # 201 pieces were there to read
    page.close()


def test_enter_searches_without_asking_the_model(browser, base: str, fake_llm: FakeLlm) -> None:
    fake_llm.requests.clear()
    page = opened(browser, base)
    page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
    page.press("#pytanie", "Enter")
    page.wait_for_selector("#wyniki li")
    assert page.locator("#odpowiedz").is_hidden() and not fake_llm.requests
    page.close()


def test_favicon(browser, base: str) -> None:
    page = browser.new_page()
    icon = page.request.get(f"{base}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    page.close()


AXE = REPO / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"


def accessibility_violations(page) -> list[str]:
    """Naruszenia WCAG 2.1 A/AA według axe-core (etykiety, kolejność fokusu, kontrast) na stronie, jaka jest teraz."""
    assert AXE.exists(), "brak axe-core – uruchom: make narzedzia-js"
    # served from the page's own origin: the page's CSP (script-src 'self') stays on and still allows it
    url = page.url.split("/?")[0].rstrip("/") + "/__axe.min.js"
    page.route(url, lambda route: route.fulfill(path=str(AXE), content_type="text/javascript"))
    page.add_script_tag(url=url)
    found = page.evaluate(
        "axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']})"
        ".then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))"
    )
    return found


ENGLISH = ("undefined", "null", "NaN", "Error", "error", "Traceback", "Failed to fetch", "--plik", "chroma-rag lista")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_visible_text_and_layout_in_both_schemes_and_widths(browser, base: str, width: int, scheme: str) -> None:
    page = opened(browser, base, width=width)
    page.emulate_media(color_scheme=scheme)
    page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
    page.press("#pytanie", "Control+Enter")
    page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    text = page.inner_text("body")
    assert not [word for word in ENGLISH if word in text], text
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # every form field has a visible label; colours follow the scheme
    assert page.evaluate("[...document.querySelectorAll('input, select')].every((f) => f.closest('label'))")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    dark = sum(int(v) for v in background[4:-1].split(",")[:3]) < 200
    assert dark == (scheme == "dark"), background
    assert accessibility_violations(page) == []
    page.close()


def test_last_questions_are_remembered_in_the_browser(browser, base: str) -> None:
    page = opened(browser, base)
    search(page, "prawo do informacji o stanie zdrowia")
    search(page, "przetwarzanie danych osobowych")
    search(page, "prawo do informacji o stanie zdrowia")
    page.reload()
    page.wait_for_selector("#historia option", state="attached")
    questions = page.locator("#historia option").evaluate_all("(options) => options.map((o) => o.value)")
    assert questions[:2] == ["prawo do informacji o stanie zdrowia", "przetwarzanie danych osobowych"]
    page.close()


def test_copy_citation_and_answer_with_its_sources(browser, base: str) -> None:
    browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = opened(browser, base)
    choose(page, PATIENTS)
    search(page, "prawo do informacji o stanie zdrowia")
    page.locator("#wyniki li .kopiuj").first.click()
    page.wait_for_selector("#komunikat:has-text('Skopiowano')")
    # the act's customary abbreviation beside the unit, as lawyers cite it
    assert page.evaluate("navigator.clipboard.readText()") == f"[{PATIENTS}, art. 9 u.p.p.]"

    page.press("#pytanie", "Control+Enter")
    page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    page.click("#kopiuj-odpowiedz")
    page.wait_for_selector("#komunikat:has-text('Skopiowano')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(ANSWER + "\n\nŹródła:\n1. ")
    assert copied.split("\n")[3].startswith(f"1. [{PATIENTS}, art. 9 u.p.p.], str. ")
    page.close()


def test_plan_of_a_planned_answer_is_shown(browser, base: str, fake_llm: FakeLlm) -> None:
    import time

    from plan_replay import plan_responder

    question = f"prawo do informacji o stanie zdrowia {time.monotonic_ns()}"  # never in the plan cache
    plan = {"zapytania": ["informacja o stanie zdrowia pacjenta"], "dokumenty": [PATIENTS], "jednostki": ["art. 9"]}
    fake_llm.responder = plan_responder({question: plan})
    try:
        page = opened(browser, base)
        page.fill("#pytanie", question)
        page.click("#zapytaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
    finally:
        fake_llm.responder = None
    shown = page.inner_text("#plan")
    assert page.locator("#plan").is_visible()
    assert "informacja o stanie zdrowia pacjenta" in shown and PATIENTS in shown and "art. 9" in shown, shown
    search(page, "przetwarzanie danych osobowych")  # a plain search has no plan
    assert page.locator("#plan").is_hidden()
    page.close()


def test_all_filters_live_in_the_address(browser, base: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    from conftest import DATA_PROTECTION

    page = opened(browser, base)
    page.fill("#pytanie", "dane osobowe pacjenta")
    choose(page, PATIENTS, DATA_PROTECTION)
    page.select_option("#typ", "ustawa")
    page.fill("#od_roku", "1990")
    page.fill("#do_roku", "2010")
    page.fill("#k", "7")
    page.click("#szukaj")
    page.wait_for_selector("#wyniki li")
    wanted = {"q": ["dane osobowe pacjenta"], "plik": sorted([PATIENTS, DATA_PROTECTION]), "typ": ["ustawa"],
              "od_roku": ["1990"], "do_roku": ["2010"], "k": ["7"]}
    query = parse_qs(urlsplit(page.url).query)
    assert {key: sorted(values) for key, values in query.items()} == wanted
    assert page.locator("#wyniki li").count() == 7
    link = page.url
    page.fill("#art", "9")
    unchoose(page, DATA_PROTECTION)
    page.click("#szukaj")
    until(page, "location.search.includes('art=9')")
    page.wait_for_selector("#wyniki li")
    assert all("art. 9" in header for header in page.locator("#wyniki li .naglowek").all_inner_texts())

    page.go_back()  # the earlier search with all its filters
    until(page, "document.getElementById('art').value === ''")
    assert chosen(page) == [PATIENTS, DATA_PROTECTION]
    assert page.input_value("#k") == "7" and page.input_value("#od_roku") == "1990"

    shared = browser.new_page()  # the link opens the same search
    shared.goto(link)
    shared.wait_for_selector("#wyniki li")
    assert shared.locator("#wyniki li").count() == 7 and shared.input_value("#do_roku") == "2010"
    assert shared.input_value("#typ") == "ustawa"
    shared.close()
    page.close()


def test_logout_button_only_with_a_token(browser, base: str, two_acts_db: Path) -> None:
    from serving_support import running_server

    page = opened(browser, base)
    assert page.locator("#wyloguj").is_hidden()
    page.close()
    with running_server(two_acts_db, token="tajny-token") as url:
        page = browser.new_page()
        page.goto(url)
        page.fill("input[name=token]", "tajny-token")
        page.click("button[type=submit]")
        page.wait_for_selector("#wyloguj:visible")
        page.click("#wyloguj")
        page.wait_for_selector("input[name=token]")  # back at the login form
        assert page.request.get(f"{url}/api/pliki").status == 401
        page.close()


def test_a_user_logs_in_with_a_personal_token_and_loses_access_when_removed(browser, two_acts_db: Path,
                                                                            tmp_path: Path) -> None:
    from serving_support import running_server

    from chroma_rag.serving.accounts import Accounts

    accounts = Accounts(tmp_path / "uzytkownicy.json")
    token = accounts.add("anna.nowak")
    with running_server(two_acts_db, accounts=accounts) as url:
        page = browser.new_page()
        page.goto(f"{url}/?q=prawo+do+informacji+o+stanie+zdrowia")
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_selector("#wyniki li")  # the shared link survived the login
        until(page, "document.getElementById('wyloguj').textContent === 'Wyloguj (anna.nowak)'", 30)
        accounts.remove("anna.nowak")
        page.reload()
        page.wait_for_selector("input[name=token]")  # the session ended with the account, no restart
        page.close()


def test_a_user_of_one_base_of_several_searches_and_asks_in_it(browser, two_acts_db: Path, same_named_db: Path,
                                                                 tmp_path: Path) -> None:
    from serving_support import running_app

    from chroma_rag.serving.accounts import Accounts
    from chroma_rag.serving.app import build_bases_app
    from chroma_rag.serving.shared_index import SharedIndex

    accounts = Accounts(tmp_path / "uzytkownicy.json")
    token = accounts.add("anna", ["ustawy"])
    app = build_bases_app({"ustawy": SharedIndex(two_acts_db), "kadry": SharedIndex(same_named_db)},
                          accounts=accounts)
    with running_app(app) as url:
        page = browser.new_page()
        page.goto(f"{url}/?q=prawo+do+informacji+o+stanie+zdrowia")
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_selector("#wyniki li")  # straight into her only base, with the shared link's search
        assert page.url.startswith(f"{url}/b/ustawy/?")
        assert PATIENTS in page.inner_text("#wyniki") and "regulamin.md" not in page.inner_text("#wyniki")
        # the page's own (relative) API address is its base's
        files = page.evaluate("fetch('api/pliki').then((r) => r.json()).then((f) => f.map((i) => i.plik))")
        assert PATIENTS in files and not any("regulamin" in name for name in files)
        link = page.locator("#wyniki a[href*='dokumenty/']").first.get_attribute("href")
        assert page.request.get(f"{url}/b/ustawy/{link}").status == 200
        assert page.request.get(f"{url}/b/kadry/api/pliki").status == 404
        page.close()


def test_watched_folders_state_is_shown(browser, two_acts_db: Path) -> None:
    from serving_support import running_server

    from chroma_rag.indexing.watch import WatchState

    state = WatchState(folders=["/srv/dokumenty"], state="indeksuje", pending=["nowy-regulamin.pdf"])
    with running_server(two_acts_db, status=state.to_json) as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#obserwowanie:visible")
        shown = page.inner_text("#obserwowanie")
        assert "dokumenty" in shown and "nowy-regulamin.pdf" in shown and "indeks" in shown, shown
        assert "/srv" not in shown, shown  # the folder's name, not the server's path
        state.state, state.pending, state.syncs, state.last_sync = "czeka", [], 3, 1_700_000_000.0
        until(page, "!document.getElementById('obserwowanie').textContent.includes('nowy-regulamin')", 30)
        assert "aktualny" in page.inner_text("#obserwowanie")
        page.close()


def test_file_filter_learns_a_file_the_watcher_just_indexed(browser, two_acts_copy: Path, tmp_path: Path) -> None:
    from serving_support import running_server

    from chroma_rag import Index
    from chroma_rag.indexing.watch import WatchState

    state = WatchState(folders=[str(tmp_path)], state="czeka", syncs=1, last_sync=1_700_000_000.0)
    with running_server(two_acts_copy, status=state.to_json) as url:
        page = opened(browser, url)
        page.select_option("#typ", "ustawa")
        new = tmp_path / "regulamin-pracy.md"
        new.write_text("# Regulamin pracy\n\nArt. 1. Praca zaczyna się o ósmej.\n", encoding="utf-8")
        Index(two_acts_copy).add([new])  # what the watcher does, then it counts the synchronization
        state.syncs, state.last_sync = 2, 1_700_000_100.0
        until(page, "document.querySelector('#plik').dataset.gotowe === '3'")
        page.fill("#plik-szukaj", "regulamin-pracy")
        assert page.inner_text("#plik-lista .opcja.aktywna .nazwa") == "regulamin-pracy.md"
        types = page.locator("#typ option").all_inner_texts()
        assert len(types) == len(set(types)) and page.input_value("#typ") == "ustawa"  # no duplicates, choice kept
        page.close()


# --- issue 37: wybór plików w bibliotece aktów -------------------------------------------------------------------


@pytest.fixture(scope="module")
def library_base(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLlm) -> str:
    """Serwer nad małą biblioteką prawdziwych aktów (Kodeks wykroczeń, KPC, ustawa o własności lokali, dane/)."""
    from library_support import library_db
    from serving_support import running_server

    with running_server(library_db(tmp_path_factory)) as url:
        yield url


def options(page) -> list[str]:
    return page.locator("#plik-lista .opcja .nazwa").all_inner_texts()


def test_file_picker_finds_acts_by_title_and_abbreviation(browser, library_base: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    from library_support import CIVIL_PROCEDURE, FLATS, PETTY_OFFENCES

    page = opened(browser, library_base)
    combobox = page.locator("#plik-szukaj")
    assert combobox.get_attribute("role") == "combobox" and combobox.get_attribute("aria-expanded") == "false"
    for typed, first in (("kodeks wykr", PETTY_OFFENCES), ("KODEKS WYKROCZEŃ", PETTY_OFFENCES), ("kw", PETTY_OFFENCES),
                         ("kpc", CIVIL_PROCEDURE), ("k.p.c.", CIVIL_PROCEDURE), ("K. P. C.", CIVIL_PROCEDURE),
                         ("własności lok", FLATS), ("wlasnosci lok", FLATS), ("u.w.l.", FLATS),
                         ("postepowania-cyw", CIVIL_PROCEDURE)):
        page.fill("#plik-szukaj", typed)
        assert options(page)[0] == first, (typed, options(page))
        assert combobox.get_attribute("aria-expanded") == "true"
        assert page.locator("#plik-lista").get_attribute("role") == "listbox"
    page.fill("#plik-szukaj", "kodeks wykr")
    assert options(page) == [PETTY_OFFENCES]  # the other code is "postępowania", not "wykroczeń"
    assert "Kodeks wykroczeń · k.w. · 1971" in page.inner_text("#plik-lista .opcja")
    page.fill("#plik-szukaj", "zxqv")
    assert not options(page) and "Żaden plik nie pasuje" in page.inner_text("#plik-lista")

    page.fill("#plik-szukaj", "kodeks wykr")
    page.locator("#plik-lista .opcja").first.click()  # the mouse picks too
    assert chosen(page) == [PETTY_OFFENCES] and page.locator("#plik-lista").is_hidden()
    assert page.locator("#plik-wybrane .zeton .skrot").inner_text() == "k.w."
    search(page, "zakłócenie spoczynku nocnego krzykiem")
    files = set(page.locator("#wyniki li .naglowek .plik").all_inner_texts())
    assert files == {PETTY_OFFENCES}
    assert parse_qs(urlsplit(page.url).query)["plik"] == [PETTY_OFFENCES]

    unchoose(page, PETTY_OFFENCES)  # the chip's ×: no filter any more
    assert chosen(page) == [] and page.locator("#plik-wybrane").is_hidden()
    page.fill("#pytanie", "właściciel lokalu i wspólnota mieszkaniowa")
    page.click("#szukaj")
    until(page, "!location.search.includes('plik=') && location.search.includes('wsp')")
    page.wait_for_selector("#wyniki li")
    assert FLATS in page.locator("#wyniki li .naglowek .plik").all_inner_texts()
    page.close()


def test_a_cited_paragraph_shows_in_the_hit_and_its_citation(browser, library_base: str) -> None:
    from library_support import PETTY_OFFENCES

    page = opened(browser, library_base)
    search(page, "art. 10 § 1 kw")
    header = page.locator("#wyniki li .naglowek").first.inner_text()
    assert PETTY_OFFENCES in header and "art. 10 § 1 k.w." in header
    copy = page.locator("#wyniki li .kopiuj").first
    assert copy.get_attribute("aria-label").endswith(f"[{PETTY_OFFENCES}, art. 10 § 1 k.w.]")
    page.close()
    page = opened(browser, library_base)
    search(page, "art. 10 § 7 kw")  # art. 10 k.w. has no § 7: the citation names the article, not a part it lacks
    header = page.locator("#wyniki li .naglowek").first.inner_text()
    assert "art. 10 k.w." in header and "§ 7" not in header
    page.close()


def test_file_picker_works_from_the_keyboard_alone(browser, library_base: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    from library_support import CIVIL_PROCEDURE, FLATS, PETTY_OFFENCES

    page = opened(browser, library_base)
    combobox = page.locator("#plik-szukaj")
    page.fill("#pytanie", "grzywna za wykroczenie")
    page.press("#pytanie", "Tab")
    assert page.evaluate("document.activeElement.id") == "plik-szukaj"

    page.keyboard.type("kodeks")
    assert options(page)[:2] == [CIVIL_PROCEDURE, PETTY_OFFENCES]
    assert combobox.get_attribute("aria-activedescendant") == "plik-opcja-0"
    page.keyboard.press("ArrowDown")
    assert combobox.get_attribute("aria-activedescendant") == "plik-opcja-1"
    assert page.locator("#plik-opcja-1").inner_text().startswith(PETTY_OFFENCES)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # picks the highlighted file, clears the field, closes the list
    assert chosen(page) == [PETTY_OFFENCES] and combobox.input_value() == ""
    assert combobox.get_attribute("aria-expanded") == "false"
    assert "Dodano filtr" in page.inner_text("#plik-stan")

    page.keyboard.type("u.w.l.")
    page.keyboard.press("Enter")
    assert chosen(page) == [PETTY_OFFENCES, FLATS]
    page.keyboard.press("ArrowDown")  # the closed list opens with every file; the chosen ones are marked
    assert combobox.get_attribute("aria-expanded") == "true"
    selected = page.locator("#plik-lista [role=option][aria-selected=true] .nazwa").all_inner_texts()
    assert sorted(selected) == sorted([PETTY_OFFENCES, FLATS])
    page.keyboard.press("Escape")  # closes the list, the chips stay
    assert combobox.get_attribute("aria-expanded") == "false" and page.locator("#plik-lista").is_hidden()
    page.keyboard.press("Backspace")  # in the empty field: removes the last chip
    assert chosen(page) == [PETTY_OFFENCES]
    page.keyboard.type("kpc")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")  # the second Escape clears what was typed
    assert combobox.input_value() == "" and chosen(page) == [PETTY_OFFENCES]

    page.keyboard.press("Enter")  # nothing highlighted: Enter searches, as in the question field
    page.wait_for_selector("#wyniki li")
    assert parse_qs(urlsplit(page.url).query)["plik"] == [PETTY_OFFENCES]
    assert set(page.locator("#wyniki li .naglowek .plik").all_inner_texts()) == {PETTY_OFFENCES}

    page.focus("#plik-szukaj")
    page.keyboard.type("k.p.c.")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    until(page, "location.search.split('plik=').length === 3")
    assert parse_qs(urlsplit(page.url).query)["plik"] == [PETTY_OFFENCES, CIVIL_PROCEDURE]
    page.go_back()  # Back: the earlier filter's chips come back from the address
    until(page, "location.search.split('plik=').length === 2")
    until(page, "document.querySelectorAll('#plik-wybrane .zeton').length === 1")
    assert chosen(page) == [PETTY_OFFENCES]
    page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_file_picker_is_accessible_in_both_schemes_and_widths(browser, library_base: str, width: int,
                                                              scheme: str, tmp_path: Path) -> None:
    from library_support import CIVIL_PROCEDURE, FLATS

    page = opened(browser, library_base, width=width)
    page.emulate_media(color_scheme=scheme)
    if width < 500:
        page.click("#filtry-przelacz")  # on a phone the filters are folded
    choose(page, CIVIL_PROCEDURE, FLATS)
    page.fill("#plik-szukaj", "kodeks")
    page.keyboard.press("ArrowDown")
    fits = "document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits)
    box = page.locator("#plik-lista").bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
    assert accessibility_violations(page) == []
    page.screenshot(path=str(tmp_path / f"wybor-{width}-{scheme}.png"), full_page=True)
    page.keyboard.press("Escape")
    assert page.evaluate(fits) and accessibility_violations(page) == []
    page.close()


# --- issue 38: źródła obok odpowiedzi ------------------------------------------------------------------------


def source_files(page) -> list[str]:
    return page.locator("#zrodla li").all_inner_texts()


def test_sources_show_before_the_answer_and_stay_after_stop(browser, base: str, fake_llm: FakeLlm) -> None:
    from conftest import DATA_PROTECTION

    words = " ".join(f"słowo{n}" for n in range(200))
    fake_llm.default = Reply(text=f"{words} [{PATIENTS}, art. 9].", piece_delay=0.05)
    try:
        page = opened(browser, base)
        search(page, "administrator danych osobowych")
        assert DATA_PROTECTION in page.locator("#wyniki li .plik").all_inner_texts()
        page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
        page.click("#zapytaj")
        # the earlier search's fragments go at once; this question's sources come before its first word
        until(page, "document.querySelectorAll('#zrodla li').length > 0")
        assert page.get_attribute("#odpowiedz-tekst", "aria-live") == "polite"
        until(page, "document.getElementById('odpowiedz-tekst').textContent.includes('słowo5')")
        assert page.get_attribute("#odpowiedz-tekst", "aria-busy") == "true"
        shown = page.locator("#wyniki li .plik").all_inner_texts()
        assert len(shown) == len(source_files(page)), "wyniki pytania, nie wcześniejszego wyszukiwania"
        page.click("#zatrzymaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='zatrzymana']")
        assert source_files(page) and page.locator("#wyniki li").count() == len(shown)
        assert page.get_attribute("#odpowiedz-tekst", "aria-busy") == "false"
    finally:
        fake_llm.default = Reply(text=ANSWER)
    page.close()


def test_model_error_leaves_no_earlier_fragments_under_the_answer(browser, base: str, fake_llm: FakeLlm) -> None:
    from conftest import DATA_PROTECTION

    fake_llm.default = Reply(status=500)
    try:
        page = opened(browser, base)
        search(page, "administrator danych osobowych")
        page.fill("#pytanie", "prawo do informacji o stanie zdrowia")
        page.click("#zapytaj")
        until(page, "!document.getElementById('zapytaj').disabled && "
                    "document.getElementById('komunikat').classList.contains('blad')")
    finally:
        fake_llm.default = Reply(text=ANSWER)
    shown = page.locator("#wyniki li .plik").all_inner_texts()
    assert len(shown) == len(source_files(page)) > 0  # this question's sources, not the search before it
    assert "administrator danych osobowych" not in page.inner_text("#wyniki") or DATA_PROTECTION in shown
    page.close()


def test_citations_are_numbered_in_the_order_the_answer_cites_them(browser, base: str, fake_llm: FakeLlm) -> None:
    page = answered(browser, base, fake_llm, f"Najpierw [{PATIENTS}, art. 9], potem [{PATIENTS}, art. 9] jeszcze raz.")
    assert page.locator("#odpowiedz-tekst a.cytat").all_inner_texts() == ["[1]", "[1]"]
    assert "art. 9" in source_files(page)[0]
    labels = [b.get_attribute("aria-label") for b in page.locator("#zrodla li button.kopiuj").all()]
    assert labels and all(label and label.startswith("skopiuj cytat [") for label in labels)  # which citation
    page.close()


def test_copied_answer_keeps_the_invented_citation_warning(browser, base: str, fake_llm: FakeLlm) -> None:
    browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = answered(browser, base, fake_llm, INVENTED)
    page.click("#kopiuj-odpowiedz")
    until(page, "document.getElementById('komunikat').textContent.includes('Skopiowano')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "wymyslona-ustawa.pdf, art. 99" in copied and "nie ma wśród fragmentów" in copied
    assert copied.index("Uwaga") < copied.index("Źródła:")
    page.close()


# --- issue 38: rozmowa --------------------------------------------------------------------------------------


def test_a_follow_up_continues_the_conversation_and_its_link_opens_it_again(browser, base: str,
                                                                          fake_llm: FakeLlm) -> None:
    from test_rozmowa import FIRST, FIRST_ANSWER, FOLLOW_UP, FOLLOW_UP_ANSWER, STANDALONE, answer_requests, responder

    fake_llm.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER, FIRST_ANSWER])
    fake_llm.requests.clear()
    try:
        page = opened(browser, base)
        page.evaluate("localStorage.removeItem('chroma-rag:rozmowy')")  # the module's other tests asked too
        page.fill("#pytanie", FIRST)
        page.click("#zapytaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
        page.fill("#pytanie", FOLLOW_UP)
        page.click("#zapytaj")
        until(page, f"document.getElementById('odpowiedz-tekst').textContent.includes('{FOLLOW_UP_ANSWER[:20]}')"
                    " && document.getElementById('odpowiedz').dataset.gotowa === 'tak'")
        assert page.locator("#tury li").count() == 1 and FIRST in page.inner_text("#tury")
        assert STANDALONE in page.inner_text("#szukano")
        assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user", "assistant", "user"]
        link = page.get_attribute("#rozmowa-link", "href")
        asked = len(fake_llm.requests)

        again = browser.new_page()
        again.goto(base + link)
        again.wait_for_selector("#odpowiedz[data-gotowa='tak']")
        assert FOLLOW_UP_ANSWER[:20] in again.inner_text("#odpowiedz-tekst") and FIRST in again.inner_text("#tury")
        assert again.locator("#zrodla li").count() > 0 and again.locator("#odpowiedz-tekst a.cytat").count() == 1
        assert len(fake_llm.requests) == asked  # opened as saved, the model not asked
        assert accessibility_violations(again) == []
        again.close()

        # "Moje rozmowy": this browser's conversations, each with its link and a delete button
        page.reload()
        page.wait_for_selector("#moje-rozmowy:not([hidden])", state="attached")
        assert page.locator("#rozmowy-lista li").count() == 1
        assert page.get_attribute("#rozmowy-lista li a", "href") == link
        assert FIRST in (page.text_content("#rozmowy-lista") or "")  # in the closed "Moje rozmowy"
        page.fill("#pytanie", FIRST)
        page.click("#zapytaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
        until(page, "document.querySelectorAll('#rozmowy-lista li').length === 2")
        page.locator("#moje-rozmowy summary").click()
        page.locator("#rozmowy-lista li", has=page.locator(f"a[href='{link}']")).locator("button").click()
        until(page, "document.querySelectorAll('#rozmowy-lista li').length === 1")
        assert httpx.get(base + "/api/rozmowy/" + link.split("=")[1], timeout=60).status_code == 404

        page.click("#nowa-rozmowa")
        assert page.locator("#tury").is_hidden()
        page.fill("#pytanie", FIRST)
        page.click("#zapytaj")
        page.wait_for_selector("#odpowiedz[data-gotowa='tak']")
        assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user"]  # a new conversation
    finally:
        fake_llm.responder = None
    page.close()


def test_markdown_of_the_answer_is_rendered_and_html_in_it_stays_text(browser, base: str,
                                                                    fake_llm: FakeLlm) -> None:
    text = (f"## Odpowiedź\n**Tak.** Pacjent ma prawo:\n\n1. do informacji [{PATIENTS}, art. 9],\n"
            "2. do *dokumentacji*.\n\n- `art. 9` mówi to wprost\n\n<img src=x onerror=\"document.title='x'\">")
    page = answered(browser, base, fake_llm, text)
    box = page.locator("#odpowiedz-tekst")
    assert box.locator("strong").first.inner_text() == "Odpowiedź" and box.locator("p strong").count() >= 2
    assert box.locator("ol > li").count() == 2 and box.locator("ol > li a.cytat").count() == 1
    assert box.locator("em").inner_text() == "dokumentacji" and box.locator("ul > li code").inner_text() == "art. 9"
    assert box.locator("img").count() == 0 and "<img src=x" in box.inner_text()  # shown, never run
    assert page.title() != "x" and "**" not in box.inner_text() and "##" not in box.inner_text()
    page.close()


def test_the_question_is_typed_in_regular_weight(browser, base: str) -> None:
    """Etykieta pola pytania jest pogrubiona, wpisywany tekst i podpowiedź – nie."""
    page = opened(browser, base)
    weight = page.evaluate("getComputedStyle(document.getElementById('pytanie')).fontWeight")
    assert weight == "400", weight
    page.close()
