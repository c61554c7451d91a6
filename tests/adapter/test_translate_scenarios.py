"""Scenarios REAL-CLI.md describes but whose transcripts are not recorded, built line by line.

Interrupt during a permission prompt, a background sub-agent that starts a second turn,
API retries before an error, an SSE error the CLI recovers from, and an ``ExitPlanMode``
approval that gets no result.
"""

from __future__ import annotations

from adapter.events import (
    ApiRetry,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    PermissionCancelled,
    Raw,
    TaskEvent,
    ToolCall,
    ToolUpdate,
)
from adapter.translate import Translator
from tests.support.transcripts import (
    assistant,
    can_use_tool,
    check_round_trip,
    check_tool_lifecycle,
    feed,
    init,
    main_text,
    of_type,
    result,
    start,
    stream,
    text,
    text_delta,
    tool_result,
    tool_use,
    turns,
)


def _user_text(t: str, **kw: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": [text(t)]}, **kw}


def test_interrupt_during_a_permission_prompt() -> None:
    """control_cancel_request -> PermissionCancelled; the call ends as error; interrupted."""
    t = Translator()
    events = feed(t, init(), assistant("m1", tool_use("T1", command="touch x")))
    ask = t.permission_request(can_use_tool("req-1", tool_use_id="T1"))
    events.append(ask)
    events += feed(
        t,
        {"type": "control_cancel_request", "request_id": "req-1", "uuid": None},
        tool_result("T1", "The user doesn't want to proceed with this tool use.", is_error=True),
        _user_text("[Request interrupted by user for tool use]"),
        result(
            subtype="error_during_execution",
            is_error=True,
            result=None,
            terminal_reason="aborted_tools",
        ),
    )
    kinds = [type(e).__name__ for e in events if not isinstance(e, ContextWindow)]
    assert kinds[-5:] == [
        "PermissionRequest",
        "PermissionCancelled",
        "ToolUpdate",
        "Complete",
        "ErrorEvent",
    ]
    assert [PermissionCancelled(pending_id="req-1")] == of_type(events, PermissionCancelled)
    update = of_type(events, ToolUpdate)[0]
    assert (update.status, update.synthetic) == ("error", False)
    assert ErrorEvent(message="interrupted", kind="interrupted") == events[-1]
    check_tool_lifecycle(events)
    check_round_trip(events)


def test_background_sub_agent_starts_a_second_turn() -> None:
    """Result #1 while the sub-agent runs; its work and result #2 form the next turn."""
    t = Translator()
    events: list[Event] = []
    events += feed(
        t,
        init(),
        assistant(
            "m1", tool_use("A", "Agent", description="bg", prompt="p", run_in_background=True)
        ),
        {
            "type": "system",
            "subtype": "task_started",
            "task_id": "ag1",
            "tool_use_id": "A",
            "is_backgrounded": True,
        },
        tool_result("A", "Async agent launched successfully. agentId: ag1"),
        assistant("m2", text("Started it in the background.")),
        result(result="Started it in the background."),
    )
    assert not t.turn_open
    # the sub-agent keeps working after the first result
    events += feed(
        t,
        assistant("s1", tool_use("B", command="ls"), parent="A", agent_id="ag1"),
        tool_result("B", "a\nb", parent_tool_use_id="A", agent_id="ag1"),
        {
            "type": "system",
            "subtype": "task_notification",
            "task_id": "ag1",
            "status": "completed",
            "summary": "two files",
        },
        init(),
        assistant("m3", text("The background agent found two files.")),
        result(
            result="The background agent found two files.", origin={"kind": "task-notification"}
        ),
    )
    first, second = turns(events)
    assert main_text(first) == "Started it in the background."
    assert main_text(second) == "The background agent found two files."
    sub_call = of_type(second, ToolCall)[0]
    assert (sub_call.tool_call_id, sub_call.parent_tool_call_id) == ("B", "A")
    assert [e.phase for e in of_type(events, TaskEvent)] == ["started", "notification"]
    assert of_type(events, TaskEvent)[1].tool_call_id == "A"
    check_tool_lifecycle(events)


def test_api_retries_then_an_api_error() -> None:
    """api_retry lines, the synthetic error message once, Complete, then the API error."""
    t = Translator()
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 10,
        "retry_delay_ms": 600,
        "error_status": 401,
        "error": "authentication_failed",
    }
    synthetic = assistant(
        "c1da67be", text("Invalid API key · Fix external API key"), is_api_error_message=True
    )
    synthetic["message"]["model"] = "<synthetic>"
    events = feed(
        t,
        init(),
        retry,
        retry | {"attempt": 2},
        synthetic,
        result(
            is_error=True,
            result="Invalid API key · Fix external API key",
            api_error_status=401,
            terminal_reason="api_error",
        ),
    )
    assert [r.attempt for r in of_type(events, ApiRetry)] == [1, 2]
    assert main_text(events) == "Invalid API key · Fix external API key"
    complete = of_type(events, Complete)[0]
    assert complete.is_error and complete.model == "claude-opus-5-5"
    assert (
        ErrorEvent(message="Invalid API key · Fix external API key", kind="api_error", status=401)
        == events[-1]
    )


def test_sse_error_mid_stream_is_recovered() -> None:
    """The partial text once, the SSE error as raw, the CLI's nudge silent, then success."""
    t = Translator()
    sse_error = stream({"type": "error", "error": {"type": "overloaded_error"}}, "m1")
    stop = stream({"type": "message_stop"}, "m1") | {
        "abandoned_blocks": {"api_message_id": "m1", "from_block_index": 0}
    }
    events = feed(
        t,
        init(),
        start("m1"),
        text_delta("Partial ", "m1"),
        assistant("m1", text("Partial ")),
        sse_error,
        stop,
        _user_text("Your response was cut off mid-stream.", isSynthetic=True),
        start("m2"),
        text_delta("Full answer.", "m2"),
        assistant("m2", text("Full answer.")),
        result(result="Full answer."),
    )
    assert main_text(events) == "Partial Full answer."
    assert [r.subtype for r in of_type(events, Raw)] == ["error"]
    assert not of_type(events, ErrorEvent)
    assert len(of_type(events, Complete)) == 1


def test_exit_plan_mode_approval_without_a_result() -> None:
    """The session completes the turn itself after the grace period."""
    t = Translator()
    events = feed(
        t, init(mode="plan"), assistant("m1", tool_use("P", "ExitPlanMode", plan="1. do it"))
    )
    events.append(
        t.permission_request(can_use_tool("req-p", tool_name="ExitPlanMode", tool_use_id="P"))
    )
    events += t.finish_turn("plan_approved")
    update, complete = events[-2:]
    assert (
        isinstance(update, ToolUpdate) and update.synthetic and update.tool_name == "ExitPlanMode"
    )
    assert isinstance(complete, Complete) and complete.synthetic
    assert complete.terminal_reason == "plan_approved"
    # a late result still closes its own turn normally
    assert len(of_type(feed(t, result(result="late")), Complete)) == 1
    check_tool_lifecycle(events)
