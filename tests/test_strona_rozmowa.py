"""Rozmowa na stronie (issue 38) w prawdziwym chromium: odpowiedź od nowa, poprawione pytanie, usunięcie wszystkich
rozmów z potwierdzeniem i rozmowy każdego użytkownika osobno (link do cudzej tylko do czytania)."""

from __future__ import annotations

from pathlib import Path

import httpx
from llm_server import FakeLlm
from test_rozmowa import FIRST, FIRST_ANSWER, FOLLOW_UP, FOLLOW_UP_ANSWER, answer_requests, responder
from test_strona import accessibility_violations, browser, opened, pytestmark, until  # noqa: F401 (fixture, mark)

AGAIN = "Tak – odpowiedź napisana od nowa."
EDITED = "Kto udziela pacjentowi informacji o stanie zdrowia?"


def ask(page, question: str) -> None:
    page.fill("#pytanie", question)
    page.click("#zapytaj")
    ready(page)


def ready(page) -> None:
    until(page, "document.getElementById('odpowiedz').dataset.gotowa === 'tak' && !document.getElementById('zapytaj')"
                ".disabled")


def saved_turns(base: str, page) -> list[tuple[str, str]]:
    conversation = page.get_attribute("#rozmowa-link", "href").split("=")[1]
    turns = httpx.get(f"{base}/api/rozmowy/{conversation}", timeout=60).json()["tury"]
    return [(turn["pytanie"], turn["odpowiedz"]) for turn in turns]


def test_an_answer_is_regenerated_a_question_edited_and_all_conversations_deleted(browser, base: str,  # noqa: F811
                                                                                   fake_llm: FakeLlm) -> None:
    fake_llm.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER, AGAIN, FIRST_ANSWER])
    try:
        page = opened(browser, base)
        page.evaluate("localStorage.removeItem('chroma-rag:rozmowy')")  # the module's other tests asked too
        ask(page, FIRST)
        ask(page, FOLLOW_UP)

        page.get_by_role("button", name=f"odpowiedz ponownie na pytanie „{FOLLOW_UP}”").click()
        until(page, f"document.getElementById('odpowiedz-tekst').textContent.includes('{AGAIN}')")
        ready(page)
        assert page.locator("#tury li").count() == 1  # the first turn, once: not the replaced answer too
        assert saved_turns(base, page) == [(FIRST, FIRST_ANSWER), (FOLLOW_UP, AGAIN)]
        assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user", "assistant", "user"]

        page.get_by_role("button", name=f"popraw pytanie 1: „{FIRST}”").click()
        assert page.input_value("#pytanie") == FIRST and "Poprawiasz pytanie 1" in page.inner_text("#komunikat")
        ask(page, EDITED)
        assert page.locator("#tury").is_hidden()  # the turns after the edited question are gone
        assert saved_turns(base, page) == [(EDITED, FIRST_ANSWER)]
        assert [m["role"] for m in answer_requests(fake_llm)[-1]] == ["system", "user"]

        # the list shows past answers, not only questions
        page.locator("#moje-rozmowy summary").click()
        assert FIRST_ANSWER[:30] in page.inner_text("#rozmowy-lista")
        assert EDITED in page.inner_text("#rozmowy-lista")  # listed by its first question, as edited
        assert accessibility_violations(page) == []

        page.click("#nowa-rozmowa")  # a second conversation
        fake_llm.responder = responder([FIRST_ANSWER])
        ask(page, FIRST)
        until(page, "document.querySelectorAll('#rozmowy-lista li').length === 2")
        links = [a.get_attribute("href") for a in page.locator("#rozmowy-lista li a").all()]

        page.once("dialog", lambda dialog: dialog.dismiss())  # asked first; "Anuluj" deletes nothing
        page.click("#usun-rozmowy")
        assert page.locator("#rozmowy-lista li").count() == 2
        said = []
        page.once("dialog", lambda dialog: (said.append(dialog.message), dialog.accept()))
        page.click("#usun-rozmowy")
        until(page, "document.getElementById('moje-rozmowy').hidden")
        assert said == ["Usunąć wszystkie twoje rozmowy (2)? Tego nie da się cofnąć."]
        assert all(httpx.get(f"{base}/api/rozmowy/{link.split('=')[1]}", timeout=60).status_code == 404
                   for link in links)
    finally:
        fake_llm.responder = None
    page.close()


def test_the_model_failing_in_an_answer_given_anew_leaves_the_conversation_as_it_was(
        browser, base: str, fake_llm: FakeLlm) -> None:  # noqa: F811
    from llm_server import Reply

    fake_llm.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
    try:
        page = opened(browser, base)
        ask(page, FIRST)
        ask(page, FOLLOW_UP)
        fake_llm.responder = lambda request: (None if "response_format" in request.body
                                              else Reply(text="Początek odpowiedzi, która się urwie.", fail_after=1))
        page.get_by_role("button", name=f"popraw pytanie 1: „{FIRST}”").click()
        page.fill("#pytanie", EDITED)
        page.click("#zapytaj")
        until(page, "document.getElementById('komunikat').className === 'blad' && "
                    f"document.getElementById('tury').textContent.includes('{FIRST}')")
        # shown again as the server kept it: both turns, the last answer under them
        assert page.locator("#tury li").count() == 1 and FOLLOW_UP_ANSWER[:20] in page.inner_text("#odpowiedz-tekst")
        assert saved_turns(base, page) == [(FIRST, FIRST_ANSWER), (FOLLOW_UP, FOLLOW_UP_ANSWER)]
    finally:
        fake_llm.responder = None
    page.close()


def test_each_user_sees_their_own_conversations_and_reads_a_shared_one(browser, two_acts_copy: Path,  # noqa: F811
                                                                       tmp_path: Path) -> None:
    from serving_support import chat_model, running_server

    from chroma_rag.serving.accounts import Accounts

    accounts = Accounts(tmp_path / "uzytkownicy.json")
    tokens = {name: accounts.add(name) for name in ("anna", "jan")}

    def logged_in(url: str, name: str):
        browser.clear_cookies()
        page = browser.new_page()
        page.goto(f"{url}/logowanie")  # not "/": the browser may show the page from its cache, without a login
        page.fill("input[name=token]", tokens[name])
        page.click("button[type=submit]")
        page.wait_for_selector("#plik[data-gotowe]", state="attached")
        return page

    with chat_model(FIRST_ANSWER) as fake, running_server(two_acts_copy, accounts=accounts) as url:
        fake.responder = responder([FIRST_ANSWER, FOLLOW_UP_ANSWER])
        try:
            page = logged_in(url, "anna")
            ask(page, FIRST)
            until(page, "document.querySelectorAll('#rozmowy-lista li').length === 1")  # from the server's list
            annas = page.get_attribute("#rozmowa-link", "href")
            page.close()

            page = logged_in(url, "jan")
            assert page.locator("#moje-rozmowy").is_hidden()  # Anna's conversation is not on Jan's list
            page.goto(url + "/" + annas)
            ready(page)
            assert "To rozmowa innej osoby" in page.inner_text("#komunikat")
            assert FIRST_ANSWER[:20] in page.inner_text("#odpowiedz-tekst")
            ask(page, FOLLOW_UP)  # continues in Jan's own copy
            assert page.get_attribute("#rozmowa-link", "href") != annas
            until(page, "document.querySelectorAll('#rozmowy-lista li').length === 1")
            annas_turns = httpx.get(f"{url}/api/rozmowy/{annas.split('=')[1]}",
                                    headers={"Authorization": f"Bearer {tokens['anna']}"}, timeout=60).json()["tury"]
            assert len(annas_turns) == 1
            page.close()
        finally:
            browser.clear_cookies()
