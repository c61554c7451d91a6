"""The web UI on a cluster gateway when a session's worker stops: the session is lost, then
resumed on another worker under the same id. While it is failed the banner alone says so;
once it runs again the banner is gone and the chat keeps the line where it was cut off,
shown once (a `serve --nats` gateway, two `worker` processes on a real nats-server, the
page in headless Chromium)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.cluster import LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import axe_violations, open_webui, page_until
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import wait_until

from ._support import fast_config, processes, start_gateway, start_worker

pytestmark = [pytest.mark.nats, pytest.mark.browser, pytest.mark.server, pytest.mark.slow]

pytest.importorskip("playwright.sync_api")

#: The shown session runs again, on the second worker.
RUNS_ON_WB = """(() => {
  const s = window.ccbState.sessions.get(window.ccbState.current);
  return s.owner === "wb" && s.status !== "lost" && s.state === "idle";
})()"""

#: Records, at every change of the page, what the banner says and whether the chat's error
#: line shows (window.__seen: [banner text, line shown] pairs, each new pair once).
RECORD = """(() => {
  window.__seen = [];
  const look = () => {
    const b = document.getElementById("banner");
    const line = document.querySelector("#chat .note.error");
    const pair = [b.hidden ? "" : b.firstChild ? b.firstChild.textContent : "",
      line ? line.checkVisibility() : null];
    const last = window.__seen[window.__seen.length - 1];
    if (!last || last[0] !== pair[0] || last[1] !== pair[1]) window.__seen.push(pair);
  };
  new MutationObserver(look).observe(document.getElementById("main"),
    { subtree: true, childList: true, attributes: true, characterData: true });
})()"""


def test_a_lost_session_resumed_elsewhere_shows_its_cut_once(
    nats_server: LocalNatsServer, tmp_path: Path, browser: Any
) -> None:
    config = fast_config()
    cli = fake_cli_command(script(text_turn("one"), text_turn("two")), tmp_path / "fake")
    with processes(tmp_path) as procs:
        start_worker(procs, nats_server, config, "wa", cli, tmp_path, "--label", "pin=a")
        start_worker(procs, nats_server, config, "wb", cli, tmp_path)
        url = start_gateway(procs, nats_server, config)

        def created() -> str | None:
            with httpx.Client(base_url=url, timeout=PROCESSES_GUARD) as http:
                response = http.post("/api/sessions", json={"labels": {"pin": "a"}})
            return str(response.json()["id"]) if response.status_code == 201 else None

        session_id = wait_until(created, PROCESSES_GUARD, poll=0.2, what="worker wa known")
        page = open_webui(browser, f"{url}/#/s/{session_id}")
        page.fill("#prompt", "first")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('one')")
        badge = page.locator(f"#sessions li[data-session='{session_id}'] .badge")
        badge.filter(has_text="idle").wait_for()

        page.evaluate(RECORD)
        stopped = procs.procs["wa"].pid
        os.kill(stopped, signal.SIGSTOP)  # no heartbeats: declared lost, resumed on wb
        try:
            note = page.locator("#chat .note.error")
            note.wait_for(state="attached")
            page_until(page, RUNS_ON_WB)
        finally:
            os.kill(stopped, signal.SIGCONT)
        # While it was lost, the banner said so and the line was hidden; never both shown.
        seen = page.evaluate("window.__seen")
        lost = "The server running this session stopped answering"
        assert any(text.startswith(lost) and shown is False for text, shown in seen), seen
        assert not any(text and shown for text, shown in seen), seen
        # running again: no banner, and the line of the cut is back in the chat, once
        assert page.locator("#banner").is_hidden()
        assert note.is_visible()
        assert note.inner_text().startswith("The Claude Code CLI stopped.")
        assert 1 == page.evaluate("document.getElementById('main').innerText").count(
            "The Claude Code CLI stopped"
        )
        page.fill("#prompt", "second")
        page.press("#prompt", "Enter")
        page.locator(".msg.assistant").nth(1).wait_for()
        assert [] == axe_violations(page)
        assert [] == page.errors, procs.log("gateway")
