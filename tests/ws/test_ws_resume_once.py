"""One stored CLI session is resumed by one session at a time: two CLIs resuming one
conversation would both append to its transcript. Real WebSocket clients against a real
server on 127.0.0.1, sessions on the fake CLI."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import script, text_turn

from ._client import Client, connect, serve

pytestmark = pytest.mark.server

STORED = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


def _resume(c: Client, *, fork: bool = False) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "create_session", "resume": STORED}
    if fork:
        frame["fork"] = True
    return c.request(frame)


def test_two_resumes_of_one_stored_session_at_once_one_wins(tmp_path: Path) -> None:
    with serve(tmp_path, script(text_turn("Hi!"))) as url:
        clients = [connect(url), connect(url)]
        try:
            answers: list[dict[str, Any]] = [{}, {}]
            start = threading.Barrier(2)

            def resume(i: int) -> None:
                start.wait(timeout=60)
                answers[i] = _resume(clients[i])

            threads = [threading.Thread(target=resume, args=(i,)) for i in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            assert not any(thread.is_alive() for thread in threads)

            assert ["ack", "error"] == sorted(a["type"] for a in answers)
            [won] = [a for a in answers if a["type"] == "ack"]
            [refused] = [a for a in answers if a["type"] == "error"]
            assert "session_in_use" == refused["code"]
            assert STORED in refused["message"]
            assert "open already" in refused["message"]
            assert STORED == won["session"]["cli_session_id"]
            loser = clients[answers.index(refused)]
            winner = clients[answers.index(won)]

            # Held: another resume is refused too, a fork is not (a new CLI session).
            again = _resume(loser)
            assert ("error", "session_in_use") == (again["type"], again.get("code"))
            forked = _resume(loser, fork=True)
            assert "ack" == forked["type"], forked

            # Once the session that holds it is closed, it resumes.
            closed = winner.request({"type": "close_session", "session_id": won["session_id"]})
            assert "ack" == closed["type"], closed
            again = _resume(loser)
            assert "ack" == again["type"], again
            assert STORED == again["session"]["cli_session_id"]
            assert won["session_id"] != again["session_id"]
        finally:
            for c in clients:
                c.close()
