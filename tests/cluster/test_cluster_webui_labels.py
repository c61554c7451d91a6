"""The web UI on a cluster gateway, as a person uses it: a session's row shows its title and
its cost as in one process, and rename, archive, close and delete work (a `serve --nats`
gateway and a `worker` process on a real nats-server, the page in headless Chromium)."""

from __future__ import annotations

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


def test_rename_archive_delete_and_cost_on_a_gateway(
    nats_server: LocalNatsServer, tmp_path: Path, browser: Any
) -> None:
    config = fast_config()
    cli = fake_cli_command(script(text_turn("Looked at it.")), tmp_path / "fake")
    with processes(tmp_path) as procs:
        start_worker(procs, nats_server, config, "w1", cli, tmp_path)
        url = start_gateway(procs, nats_server, config)

        def created() -> str | None:
            with httpx.Client(base_url=url, timeout=PROCESSES_GUARD) as http:
                response = http.post("/api/sessions", json={})
            return str(response.json()["id"]) if response.status_code == 201 else None

        # the gateway takes sessions once it knows the worker
        session_id = wait_until(created, PROCESSES_GUARD, poll=0.2, what="a worker known")
        page = open_webui(
            browser, f"{url}/#/s/{session_id}", viewport={"width": 1280, "height": 800}
        )
        page.fill("#prompt", "fix the flaky parser test\nand say why")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Looked at it.')")

        row = f"#sessions li[data-session='{session_id}']"
        # named by its first prompt, and what its turn cost, as in one process
        page_until(page, f"document.querySelector(\"{row} .meta\").textContent.includes('$0.01')")
        assert "fix the flaky parser test" == page.locator(row + " .name").inner_text()

        page.click("#rename")
        page.fill("input.rename", "The parser fix")
        page.press("input.rename", "Enter")
        page.locator(row + " .name", has_text="The parser fix").wait_for()
        page.click("#archive")
        page.locator(row).wait_for(state="detached")  # archived rows are hidden
        page.check("#show-archived")
        page.locator(row, has_text="archived").wait_for()
        page.uncheck("#show-archived")

        page.click("#close-session")
        page.locator("#delete:not([hidden])").wait_for()
        page.click("#archive")  # unarchive a closed one: the gateway writes its record
        page.locator(row + " .badge.closed").wait_for()
        assert "$0.01" in page.locator(row + " .meta").inner_text()
        assert [] == axe_violations(page)
        page.click("#delete")
        page.locator("#landing").wait_for()
        page_until(page, f'!document.querySelector("{row}")')
        with httpx.Client(base_url=url, timeout=PROCESSES_GUARD) as http:
            assert session_id not in [s["id"] for s in http.get("/api/sessions").json()]
            assert 404 == http.get(f"/api/sessions/{session_id}").status_code
        assert [] == page.errors, procs.log("gateway")
