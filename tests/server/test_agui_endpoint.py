"""POST /agui and the CopilotKit runtime over real HTTP, against the fake CLI subprocess."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.server.agui import APPROVAL_TOOL, verify_events
from claudecode.testing import script, text_turn, tool_turn, turn
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import wait_until

from ._agui import app_for, client, text_of, valid
from ._sse import parse, post_stream, run_input, user

pytestmark = pytest.mark.server


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """``serve(body, **settings) -> base URL``: the app over the fake CLI, until the test ends."""
    stack: list[Any] = []

    def start(body: Any, **settings_kw: Any) -> str:
        cm = running(app_for(tmp_path, body, **settings_kw))
        stack.append(cm)
        return cm.__enter__()

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def _start_slow_run(
    url: str, body: dict[str, Any]
) -> tuple[threading.Thread, list[bytes], threading.Event]:
    """A run read in a thread; ``streaming`` is set once text arrives."""
    raw: list[bytes] = []
    streaming = threading.Event()

    def reader() -> None:
        with client(url) as http, http.stream("POST", "/agui", json=body) as response:
            for chunk in response.iter_bytes():
                raw.append(chunk)
                if b"TEXT_MESSAGE_CONTENT" in b"".join(raw):
                    streaming.set()
        streaming.set()

    thread = threading.Thread(target=reader)
    thread.start()
    return thread, raw, streaming


def test_a_text_run(serve: Any) -> None:
    """A user message in, the answer streamed as a valid run echoing the ids."""
    url = serve(script(text_turn("Hello from Claude.", thinking="Think first.")))
    with client(url) as http:
        body = run_input("t-text", [user("hi")])
        response, events = post_stream(http, "/agui", body)
        assert 200 == response.status_code
        valid(events, body)
    assert "Hello from Claude." == text_of(events)
    types = [e["type"] for e in events]
    assert types[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert "REASONING_MESSAGE_CONTENT" in types
    assert "RUN_FINISHED" == types[-1]
    snapshot = events[1]["snapshot"]
    assert snapshot["sessionId"] and snapshot["capabilities"]["approvals"] == APPROVAL_TOOL
    assert all(isinstance(e.get("timestamp"), int) for e in events)


def approval_flow(
    url: str, answer: str, thread: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with client(url) as http:
        first_user = user("make the file")
        body = run_input(thread, [first_user])
        _, first = post_stream(http, "/agui", body)
        valid(first, body)
        (call,) = [
            e
            for e in first
            if e["type"] == "TOOL_CALL_START" and e["toolCallName"] == APPROVAL_TOOL
        ]
        args = json.loads(
            "".join(
                e["delta"]
                for e in first
                if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == call["toolCallId"]
            )
        )
        assert "Bash" == args["toolName"] and args["pendingId"] and args["sessionId"]
        assert {"awaiting": [call["toolCallId"]]} == first[-1]["result"]
        assistant = {
            "id": call.get("parentMessageId") or call["toolCallId"],
            "role": "assistant",
            "toolCalls": [
                {
                    "id": call["toolCallId"],
                    "type": "function",
                    "function": {"name": APPROVAL_TOOL, "arguments": json.dumps(args)},
                }
            ],
        }
        tool = {
            "id": "answer-1",
            "role": "tool",
            "toolCallId": call["toolCallId"],
            "content": answer,
        }
        body2 = run_input(thread, [first_user, assistant, tool])
        _, second = post_stream(http, "/agui", body2)
        valid(second, body2, before=first)
    return first, second


def test_a_bash_approval_allowed_continues_the_same_turn(serve: Any, tmp_path: Path) -> None:
    """The run ends with the approval call pending; the answer in the next run lets the
    same CLI turn go on: the tool runs and Claude finishes."""
    url = serve(script(tool_turn("Bash", {"command": "touch approved.txt"}, permission=True)))
    first, second = approval_flow(url, json.dumps({"behavior": "allow"}), "t-allow")
    assert "Let me do that." == text_of(first)
    results = [e for e in second if e["type"] == "TOOL_CALL_RESULT"]
    assert 1 == len(results)
    assert "Done." in text_of(second)
    assert (tmp_path / "work" / "approved.txt").exists()


def test_a_bash_approval_denied(serve: Any, tmp_path: Path) -> None:
    """A denial reaches the CLI: the tool does not run and its result is an error."""
    url = serve(script(tool_turn("Bash", {"command": "touch denied.txt"}, permission=True)))
    _, second = approval_flow(url, "deny", "t-deny")
    payloads = [e["value"] for e in second if e.get("name") == "claudecode.tool_payload"]
    assert "error" == payloads[-1]["status"]
    assert not (tmp_path / "work" / "denied.txt").exists()


def test_connect_replays_the_thread_and_unknown_threads_are_empty(serve: Any) -> None:
    """agent/connect: MESSAGES_SNAPSHOT of the thread; an unknown thread: no events."""
    url = serve(script(text_turn("First answer.")))
    with client(url) as http:
        user_message = user("question", "u-1")
        post_stream(http, "/agui", run_input("t-connect", [user_message]))
        body = run_input("t-connect", [])
        envelope = {"method": "agent/connect", "params": {"agentId": "default"}, "body": body}
        _, events = post_stream(http, "/copilotkit", envelope)
        valid(events, body)
        (snapshot,) = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
        roles = [(m["role"], m.get("content")) for m in snapshot["messages"]]
        assert [("user", "question"), ("assistant", "First answer.")] == roles
        response = http.post("/copilotkit/agent/default/connect", json=run_input("t-unknown", []))
        assert (200, b"") == (response.status_code, response.content)
        assert response.headers["content-type"].startswith("text/event-stream")


def test_connect_during_a_run_joins_it_with_the_messages_from_before_it(serve: Any) -> None:
    """agent/connect while a run streams: RUN_STARTED of that run, a MESSAGES_SNAPSHOT of the
    thread as it was when the run started with the prompt that started it (the run's frames
    never repeat it), not what the run added since, then the run's own frames live, to its
    RUN_FINISHED."""
    slow = turn(["the second answer " * 20], delay=0.05, chunk=4)
    url = serve(script(text_turn("First answer."), slow))
    with client(url) as http:
        post_stream(http, "/agui", run_input("t-join", [user("question", "u-1")]))
    second = run_input("t-join", [user("question", "u-1"), user("more", "u-2")])
    thread, raw, streaming = _start_slow_run(url, second)
    try:
        assert streaming.wait(60)
        with client(url) as http:
            _, joined = post_stream(http, "/agui/connect", run_input("t-join", []))
    finally:
        thread.join(60)
    assert not thread.is_alive()
    first_reader = parse(b"".join(raw))
    assert ["RUN_STARTED", "MESSAGES_SNAPSHOT"] == [e["type"] for e in joined[:2]]
    assert second["runId"] == joined[0]["runId"]
    roles = [(m["role"], m.get("content")) for m in joined[1]["messages"]]
    assert [("user", "question"), ("assistant", "First answer."), ("user", "more")] == roles
    assert "RUN_FINISHED" == joined[-1]["type"]
    assert ("the second answer " * 20).strip() in text_of(joined) + text_of(first_reader)
    assert text_of(joined) and text_of(first_reader).endswith(text_of(joined))


def test_stop_mid_run_finishes_cleanly_and_busy_threads_are_refused(serve: Any) -> None:
    """agent/stop interrupts the CLI turn; the run ends with RUN_FINISHED, not an error.
    A second run on the busy thread is refused with 409."""
    slow = turn(["a long answer " * 40], delay=0.05, chunk=4)
    url = serve(script(slow))
    body = run_input("t-stop", [user("talk")])
    thread, raw, streaming = _start_slow_run(url, body)
    assert streaming.wait(60)
    with client(url) as http:
        busy = http.post("/agui", json=run_input("t-stop", [user("again")]))
        assert 409 == busy.status_code
        assert "in progress" in busy.json()["error"]
        stop = http.post(
            "/copilotkit",
            json={"method": "agent/stop", "params": {"agentId": "default", "threadId": "t-stop"}},
        )
        assert {"stopped": True} == {"stopped": stop.json()["stopped"]}
    thread.join(60)
    assert not thread.is_alive()
    events = valid(parse(b"".join(raw)), body)
    assert "RUN_FINISHED" == events[-1]["type"]
    assert len(text_of(events)) < len("a long answer " * 40)


def test_an_api_error_is_a_run_error(serve: Any) -> None:
    """A failed API call ends the run with RUN_ERROR carrying the message and a code."""
    failing = {
        "messages": [
            {
                "blocks": [],
                "error": {"status": 529, "message": "Overloaded", "type": "overloaded_error"},
            }
        ]
    }
    url = serve(script(failing))
    with client(url) as http:
        body = run_input("t-error", [user("hi")])
        _, events = post_stream(http, "/agui", body)
    valid(events, body)
    assert "RUN_ERROR" == events[-1]["type"]
    assert events[-1]["code"] and events[-1]["message"]


def test_the_thread_survives_a_restart(tmp_path: Path) -> None:
    """threadId -> CLI session id is saved in the state dir: after a restart, a run on the
    same thread resumes the CLI session, and connect still replays the thread."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), text_turn("two"), record_path=str(record))
    with running(app_for(tmp_path, body)) as url, client(url) as http:
        post_stream(http, "/agui", run_input("t-restart", [user("first", "u1")]))
    assert (tmp_path / "state" / "agui-threads.sqlite3").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    with sqlite3.connect(tmp_path / "state" / "agui-threads.sqlite3") as db:
        ((cli_session_id,),) = db.execute("SELECT cli_session_id FROM threads").fetchall()
    assert cli_session_id
    with running(app_for(tmp_path, body)) as url, client(url) as http:
        connect_body = run_input("t-restart", [])
        _, replay = post_stream(http, "/agui/connect", connect_body)
        (snapshot,) = [e for e in replay if e["type"] == "MESSAGES_SNAPSHOT"]
        assert ["first", "one"] == [m["content"] for m in snapshot["messages"]]
        run_body = run_input("t-restart", [user("first", "u1"), user("second", "u2")])
        _, events = post_stream(http, "/agui", run_body)
        valid(events, run_body)
    argvs = [
        json.loads(line)["argv"] for line in record.read_text().splitlines() if '"argv"' in line
    ]
    assert 2 == len(argvs)
    resumed = [[a for a in argv if a.startswith("--resume")] for argv in argvs]
    assert [[], ["--resume=" + cli_session_id]] == resumed


def test_copilotkit_envelope_info_and_bad_input(serve: Any) -> None:
    """The single endpoint and the REST info answer like CopilotKit's runtime, errors too."""
    url = serve(script())
    with client(url) as http:
        info = http.post("/copilotkit", json={"method": "info"}).json()
        assert "sse" == info["mode"] and "default" in info["agents"]
        assert info == http.get("/copilotkit/info").json()
        assert 200 == http.post("/copilotkit/", json={"method": "info"}).status_code
        ok_body = run_input("t", [user("x")])
        cases = [
            (
                http.post("/copilotkit", content=b"{}", headers={"Content-Type": "text/plain"}),
                415,
                None,
            ),
            (
                http.post(
                    "/copilotkit", content=b"{nope", headers={"Content-Type": "application/json"}
                ),
                400,
                "Invalid JSON payload",
            ),
            (http.post("/copilotkit", json={}), 400, "Missing method field"),
            (http.post("/copilotkit", json=[1]), 400, "Missing method field"),
            (
                http.post("/copilotkit", json={"method": "agent/dance"}),
                400,
                "Unsupported method 'agent/dance'",
            ),
            (
                http.post("/copilotkit", json={"method": "agent/run", "body": ok_body}),
                400,
                "Missing or invalid parameter 'agentId'",
            ),
            (
                http.post(
                    "/copilotkit",
                    json={"method": "agent/run", "params": {"agentId": "x"}, "body": ok_body},
                ),
                404,
                "Agent not found",
            ),
            (
                http.post(
                    "/copilotkit", json={"method": "agent/stop", "params": {"agentId": "default"}}
                ),
                400,
                "Missing or invalid parameter 'threadId'",
            ),
            (
                http.post(
                    "/copilotkit",
                    json={
                        "method": "agent/run",
                        "params": {"agentId": "default"},
                        "body": {"threadId": "t"},
                    },
                ),
                400,
                "runId",
            ),
            (
                http.post("/agui", json={**ok_body, "messages": [{"id": "1", "role": "robot"}]}),
                400,
                "$.messages[0].role",
            ),
            (http.post("/copilotkit/agent/nope/run", json=ok_body), 404, "Agent not found"),
            (http.get("/copilotkit"), 405, None),
            (http.get("/agui"), 405, None),
        ]
        for answer, status, fragment in cases:
            assert status == answer.status_code, answer.text
            assert "application/json" == answer.headers["content-type"]
            if fragment is not None:
                assert fragment in answer.json()["error"]
        stop = http.post("/copilotkit/agent/default/stop/nothing-runs", json={"runId": "r"})
        assert {"stopped": False} == {"stopped": stop.json()["stopped"]}


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=12,
)
_envelopes = st.fixed_dictionaries(
    {"method": st.sampled_from(["info", "agent/run", "agent/connect", "agent/stop", "x"])},
    optional={
        "params": _json | st.fixed_dictionaries({"agentId": st.sampled_from(["default", "other"])}),
        "body": _json,
    },
)


@settings(
    max_examples=120,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=_json | _envelopes,
    path=st.sampled_from(
        ["/copilotkit", "/agui", "/copilotkit/agent/default/run", "/agui/connect"]
    ),
)
def test_arbitrary_json_bodies_get_a_stream_or_a_json_4xx(serve: Any, body: Any, path: str) -> None:
    """Whatever JSON arrives: a 2xx (JSON or a stream) or a JSON 4xx, never a 500; the server
    keeps serving."""
    url = serve(script()) if not hasattr(serve, "url") else serve.url
    serve.url = url
    with client(url) as http, http.stream("POST", path, json=body) as answer:
        raw = answer.read()
        if answer.status_code < 300:
            if answer.headers["content-type"].startswith("text/event-stream"):
                events = [json.loads(f[6:]) for f in raw.split(b"\n\n") if f.startswith(b"data: ")]
                assert [] == verify_events(events) or not events
        else:
            assert 400 <= answer.status_code < 500, raw
            assert isinstance(json.loads(raw)["error"], str)


def test_shutdown_ends_live_runs_with_a_shutdown_error(tmp_path: Path) -> None:
    """When the server stops, a live run ends with RUN_ERROR code 'shutdown' (no hang)."""
    app = app_for(tmp_path, script(turn(["slow words " * 100], delay=0.05, chunk=4)))
    body = run_input("t-shutdown", [user("talk")])
    with running(app) as url:
        thread, raw, streaming = _start_slow_run(url, body)
        assert streaming.wait(60)
    thread.join(60)
    assert not thread.is_alive()
    events = valid(parse(b"".join(raw)), body)
    assert {"type": "RUN_ERROR", "code": "shutdown"} == {k: events[-1][k] for k in ("type", "code")}


def test_a_client_that_disconnects_interrupts_its_run(tmp_path: Path) -> None:
    """By default a disconnect interrupts the CLI turn: the session is soon idle again and
    the thread takes a new run."""
    app = app_for(
        tmp_path, script(turn(["slow words " * 100], delay=0.05, chunk=4), text_turn("again"))
    )
    with running(app) as url, client(url) as http:
        with http.stream("POST", "/agui", json=run_input("t-gone", [user("talk")])) as response:
            for chunk in response.iter_bytes():
                if b"TEXT_MESSAGE_CONTENT" in chunk:
                    break  # leaving the block closes the connection mid-run
        sessions = http.get("/api/sessions").json()
        (session_id,) = [s["id"] for s in sessions]
        wait_until(
            lambda: http.get(f"/api/sessions/{session_id}").json()["state"] == "idle",
            poll=0.05,
            what="the session idle",
        )
        body = run_input("t-gone", [user("again")])
        deadline = time.monotonic() + HANG_GUARD
        while True:  # each round asserts a refusal is a 409
            response, events = post_stream(http, "/agui", body)
            if response.status_code == 200:
                break
            assert 409 == response.status_code and time.monotonic() < deadline
            time.sleep(0.05)
        valid(events, body)
        assert "again" == text_of(events)
