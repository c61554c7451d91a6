"""DNS rebinding in a real Chromium: the web UI keeps working at http://localhost:PORT and
http://127.0.0.1:PORT, and a name resolved to 127.0.0.1 (what a rebinding attacker's name
does) gets nothing but the 421."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.servers import running
from tests.support.timeouts import NODE_GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]

CHROMIUM = "/usr/bin/chromium"
REBIND = "rebind.attacker.example"


@pytest.fixture(scope="module")
def rebinding_browser() -> Iterator[Any]:
    """Chromium resolving ``REBIND`` to 127.0.0.1, as after a rebinding."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not os.access(CHROMIUM, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is required here")
        pytest.skip(f"no {CHROMIUM}")
    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--host-resolver-rules=MAP {REBIND} 127.0.0.1",
    ]
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            yield browser
        finally:
            browser.close()


def test_local_names_work_and_a_rebound_name_does_not(
    tmp_path: Path, rebinding_browser: Any
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hello")), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )
    app = create_app(settings=ServerSettings(session_defaults=defaults))
    with running(app) as url:
        port = urlsplit(url).port
        for name in ("localhost", "127.0.0.1"):
            page = rebinding_browser.new_context().new_page()
            page.set_default_timeout(NODE_GUARD_MS)
            answer = page.goto(f"http://{name}:{port}/")
            assert answer is not None and 200 == answer.status, name
            page.wait_for_selector(".conn.ok")  # the page's /ws connected
            # The page's own fetches (same origin, Origin header included) are served.
            status = page.evaluate(
                "fetch('/api/sessions', {method: 'POST', headers: {'Content-Type': "
                "'application/json'}, body: '{}'}).then(r => r.status)"
            )
            assert 201 == status, name
            page.context.close()
        page = rebinding_browser.new_context().new_page()
        answer = page.goto(f"http://{REBIND}:{port}/")
        assert answer is not None and 421 == answer.status
        assert '{"error":"host not allowed"}' == page.inner_text("body")
        page.context.close()


def test_the_ui_says_what_a_terminal_is_and_hides_them_when_off(
    tmp_path: Path, rebinding_browser: Any
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hello")), tmp_path / "fake"), cwd=work
    )
    for terminals in (True, False):
        app = create_app(settings=ServerSettings(session_defaults=defaults, terminals=terminals))
        with running(app) as url:
            page = rebinding_browser.new_context().new_page()
            page.set_default_timeout(NODE_GUARD_MS)
            page.goto(url + "/")
            page.wait_for_selector(".conn.ok")
            form = page.locator("#new-terminal")
            if terminals:
                assert "shell as the user running this server" in page.inner_text("#term-warning")
                assert form.is_visible()
            else:
                form.wait_for(state="hidden")
            page.context.close()
