"""The AG-UI threads kept in memory are capped: past ``agui_max_threads`` the least recently
used idle thread goes (its session closed) and comes back from the state directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.server.agui import APPROVAL_TOOL
from claudecode.testing import script, text_turn, tool_turn
from tests.support.servers import running
from tests.support.waits import wait_until

from ._agui import app_for, client, text_of, valid
from ._sse import post_stream, run_input, user

pytestmark = pytest.mark.server


def session_of(events: list[dict[str, Any]]) -> str:
    (snapshot,) = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    session_id: str = snapshot["sessionId"]
    return session_id


def wait_closed(http: httpx.Client, session_id: str) -> None:
    """Until the session is closed (or gone); a generous hang guard only."""

    def closed() -> bool:
        answer = http.get(f"/api/sessions/{session_id}")
        return answer.status_code == 404 or answer.json()["state"] in ("closed", "errored")

    wait_until(closed, poll=0.05, what=f"session {session_id} closed")


def test_the_least_recently_used_idle_thread_is_evicted_and_comes_back(tmp_path: Path) -> None:
    """Cap 2: t1, t2, t1 again, then t3 evicts t2 (not t1, used more recently): t2's session
    is closed, t1's lives on. t2 then replays from the state directory and its next run
    resumes its CLI session in a new session."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), text_turn("two"), record_path=str(record))
    app = app_for(tmp_path, body, agui_max_threads=2)
    with running(app) as url, client(url) as http:
        sessions: dict[str, str] = {}
        messages: dict[str, list[dict[str, Any]]] = {"t1": [], "t2": [], "t3": []}
        for thread in ("t1", "t2", "t1", "t3"):
            messages[thread].append(user(f"hello from {thread}"))
            run_body = run_input(thread, list(messages[thread]))
            _, events = post_stream(http, "/agui", run_body)
            valid(events, run_body)
            assert sessions.setdefault(thread, session_of(events)) == session_of(events)
        t2_cli = http.get(f"/api/sessions/{sessions['t2']}").json()["cli_session_id"]
        assert t2_cli
        wait_closed(http, sessions["t2"])
        assert "idle" == http.get(f"/api/sessions/{sessions['t1']}").json()["state"]
        assert "idle" == http.get(f"/api/sessions/{sessions['t3']}").json()["state"]

        _, replay = post_stream(http, "/agui/connect", run_input("t2", []))
        (snapshot,) = [e for e in replay if e["type"] == "MESSAGES_SNAPSHOT"]
        assert ["hello from t2", "one"] == [m["content"] for m in snapshot["messages"]]
        messages["t2"].append(user("back again"))
        run_body = run_input("t2", list(messages["t2"]))
        _, events = post_stream(http, "/agui", run_body)
        valid(events, run_body)
        assert session_of(events) != sessions["t2"]
        assert "one" == text_of(events)  # a new CLI process: its script starts over
    argvs = [
        json.loads(line)["argv"] for line in record.read_text().splitlines() if '"argv"' in line
    ]
    resumed = [[a for a in argv if a.startswith("--resume")] for argv in argvs]
    # t1, t2, t3 started fresh; t2's comeback resumed the CLI session t2 had.
    assert [[], [], [], ["--resume=" + t2_cli]] == resumed


def test_threads_waiting_for_an_approval_are_not_evicted(tmp_path: Path) -> None:
    """Cap 1, three threads whose runs end waiting for a Bash approval: none may go (the
    answer comes in the next run, and the CLI turn waits for it), and each answer lets its
    own turn go on in the same session."""
    body = script(tool_turn("Bash", {"command": "true"}, permission=True))
    app = app_for(tmp_path, body, agui_max_threads=1)
    with running(app) as url, client(url) as http:
        firsts: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        for thread in ("a1", "a2", "a3"):
            first_user = user(f"run it in {thread}")
            run_body = run_input(thread, [first_user])
            _, events = post_stream(http, "/agui", run_body)
            valid(events, run_body)
            assert "awaiting" in events[-1]["result"]
            firsts[thread] = (first_user, events)
        for thread, (first_user, first) in firsts.items():
            (call,) = [
                e
                for e in first
                if e["type"] == "TOOL_CALL_START" and e["toolCallName"] == APPROVAL_TOOL
            ]
            args = "".join(
                e["delta"]
                for e in first
                if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == call["toolCallId"]
            )
            assistant = {
                "id": call.get("parentMessageId") or call["toolCallId"],
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": call["toolCallId"],
                        "type": "function",
                        "function": {"name": APPROVAL_TOOL, "arguments": args},
                    }
                ],
            }
            answer = {
                "id": f"answer-{thread}",
                "role": "tool",
                "toolCallId": call["toolCallId"],
                "content": "allow",
            }
            run_body = run_input(thread, [first_user, assistant, answer])
            _, second = post_stream(http, "/agui", run_body)
            valid(second, run_body, before=first)
            assert session_of(second) == session_of(first)
            assert 1 == sum(e["type"] == "TOOL_CALL_RESULT" for e in second)
            assert "Done." in text_of(second)
