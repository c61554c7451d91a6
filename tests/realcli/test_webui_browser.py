"""The built-in web UI in headless Chromium (Debian's, driven by Python Playwright), with the
real CLI and the fake Messages API behind a real server on 127.0.0.1.

Screenshots go to tests/artifacts/webui/ (kept by CI as artifacts; gitignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.server import ServerSettings, create_app
from tests.support.browser import axe_violations, open_webui
from tests.support.browser import start_session as start_landing_session
from tests.support.configs import real_cli_config

from .fake_api import FakeAnthropicAPI
from .script import Rule, Text, Turn, error_turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "webui"


@pytest.fixture
def server(cli_command: str, cli_env: Any) -> Iterator[str]:
    from tests.support.servers import running

    (cli_env.cwd / "notes.txt").write_text("alpha\nbeta\n")
    defaults = real_cli_config(cli_command, cli_env, policy="supervised")
    app = create_app(settings=ServerSettings(session_defaults=defaults, max_sessions=4))
    with running(app) as url:
        yield url


def page_of(browser: Any, url: str, **context: Any) -> Any:
    return open_webui(browser, url, **context)


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def start_session(page: Any) -> str:
    session_id = start_landing_session(page)
    page.wait_for_selector("#session:not([hidden])")
    return session_id


def prompt(page: Any, text: str) -> None:
    page.fill("#prompt", text)
    page.press("#prompt", "Enter")


def idle(page: Any) -> None:
    page.wait_for_selector("#session-state.badge.idle")


def test_chat_approvals_diff_and_escaping(
    browser: Any, server: str, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Streamed text; a Bash call approved (its output shown, markup in it inert); one denied
    with a message; an Edit shown as a diff; a phone-sized view of the same session."""
    notes = str(cli_env.cwd / "notes.txt")
    hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    fake_api.add_main(
        text_turn("Hello from the web UI test.", chunk=3),
        tool_turn("Bash", {"command": f"echo '{hostile}'", "description": "Echo <b>bold</b>"}),
        text_turn("The command ran."),
        tool_turn("Bash", {"command": "rm -rf ./precious", "description": "Delete things"}),
        text_turn("Understood, I will not delete it."),
        tool_turn("Read", {"file_path": notes}),
        tool_turn("Edit", {"file_path": notes, "old_string": "beta", "new_string": "gamma"}),
        text_turn("Edited notes.txt."),
    )
    page = page_of(browser, server + "/")
    start_session(page)

    prompt(page, "say hello")
    page.wait_for_selector(".msg.assistant:has-text('Hello from the web UI test.')")
    assert ["say hello"] == page.locator(".msg.user").all_inner_texts()
    idle(page)

    prompt(page, "run the echo")
    card = page.locator(".card.permission:not(.closed)")
    card.wait_for()
    assert "waiting for you" in page.inner_text("#sessions")
    card.locator("button.allow").click()
    page.wait_for_selector(".msg.assistant:has-text('The command ran.')")
    bash = page.locator(".card.kind-shell_exec").first
    assert "complete" == bash.locator(".status").inner_text()
    assert hostile in bash.locator("pre.stdout").inner_text()
    assert page.evaluate("window.pwned") is None
    assert 0 == page.locator("#chat img, #chat script, #chat b").count()
    idle(page)

    prompt(page, "delete it")
    card = page.locator(".card.permission:not(.closed)")
    card.wait_for()
    card.locator("input[name=message]").fill("Please keep that directory.")
    card.locator("button.deny").click()
    page.wait_for_selector(".msg.assistant:has-text('I will not delete it')")
    denied = page.locator(".card.kind-shell_exec").nth(1)
    # the person's decision, not an error: no CLI rejection text either
    assert "denied" == denied.locator(".status").inner_text()
    assert "Denied by you" == denied.locator(".decision").inner_text()
    assert 0 == denied.locator(".note.error").count()
    denials = [r for r in fake_api.main_requests() if "Please keep that directory." in str(r.body)]
    assert denials, "the deny message reached the model"
    idle(page)

    prompt(page, "edit the notes")
    card = page.locator(".card.permission:not(.closed)")
    card.wait_for()
    card.locator("button.allow").click()
    page.wait_for_selector(".msg.assistant:has-text('Edited notes.txt.')")
    diff = page.locator(".card.kind-modify_file .diff")
    assert "-beta" in diff.locator(".del").all_inner_texts()
    assert "+gamma" in diff.locator(".add").all_inner_texts()
    assert "alpha\ngamma\n" == (cli_env.cwd / "notes.txt").read_text()
    assert 0 == page.locator(".card.permission:not(.closed)").count()
    assert page.inner_text("#cost").startswith("$")
    shot(page, "chat")
    assert [] == page.errors

    phone = page_of(
        browser,
        server + "/",
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
    )
    assert phone.locator("#menu").is_visible()
    assert not phone.locator("#sidebar").is_visible() or phone.evaluate(
        "document.getElementById('sidebar').getBoundingClientRect().right <= 0"
    )
    phone.click("#menu")
    phone.locator("#sessions li button.row").first.click()
    phone.wait_for_selector(".msg.assistant:has-text('Edited notes.txt.')")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "no horizontal scrolling on a phone"
    shot(phone, "phone")
    assert [] == phone.errors


def test_interrupt_reload_and_two_pages(
    browser: Any, server: str, fake_api: FakeAnthropicAPI
) -> None:
    """Two pages on one session stay in step; a reload mid-turn shows the same chat going on
    with nothing twice; a long turn is interrupted from the page."""
    steady = " ".join(f"w{i}" for i in range(120)) + " END"
    fake_api.add_main(
        text_turn("First answer."),
        Turn(blocks=(Text(steady),), chunk=6, delay=0.03),
        Turn(blocks=(Text("z" * 4000),), chunk=4, delay=0.05),
        text_turn("After the interrupt."),
    )
    one = page_of(browser, server + "/")
    session_id = start_session(one)
    two = page_of(browser, server + "/")
    two.locator(f"#sessions li[data-session='{session_id}'] button.row").click()
    prompt(one, "first")
    for page in (one, two):
        page.wait_for_selector(".msg.assistant:has-text('First answer.')")
        page.wait_for_selector("#session-state.badge.idle")
        assert ["first"] == page.locator(".msg.user").all_inner_texts()

    prompt(two, "stream steadily")
    one.wait_for_selector(".msg.assistant:has-text('w1 ')")
    one.reload()
    one.wait_for_selector(".conn.ok")
    one.locator(f"#sessions li[data-session='{session_id}'] button.row").click()
    for page in (one, two):
        page.wait_for_selector(".msg.assistant:has-text('END')")
        texts = page.locator(".msg.assistant").all_inner_texts()
        assert ["First answer.", steady] == texts, "the same chat, nothing shown twice"
        assert ["first", "stream steadily"] == page.locator(".msg.user").all_inner_texts()
        page.wait_for_selector("#session-state.badge.idle")

    prompt(one, "go on and on")
    two.wait_for_selector(".msg.assistant:has-text('zzzz')")
    two.click("#interrupt")
    for page in (one, two):
        page.wait_for_selector("#session-state.badge.idle")
    text = one.locator(".msg.assistant").nth(2).inner_text()
    assert 0 < len(text) < 4000, "the long turn stopped early"
    prompt(one, "again")
    two.wait_for_selector(".msg.assistant:has-text('After the interrupt.')")
    shot(two, "two-pages")
    assert [] == one.errors and [] == two.errors


def test_a_failed_turns_api_error_shows_once(
    browser: Any, server: str, fake_api: FakeAnthropicAPI
) -> None:
    """The API overloaded (529) on every retry: the CLI writes its "API Error: 529 ..."
    message and a failed result; the chat shows one error line with the status in words and
    the CLI's text (escaped) under its details, no assistant bubble, live and after a
    reload; the retries stay visible and the session goes on."""
    rule = Rule("overload please", error_turn(529, "fake <b>overloaded</b>"))
    fake_api.add_rule(rule)
    fake_api.add_main(text_turn("Back again."))
    page = page_of(browser, server + "/")
    session_id = start_session(page)

    prompt(page, "overload please")
    page.wait_for_selector(".note.api-error")
    idle(page)
    assert rule.hits >= 2, "the CLI retried the 529"

    def shown_once(page: Any) -> str:
        note = page.locator("#chat .note.api-error")
        assert 1 == note.count()
        assert "Claude API error 529 (overloaded)" == note.locator("strong").inner_text()
        raw = note.locator("details pre").text_content()
        # The pinned CLI's words for a 529 that outlived its retries.
        assert raw.startswith("API Error: ") and "529" in raw
        # The CLI's text once in the whole page (no bubble, no banner); markup in it inert.
        assert 1 == page.evaluate("document.body.textContent").count(raw)
        request = note.locator("details .request-id").text_content() or ""
        assert request.startswith("Request id: req_"), "the failed request's id, for support"
        assert 0 == page.locator(".msg.assistant").count()
        assert 0 == page.locator("#chat b, #chat img, #chat script").count()
        assert page.locator("#chat .note", has_text="Retrying the API call").count() >= 1
        return raw

    raw = shown_once(page)
    page.locator("#chat .note.api-error summary").click()
    assert page.locator("#chat .note.api-error details pre").is_visible()
    shot(page, "api-error")
    assert [] == axe_violations(page)

    page.reload()
    page.wait_for_selector(".conn.ok")
    page.locator(f"#sessions li[data-session='{session_id}'] button.row").click()
    page.wait_for_selector(".note.api-error")
    assert raw == shown_once(page), "the snapshot shows the same one line"

    rule.times = rule.hits  # the failed prompt is merged into the next one
    prompt(page, "try again")
    page.wait_for_selector(".msg.assistant:has-text('Back again.')")
    assert 1 == page.locator("#chat .note.api-error").count()
    assert ["Back again."] == page.locator(".msg.assistant").all_inner_texts()
    idle(page)

    # A 500 whose text the CLI quotes: markup in it stays text.
    hostile = 'fake <img src=x onerror="window.pwned=1"> error'
    fake_api.add_rule(Rule("break it", error_turn(500, hostile)))
    prompt(page, "break it")
    page.wait_for_selector(".note.api-error[data-status='500']")
    idle(page)
    second = page.locator("#chat .note.api-error").nth(1)
    assert "Claude API error 500 (internal server error)" == second.locator("strong").inner_text()
    raw = second.locator("details pre").text_content()
    assert hostile in raw
    assert 1 == page.evaluate("document.body.textContent").count(raw)
    assert ["Back again."] == page.locator(".msg.assistant").all_inner_texts()
    assert 0 == page.locator("#chat img").count() and page.evaluate("window.pwned") is None
    assert [] == page.errors
