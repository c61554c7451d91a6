"""The web UI in headless Chromium, logged in as each user (``#token=``): each page lists only
that user's sessions, live changes included, and hides the terminal form from a user who may
not open terminals."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import BUILTIN_PROVIDERS, ServerSettings, create_app
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import TerminalManager
from claudecode.testing import fake_cli_command, script
from tests.support.browser import page_until
from tests.support.servers import running

from ._users import Team, open_as

pytestmark = [pytest.mark.browser, pytest.mark.server]
pytest.importorskip("playwright.sync_api")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Team]]:
    team = Team.write(tmp_path / "users.toml")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/sh"}
    terminals = make_terminal_routes(lambda: TerminalManager(env=env), default_cwd=str(work))
    builtin = [p for p in BUILTIN_PROVIDERS if not p.startswith("adapter.server.terminal_routes")]
    settings = ServerSettings(
        users_file=team.users_file,
        session_defaults=SessionConfig(
            cli_path=fake_cli_command(script(), tmp_path / "fake"),
            cwd=work,
            policy=PermissionPolicy("supervised"),
        ),
    )
    with running(create_app(settings=settings, providers=[*builtin, terminals])) as url:
        yield url, team


LISTED = "[...document.querySelectorAll('#sessions li')].map((li) => li.dataset.session)"


def test_each_user_sees_only_their_sessions(browser: Any, served: tuple[str, Team]) -> None:
    url, team = served
    with team.http(url, "alice") as alice, team.http(url, "bob") as bob:
        mine = alice.post("/api/sessions", json={}).json()["id"]
        theirs = bob.post("/api/sessions", json={}).json()["id"]
        alice_page = open_as(browser, url, team.tokens["alice"])
        bob_page = open_as(browser, url, team.tokens["bob"])
        page_until(alice_page, f"{LISTED}.includes({mine!r})")
        page_until(bob_page, f"{LISTED}.includes({theirs!r})")
        assert [mine] == alice_page.evaluate(LISTED)
        assert [theirs] == bob_page.evaluate(LISTED)
        # Live: bob's next session never reaches alice's page; her own does.
        later = bob.post("/api/sessions", json={}).json()["id"]
        own_later = alice.post("/api/sessions", json={}).json()["id"]
        page_until(alice_page, f"{LISTED}.includes({own_later!r})")
        page_until(bob_page, f"{LISTED}.includes({later!r})")
        assert {mine, own_later} == set(alice_page.evaluate(LISTED))
        assert {theirs, later} == set(bob_page.evaluate(LISTED))
        # The terminal form: hidden for alice (no terminals), shown for bob.
        page_until(
            alice_page,
            "document.getElementById('new-terminal').hidden === true",
        )
        page_until(
            bob_page,
            "document.getElementById('term-agent').options.length > 0",
        )
        assert bob_page.is_visible("#new-terminal")
        assert not alice_page.is_visible("#new-terminal")
        root_page = open_as(browser, url, team.tokens["root"])
        page_until(root_page, f"{LISTED}.length === 4")
        assert [] == alice_page.errors + bob_page.errors + root_page.errors
