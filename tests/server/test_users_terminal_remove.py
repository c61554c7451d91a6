"""Removing an ended terminal from the list, in headless Chromium and over the APIs: only
its owner (or an admin) may, a running one is refused in words (stop it first), and every
page following the list sees it go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.server import BUILTIN_PROVIDERS, ServerSettings, create_app
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import TerminalManager
from tests.support.browser import axe_violations, page_until
from tests.support.servers import running

from ._users import Team, open_as

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.pty]
pytest.importorskip("playwright.sync_api")

LISTED = "[...document.querySelectorAll('#sessions li')].map((li) => li.dataset.session)"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Team]]:
    team = Team.write(tmp_path / "users.toml")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/sh"}
    terminals = make_terminal_routes(lambda: TerminalManager(env=env), default_cwd=str(work))
    builtin = [p for p in BUILTIN_PROVIDERS if not p.startswith("adapter.server.terminal_routes")]
    settings = ServerSettings(users_file=team.users_file)
    with running(create_app(settings=settings, providers=[*builtin, terminals])) as url:
        yield url, team


def test_an_ended_terminal_is_removed_by_its_owner_only(
    browser: Any, served: tuple[str, Team]
) -> None:
    url, team = served
    bob_page = open_as(browser, url, team.tokens["bob"])
    root_page = open_as(browser, url, team.tokens["root"])
    page_until(bob_page, "document.getElementById('term-agent').options.length > 0")
    bob_page.select_option("#term-agent", "shell")
    bob_page.click("#new-terminal button[type=submit]")
    page_until(bob_page, "window.ccbTerminals.current !== null")
    term = bob_page.evaluate("window.ccbTerminals.current")
    # the admin sees every terminal
    page_until(root_page, f"{LISTED}.includes({term!r})")
    assert bob_page.locator("#terminal-remove").is_hidden()  # running: Stop, not Remove

    with team.http(url, "bob") as bob, team.http(url, "alice") as alice:
        # running: refused in words, over REST and over the WebSocket protocol
        refused = bob.post(f"/api/terminals/{term}/remove")
        assert 409 == refused.status_code and "stop it first" in refused.json()["error"]
        ws = team.ws(url, "bob")
        reply = ws.request({"type": "delete_session", "session_id": term})
        assert ("error", "bad_request") == (reply["type"], reply["code"])
        assert "stop it first" in reply["message"]
        # someone else's: as an unknown id
        assert 404 == alice.post(f"/api/terminals/{term}/remove").status_code

        bob_page.click("#terminal-stop")
        bob_page.locator("#terminal-remove").wait_for()
        page_until(
            bob_page,
            f"document.querySelector(\"#sessions li[data-session='{term}'] .badge.closed\")",
        )
        assert 404 == alice.post(f"/api/terminals/{term}/remove").status_code
        assert [] == axe_violations(bob_page)
        bob_page.click("#terminal-remove")
        bob_page.locator("#landing").wait_for()
        page_until(bob_page, f"!{LISTED}.includes({term!r})")
        # followers see it go
        page_until(root_page, f"!{LISTED}.includes({term!r})")
        assert term not in [t["id"] for t in bob.get("/api/terminals").json()["terminals"]]
        gone = bob.post(f"/api/terminals/{term}/remove")
        assert 404 == gone.status_code
        # the WebSocket way, for a second one stopped over REST
        second = bob.post("/api/terminals", json={"agent": "shell"}).json()["id"]
        bob.delete(f"/api/terminals/{second}")
        ack = ws.request({"type": "delete_session", "session_id": second})
        assert "ack" == ack["type"]
        page_until(bob_page, f"!{LISTED}.includes({second!r})")
        ws.close()
    assert [] == bob_page.errors + root_page.errors
