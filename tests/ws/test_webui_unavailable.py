"""The web UI when the server loses its backend for a while (as a gateway that lost NATS
does: its subscriptions end with an ``unavailable`` error and new ones fail until NATS is
back): the page says so, subscribes again with ``since_seq`` backing off, and once the
backend is back shows the rest of the turn with nothing lost and nothing twice. (The real
outage is in tests/cluster/test_cluster_outage.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapter import LocalBackend, PermissionPolicy, SessionConfig
from adapter.server import BUILTIN_PROVIDERS, ServerContext, ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import page_until, start_session
from tests.support.servers import running

from ._flaky import Flaky
from ._webui import ARTIFACTS, Remote, open_page

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")


def test_the_page_resubscribes_after_unavailable_with_no_gap(tmp_path: Path, browser: Any) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cli = fake_cli_command(script(text_turn("first reply"), text_turn("second reply")), tmp_path)
    defaults = SessionConfig(cli_path=str(cli), cwd=work, policy=PermissionPolicy("supervised"))
    inner = LocalBackend(defaults)
    backend = Flaky(inner)

    def run_inner(ctx: ServerContext) -> list[Any]:
        # Before the front ends' hooks: they watch the backend from the start.
        ctx.lifespan_hooks.append(lambda: inner)
        return []

    app = create_app(
        backend,  # type: ignore[arg-type]
        ServerSettings(session_defaults=defaults),
        providers=[run_inner, *BUILTIN_PROVIDERS],
    )
    with running(app) as url:
        page = open_page(browser, url)
        current = start_session(page)
        page.fill("#prompt", "hello")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('first reply')")

        backend.down = True
        remote = Remote(url)
        assert (
            "ack"
            == remote.request({"type": "prompt", "session_id": current, "text": "more"})["type"]
        )
        # The page's subscription ended with "unavailable": it says so and keeps trying.
        page.wait_for_selector("#banner.error:has-text('unavailable')")
        page_until(page, f"(window.ccbState.unavailable.get('{current}') || {{}}).tries >= 2")
        page.screenshot(path=str(ARTIFACTS / "unavailable.png"))
        assert 0 == page.locator(".msg.assistant:has-text('second reply')").count()

        backend.down = False
        page.wait_for_selector(".msg.assistant:has-text('second reply')")
        page_until(page, "window.ccbState.unavailable.size === 0")
        assert page.locator("#banner").is_hidden()
        assert ["hello", "more"] == page.locator(".msg.user").all_inner_texts()
        texts = page.locator(".msg.assistant").all_inner_texts()
        assert ["first reply", "second reply"] == texts
        assert [] == page.errors
        remote.conn.close()
