"""Stop on an AG-UI thread with no run of its own going, pressed in @copilotkit/core (its
stopAgent, over the runtime's REST and single-endpoint forms): a turn another client started
on the thread's session is interrupted; with nothing running the answer is CopilotKit's own,
the same every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import websockets.sync.client as ws_client

from claudecode.testing import script, text_turn, tool_turn, turn
from tests.support.agui_clients import drive
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

from ._agui import app_for, client

pytestmark = [pytest.mark.node, pytest.mark.server]

SLOW = "slow words " * 200  # ~25 s of streaming: ends early only when interrupted


def _until(ws: Any, want: str) -> list[dict[str, Any]]:
    """The session's events up to and including the first of type ``want``."""
    seen: list[dict[str, Any]] = []
    while not seen or seen[-1]["type"] != want:
        frame = json.loads(ws.recv(timeout=HANG_GUARD))
        if frame.get("type") == "event":
            seen.append(frame["event"])
    return seen


def _stop(url: str, tmp_path: Path, transport: str, thread: str) -> dict[str, Any]:
    step = {"op": "stop", "transport": transport, "path": "/copilotkit", "threadId": thread}
    result = drive(url, [step], tmp_path / f"stop-{transport}-{thread}")
    (stopped,) = result["steps"]
    assert [] == stopped["errors"] and [] == stopped["coreErrors"]
    (answer,) = stopped["stops"]
    assert 200 == answer["status"]
    body: dict[str, Any] = answer["body"]
    return body


def test_stop_interrupts_a_turn_another_client_started(tmp_path: Path) -> None:
    body = script(text_turn("hello from the thread"), turn([SLOW], delay=0.05, chunk=4))
    with running(app_for(tmp_path, body)) as url:
        first = {"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "t-shared"}
        ran = drive(url, [{**first, "text": "hi"}], tmp_path / "run")
        assert [] == ran["steps"][0]["errors"]
        with client(url) as http:
            (session,) = [s for s in http.get("/api/sessions").json() if s["origin"] == "ag-ui"]
        ws_url = url.replace("http://", "ws://") + "/ws"
        with ws_client.connect(ws_url, open_timeout=HANG_GUARD) as ws:
            sid = session["id"]
            after = session["last_seq"]  # only what comes after the thread's run
            ws.send(json.dumps({"type": "subscribe", "session_id": sid, "since_seq": after}))
            ws.send(json.dumps({"type": "prompt", "session_id": sid, "text": "go on"}))
            _until(ws, "message_chunk")  # the other client's turn streams

            stopped = _stop(url, tmp_path, "rest", "t-shared")
            assert stopped["stopped"] is True and "STOPPED" == stopped["interrupt"]["code"]
            assert "another client" in stopped["message"]
            events = _until(ws, "complete")
        complete = events[-1]
        assert complete["is_error"] and "interrupted" == complete["error"]["kind"]
        streamed = "".join(e["text"] for e in events if e["type"] == "message_chunk")
        assert len(streamed) < len(SLOW)

        # Nothing runs now: CopilotKit's answer, the same every time, on both forms.
        nothing = {"stopped": False, "message": "No active run for thread 't-shared'."}
        assert nothing == _stop(url, tmp_path, "single", "t-shared")
        assert nothing == _stop(url, tmp_path, "rest", "t-shared")
        unknown = {"stopped": False, "message": "No active run for thread 'never-ran'."}
        assert unknown == _stop(url, tmp_path, "rest", "never-ran")


def test_stop_leaves_a_turn_waiting_for_the_page(tmp_path: Path) -> None:
    """A run that ended with an approval call pending left its turn waiting for the page's
    answer: Stop does not end it (the page answers), and says so."""
    body = script(tool_turn("Bash", {"command": "echo hi"}))
    with running(app_for(tmp_path, body)) as url:
        step = {"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "t-ask"}
        ran = drive(url, [{**step, "text": "run it"}], tmp_path / "run")
        (run,) = ran["steps"]
        assert [] == run["errors"]
        assert "claudecode_approval" in [
            e["toolCallName"] for e in run["events"] if e["type"] == "TOOL_CALL_START"
        ]
        stopped = _stop(url, tmp_path, "rest", "t-ask")
        assert stopped["stopped"] is False
        assert stopped["message"].startswith("No active run for thread 't-ask'. Its turn waits")
        with client(url) as http:
            (session,) = http.get("/api/sessions").json()
        assert "waiting" == session["state"]
