"""Outstanding turns as the CLI reports them: self-started turns, queued prompts, clean exits.

The fixture ``background_and_queued.jsonl`` is the stdout of the real CLI (2.1.332, against the
fake Messages API) with the moments our prompts went out: a prompt whose turn launches a
background ``Agent``; the sub-agent finishing, which makes the CLI start a turn by itself
(``origin.kind == "task-notification"``); a slow prompt, and a prompt sent while it streamed
(queued by the CLI: ``command_lifecycle`` queued -> started -> completed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter.events import (
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionCancelled,
    ToolCall,
    ToolUpdate,
    TurnError,
)
from adapter.translate import Translator
from claudecode._codec import decode_line
from tests.support.transcripts import (
    assistant,
    can_use_tool,
    feed,
    init,
    line,
    result,
    text,
    tool_result,
    tool_use,
)

FIXTURE = Path(__file__).parent.parent / "fixtures" / "adapter" / "background_and_queued.jsonl"


def _recording(*, lifecycle: bool) -> list[dict[str, Any]]:
    """The recorded lines; without ``lifecycle``, as a CLI that reports no prompt uuids."""
    out: list[dict[str, Any]] = []
    for raw in FIXTURE.read_text().splitlines():
        entry = json.loads(raw)
        msg = entry.get("msg")
        if not lifecycle and msg is not None:
            if msg.get("type") == "command_lifecycle":
                continue
            msg = {k: v for k, v in msg.items() if not k.startswith("user_message_uuid")}
            entry = {**entry, "msg": msg}
        out.append(entry)
    return out


def _replay(t: Translator, entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool]]:
    """Feed everything; each entry comes back with ``t.busy`` right after it, its events and
    the background state (``tasks``, ``expected``) at that moment."""
    timeline: list[tuple[dict[str, Any], bool]] = []
    for entry in entries:
        if entry["dir"] == "to_cli":
            t.prompt_sent(entry["uuid"])
        else:
            entry = {**entry, "events": t.feed(decode_line(json.dumps(entry["msg"]).encode()))}
        entry = {**entry, "tasks": t.background_tasks, "expected": t.self_start_expected}
        timeline.append((entry, t.busy))
    return timeline


def _kind(entry: dict[str, Any]) -> str:
    msg = entry.get("msg")
    if msg is None:
        return "send"
    return str(msg.get("subtype") if msg.get("type") == "system" else msg.get("type"))


@pytest.mark.parametrize("lifecycle", [True, False], ids=["command_lifecycle", "in_order"])
def test_busy_follows_every_turn_the_cli_runs(lifecycle: bool) -> None:
    """Busy from each prompt to its own result, through a queued prompt and a turn the CLI
    started by itself; idle only between them."""
    t = Translator()
    timeline = _replay(t, _recording(lifecycle=lifecycle))
    # Collapse to the moments that matter: prompts, inits and results.
    marks = [
        (_kind(entry), busy)
        for entry, busy in timeline
        if _kind(entry) in ("send", "init", "result")
    ]
    assert [
        ("send", True),  # 1: launches the background agent
        ("init", True),
        ("result", False),  # the background agent still runs: no turn does
        ("init", True),  # the CLI starts a turn by itself when the agent finishes
        ("result", False),
        ("send", True),  # 2: slow
        ("init", True),
        ("send", True),  # 3: sent while 2 streams, queued by the CLI
        ("result", True),  # 2 ended, 3 is still to run
        ("init", True),
        ("result", False),  # 3 ended
    ] == marks
    assert not t.busy and () == t.background_tasks and not t.self_start_expected


def test_background_task_and_the_turn_it_starts() -> None:
    """The background task is tracked until its notification; the turn it starts is expected
    until it opens; its text and its Complete are not lost (one Complete per result)."""
    t = Translator()
    timeline = _replay(t, _recording(lifecycle=True))
    states: list[tuple[str, tuple[str, ...], bool]] = []
    events: list[Event] = []
    for entry, _busy in timeline:
        events += entry.get("events", [])
        states.append((_kind(entry), entry["tasks"], entry["expected"]))
    started = next(i for i, s in enumerate(states) if s[0] == "task_started")
    notified = next(i for i, s in enumerate(states) if s[0] == "task_notification")
    [task_id] = states[started][1]
    assert all(s[1] == (task_id,) for s in states[started:notified])
    assert ((), True) == states[notified][1:]
    reopened = next(i for i, s in enumerate(states) if i > notified and s[0] == "init")
    assert all(s[2] for s in states[notified:reopened])
    assert not any(s[2] for s in states[reopened:])

    completes = [e for e in events if isinstance(e, Complete)]
    results = [e for e, _ in timeline if _kind(e) == "result"]
    assert len(results) == len(completes) == 4
    assert not any(c.is_error for c in completes)
    # The self-started turn's text arrives between the first and the second Complete.
    first, second = (events.index(c) for c in completes[:2])
    between = "".join(e.text for e in events[first:second] if isinstance(e, MessageChunk))
    assert "The sub-agent found 0 files." in between
    # The sub-agent's Bash call outlives the turn that launched it: it is not completed
    # synthetically by that turn's result, but by its own tool_result.
    sub_calls = [e for e in events if isinstance(e, ToolCall) and e.parent_tool_call_id]
    sub_updates = [e for e in events if isinstance(e, ToolUpdate) and e.parent_tool_call_id]
    assert ["Bash"] == [c.tool_name for c in sub_calls]
    assert [(sub_calls[0].tool_call_id, "complete", False)] == [
        (u.tool_call_id, u.status, u.synthetic) for u in sub_updates
    ]


def test_a_result_without_an_open_turn_counts_as_a_turn() -> None:
    t = Translator()
    t.prompt_sent("p1")
    events = feed(t, result(result="hi"))
    assert not t.busy
    assert 1 == len([e for e in events if isinstance(e, Complete)])


def test_a_prompt_that_never_went_out_is_forgotten() -> None:
    t = Translator()
    t.prompt_sent("p1")
    t.prompt_failed("p1")
    t.prompt_failed("never-sent")
    assert not t.busy


def test_clean_exit_in_the_middle_of_a_turn_is_an_error() -> None:
    """The CLI exits (status 0) after streaming part of a turn: an error Complete that says
    so, then the cli_exited error."""
    t = Translator()
    t.prompt_sent("p1")
    feed(t, init(), assistant("m1", text("half an ans")))
    events = t.close(None)
    complete, error = events[-2:]
    assert isinstance(complete, Complete) and isinstance(error, ErrorEvent)
    assert complete.is_error and complete.synthetic
    assert complete.error == TurnError(kind="cli_exited", message=error.message)
    assert "cli_exited" == error.kind and "middle of a turn" in error.message
    assert not t.busy


def test_clean_exit_before_the_prompt_started_is_an_error() -> None:
    t = Translator()
    t.prompt_sent("p1")
    events = t.close(None)
    assert [Complete, ErrorEvent] == [type(e) for e in events]
    assert isinstance(events[0], Complete) and events[0].is_error


def test_clean_exit_when_idle_is_not_an_error() -> None:
    t = Translator()
    t.prompt_sent("p1")
    feed(t, init(), assistant("m1", text("done")), result(result="done"))
    assert [] == t.close(None)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"is_error": True, "result": "API Error: 500 boom", "api_error_status": 500,
             "terminal_reason": "api_error"},
            TurnError(kind="api_error", message="API Error: 500 boom", status=500),
        ),
        (
            {"subtype": "error_during_execution", "is_error": True, "result": None,
             "terminal_reason": "aborted_streaming"},
            TurnError(kind="interrupted", message="interrupted"),
        ),
        (
            {"subtype": "error_max_turns", "is_error": True, "result": None,
             "errors": ["too many turns"]},
            TurnError(kind="max_turns", message="too many turns"),
        ),
    ],
)  # fmt: skip
def test_complete_of_a_failed_turn_carries_the_error(
    fields: dict[str, Any], expected: TurnError
) -> None:
    """A consumer that stops at Complete still learns the error's kind, message and status;
    the ErrorEvent that follows says the same."""
    t = Translator()
    events = feed(t, init(), result(**fields))
    complete = next(e for e in events if isinstance(e, Complete))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert expected == complete.error
    assert (expected.kind, expected.message, expected.status) == (
        error.kind,
        error.message,
        error.status,
    )


def test_complete_of_a_successful_turn_has_no_error() -> None:
    t = Translator()
    [*_, complete] = feed(t, init(), result())
    assert isinstance(complete, Complete) and complete.error is None
    assert b'"error"' not in __import__("adapter").encode_event(complete)


def test_lifecycle_lines_give_no_events() -> None:
    t = Translator()
    msg = line({"type": "command_lifecycle", "command_uuid": "x", "state": "queued"})
    assert [] == t.feed(msg)


def test_a_background_sub_agents_permission_prompt_outlives_the_turn() -> None:
    """The sub-agent asks while the launching turn ends; the CLI withdraws the prompt later:
    the withdrawal is still reported, and the prompt opened no turn."""
    t = Translator()
    t.prompt_sent("p1")
    feed(
        t,
        init(),
        assistant("m1", tool_use("A1", name="Agent", prompt="count", description="count")),
        {"type": "system", "subtype": "task_started", "task_id": "t1", "tool_use_id": "A1",
         "is_backgrounded": True},
        tool_result("A1", "Async agent launched successfully."),
        assistant("m2", tool_use("B1", command="touch x"), parent="A1", agent_id="ag1"),
    )  # fmt: skip
    ask = t.permission_request(can_use_tool("req-9", tool_use_id="B1", agent_id="ag1"))
    assert "A1" == ask.parent_tool_call_id
    feed(t, result(result="launched"))
    assert not t.busy  # the sub-agent's prompt is no turn of the main conversation
    events = feed(t, {"type": "control_cancel_request", "request_id": "req-9", "uuid": None})
    assert [PermissionCancelled(pending_id="req-9")] == events


def _set_model_echo(*, replay: bool) -> dict[str, Any]:
    """The ``user`` line the CLI writes for ``set_model`` (2.1.332 marks it ``isReplay``)."""
    echo = "<local-command-stdout>Set model to `m`</local-command-stdout>"
    msg: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": echo},
        "parent_tool_use_id": None,
        "session_id": "S",
    }
    if replay:
        msg["isReplay"] = True
    return msg


@pytest.mark.parametrize("replay", [True, False])
def test_the_echo_of_a_control_request_is_not_a_turn(replay: bool) -> None:
    t = Translator()
    assert [] == feed(t, _set_model_echo(replay=replay))
    assert not t.busy and not t.turn_open and t.last_committed_uuid is None
    # Between turns too; a CLI that exits afterwards exited cleanly.
    t.prompt_sent("p1")
    feed(t, init(), assistant("m1", text("one")), result(result="one"))
    assert not t.busy
    assert [] == feed(t, _set_model_echo(replay=replay))
    assert not t.busy
    assert [] == t.close()
