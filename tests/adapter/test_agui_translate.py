"""The AG-UI translation: adapter events -> AG-UI events, without a server.

Property tests feed the run translator adapter event sequences from two sources — the
adapter's own translator over the recorded transcripts (shuffled, duplicated, mutated, as in
its property tests) and arbitrary adapter events built directly — cut into consecutive runs
(as approvals cut a turn), with stops at random points. Every run's output must obey every
ordering rule ``verifyEvents`` enforces (:func:`adapter.server.agui.verify.verify_events`) and
validate against the official ``ag-ui-protocol`` models, with no unknown fields and no
nulls, using only event types both client versions know.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from ag_ui.core import Event as OfficialEvent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from adapter.events import (
    ApiRetry,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionOption,
    PermissionRequest,
    RateLimit,
    Reasoning,
    TaskEvent,
    ToolCall,
    ToolInputDelta,
    ToolUpdate,
    TurnError,
    UserMessage,
)
from adapter.server.agui.events import AguiEvent, encode_event
from adapter.server.agui.results import result_text
from adapter.server.agui.translate import (
    APPROVAL_TOOL,
    RunTranslator,
    ThreadMemory,
    _is_json_object,
)
from adapter.server.agui.verify import verify_events
from adapter.translate import Translator
from normalize import ManageTodos, ShellExec, ShellOutput, TodoItem, normalize_tool_use
from tests.adapter.translate_strategies import PROCESSES, sequences
from tests.support.transcripts import step

OFFICIAL = TypeAdapter(OfficialEvent)

#: Event types ``@ag-ui/client`` 0.0.59 and 1.0.0 both know (minus the retired THINKING_*).
BOTH_VERSIONS = {
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "CUSTOM",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_END",
}


def wire(events: list[AguiEvent]) -> list[dict[str, Any]]:
    return [json.loads(encode_event(e)) for e in events]


def check_official(objects: list[dict[str, Any]]) -> None:
    """Each event validates against ag-ui-protocol, and carries no field it does not know."""
    for obj in objects:
        assert obj["type"] in BOTH_VERSIONS, obj
        model = OFFICIAL.validate_python(obj)
        known = {f.alias or name for name, f in type(model).model_fields.items()}
        assert set(obj) <= known | {"type"}, (obj, set(obj) - known)
        assert isinstance(obj.get("timestamp", 0), int)


def run_all(runs: list[list[Event]], stops: set[int]) -> list[list[dict[str, Any]]]:
    """Translate consecutive runs over one event sequence, as the server does."""
    out: list[list[dict[str, Any]]] = []
    memory = ThreadMemory()
    for number, events in enumerate(runs):
        translator = RunTranslator(
            "thread-1", f"run-{number}", session_id="s1", clock=lambda: 17, memory=memory
        )
        emitted = translator.start({"model": "m"})
        for index, event in enumerate(events):
            if index in stops:
                translator.stop()
            emitted += translator.feed(event)
        emitted += translator.finish()
        emitted += translator.feed(MessageChunk(message_id="late", text="never shown"))
        out.append(wire(emitted))
    return out


def check_runs(runs: list[list[dict[str, Any]]]) -> None:
    # The runs of a thread form one stream for the client (sequential runs are allowed).
    assert [] == verify_events([o for run in runs for o in run])
    for number, objects in enumerate(runs):
        problems = verify_events(objects, thread_id="thread-1", run_id=f"run-{number}")
        problems = [p for p in problems if "for unknown call" not in p]  # earlier runs' calls
        assert [] == problems, objects
        terminal = [o for o in objects if o["type"] in ("RUN_FINISHED", "RUN_ERROR")]
        assert 1 == len(terminal) and objects[-1] is terminal[0]
        check_official(objects)
    # Message ids never repeat across the runs of a thread.
    starts = [o["messageId"] for run in runs for o in run if o["type"] == "TEXT_MESSAGE_START"]
    assert len(starts) == len(set(starts))


def cut(events: list[Event], points: list[int]) -> list[list[Event]]:
    bounds = sorted({min(p, len(events)) for p in points})
    pieces, start = [], 0
    for bound in bounds:
        pieces.append(events[start:bound])
        start = bound
    pieces.append(events[start:])
    return pieces


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=sequences(),
    points=st.lists(st.integers(0, 400), max_size=3),
    stops=st.sets(st.integers(0, 200), max_size=2),
)
def test_recorded_sessions_in_any_order_make_valid_runs(
    case: tuple[int, list[Any]], points: list[int], stops: set[int]
) -> None:
    """Real sessions' events (shuffled, mutated), cut into runs: every run is valid."""
    which, steps = case
    process = PROCESSES[which]
    translator = Translator()
    events: list[Event] = []
    for item in steps:
        if item is None:
            events += translator.finish_turn()
            continue
        message = process.messages[item] if isinstance(item, int) else item
        events += step(translator, message, process.initialize_ids)
    events += translator.close(None)
    check_runs(run_all(cut(events, points), stops))


_ids = st.sampled_from(["m1", "m2", "m3"])
_tools = st.sampled_from(["t1", "t2", "t3"])
_parents = st.none() | st.just("agent-1")
_text = st.text(max_size=5)
_payload = st.sampled_from(
    [
        normalize_tool_use("Bash", {"command": "ls"}),
        normalize_tool_use("Edit", {"file_path": "a", "old_string": "x", "new_string": "y"}),
        normalize_tool_use("mcp__fe__say", {"text": "hi"}),
        ShellExec(tool="Bash", command="ls", output=ShellOutput(stdout="a\nb", exit_code=2)),
        ManageTodos(tool="TodoWrite", items=(TodoItem(description="x", status="pending"),)),
    ]
)
_error = st.builds(TurnError, kind=st.sampled_from(["api_error", "interrupted"]), message=_text)

_events = st.one_of(
    st.builds(MessageChunk, message_id=_ids, text=_text, parent_tool_call_id=_parents),
    st.builds(Reasoning, message_id=_ids, text=_text, parent_tool_call_id=_parents),
    st.builds(
        ToolInputDelta, tool_call_id=_tools, partial_json=st.sampled_from(['{"a"', ":1}", "x"])
    ),
    st.builds(
        ToolCall,
        tool_call_id=_tools,
        tool_name=st.sampled_from(["Bash", "Edit"]),
        title=_text,
        normalized=_payload,
        parent_tool_call_id=_parents,
    ),
    st.builds(
        ToolUpdate,
        tool_call_id=_tools,
        status=st.sampled_from(["complete", "error"]),
        title=_text,
        normalized=_payload,
        parent_tool_call_id=_parents,
    ),
    st.builds(
        PermissionRequest,
        pending_id=st.sampled_from(["p1", "p2"]),
        tool_name=st.just("Bash"),
        input=st.just({"command": "ls"}),
        normalized=_payload,
        title=_text,
        options=st.just([PermissionOption(id="allow", label="Allow")]),
    ),
    st.builds(Complete, is_error=st.booleans(), error=st.none() | _error, cost_usd=st.floats(0, 5)),
    st.builds(
        ErrorEvent, message=_text, kind=st.sampled_from(["cli_exited", "protocol", "internal"])
    ),
    st.builds(
        ContextWindow,
        size=st.just(100),
        used=st.integers(0, 100),
        remaining=st.just(0),
        percent=st.just(1.0),
    ),
    st.builds(ModeChanged, mode=st.sampled_from(["default", "plan"])),
    st.builds(RateLimit, status=st.just("rejected")),
    st.builds(ApiRetry, attempt=st.integers(1, 3)),
    st.builds(TaskEvent, phase=st.just("started")),
    st.builds(UserMessage, text=_text),
)


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_events, max_size=40),
    points=st.lists(st.integers(0, 40), max_size=3),
    stops=st.sets(st.integers(0, 40), max_size=2),
)
def test_arbitrary_event_sequences_make_valid_runs(
    events: list[Event], points: list[int], stops: set[int]
) -> None:
    """Any adapter events, in any order, cut anywhere: every run is valid."""
    check_runs(run_all(cut(events, points), stops))


def translate(*events: Event, stop_at: int | None = None) -> list[dict[str, Any]]:
    translator = RunTranslator("T", "R", session_id="S")
    out = translator.start()
    for index, event in enumerate(events):
        if index == stop_at:
            translator.stop()
        out += translator.feed(event)
    out += translator.finish()
    return wire(out)


def types(objects: list[dict[str, Any]]) -> list[str]:
    return [o["type"] for o in objects if o["type"] not in ("STATE_DELTA", "CUSTOM")]


def test_a_turn_with_reasoning_text_and_a_tool() -> None:
    """The canonical shapes: reasoning closes before text; a tool call hangs on its message."""
    bash = normalize_tool_use("Bash", {"command": "ls"})
    out = translate(
        Reasoning(message_id="m1", text="hmm"),
        MessageChunk(message_id="m1", text="Let me "),
        MessageChunk(message_id="m1", text="look."),
        ToolInputDelta(tool_call_id="t1", partial_json='{"command":'),
        ToolInputDelta(tool_call_id="t1", partial_json=' "ls"}'),
        ToolCall(tool_call_id="t1", tool_name="Bash", title="ls", normalized=bash),
        ToolUpdate(
            tool_call_id="t1",
            status="complete",
            title="ls",
            tool_name="Bash",
            normalized=ShellExec(tool="Bash", command="ls", output=ShellOutput(stdout="a.txt")),
        ),
        MessageChunk(message_id="m2", text="Done."),
        Complete(cost_usd=0.5),
    )
    assert [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ] == types(out)
    by_type = {o["type"]: o for o in out}
    assert {"type": "RUN_STARTED", "threadId": "T", "runId": "R"} == by_type["RUN_STARTED"]
    assert "m1" == by_type["TOOL_CALL_START"]["parentMessageId"]
    assert '{"command": "ls"}' == by_type["TOOL_CALL_ARGS"]["delta"]
    assert "a.txt" == by_type["TOOL_CALL_RESULT"]["content"]
    payloads = [o["value"] for o in out if o.get("name") == "claudecode.tool_payload"]
    assert ["running", "complete"] == [p["status"] for p in payloads]
    assert "shell_exec" == payloads[-1]["normalized"]["kind"]
    deltas = [o["delta"][0] for o in out if o["type"] == "STATE_DELTA"]
    assert {"op": "replace", "path": "/costUsd", "value": 0.5} in deltas


def test_failed_turns_errors_and_stops() -> None:
    """An error result is RUN_ERROR with its kind as code; a stopped run finishes cleanly;
    a CLI that exits ends the run; a protocol hiccup does not."""
    failed = translate(
        MessageChunk(message_id="m1", text="x"),
        Complete(is_error=True, error=TurnError(kind="api_error", message="overloaded")),
    )
    assert {"type": "RUN_ERROR", "message": "overloaded", "code": "api_error"} == failed[-1]
    assert "TEXT_MESSAGE_END" == failed[-2]["type"]
    stopped = translate(
        MessageChunk(message_id="m1", text="x"),
        Complete(is_error=True, error=TurnError(kind="interrupted", message="stopped")),
        stop_at=1,
    )
    assert "RUN_FINISHED" == stopped[-1]["type"]
    crashed = translate(
        ErrorEvent(message="bad line", kind="protocol"),
        ErrorEvent(message="the CLI exited (1)", kind="cli_exited"),
    )
    assert ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_ERROR"] == types(crashed)
    assert "cli_exited" == crashed[-1]["code"]


def test_permission_requests_become_approval_tool_calls() -> None:
    """A permission request is a call of the approval tool carrying the request."""
    translator = RunTranslator("T", "R", session_id="S")
    translator.start()
    out = wire(
        translator.feed(
            PermissionRequest(
                pending_id="p1",
                tool_name="Bash",
                input={"command": "rm x"},
                normalized=normalize_tool_use("Bash", {"command": "rm x"}),
                title="rm x",
                tool_call_id="t9",
                options=[PermissionOption(id="allow", label="Allow")],
            )
        )
    )
    assert ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"] == [o["type"] for o in out]
    assert APPROVAL_TOOL == out[0]["toolCallName"]
    request = json.loads(out[1]["delta"])
    assert {"pendingId": "p1", "sessionId": "S", "toolName": "Bash", "toolCallId": "t9"} == {
        k: request[k] for k in ("pendingId", "sessionId", "toolName", "toolCallId")
    }
    assert {"approval-p1": "p1"} == translator.awaiting


def test_subagent_work_is_custom_and_todos_reach_the_state() -> None:
    """Sub-agent chatter is a claudecode.subagent event; a todo list updates the state."""
    todos = ManageTodos(tool="TodoWrite", items=(TodoItem(description="write", status="pending"),))
    out = translate(
        MessageChunk(message_id="m1", text="inner", parent_tool_call_id="agent-1"),
        ToolUpdate(tool_call_id="t1", status="complete", title="todos", normalized=todos),
    )
    (subagent,) = [o for o in out if o.get("name") == "claudecode.subagent"]
    assert "agent-1" == subagent["value"]["parentToolCallId"]
    assert "message_chunk" == subagent["value"]["event"]["type"]
    assert not [o for o in out if o["type"] == "TEXT_MESSAGE_START"]
    (todo_delta,) = [o for o in out if o["type"] == "STATE_DELTA"]
    assert "/todos" == todo_delta["delta"][0]["path"]


@pytest.mark.parametrize(
    ("payload", "status", "expected"),
    [
        (
            ShellExec(command="x", output=ShellOutput(stdout="out", stderr="err", exit_code=3)),
            "error",
            "out\nerr\nExit code 3",
        ),
        (normalize_tool_use("mcp__fe__say", {"t": 1}), "complete", ""),
        (ShellExec(command="x", error="denied by the user"), "error", "denied by the user"),
    ],
)
def test_result_text(payload: Any, status: str, expected: str) -> None:
    """The text a TOOL_CALL_RESULT carries."""
    assert expected == result_text(payload, status)


def test_json_round_trip_of_every_event_type() -> None:
    """What we encode, msgspec decodes back to the same event."""
    out = translate(
        Reasoning(message_id="m", text="r"),
        MessageChunk(message_id="m", text="t"),
        Complete(),
    )
    for obj in out:
        assert obj == json.loads(msgspec.json.encode(obj))


def _stdlib_is_object(text: str) -> bool:
    if not text:
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


_JSONISH = st.one_of(
    st.text(max_size=60),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=10,
    ).map(lambda value: json.dumps(value)),  # NaN, Infinity included: the stdlib writes them
    st.sampled_from(['{"a": 1e400}', ' {"a": 1}', '{"a": 1, "a": 2}', '{"a": "\\ud800"}', "{"]),
)


@settings(max_examples=500, deadline=None)
@given(_JSONISH)
def test_streamed_tool_input_is_taken_as_an_object_exactly_as_the_stdlib_would(text: str) -> None:
    """Whether a tool call's streamed input is used as its arguments (a JSON object): the
    fast check decides as the standard library's ``json.loads`` did, on any text."""
    assert _is_json_object(text) == _stdlib_is_object(text)
