"""The web UI's session list: rows people can tell apart (title, time, directory, origin,
cost), rename and archive, one search over the sessions and the stored history, history
with resume and fork near the top."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import page_until
from tests.support.servers import running

from ._webui import Remote, open_page, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
RECORDED_CWD = "/tmp/pytest-of-root/pytest-3/test_history_files_are_written0/cli/work"


def test_sessions_people_can_tell_apart(tmp_path: Path, browser: Any) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "claude-config"
    project = config / "projects" / "-work-demo"
    project.mkdir(parents=True)
    source = next((STORED / "-work-demo").glob("*.jsonl"))
    (project / source.name).write_text(source.read_text().replace(RECORDED_CWD, str(work)))
    cli = fake_cli_command(script(text_turn("a reply")), tmp_path / "fake")
    defaults = SessionConfig(
        cli_path=cli, cwd=work, env={"CLAUDE_CONFIG_DIR": str(config)}, policy=PermissionPolicy()
    )
    with running(create_app(settings=ServerSettings(session_defaults=defaults))) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "fix the flaky test\nin the parser")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('a reply')")
        mine = page.evaluate("window.ccbState.current")
        remote = Remote(url)
        other = remote.request({"type": "create_session"})["session_id"]
        remote.request({"type": "prompt", "session_id": other, "text": "write the docs"})

        row = page.locator(f"#sessions li[data-session='{mine}']")
        page_until(
            page,
            f"document.querySelector(\"#sessions li[data-session='{mine}'] .meta\")"
            ".textContent.includes('$')",
        )
        meta = row.locator(".meta").inner_text()
        assert "fix the flaky test" == row.locator(".name").inner_text()
        for part in ("just now", "work", "web UI", "$0.01"):
            assert part in meta, meta
        theirs = page.locator(f"#sessions li[data-session='{other}']")
        theirs.filter(has_text="write the docs").wait_for()
        assert "WebSocket client" in theirs.locator(".meta").inner_text()
        # the list is list markup: rows are buttons inside list items
        assert 0 == page.locator("#sessions [role=button]").count()

        # the stored history is listed under the sessions, and found by the same search
        page.locator("#history li", has_text="say hello").wait_for()
        page.fill("#search", "docs")
        page_until(page, "document.querySelectorAll('#sessions li[data-session]').length === 1")
        assert 1 == theirs.count() and 0 == row.count()
        assert 0 == page.locator("#history li", has_text="say hello").count()
        page.fill("#search", "say hel")
        page.locator("#history li", has_text="say hello").wait_for()
        assert 0 == page.locator("#sessions li[data-session]").count()
        page.fill("#search", "")

        # rename in place, then archive: the row leaves the list, "archived" shows it
        page.click("#rename")
        page.fill("input.rename", "Parser flake")
        page.press("input.rename", "Enter")
        row.locator(".name", has_text="Parser flake").wait_for()
        assert "Parser flake" == page.inner_text("#session-title")
        renamed = remote.request({"type": "list_sessions"})["sessions"]
        assert "Parser flake" == next(s for s in renamed if s["id"] == mine)["title"]
        shot(page, "sessions")
        page.click("#archive")
        row.wait_for(state="detached")
        page.check("#show-archived")
        row.wait_for()
        assert "archived" in row.locator(".meta").inner_text()

        # a closed session can be deleted: it leaves the list, here and in other pages
        row.locator("button.row").click()
        page.click("#close-session")
        page.locator("#session-state.badge.closed").wait_for()
        page.click("#delete")
        page.locator("#landing").wait_for()
        page_until(page, f"!window.ccbState.sessions.has('{mine}')")
        assert 0 == row.count()
        page.uncheck("#show-archived")
        assert mine not in [s["id"] for s in remote.request({"type": "list_sessions"})["sessions"]]

        # fork from the history: a new session showing the stored conversation
        page.locator("#history li", has_text="say hello").locator("button", has_text="Fork").click()
        page.wait_for_selector(".msg.assistant:has-text('All done.')")
        forked = page.evaluate("window.ccbState.current")
        assert forked not in (mine, other)
        assert page.url.endswith(f"#/s/{forked}")
        assert [] == page.errors
        remote.conn.close()
