""" "Fork from here" in the built-in web UI, in headless Chromium with the real CLI and the
fake Messages API behind a real server on 127.0.0.1: a conversation forked at its first turn
shows only that turn, and the CLI resumed there (the Messages API request of the fork holds
the first turn and not the second); a fork's stored turn forks again.

Screenshots go to tests/artifacts/webui/ (kept by CI as artifacts; gitignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.server import ServerSettings, create_app
from tests.support.browser import axe_violations, open_webui, page_until
from tests.support.configs import real_cli_config

from .fake_api import FakeAnthropicAPI
from .script import Text, Turn, text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "webui"


@pytest.fixture
def server(cli_command: str, cli_env: Any) -> Iterator[str]:
    from tests.support.servers import running

    defaults = real_cli_config(cli_command, cli_env, policy="supervised")
    app = create_app(settings=ServerSettings(session_defaults=defaults, max_sessions=4))
    with running(app) as url:
        yield url


def open_page(browser: Any, url: str) -> Any:
    return open_webui(browser, url)


def prompt(page: Any, text: str) -> None:
    page.fill("#prompt", text)
    page.press("#prompt", "Enter")


def idle(page: Any) -> None:
    page.wait_for_selector("#session-state.badge.idle")


def fork_with_keyboard(page: Any, label: str, source: str) -> str:
    """Press the turn's control from the keyboard; the page lands in the new session."""
    page.get_by_role("button", name=label).focus()
    page.keyboard.press("Enter")
    page_until(page, f"window.ccbState.current && window.ccbState.current !== {source!r}")
    forked: str = page.evaluate("window.ccbState.current")
    assert page.evaluate("location.hash") == "#/s/" + forked
    return forked


def sent_after(fake_api: FakeAnthropicAPI, count: int) -> str:
    """The whole body of the one main request since ``count`` (what the CLI resumed with)."""
    [request] = fake_api.main_requests()[count:]
    return str(request.body)


def test_fork_from_a_past_turn(browser: Any, server: str, fake_api: FakeAnthropicAPI) -> None:
    steady = " ".join(f"w{i}" for i in range(120)) + " OMEGA-ANSWER"
    fake_api.add_main(
        text_turn("The answer is ALPHA-ANSWER."),
        Turn(blocks=(Text(steady),), chunk=6, delay=0.03),
        text_turn("Forked answer."),
        text_turn("Forked again."),
    )
    page = open_page(browser, server + "/")
    page.fill("#start-prompt", "remember ALPHA-PROMPT")
    page.press("#start-prompt", "Enter")
    page.wait_for_selector(".msg.assistant:has-text('ALPHA-ANSWER')")
    idle(page)
    source: str = page.evaluate("window.ccbState.current")
    first = "Fork from here: turn 1 (“remember ALPHA-PROMPT”)"
    assert 1 == page.get_by_role("button", name=first).count()

    prompt(page, "now say OMEGA-PROMPT")
    page.wait_for_selector(".msg.assistant:has-text('w1 ')")
    # The turn still running has no control; the finished one keeps its own.
    assert ["1"] == [m.get_attribute("data-turn") for m in page.locator(".turn-end").all()]
    page.wait_for_selector(".msg.assistant:has-text('OMEGA-ANSWER')")
    idle(page)
    assert 2 == page.locator(".turn-end button.fork").count()
    # Each control sits right after the turn it forks.
    after = page.evaluate(
        "[...document.querySelectorAll('#chat > .turn-end')]"
        ".map((m) => m.previousElementSibling.innerText)"
    )
    assert ["The answer is ALPHA-ANSWER.", steady] == after
    assert [] == axe_violations(page)

    before = len(fake_api.main_requests())
    forked = fork_with_keyboard(page, first, source)
    page.wait_for_selector(".note.forked")
    assert page.inner_text(".note.forked").startswith(
        "Forked from “remember ALPHA-PROMPT” at turn 1"
    )
    # The server shows the conversation up to that turn only.
    page.wait_for_selector(".msg.assistant:has-text('ALPHA-ANSWER')")
    assert ["remember ALPHA-PROMPT"] == page.locator(".msg.user").all_inner_texts()
    assert 0 == page.locator(".msg.assistant:has-text('OMEGA-ANSWER')").count()
    assert 1 == page.locator(".turn-end button.fork").count(), "its stored turn can fork too"
    row = page.locator(f"#sessions li[data-session='{forked}']")
    assert "(fork at turn 1)" in row.inner_text()

    prompt(page, "what did I ask first?")
    page.wait_for_selector(".msg.assistant:has-text('Forked answer.')")
    idle(page)
    body = sent_after(fake_api, before)
    assert "ALPHA-PROMPT" in body and "ALPHA-ANSWER" in body, "the first turn was resumed"
    assert "OMEGA" not in body, "the second turn is not in the fork"
    assert [] == axe_violations(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "fork.png"), full_page=True)

    # The fork's first turn is one it resumed from the stored transcript: fork it again.
    before = len(fake_api.main_requests())
    fork_with_keyboard(page, first, forked)
    page.wait_for_selector(".msg.assistant:has-text('ALPHA-ANSWER')")
    assert ["remember ALPHA-PROMPT"] == page.locator(".msg.user").all_inner_texts()
    prompt(page, "again")
    page.wait_for_selector(".msg.assistant:has-text('Forked again.')")
    body = sent_after(fake_api, before)
    assert "ALPHA-ANSWER" in body and "Forked answer." not in body and "OMEGA" not in body
    assert [] == page.errors


def test_a_fork_the_cli_refuses_says_so(
    browser: Any, server: str, fake_api: FakeAnthropicAPI
) -> None:
    """A turn's message the CLI no longer has (as if its transcript was cut): the real CLI
    refuses to resume there, and the page says so in words, staying where it was."""
    fake_api.add_main(text_turn("The answer is ALPHA-ANSWER."))
    page = open_page(browser, server + "/")
    page.fill("#start-prompt", "remember ALPHA-PROMPT")
    page.press("#start-prompt", "Enter")
    page.wait_for_selector(".msg.assistant:has-text('ALPHA-ANSWER')")
    idle(page)
    source: str = page.evaluate("window.ccbState.current")
    page.evaluate(
        "(() => { const chat = window.ccbState.chats.get(window.ccbState.current);"
        " chat.turns[0].last_message_uuid = '0b5e2f9e-1111-4222-8333-944445555666'; })()"
    )
    page.locator(".turn-end button.fork").click()
    page.wait_for_selector("#banner.error")
    assert (
        "Could not fork “remember ALPHA-PROMPT” at turn 1: the CLI could not resume the "
        "conversation at that message." == page.inner_text("#banner")
    )
    assert source == page.evaluate("window.ccbState.current")
    assert [] == page.errors
