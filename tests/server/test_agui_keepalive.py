"""An AG-UI stream that has nothing to say sends ``: keep-alive`` comments (one timer of the
service ticks every run)."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

import pytest

from claudecode.testing import script, text_turn
from tests.support.servers import running

from ._agui import app_for, client, valid
from ._sse import parse, run_input, user

pytestmark = pytest.mark.server


def test_idle_streams_get_keep_alive_comments(tmp_path: Path) -> None:
    """Two runs at once whose CLI pauses 0.6 s before each delta, keep-alive every 0.1 s:
    both streams carry comments between their events and stay valid runs."""
    body = script(text_turn("ab", delay=0.6, chunk=1))
    app = app_for(tmp_path, body, keepalive_seconds=0.1)
    with running(app) as url, client(url) as http:

        def run(thread: str) -> bytes:
            run_body = run_input(thread, [user("go")])
            with http.stream("POST", "/agui", json=run_body) as response:
                raw = response.read()
            valid(parse(raw), run_body)
            return raw

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            slow = list(pool.map(run, ["k1", "k2"]))
        for raw in slow:
            assert raw.count(b": keep-alive\n\n") >= 2
