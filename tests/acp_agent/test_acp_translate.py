"""Adapter events -> ACP session/update payloads: units, and any event sequence -> messages
valid under the ACP JSON Schema."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.acp.translate import (
    PERMISSION_OPTIONS,
    UpdateTranslator,
    decision_for_option,
    mode_state,
    permission_request_params,
    stop_reason,
    tool_kind,
)
from adapter.events import (
    AvailableCommands,
    Command,
    Complete,
    ContextWindow,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionRequest,
    Reasoning,
    ToolCall,
    ToolProgress,
    ToolUpdate,
    UserMessage,
)
from normalize import normalize_tool_result, normalize_tool_use
from tests.support.acp_schema import errors_of


def call(tool_id: str, name: str, **tool_input: Any) -> ToolCall:
    payload = normalize_tool_use(name, tool_input)
    return ToolCall(tool_call_id=tool_id, tool_name=name, title=name, normalized=payload)


def done(
    tool_id: str, name: str, content: Any = "ok", *, error: bool = False, **tool_input: Any
) -> ToolUpdate:
    payload = normalize_tool_result(
        normalize_tool_use(name, tool_input), content=content, is_error=error
    )
    return ToolUpdate(
        tool_call_id=tool_id,
        status="error" if error else "complete",
        title=name,
        normalized=payload,
        tool_name=name,
    )


def notification(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s", "update": update}


def assert_valid(updates: list[dict[str, Any]]) -> None:
    for update in updates:
        assert [] == errors_of("SessionNotification", notification(update)), update


# ------------------------------------------------------------------------ units


def test_tool_kinds_cover_every_acp_kind_we_use() -> None:
    cases = {
        "Read": ({"file_path": "/a"}, "read"),
        "Edit": ({"file_path": "/a", "old_string": "x", "new_string": "y"}, "edit"),
        "Write": ({"file_path": "/a", "content": "x"}, "edit"),
        "Bash": ({"command": "ls"}, "execute"),
        "Grep": ({"pattern": "x"}, "search"),
        "Glob": ({"pattern": "*.py"}, "search"),
        "WebFetch": ({"url": "https://example.com", "prompt": "p"}, "fetch"),
        "WebSearch": ({"query": "q"}, "fetch"),
        "Agent": ({"description": "d", "prompt": "p"}, "think"),
        "TodoWrite": ({"todos": []}, "think"),
        "ExitPlanMode": ({"plan": "p"}, "switch_mode"),
        "mcp__srv__tool": ({"x": 1}, "other"),
    }
    for name, (tool_input, kind) in cases.items():
        assert kind == tool_kind(normalize_tool_use(name, tool_input)), name


def test_text_thought_and_sub_agent_text() -> None:
    t = UpdateTranslator()
    updates = [
        *t.updates(MessageChunk(message_id="m1", text="Hi")),
        *t.updates(Reasoning(message_id="m1", text="hmm")),
        *t.updates(MessageChunk(message_id="m2", text="sub", parent_tool_call_id="T1")),
    ]
    assert [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}},
    ] == [{k: v for k, v in u.items() if k != "messageId"} for u in updates]
    assert ["m1", "m1"] == [u["messageId"] for u in updates]
    assert_valid(updates)


def test_edit_arrives_as_a_diff_with_an_absolute_location() -> None:
    t = UpdateTranslator(cwd="/work")
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}
    [announced] = t.updates(call("T1", "Edit", **edit))
    assert ("tool_call", "edit", "pending") == (
        announced["sessionUpdate"],
        announced["kind"],
        announced["status"],
    )
    assert [{"path": "/work/notes.txt"}] == announced["locations"]
    assert [
        {"type": "diff", "path": "/work/notes.txt", "oldText": "beta", "newText": "gamma"}
    ] == announced["content"]
    [finished] = t.updates(done("T1", "Edit", "The file has been updated.", **edit))
    assert ("tool_call_update", "completed") == (finished["sessionUpdate"], finished["status"])
    assert_valid([announced, finished])


def test_shell_output_and_failure_as_text() -> None:
    t = UpdateTranslator()
    t.updates(call("T1", "Bash", command="false"))
    [progress] = t.updates(ToolProgress(tool_call_id="T1", elapsed_seconds=1.0))
    assert "in_progress" == progress["status"]
    [failed] = t.updates(done("T1", "Bash", "oops\nExit code 1", error=True, command="false"))
    assert "failed" == failed["status"]
    text = failed["content"][0]["content"]["text"]
    assert "oops" in text
    assert_valid([progress, failed])


def test_todo_list_becomes_a_plan_not_a_tool_call() -> None:
    t = UpdateTranslator()
    todos = [
        {"content": "one", "status": "completed", "activeForm": "One"},
        {"content": "two", "status": "in_progress", "activeForm": "Two"},
        {"content": "three", "status": "pending", "activeForm": "Three"},
    ]
    [plan] = t.updates(call("T1", "TodoWrite", todos=todos))
    assert "plan" == plan["sessionUpdate"]
    assert [("one", "completed"), ("two", "in_progress"), ("three", "pending")] == [
        (e["content"], e["status"]) for e in plan["entries"]
    ]
    assert [] == t.updates(done("T1", "TodoWrite", "ok", todos=todos))
    assert_valid([plan])


def test_commands_mode_usage_and_user_replay() -> None:
    t = UpdateTranslator()
    commands = AvailableCommands(
        commands=[Command(name="review", description="Review", argument_hint="[pr]")]
    )
    [available] = t.updates(commands)
    assert [{"name": "review", "description": "Review", "input": {"hint": "[pr]"}}] == available[
        "availableCommands"
    ]
    [mode] = t.updates(ModeChanged(mode="plan"))
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} == mode
    [usage] = t.updates(ContextWindow(size=200_000, used=1000, remaining=199_000, percent=0.5))
    assert (1000, 200_000) == (usage["used"], usage["size"])
    [with_cost] = t.updates(Complete(cost_usd=0.25))
    assert {"amount": 0.25, "currency": "USD"} == with_cost["cost"]
    # live, the editor shows its own prompts: only the first one titles the session
    title = {"sessionUpdate": "session_info_update", "title": "live prompt"}
    assert [title] == t.updates(UserMessage(text="live prompt"))
    assert [] == t.updates(UserMessage(text="second prompt"))
    [replayed] = UpdateTranslator(replay=True).updates(UserMessage(text="old prompt"))
    assert "user_message_chunk" == replayed["sessionUpdate"]
    assert_valid([available, mode, usage, with_cost, replayed])


def test_a_result_without_its_call_is_announced_finished() -> None:
    [update] = UpdateTranslator().updates(done("T9", "Read", "1\tx", file_path="/a"))
    assert ("tool_call", "completed", "read") == (
        update["sessionUpdate"],
        update["status"],
        update["kind"],
    )
    assert_valid([update])


def test_permission_request_and_answers() -> None:
    event = PermissionRequest(
        pending_id="p1",
        tool_name="Bash",
        input={"command": "rm -rf build"},
        normalized=normalize_tool_use("Bash", {"command": "rm -rf build"}),
        title="Run rm -rf build",
        tool_call_id="T1",
    )
    params = permission_request_params("s", event)
    assert [] == errors_of("RequestPermissionRequest", params)
    assert ("T1", "execute") == (params["toolCall"]["toolCallId"], params["toolCall"]["kind"])
    assert [o["optionId"] for o in PERMISSION_OPTIONS] == [o["optionId"] for o in params["options"]]
    new = {"command": "rm -rf build/tmp"}
    assert ("allow", new) == (
        decision_for_option("allow_once", updated_input=new).behavior,
        decision_for_option("allow_once", updated_input=new).updated_input,
    )
    assert "allow_always" == decision_for_option("allow_always").behavior
    assert "deny" == decision_for_option("reject_once").behavior
    assert "deny" == decision_for_option("reject_always").behavior
    cancelled = decision_for_option(None)
    assert ("deny", True) == (cancelled.behavior, cancelled.interrupt)
    assert "deny" == decision_for_option("something else").behavior


def test_stop_reasons() -> None:
    assert "end_turn" == stop_reason(Complete(), cancelled=False)
    assert "cancelled" == stop_reason(Complete(is_error=True), cancelled=True)
    assert "max_turn_requests" == stop_reason(
        Complete(is_error=True, subtype="error_max_turns"), cancelled=False
    )
    assert "max_tokens" == stop_reason(Complete(stop_reason="max_tokens"), cancelled=False)
    assert "refusal" == stop_reason(Complete(stop_reason="refusal"), cancelled=False)


def test_mode_state_is_valid() -> None:
    state = mode_state("acceptEdits")
    assert "acceptEdits" == state["currentModeId"]
    assert "default" == mode_state("weird")["currentModeId"]
    assert [] == errors_of("SessionModeState", state)


# ------------------------------------------------------------------------ properties

_TEXT = st.text(max_size=30)
_IDS = st.sampled_from(["T1", "T2", "T3", "T4", "T5"])
_TOOLS = st.sampled_from(
    [
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Bash",
        "Grep",
        "Glob",
        "WebFetch",
        "WebSearch",
        "Agent",
        "TodoWrite",
        "ExitPlanMode",
        "NotebookEdit",
        "AskUserQuestion",
        "mcp__srv__do",
        "Skill",
        "Whatever",
    ]
)
_VALUES = st.one_of(
    _TEXT,
    st.integers(min_value=-5, max_value=10**6),
    st.booleans(),
    st.none(),
    st.lists(
        st.dictionaries(
            st.sampled_from(["content", "status", "activeForm", "old_string", "new_string"]),
            _TEXT,
        ),
        max_size=3,
    ),
)
_INPUTS = st.dictionaries(
    st.sampled_from(
        [
            "file_path",
            "content",
            "old_string",
            "new_string",
            "command",
            "pattern",
            "path",
            "url",
            "query",
            "prompt",
            "todos",
            "edits",
            "offset",
            "limit",
            "plan",
            "description",
        ]
    ),
    _VALUES,
    max_size=5,
)
_RESULTS = st.one_of(
    _TEXT,
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}), max_size=2),
)


@st.composite
def _tool_events(draw: st.DrawFn) -> list[Event]:
    tool_id, name, tool_input = draw(_IDS), draw(_TOOLS), draw(_INPUTS)
    payload = normalize_tool_use(name, tool_input)
    parent = draw(st.sampled_from([None, None, "T1"]))
    events: list[Event] = []
    if draw(st.booleans()):
        events.append(
            ToolCall(
                tool_call_id=tool_id,
                tool_name=name,
                title=draw(_TEXT),
                normalized=payload,
                parent_tool_call_id=parent,
            )
        )
    if draw(st.booleans()):
        events.append(ToolProgress(tool_call_id=tool_id))
    if draw(st.booleans()):
        error = draw(st.booleans())
        result = normalize_tool_result(payload, content=draw(_RESULTS), is_error=error)
        events.append(
            ToolUpdate(
                tool_call_id=tool_id,
                status="error" if error else "complete",
                title=draw(_TEXT),
                normalized=result,
                tool_name=name,
                parent_tool_call_id=parent,
            )
        )
    return events


_SINGLE = st.one_of(
    st.builds(MessageChunk, message_id=st.sampled_from(["", "m1"]), text=_TEXT),
    st.builds(Reasoning, message_id=st.sampled_from(["", "m1"]), text=_TEXT),
    st.builds(UserMessage, text=_TEXT),
    st.builds(ModeChanged, mode=st.sampled_from(["default", "plan", "acceptEdits"])),
    st.builds(
        ContextWindow,
        size=st.integers(min_value=0, max_value=10**7),
        used=st.integers(min_value=-10, max_value=10**7),
        remaining=st.integers(min_value=0, max_value=10**7),
        percent=st.floats(min_value=0, max_value=100),
    ),
    st.builds(
        Complete,
        cost_usd=st.floats(min_value=0, max_value=10),
        is_error=st.booleans(),
        subtype=st.sampled_from(["success", "error_max_turns", "error_during_execution"]),
        stop_reason=st.sampled_from([None, "end_turn", "max_tokens", "refusal"]),
    ),
    st.builds(
        AvailableCommands,
        commands=st.lists(
            st.builds(Command, name=_TEXT, description=_TEXT, argument_hint=_TEXT), max_size=3
        ),
    ),
)
_SEQUENCES = st.lists(st.one_of(_SINGLE.map(lambda e: [e]), _tool_events()), max_size=25).map(
    lambda chunks: [e for chunk in chunks for e in chunk]
)


@settings(max_examples=250)
@given(events=_SEQUENCES, replay=st.booleans(), cwd=st.sampled_from([None, "/work"]))
def test_any_event_sequence_gives_valid_acp_updates(
    events: list[Event], replay: bool, cwd: str | None
) -> None:
    """Every update is a valid session/update; a tool call is announced once before its
    updates; a finished call is not updated again."""
    t = UpdateTranslator(cwd=cwd, replay=replay)
    announced: set[str] = set()
    finished: set[str] = set()
    for event in events:
        updates = t.updates(event)
        assert_valid(updates)
        for u in updates:
            kind = u["sessionUpdate"]
            if kind == "tool_call":
                assert u["toolCallId"] not in announced or u["toolCallId"] in finished
                announced.add(u["toolCallId"])
                finished.discard(u["toolCallId"])
                if u.get("status") in ("completed", "failed"):
                    finished.add(u["toolCallId"])
            elif kind == "tool_call_update":
                assert u["toolCallId"] in announced
                assert u["toolCallId"] not in finished
                if u.get("status") in ("completed", "failed"):
                    finished.add(u["toolCallId"])
            for loc in u.get("locations", []):
                if cwd is not None and loc["path"]:
                    assert loc["path"].startswith("/")
