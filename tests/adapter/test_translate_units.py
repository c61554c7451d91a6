"""The translator on hand-built messages: one rule per test."""

from __future__ import annotations

from typing import Any

import pytest

from adapter.events import (
    ApiRetry,
    AvailableCommands,
    CompactBoundary,
    Complete,
    ContextWindow,
    ErrorEvent,
    MessageChunk,
    ModeChanged,
    PermissionCancelled,
    PermissionDenied,
    RateLimit,
    Raw,
    Reasoning,
    SessionStatus,
    TaskEvent,
    ToolCall,
    ToolInputDelta,
    ToolProgress,
    ToolUpdate,
)
from adapter.translate import Translator
from claudecode._codec import decode_line
from claudecode.content import TextBlock
from claudecode.control import InitializeResult, SlashCommand
from claudecode.messages import (
    AssistantMessage,
    InboundControlRequest,
    UnknownMessage,
)
from claudecode.stream_events import ApiMessage
from normalize import Generic, ShellExec
from tests.support.transcripts import (
    assistant,
    can_use_tool,
    feed,
    init,
    line,
    of_type,
    result,
    start,
    stream,
    text,
    text_delta,
    tool_result,
    tool_use,
)

# --------------------------------------------------------------------- session facts


def test_first_init_announces_the_session_later_ones_only_changes() -> None:
    """SessionStatus once; the same init again is silent; mode and model changes are reported."""
    t = Translator()
    (status,) = feed(t, init())
    assert isinstance(status, SessionStatus)
    assert status.status == "new" and status.cli_session_id == "S"
    assert status.mcp_servers[0].name == "fe" and status.mcp_servers[0].status == "connected"
    assert (t.session_id, t.model) == ("S", "claude-opus-5-5")
    assert [] == feed(t, init())
    assert [ModeChanged(mode="plan")] == feed(t, init(mode="plan"))
    (again,) = feed(t, init(model="claude-haiku-4-5", mode="plan"))
    assert isinstance(again, SessionStatus) and again.model == "claude-haiku-4-5"


def test_resumed_session_says_so() -> None:
    """Constructed with resumed=True, the session status is ``resumed``."""
    (status,) = feed(Translator(resumed=True), init())
    assert isinstance(status, SessionStatus) and status.status == "resumed"


def test_status_line_with_a_mode_is_a_mode_change_once() -> None:
    """``system/status`` with permissionMode gives ModeChanged, unless nothing changed."""
    t = Translator()
    feed(t, init())
    mode = {"type": "system", "subtype": "status", "status": None, "permissionMode": "acceptEdits"}
    assert [ModeChanged(mode="acceptEdits")] == feed(t, mode)
    assert [] == feed(t, mode)
    assert [] == feed(t, {"type": "system", "subtype": "status", "status": "requesting"})


def test_initialize_answer_lists_the_commands() -> None:
    """The slash commands of the initialize answer, with description and argument hint."""
    answer = InitializeResult(
        commands=[SlashCommand(name="review", description="Review code", argument_hint="[pr]")],
        claude_code_version="2.1.332",
    )
    (event,) = Translator().initialized(answer)
    assert isinstance(event, AvailableCommands)
    assert [(c.name, c.description, c.argument_hint) for c in event.commands] == [
        ("review", "Review code", "[pr]")
    ]


# ------------------------------------------------------------------------------ text


def test_streamed_text_is_not_repeated_by_the_assistant_line() -> None:
    """Deltas stream; the assistant line for the block adds nothing."""
    t = Translator()
    events = feed(t, start("m1"), text_delta("Hel", "m1"), text_delta("lo", "m1"))
    events += feed(t, assistant("m1", text("Hello")))
    assert [
        MessageChunk(message_id="m1", text="Hel"),
        MessageChunk(message_id="m1", text="lo"),
    ] == events


def test_missing_deltas_are_made_up_by_the_assistant_line() -> None:
    """If fewer characters streamed than the block holds, only the missing tail is emitted."""
    t = Translator()
    events = feed(t, start("m1"), text_delta("Hel", "m1"), assistant("m1", text("Hello")))
    assert ["Hel", "lo"] == [e.text for e in of_type(events, MessageChunk)]


def test_non_streamed_text_appears_once() -> None:
    """Without partial messages the assistant line is the text; result text is not repeated."""
    t = Translator()
    events = feed(t, init(), assistant("m1", text("Hi there")), result(result="Hi there"))
    assert ["Hi there"] == [e.text for e in of_type(events, MessageChunk)]


def test_stream_without_api_message_id_uses_the_message_start_id() -> None:
    """2.1.197 sends no api_message_id: the message_start id names the chunks."""
    t = Translator()
    events = feed(t, start("m9"), text_delta("a"), text_delta("b"))
    assert {e.message_id for e in of_type(events, MessageChunk)} == {"m9"}


def test_thinking_streams_as_reasoning_and_is_deduplicated() -> None:
    """thinking_delta -> Reasoning; the thinking block of the assistant line adds nothing."""
    t = Translator()
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "hmm"},
    }
    events = feed(t, start("m1"), stream(delta, "m1"))
    events += feed(t, assistant("m1", {"type": "thinking", "thinking": "hmm", "signature": "s"}))
    assert [Reasoning(message_id="m1", text="hmm")] == events


def test_result_text_only_when_the_turn_showed_no_text() -> None:
    """Kandev's rule: the result's text is shown when nothing else was, under its own id."""
    t = Translator()
    events = feed(t, init(), result(result="only here", uuid="r1"))
    assert [MessageChunk(message_id="result:r1", text="only here")] == of_type(events, MessageChunk)
    events = feed(t, init(), assistant("m2", text("shown")), result(result="shown"))
    assert ["shown"] == [e.text for e in of_type(events, MessageChunk)]


def test_sub_agent_text_is_nested_and_does_not_count_as_the_turns_text() -> None:
    """A sub-agent's text carries its parent; the main result text is still shown."""
    t = Translator()
    events = feed(
        t, init(), assistant("m1", text("sub says"), parent="toolu_A"), result(result="main")
    )
    chunks = of_type(events, MessageChunk)
    assert [(c.text, c.parent_tool_call_id) for c in chunks] == [
        ("sub says", "toolu_A"),
        ("main", None),
    ]


def test_duplicate_lines_are_dropped_by_uuid() -> None:
    """A line the CLI can repeat (a resumed session replays its transcript), seen twice with
    the same uuid, gives its events once; in a batch as one by one."""
    line_ = assistant("m1", tool_use("T1", command="ls"), uuid="same")
    assert 1 == len(feed(Translator(), line_, line_))
    assert 1 == len(Translator().feed_many([line(line_), line(line_)]))
    done = result(uuid="R")
    assert 1 == len(of_type(feed(Translator(), done, done), Complete))


def test_stream_events_are_not_checked_for_duplicates() -> None:
    """The CLI never repeats a ``stream_event`` line (not in its transcript): they are not
    checked, so the same delta fed twice is shown twice, one by one and in a batch."""
    delta = text_delta("x", "m1") | {"uuid": "same"}
    assert ["x", "x"] == [e.text for e in of_type(feed(Translator(), delta, delta), MessageChunk)]
    merged = Translator().feed_many([line(delta), line(delta)])
    assert ["xx"] == [e.text for e in of_type(merged, MessageChunk)]


# ------------------------------------------------------------------------ tool calls


def test_tool_call_when_the_full_block_arrives_deltas_before_it() -> None:
    """Input deltas reference the id from content_block_start; the call has the real input."""
    t = Translator()
    block_start = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "T1", "name": "Bash", "input": {}},
    }
    delta = {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"command": "ls"}'},
    }
    events = feed(t, start("m1"), stream(block_start, "m1"), stream(delta, "m1"))
    assert [ToolInputDelta(tool_call_id="T1", partial_json='{"command": "ls"}')] == events
    (call,) = feed(t, assistant("m1", tool_use("T1", command="ls")))
    assert isinstance(call, ToolCall) and isinstance(call.normalized, ShellExec)
    assert call.normalized.command == "ls" and call.title == "Run `ls`"
    assert [] == feed(t, stream({"type": "content_block_stop", "index": 1}, "m1"))
    assert ("T1",) == t.pending_tool_calls


def test_tool_call_from_the_stream_when_no_assistant_line_announced_it() -> None:
    """A tool_use block that stops unannounced becomes a call with the streamed input."""
    t = Translator()
    block_start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "T1", "name": "Bash", "input": {}},
    }
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": '{"command": "pwd"}'},
    }
    events = feed(t, start("m1"), stream(block_start, "m1"), stream(delta, "m1"))
    events += feed(t, stream({"type": "content_block_stop", "index": 0}, "m1"))
    call = of_type(events, ToolCall)[0]
    assert isinstance(call.normalized, ShellExec) and call.normalized.command == "pwd"
    assert [] == feed(t, assistant("m1", tool_use("T1", command="pwd")))


def test_result_completes_the_matching_call() -> None:
    """The tool_result completes its call, enriched with the structured result."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1", command="echo hi")))
    structured = {"stdout": "hi", "stderr": "", "interrupted": False}
    (update,) = feed(t, tool_result("T1", "hi", tool_use_result=structured))
    assert isinstance(update, ToolUpdate)
    assert (update.status, update.tool_name, update.synthetic) == ("complete", "Bash", False)
    assert isinstance(update.normalized, ShellExec) and update.normalized.output is not None
    assert update.normalized.output.stdout == "hi"
    assert [] == feed(t, tool_result("T1", "hi"))  # a second result for the same call
    assert () == t.pending_tool_calls


def test_result_for_an_unknown_call_still_updates() -> None:
    """An id never announced gets a ToolUpdate with a generic payload."""
    (update,) = feed(Translator(), tool_result("T9", "boom", is_error=True))
    assert isinstance(update, ToolUpdate)
    assert (update.tool_call_id, update.status) == ("T9", "error")
    assert isinstance(update.normalized, Generic) and update.normalized.error


def test_interrupt_notes_and_replays_are_not_tool_results() -> None:
    """``[Request interrupted by user]`` texts and replayed prompts give nothing."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1")))
    note = {
        "type": "user",
        "message": {"role": "user", "content": [text("[Request interrupted by user]")]},
    }
    replay = {"type": "user", "message": {"role": "user", "content": "hi"}, "isReplay": True}
    assert [] == feed(t, note, replay)
    assert ("T1",) == t.pending_tool_calls


def test_pending_calls_complete_before_the_complete() -> None:
    """At the result, open calls end (synthetic; error when the turn failed), then Complete."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1"), tool_use("T2")))
    events = feed(
        t,
        result(
            is_error=True,
            result=None,
            subtype="error_during_execution",
            terminal_reason="aborted_tools",
        ),
    )
    updates = of_type(events, ToolUpdate)
    assert [(u.tool_call_id, u.status, u.synthetic) for u in updates] == [
        ("T1", "error", True),
        ("T2", "error", True),
    ]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Complete") > kinds.index("ToolUpdate")
    assert ErrorEvent(message="interrupted", kind="interrupted") == events[-1]


def test_sub_agent_calls_nest_under_their_parent() -> None:
    """parent_tool_use_id becomes parent_tool_call_id on calls and updates."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("A", "Agent", description="d", prompt="p")))
    (call,) = feed(t, assistant("m2", tool_use("B"), parent="A", agent_id="ag1"))
    (update,) = feed(t, tool_result("B", parent_tool_use_id="A"))
    assert isinstance(call, ToolCall) and isinstance(update, ToolUpdate)
    assert call.parent_tool_call_id == update.parent_tool_call_id == "A"


def test_tool_progress() -> None:
    """tool_progress -> ToolProgress."""
    event = {
        "type": "tool_progress",
        "tool_use_id": "T1",
        "tool_name": "Bash",
        "elapsed_time_seconds": 3.5,
    }
    expected = ToolProgress(tool_call_id="T1", tool_name="Bash", elapsed_seconds=3.5)
    assert [expected] == feed(Translator(), event)


# ------------------------------------------------------------------- results and uuids


@pytest.mark.parametrize(
    ("fields", "kind", "status"),
    [
        (
            {"subtype": "success", "api_error_status": 529, "result": "API Error: 529"},
            "api_error",
            529,
        ),
        (
            {"subtype": "success", "terminal_reason": "api_error", "result": "API Error"},
            "api_error",
            None,
        ),
        ({"subtype": "error_max_turns"}, "max_turns", None),
        (
            {"subtype": "error_during_execution", "terminal_reason": "aborted_streaming"},
            "interrupted",
            None,
        ),
        ({"subtype": "error_during_execution", "errors": ["boom"]}, "execution", None),
    ],
)
def test_error_results(fields: dict[str, Any], kind: str, status: int | None) -> None:
    """Complete first, then an ErrorEvent of the right kind."""
    events = feed(Translator(), init(), result(is_error=True, **({"result": None} | fields)))
    complete, error = events[-2:]
    assert isinstance(complete, Complete) and complete.is_error
    assert isinstance(error, ErrorEvent) and (error.kind, error.status) == (kind, status)
    assert error.message


def test_uuids_user_at_once_assistant_on_success() -> None:
    """User lines commit at once; assistant lines only when a successful result confirms them."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1"), uuid="a1"), tool_result("T1", uuid="u1"))
    assert t.last_committed_uuid == "u1"
    feed(t, assistant("m2", text("x"), uuid="a2"))
    assert t.last_committed_uuid == "u1"
    events = feed(t, result())
    assert of_type(events, Complete)[0].last_message_uuid == "a2" == t.last_committed_uuid
    events = feed(
        t, init(), assistant("m3", text("y"), uuid="a3"), result(is_error=True, result="x")
    )
    assert of_type(events, Complete)[0].last_message_uuid == "a2"
    # a sub-agent's side chain is never committed
    feed(t, tool_result("T5", parent_tool_use_id="A", uuid="side"))
    assert t.last_committed_uuid == "a2"


def test_a_result_without_an_open_turn_is_just_another_turn() -> None:
    """A background sub-agent's self-started turn: a second result gives a second Complete."""
    t = Translator()
    first = feed(t, init(), assistant("m1", text("a")), result(result="a"))
    assert not t.turn_open
    second = feed(t, result(result="later"))
    assert len(of_type(first, Complete)) == len(of_type(second, Complete)) == 1
    assert ["later"] == [c.text for c in of_type(second, MessageChunk)]


def test_context_window_from_usage_and_model_usage() -> None:
    """used = input + output + cache; size from modelUsage (suffix stripped); no repeats."""
    t = Translator()
    usage = {
        "input_tokens": 100,
        "output_tokens": 1,
        "cache_read_input_tokens": 50,
        "cache_creation_input_tokens": 10,
    }
    msg_start = stream(
        {
            "type": "message_start",
            "message": {"id": "m1", "model": "claude-x", "content": [], "usage": usage},
        }
    )
    delta = stream(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 40},
        }
    )
    events = feed(t, init(model="claude-x[1m]"), msg_start, delta)
    assert [ContextWindow(size=1_000_000, used=200, remaining=999_800, percent=0.02)] == events[1:]
    assert [] == feed(t, delta | {"uuid": "other"})  # unchanged: nothing
    model_usage = {
        "claude-x[1m]": {"contextWindow": 500_000},
        "claude-y": {"contextWindow": 200_000},
    }
    events = feed(t, result(modelUsage=model_usage))
    assert ContextWindow(size=500_000, used=200, remaining=499_800, percent=0.04) in events
    # remembered for the next turn
    events = feed(t, msg_start | {"uuid": "again"}, delta | {"uuid": "again2"})
    assert [] == events


def test_context_window_default_size() -> None:
    """Without any hint the window is 200 000 tokens."""
    t = Translator()
    events = feed(
        t,
        start("m1", input_tokens=1000),
        stream({"type": "message_delta", "usage": {"output_tokens": 5}}),
    )
    assert [ContextWindow(size=200_000, used=1005, remaining=198_995, percent=0.5)] == events


# ------------------------------------------------------------------ other system lines


def test_rate_limit_only_when_not_allowed() -> None:
    """The routine ``allowed`` says nothing; anything else is a RateLimit."""
    t = Translator()
    allowed = {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}
    assert [] == feed(t, allowed)
    info = {
        "status": "allowed_warning",
        "resetsAt": 1700,
        "rateLimitType": "five_hour",
        "utilization": 0.9,
    }
    (event,) = feed(t, {"type": "rate_limit_event", "rate_limit_info": info})
    assert (
        RateLimit(
            status="allowed_warning", resets_at=1700, rate_limit_type="five_hour", utilization=0.9
        )
        == event
    )


def test_api_retry_compact_and_denied() -> None:
    """api_retry, compact_boundary and permission_denied have their own events."""
    t = Translator()
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 2,
        "max_retries": 10,
        "retry_delay_ms": 600,
        "error_status": 529,
        "error": "overloaded",
    }
    compact = {
        "type": "system",
        "subtype": "compact_boundary",
        "compact_metadata": {"trigger": "auto", "pre_tokens": 9000},
    }
    denied = {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": "Bash",
        "tool_use_id": "T1",
        "message": "no",
    }
    assert [
        ApiRetry(attempt=2, max_retries=10, delay_ms=600, error_status=529, error="overloaded"),
        CompactBoundary(trigger="auto", pre_tokens=9000),
        PermissionDenied(tool_name="Bash", tool_call_id="T1", message="no"),
    ] == feed(t, retry, compact, denied)


def test_task_lines() -> None:
    """task_* lines and background_tasks_changed are TaskEvents tied to the Agent call."""
    t = Translator()
    started = {
        "type": "system",
        "subtype": "task_started",
        "task_id": "k1",
        "tool_use_id": "A",
        "description": "d",
        "is_backgrounded": True,
    }
    updated = {
        "type": "system",
        "subtype": "task_updated",
        "task_id": "k1",
        "patch": {"status": "completed"},
    }
    changed = {"type": "system", "subtype": "background_tasks_changed", "tasks": [{"id": "k1"}]}
    events = feed(t, started, updated, changed)
    assert all(isinstance(e, TaskEvent) for e in events)
    assert [(e.phase, e.tool_call_id, e.status) for e in of_type(events, TaskEvent)] == [
        ("started", "A", None),
        ("updated", "A", "completed"),
        ("changed", None, None),
    ]
    assert of_type(events, TaskEvent)[0].background is True


def test_quiet_lines_give_nothing() -> None:
    """keep_alive, thinking_tokens, hooks, command_lifecycle: nothing to show."""
    quiet: list[dict[str, Any]] = [
        {"type": "keep_alive", "uuid": None},
        {"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 4},
        {"type": "system", "subtype": "hook_started", "hook_id": "h"},
        {"type": "system", "subtype": "hook_response", "hook_id": "h", "outcome": "success"},
        {"type": "command_lifecycle", "command_uuid": "c", "state": "queued"},
    ]
    assert [] == feed(Translator(), *quiet)


def test_modelled_lines_without_an_event_pass_as_raw() -> None:
    """tool_use_summary, local_command_output ... become Raw with their fields."""
    t = Translator()
    summary, output = feed(
        t,
        {"type": "tool_use_summary", "summary": "ran 3 tools"},
        {"type": "system", "subtype": "local_command_output", "content": "cost: $1"},
    )
    assert isinstance(summary, Raw) and (summary.message_type, summary.subtype) == (
        "tool_use_summary",
        None,
    )
    assert summary.data["summary"] == "ran 3 tools"
    assert isinstance(output, Raw) and (output.message_type, output.subtype) == (
        "system",
        "local_command_output",
    )


def test_unknown_and_malformed_lines() -> None:
    """Unknown -> Raw with the decoded JSON; malformed -> a protocol error with the line number."""
    t = Translator()
    (raw,) = t.feed(decode_line(b'{"type": "brand_new", "subtype": "x", "n": 1}'))
    assert (
        Raw(
            message_type="brand_new",
            subtype="x",
            data={"type": "brand_new", "subtype": "x", "n": 1},
        )
        == raw
    )
    (raw,) = t.feed(UnknownMessage(type="weird", raw=b"\xff not json"))
    assert isinstance(raw, Raw) and isinstance(raw.data, str)
    (error,) = t.feed(decode_line(b"not json at all", 7))
    assert isinstance(error, ErrorEvent) and error.kind == "protocol"
    assert error.message.startswith("line 7: not_json")


def test_an_internal_surprise_is_an_event_not_an_exception() -> None:
    """A message whose fields break the translator's assumptions gives an internal error."""
    bad = AssistantMessage(message=ApiMessage(id="m", content=[TextBlock(text=None)]))  # type: ignore[arg-type]
    (event,) = Translator().feed(bad)
    assert isinstance(event, ErrorEvent) and event.kind == "internal"


# ----------------------------------------------------------------------- permissions


def test_permission_request_fields_and_options() -> None:
    """pending_id is the request id; allow_always only with suggestions; cancel matches."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1", command="rm x")))
    suggestion = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    ask = t.permission_request(
        can_use_tool("r1", tool_use_id="T1", permission_suggestions=[suggestion], blocked_path="/x")
    )
    assert (ask.pending_id, ask.tool_call_id, ask.blocked_path) == ("r1", "T1", "/x")
    assert [o.id for o in ask.options] == ["allow", "allow_always", "deny"]
    assert ask.suggestions == [suggestion]
    plain = t.permission_request(can_use_tool("r2", decision_reason="hook says ask"))
    assert [o.id for o in plain.options] == ["allow", "deny"]
    assert plain.decision_reason == "hook says ask"
    cancel = {"type": "control_cancel_request", "request_id": "r1", "uuid": None}
    assert [PermissionCancelled(pending_id="r1", reason="cancelled_by_cli")] == feed(t, cancel)
    assert [] == feed(t, cancel)
    assert [] == feed(t, {"type": "control_cancel_request", "request_id": "nope", "uuid": None})


def test_permission_request_of_a_sub_agent_names_its_parent() -> None:
    """Via the pending call's parent, or via the agent id the task started with."""
    t = Translator()
    task = {"type": "system", "subtype": "task_started", "task_id": "ag1", "tool_use_id": "A"}
    feed(t, init(), task, assistant("m2", tool_use("B"), parent="A"))
    assert t.permission_request(can_use_tool("r1", tool_use_id="B")).parent_tool_call_id == "A"
    assert t.permission_request(can_use_tool("r2", agent_id="ag1")).parent_tool_call_id == "A"


def test_permission_request_of_another_subtype_is_best_effort() -> None:
    """A hook callback gives the hook's tool; never an exception."""
    hook = line(
        {
            "type": "control_request",
            "request_id": "h1",
            "uuid": None,
            "request": {
                "subtype": "hook_callback",
                "callback_id": "c",
                "tool_use_id": "T1",
                "input": {"tool_name": "Bash", "tool_input": {"command": "ls"}},
            },
        }
    )
    assert isinstance(hook, InboundControlRequest)
    ask = Translator().permission_request(hook)
    assert (ask.pending_id, ask.tool_name, ask.tool_call_id) == ("h1", "Bash", "T1")


# --------------------------------------------------------------------- finish / close


def test_finish_turn_completes_synthetically() -> None:
    """Pending calls end as complete, a synthetic Complete with the reason, uuids committed."""
    t = Translator()
    assert [] == t.finish_turn()
    feed(t, init(), assistant("m1", tool_use("T1", "ExitPlanMode", plan="p"), uuid="a1"))
    events = t.finish_turn("plan_approved")
    update, complete = events
    assert isinstance(update, ToolUpdate) and (update.status, update.synthetic) == (
        "complete",
        True,
    )
    assert isinstance(complete, Complete) and complete.synthetic and not complete.is_error
    assert (complete.terminal_reason, complete.last_message_uuid) == ("plan_approved", "a1")
    assert not t.turn_open
    assert [] == t.finish_turn()


def test_close_with_an_error_mid_turn() -> None:
    """An error Complete, then cli_exited; closing twice gives nothing."""
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1"), uuid="a1"))
    update, complete, error = t.close("exit status 1")
    assert isinstance(update, ToolUpdate) and update.status == "error"
    assert (
        isinstance(complete, Complete) and complete.is_error and complete.last_message_uuid is None
    )
    assert ErrorEvent(message="exit status 1", kind="cli_exited") == error
    assert [] == t.close("again")


def test_close_between_turns() -> None:
    """No open turn: only the error, or nothing."""
    assert [] == Translator().close()
    assert [ErrorEvent(message="gone", kind="cli_exited")] == Translator().close("gone")


@pytest.mark.parametrize(("error", "status"), [(None, "complete"), ("exit status 1", "error")])
def test_close_between_turns_ends_a_background_sub_agents_calls(
    error: str | None, status: str
) -> None:
    """A sub-agent's call outside any turn (a background task) ends with the CLI too: its
    ToolCall gets its ToolUpdate, though there is no turn to complete."""
    t = Translator()
    (call,) = feed(t, assistant("m2", tool_use("B"), parent="A", agent_id="ag1"))
    assert isinstance(call, ToolCall) and not t.turn_open
    assert ("B",) == t.pending_tool_calls
    update, *rest = t.close(error)
    assert isinstance(update, ToolUpdate)
    assert (update.tool_call_id, update.status, update.synthetic) == ("B", status, True)
    assert update.parent_tool_call_id == "A"
    assert rest == ([] if error is None else [ErrorEvent(message=error, kind="cli_exited")])
    assert () == t.pending_tool_calls
    assert not t.turn_open
    assert [] == t.close(error)


def test_context_tracker_size_follows_model_and_learned_sizes() -> None:
    """The window size is remembered, and recomputed when the model or a learned size
    changes (a 1M hint from the name, a size from a result's modelUsage)."""
    from adapter._context import ContextTracker
    from claudecode.messages import ModelUsage

    tracker = ContextTracker(200_000)
    tracker.use_model("claude-opus-4-8")
    assert tracker.size == 200_000
    tracker.use_model("claude-opus-4-8[1m]")
    assert tracker.size == 1_000_000
    tracker.use_model("claude-haiku-4-5")
    assert tracker.size == 200_000
    tracker.learn_sizes({"claude-haiku-4-5": ModelUsage(context_window=64_000)})
    assert tracker.size == 64_000
    tracker.use_model("claude-opus-4-8")
    assert tracker.size == 1_000_000
