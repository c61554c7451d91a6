"""The web UI's terminal view in headless Chromium (Debian's, driven by Python Playwright):
open a shell, type into xterm.js, see the output, resize the window, see unavailable agents
greyed with their install hint. A real server on 127.0.0.1; screenshots go to
tests/artifacts/terminals/ (gitignored)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.server import BUILTIN_PROVIDERS, ServerSettings, create_app
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import AGENTS, Agent, TerminalManager
from tests.support.browser import open_webui
from tests.support.servers import running
from tests.support.timeouts import NODE_GUARD_MS

from ._helpers import shell_env

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.pty]

pytest.importorskip("playwright.sync_api")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "terminals"
TOKEN = "browser-token-0123456789"

#: The text of xterm.js's buffer (what the terminal shows), read in the page.
BUFFER_TEXT = """() => {
  const term = window.ccbTerminals.term;
  if (!term) return "";
  const buffer = term.buffer.active, lines = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
  return lines.join("\\n");
}"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    missing = Agent(name="missing", command="no-such-cli", install_hint="npm i -g no-such-cli")
    routes = make_terminal_routes(
        lambda: TerminalManager(env=shell_env(tmp_path), agents={**AGENTS, "missing": missing}),
        default_cwd=str(tmp_path),
    )
    builtin = [p for p in BUILTIN_PROVIDERS if not p.startswith("adapter.server.terminal_routes")]
    providers: list[Any] = builtin
    app = create_app(settings=ServerSettings(token=TOKEN), providers=[*providers, routes])
    with running(app) as url:
        yield url


def wait_buffer(page: Any, pattern: str) -> str:
    page.wait_for_function(
        f"() => new RegExp({pattern!r}, 'm').test(({BUFFER_TEXT})())", timeout=NODE_GUARD_MS
    )
    return str(page.evaluate(BUFFER_TEXT))


def test_terminal_view_types_shows_output_and_follows_the_window(browser: Any, server: str) -> None:
    page = open_webui(browser, f"{server}/#token={TOKEN}", viewport={"width": 1200, "height": 800})

    # Agents: the shell can start; a missing one is greyed with what to install.
    page.wait_for_selector("#term-agent option[value=shell]", state="attached")
    assert page.get_attribute("#term-agent option[value=missing]", "disabled") is not None
    hint = page.locator("#term-missing li[data-agent=missing]")
    assert "npm i -g no-such-cli" in hint.inner_text()
    # greyed in the muted text colour (not by opacity, whose contrast was too low to read)
    assert hint.evaluate("n => getComputedStyle(n).color !== getComputedStyle(document.body).color")

    page.select_option("#term-agent", "shell")
    page.click("#new-terminal button[type=submit]")
    page.wait_for_selector("#terminal:not([hidden])")
    wait_buffer(page, r"[$#] *$")
    page.click("#term-screen")
    page.keyboard.type('echo hel""lo-$((6*7))')
    page.keyboard.press("Enter")
    text = wait_buffer(page, r"^hello-42$")
    assert 'echo hel""lo-$((6*7))' in text
    # The terminal is in the session list too (the /ws session_list / session_changed).
    listed = page.locator("#sessions li[data-kind=terminal]")
    listed.wait_for()
    assert "shell" in listed.inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "terminal.png"))

    # The server's terminal follows the page's size, and so does the program.
    headers = {"Authorization": f"Bearer {TOKEN}"}
    (terminal,) = httpx.get(f"{server}/api/terminals", headers=headers).json()["terminals"]
    cols = page.evaluate("window.ccbTerminals.term.cols")
    page.wait_for_function(
        "c => window.ccbTerminals.status && window.ccbTerminals.term.cols === c", arg=cols
    )
    page.set_viewport_size({"width": 760, "height": 520})
    page.wait_for_function("c => window.ccbTerminals.term.cols < c", arg=cols)
    narrow = page.evaluate("[window.ccbTerminals.term.cols, window.ccbTerminals.term.rows]")
    page.keyboard.type('echo "size=$(tput cols)x$(tput lines)"')
    page.keyboard.press("Enter")
    wait_buffer(page, rf"^size={narrow[0]}x{narrow[1]}$")
    info = httpx.get(f"{server}/api/terminals/{terminal['id']}", headers=headers).json()
    assert [info["cols"], info["rows"]] == narrow
    page.screenshot(path=str(ARTIFACTS / "terminal-narrow.png"))

    # Stop: the view says how it ended.
    page.click("#terminal-stop")
    page.wait_for_selector("#terminal-state.closed")
    assert re.search(r"exited", page.inner_text("#terminal-state"))
    assert [] == page.errors
    page.context.close()
