"""An AG-UI thread whose run ended waiting for its page's answer, as the web UI's session
list shows it: "waiting for you" while the request is open, and no longer once nobody can
answer it — the page moved on with a new message, or never came back."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter import PermissionPolicy
from adapter.server import ServerSettings, create_app
from claudecode.testing import script, text_turn, tool_turn
from tests.support.browser import axe_violations
from tests.support.configs import fake_session_config
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

from ._webui import open_page, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

BODY = script(tool_turn("Bash", {"command": "true"}, permission=True), text_turn("Moving on."))


def user(text: str) -> dict[str, Any]:
    return {"id": uuid.uuid4().hex, "role": "user", "content": text}


def agui_run(url: str, thread_id: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    body = {
        "threadId": thread_id,
        "runId": uuid.uuid4().hex,
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": {},
    }
    with httpx.Client(base_url=url, timeout=HANG_GUARD) as http:
        response = http.post("/agui", json=body, headers={"Accept": "text/event-stream"})
    assert 200 == response.status_code
    frames = response.text.split("\n\n")
    return [json.loads(f[len("data: ") :]) for f in frames if f.startswith("data: ")]


def waiting_row(page: Any, url: str, thread_id: str, first: dict[str, Any]) -> tuple[str, str]:
    """Run until the approval; the row of its session says "waiting for you"."""
    events = agui_run(url, thread_id, [first])
    assert "awaiting" in events[-1]["result"]  # the run ended waiting for its page
    session_id = events[1]["snapshot"]["sessionId"]
    row = f"#sessions li[data-session='{session_id}']"
    page.locator(row, has_text="waiting for you").wait_for()
    assert "AG-UI" in page.locator(row + " .meta").inner_text()
    assert page.title().startswith("(1) Decision waiting")
    return session_id, row


def test_a_new_message_past_an_open_approval_withdraws_it(tmp_path: Path, browser: Any) -> None:
    defaults = fake_session_config(tmp_path, BODY, policy=PermissionPolicy("supervised"))
    settings = ServerSettings(session_defaults=defaults, state_dir=tmp_path / "state")
    with running(create_app(settings=settings)) as url:
        page = open_page(browser, url)
        first = user("run it")
        _, row = waiting_row(page, url, "moved-on", first)
        # the page moves on: its approval is withdrawn (denied, that turn interrupted) and
        # the new message is answered at once, not queued behind it until a timeout
        events = agui_run(url, "moved-on", [first, user("never mind, just talk")])
        assert "RUN_FINISHED" == events[-1]["type"] and "result" not in events[-1]
        assert "Moving on." == "".join(
            e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"
        )
        page.locator(row + " .badge.idle").wait_for()
        assert not page.title().startswith("(")
        page.click(row + " button.row")
        page.locator(".card.tool", has_text="Denied by you").wait_for()
        page.locator(".msg.assistant", has_text="Moving on.").wait_for()
        assert 0 == page.locator(".card.permission:not(.closed)").count()
        shot(page, "agui-moved-on")
        assert [] == axe_violations(page)
        assert [] == page.errors


def test_an_approval_nobody_answers_ends_waiting(tmp_path: Path, browser: Any) -> None:
    defaults = fake_session_config(
        tmp_path, BODY, policy=PermissionPolicy("supervised"), permission_timeout=2
    )
    settings = ServerSettings(session_defaults=defaults, state_dir=tmp_path / "state")
    with running(create_app(settings=settings)) as url:
        page = open_page(browser, url)
        _, row = waiting_row(page, url, "left-alone", user("run it"))
        # the page never comes back: the permission timeout withdraws the request
        page.locator(row + " .badge.idle").wait_for()
        assert not page.title().startswith("(")
        page.click(row + " button.row")
        page.locator(
            ".card.tool", has_text="no answer to the permission request in time"
        ).wait_for()
        assert [] == page.errors
