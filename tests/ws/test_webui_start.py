"""The web UI's way in: start by typing on the landing page, an address per session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import page_until
from tests.support.servers import running

from ._webui import open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")


def test_start_by_typing(tmp_path: Path, browser: Any) -> None:
    """The landing page is a composer: a directory that is not one is refused in the form
    (in words, nothing started, the prompt kept); Enter starts a session in the server's
    default directory and sends the prompt as its first turn."""
    body = script(text_turn("Hello from the landing page."))
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        assert page.evaluate("document.activeElement.id") == "start-prompt"
        shot(page, "landing")
        page.click("#start-settings summary")
        page.fill("#start input[name=cwd]", "give me the tour")
        page.fill("#start-prompt", "hello there")
        page.press("#start-prompt", "Enter")
        error = page.locator("#start-error")
        error.wait_for()
        assert "'give me the tour' does not exist" in error.inner_text()
        assert "Errno" not in error.inner_text() and str(tmp_path) not in error.inner_text()
        assert "hello there" == page.input_value("#start-prompt")
        assert 0 == page.evaluate("window.ccbState.sessions.size")
        assert page.locator("#session").is_hidden()
        page.fill("#start input[name=cwd]", "")
        page.select_option("#start select[name=effort]", "low")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Hello from the landing page.')")
        assert ["hello there"] == page.locator(".msg.user").all_inner_texts()
        assert page.locator("#landing").is_hidden() and page.locator("#start-error").is_hidden()
        current = page.evaluate("window.ccbState.current")
        assert str(tmp_path / "work") == page.evaluate(
            f"window.ccbState.sessions.get('{current}').cwd"
        )
        assert page.evaluate("document.activeElement.id") == "prompt"
        page.click("#new-chat")
        assert page.locator("#landing").is_visible() and page.locator("#session").is_hidden()
        assert [] == page.errors


def test_a_url_per_session(tmp_path: Path, browser: Any) -> None:
    """Each session has an address: a reload lands in it at the end, back and forward go
    between sessions and the landing page, a link opened in another browser context shows
    the same chat; nothing is shown twice."""
    body = script(*(text_turn(f"reply {i}") for i in range(2)))  # each CLI: from the start
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "first session")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        first = page.evaluate("window.ccbState.current")
        assert page.url.endswith(f"/#/s/{first}")
        chat = page.locator("#chat > [data-id]").all_inner_texts()
        page.reload()
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        assert first == page.evaluate("window.ccbState.current")
        assert chat == page.locator("#chat > [data-id]").all_inner_texts()
        page_until(
            page,
            "(() => { const c = document.getElementById('chat');"
            " return c.scrollHeight - c.scrollTop - c.clientHeight < 2; })()",
        )

        page.click("#new-chat")
        assert page.url.rstrip("/") == url
        page.fill("#start-prompt", "second session")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.user:has-text('second session')")
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        second = page.evaluate("window.ccbState.current")
        assert second != first and page.url.endswith(f"/#/s/{second}")
        page.go_back()
        page.locator("#landing").wait_for()
        page.go_back()
        page.wait_for_selector(".msg.user:has-text('first session')")
        assert first == page.evaluate("window.ccbState.current")
        assert chat == page.locator("#chat > [data-id]").all_inner_texts()
        page.go_forward()
        page.go_forward()
        page.wait_for_selector(".msg.user:has-text('second session')")
        assert ["second session"] == page.locator(".msg.user").all_inner_texts()

        other = open_page(browser, url)
        other.goto(f"{url}/#/s/{first}")
        other.wait_for_selector(".msg.assistant:has-text('reply 0')")
        assert chat == other.locator("#chat > [data-id]").all_inner_texts()
        other.fill("#prompt", "from the other device")
        other.press("#prompt", "Enter")
        page.go_back()
        page.go_back()
        page.wait_for_selector(".msg.assistant:has-text('reply 1')")
        assert ["first session", "from the other device"] == page.locator(
            ".msg.user"
        ).all_inner_texts()

        other.goto(f"{url}/#/s/no-such-session")
        other.locator("#banner.error").wait_for()
        assert other.locator("#landing").is_visible()
        assert [] == page.errors and [] == other.errors


def test_a_session_link_with_the_token(tmp_path: Path, browser: Any) -> None:
    """With a token: "#token=T" still works, and "#/s/<id>&token=T" (a link for another
    device) lands in the session; the token leaves the address, the session stays in it."""
    work = tmp_path / "work"
    work.mkdir()
    cli = fake_cli_command(script(text_turn("guarded reply")), tmp_path / "fake")
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("supervised"))
    app = create_app(settings=ServerSettings(session_defaults=defaults, token="s3cret"))
    with running(app) as url:
        page = browser.new_context().new_page()
        page.goto(url + "/#token=s3cret")
        page.wait_for_selector(".conn.ok")
        assert "s3cret" not in page.url
        page.fill("#start-prompt", "hello")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('guarded reply')")
        sid = page.evaluate("window.ccbState.current")
        other = browser.new_context().new_page()
        other.goto(f"{url}/#/s/{sid}&token=s3cret")
        other.wait_for_selector(".msg.assistant:has-text('guarded reply')")
        assert other.url.endswith(f"/#/s/{sid}")
