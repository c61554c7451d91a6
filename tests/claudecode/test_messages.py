"""Inbound message types: fields as recorded, reply helpers that match the recorded answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from claudecode._codec import decode_line, encode_message
from claudecode.content import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from claudecode.control import ControlFailure, ControlSuccess, OutboundControlResponse
from claudecode.errors import UsageError
from claudecode.messages import (
    AssistantMessage,
    AuthStatus,
    CanUseToolRequest,
    CommandLifecycle,
    ControlCancelRequest,
    HookCallbackRequest,
    InboundControlRequest,
    InboundControlResponse,
    InboundMessage,
    KeepAlive,
    McpMessageRequest,
    PromptSuggestion,
    ResultMessage,
    StreamEvent,
    SystemApiRetry,
    SystemBackgroundTasksChanged,
    SystemCompactBoundary,
    SystemFilesPersisted,
    SystemHookProgress,
    SystemHookResponse,
    SystemHookStarted,
    SystemInit,
    SystemPermissionDenied,
    SystemStatus,
    SystemTaskNotification,
    SystemTaskProgress,
    SystemTaskStarted,
    SystemTaskUpdated,
    SystemThinkingTokens,
    ToolProgress,
    ToolUseSummary,
    UnknownMessage,
    UserMessage,
)
from claudecode.stream_events import (
    ContentBlockDelta,
    ContentBlockStart,
    ContentBlockStop,
    InputJsonDelta,
    MessageDelta,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
)

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def _records(name: str) -> list[dict[str, Any]]:
    return [json.loads(t) for t in (TRANSCRIPTS / name).read_text().splitlines()]


def _decoded(name: str) -> list[InboundMessage]:
    return [
        decode_line(json.dumps(r["msg"]).encode()) for r in _records(name) if r["dir"] == "from_cli"
    ]


def _first(name: str, cls: type[Any], pred: Any = lambda m: True) -> Any:
    for msg in _decoded(name):
        if isinstance(msg, cls) and pred(msg):
            return msg
    raise AssertionError(f"no {cls.__name__} in {name}")


def _wire(msg: object) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(encode_message(msg))  # type: ignore[arg-type]
    return result


# ------------------------------------------------------------------- reply helpers


def _pairs() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(transcript, CLI control_request, host control_response) for every answered request."""
    out = []
    for path in sorted([*TRANSCRIPTS.glob("*.jsonl"), *TRANSCRIPTS.glob("v2.1.197/*.jsonl")]):
        if path.name.endswith(".api.jsonl"):
            continue
        requests: dict[str, dict[str, Any]] = {}
        for text in path.read_text().splitlines():
            record = json.loads(text)
            msg = record.get("msg")
            if record["dir"] == "from_cli" and msg["type"] == "control_request":
                requests[msg["request_id"]] = msg
            elif record["dir"] == "to_cli" and msg["type"] == "control_response":
                request = requests.get(msg["response"]["request_id"])
                if request is not None:
                    out.append((str(path.relative_to(TRANSCRIPTS)), request, msg))
    return out


def _rebuild(req: InboundControlRequest, payload: dict[str, Any]) -> OutboundControlResponse:
    """Answer ``req`` through the helper that corresponds to the recorded payload."""
    if payload.get("behavior") == "allow":
        return req.allow(payload.get("updatedInput"))
    if payload.get("behavior") == "deny":
        return req.deny(payload["message"], interrupt=payload["interrupt"])
    if "mcp_response" in payload:
        return req.mcp_response(payload["mcp_response"])
    specific = payload.get("hookSpecificOutput", {})
    if "permissionDecision" in specific:
        return req.pre_tool_use(
            specific["permissionDecision"], specific.get("permissionDecisionReason")
        )
    return req.hook_output(
        continue_=payload.get("continue"), hook_specific_output=payload.get("hookSpecificOutput")
    )


PAIRS = _pairs()


def test_transcripts_contain_answered_requests() -> None:
    """All three request kinds were answered in the recordings."""
    subtypes = {req["request"]["subtype"] for _, req, _ in PAIRS}
    assert subtypes == {"can_use_tool", "hook_callback", "mcp_message"}


@pytest.mark.parametrize(
    ("name", "cli_request", "answer"),
    PAIRS,
    ids=[f"{n}:{r['request_id'][:8]}" for n, r, _ in PAIRS],
)
def test_reply_helpers_reproduce_the_recorded_answers(
    name: str, cli_request: dict[str, Any], answer: dict[str, Any]
) -> None:
    """The helpers produce exactly what the recorded host sent (except a bare allow)."""
    req = decode_line(json.dumps(cli_request).encode())
    assert isinstance(req, InboundControlRequest)
    payload = answer["response"]["response"]
    reply = _rebuild(req, payload)
    if payload == {"behavior": "allow"}:
        # The recorded host sent a bare allow on purpose; ours always carries updatedInput.
        assert reply.response == ControlSuccess(
            request_id=req.request_id,
            response={"behavior": "allow", "updatedInput": cli_request["request"]["input"]},
        )
    else:
        assert _wire(reply) == answer


def _can_use_tool() -> InboundControlRequest:
    req = _first("bash_deny.jsonl", InboundControlRequest)
    assert isinstance(req.request, CanUseToolRequest)
    return req  # type: ignore[no-any-return]


def _hook() -> InboundControlRequest:
    req = _first("bash_hook_allow.jsonl", InboundControlRequest)
    assert isinstance(req.request, HookCallbackRequest)
    return req  # type: ignore[no-any-return]


def test_allow_without_arguments_carries_the_original_input() -> None:
    """allow() sends updatedInput equal to the request's input, never {} or nothing."""
    req = _can_use_tool()
    assert isinstance(req.request, CanUseToolRequest)
    payload = _wire(req.allow())["response"]["response"]
    assert payload == {"behavior": "allow", "updatedInput": req.request.input}
    assert payload["updatedInput"]["command"]


def test_allow_can_replace_input_and_add_permissions() -> None:
    """allow(updated_input, updated_permissions) sends both under their wire names."""
    req = _can_use_tool()
    rules = [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    payload = _wire(req.allow({"command": "true"}, rules))["response"]["response"]
    assert payload == {
        "behavior": "allow",
        "updatedInput": {"command": "true"},
        "updatedPermissions": rules,
    }


def test_deny_shape() -> None:
    """deny() sends behavior, message and interrupt, with the CLI's request id."""
    req = _can_use_tool()
    assert _wire(req.deny("no", interrupt=True)) == {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": req.request_id,
            "response": {"behavior": "deny", "message": "no", "interrupt": True},
        },
    }


def test_hook_answers() -> None:
    """pre_tool_use, hook_decision and hook_output write the hook-output keys."""
    req = _hook()
    assert _wire(req.pre_tool_use("deny"))["response"]["response"] == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
    }
    assert _wire(req.pre_tool_use("allow", "ok", updated_input={"a": 1}))["response"][
        "response"
    ] == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "ok",
            "updatedInput": {"a": 1},
        }
    }
    assert _wire(req.hook_decision("block", "keep going"))["response"]["response"] == {
        "decision": "block",
        "reason": "keep going",
    }
    assert _wire(req.hook_decision("approve"))["response"]["response"] == {"decision": "approve"}
    full = req.hook_output(
        continue_=False,
        suppress_output=True,
        stop_reason="stop",
        decision="block",
        reason="r",
        system_message="m",
    )
    assert _wire(full)["response"]["response"] == {
        "continue": False,
        "suppressOutput": True,
        "stopReason": "stop",
        "decision": "block",
        "reason": "r",
        "systemMessage": "m",
    }


def test_success_and_error_work_for_any_subtype() -> None:
    """success() and error() answer any request; success(None) sends an empty object."""
    for req in (_can_use_tool(), _hook(), _first("mcp_sdk.jsonl", InboundControlRequest)):
        assert req.success().response == ControlSuccess(request_id=req.request_id, response={})
        assert req.success({"x": 1}).response == ControlSuccess(
            request_id=req.request_id, response={"x": 1}
        )
        assert req.error("boom").response == ControlFailure(request_id=req.request_id, error="boom")


@pytest.mark.parametrize(
    ("make", "helper"),
    [
        (_hook, lambda r: r.allow()),
        (_hook, lambda r: r.deny("no")),
        (_can_use_tool, lambda r: r.pre_tool_use("allow")),
        (_can_use_tool, lambda r: r.hook_decision("approve")),
        (_can_use_tool, lambda r: r.hook_output(continue_=True)),
        (_can_use_tool, lambda r: r.mcp_response({})),
        (lambda: _first("mcp_sdk.jsonl", InboundControlRequest), lambda r: r.allow()),
    ],
)
def test_a_helper_for_the_wrong_subtype_is_a_usage_error(make: Any, helper: Any) -> None:
    """allow() on a hook callback (and the like) raises UsageError."""
    with pytest.raises(UsageError):
        helper(make())


# ------------------------------------------------------------------ recorded fields


def test_can_use_tool_fields() -> None:
    """can_use_tool carries tool, input, suggestions, blocked path, reasons, MCP server."""
    req = _first("allow_modified_input.jsonl", InboundControlRequest).request
    assert isinstance(req, CanUseToolRequest)
    assert req.tool_name == "Bash"
    assert req.display_name == "Bash"
    assert req.input == {"command": "touch original.txt", "description": "Create a file"}
    assert req.blocked_path is not None
    assert req.blocked_path.endswith("original.txt")
    assert req.tool_use_id is not None
    assert req.tool_use_id.startswith("toolu_")
    assert req.permission_suggestions is not None
    assert req.permission_suggestions[0]["type"] == "addRules"

    asked = _first(
        "hook_permission_decision.jsonl",
        InboundControlRequest,
        lambda m: isinstance(m.request, CanUseToolRequest),
    ).request
    assert asked.decision_reason == "driver hook says ask"
    assert asked.decision_reason_type == "hook"
    assert asked.decision_reason_hook_event == "PreToolUse"

    mcp = _first(
        "mcp_sdk.jsonl", InboundControlRequest, lambda m: isinstance(m.request, CanUseToolRequest)
    ).request
    assert mcp.mcp_server == {"name": "fe", "source": "sdk"}
    assert mcp.server_policy_ask_only is True


def test_hook_callback_and_mcp_message_fields() -> None:
    """hook_callback has callback_id and input; mcp_message has server_name and JSON-RPC."""
    hook = _hook().request
    assert isinstance(hook, HookCallbackRequest)
    assert hook.callback_id == "hook_pre_bash"
    assert hook.input["hook_event_name"] == "PreToolUse"
    assert hook.tool_use_id == hook.input["tool_use_id"]
    mcp = _first("mcp_sdk.jsonl", InboundControlRequest).request
    assert isinstance(mcp, McpMessageRequest)
    assert mcp.server_name == "fe"
    assert mcp.message["method"] == "initialize"
    assert mcp.message["jsonrpc"] == "2.0"


def test_control_responses_from_the_cli() -> None:
    """The CLI's answers: success bodies, empty success, and errors with a code."""
    answers = [m for m in _decoded("control_misc.jsonl") if isinstance(m, InboundControlResponse)]
    init = answers[0]
    assert isinstance(init.response, ControlSuccess)
    assert init.response.response is not None
    assert "commands" in init.response.response
    assert init.response.pending_permission_requests == []
    assert init.request_id == init.response.request_id
    assert any(
        isinstance(a.response, ControlSuccess) and a.response.response is None for a in answers
    )
    error = answers[-1].response
    assert error == ControlFailure(
        request_id=error.request_id,
        error="Unsupported control request subtype: definitely_unknown_subtype",
        error_code="unsupported_request",
    )
    old = [
        m
        for m in _decoded("v2.1.197/control_misc.jsonl")
        if isinstance(m, InboundControlResponse) and isinstance(m.response, ControlFailure)
    ]
    assert old[0].response.error_code is None  # type: ignore[union-attr]


def test_result_fields() -> None:
    """result: usage, modelUsage with contextWindow, cost, denials, terminal reason."""
    result = _first("bash_deny.jsonl", ResultMessage)
    assert result.subtype == "success"
    assert result.is_error is False
    assert result.total_cost_usd > 0
    assert result.usage is not None
    assert result.usage.input_tokens
    model, usage = next(iter(result.model_usage.items()))
    assert model.startswith("claude-")
    assert usage.context_window == 1_000_000
    assert usage.cost_usd > 0
    assert usage.cache_creation_ephemeral_5m_input_tokens == 0
    assert result.permission_denials[0].tool_name == "Bash"
    assert result.permission_denials[0].tool_input["command"]
    assert result.terminal_reason == "completed"

    interrupted = _first("interrupt.jsonl", ResultMessage)
    assert interrupted.subtype == "error_during_execution"
    assert interrupted.is_error
    assert interrupted.terminal_reason == "aborted_streaming"
    assert interrupted.errors
    api_error = _first("exit_code.jsonl", ResultMessage)
    assert (api_error.is_error, api_error.api_error_status) == (True, 400)


def test_assistant_and_user_fields() -> None:
    """assistant lines carry one block each; user lines carry tool results and raw results."""
    basic = [m for m in _decoded("basic.jsonl") if isinstance(m, AssistantMessage)]
    assert isinstance(basic[0].message.content[0], ThinkingBlock)
    assert isinstance(basic[1].message.content[0], TextBlock)
    assert basic[0].message.stop_reason is None
    aborted = _first("interrupt.jsonl", AssistantMessage)
    assert aborted.aborted is True
    synthetic = _first("exit_code.jsonl", AssistantMessage)
    assert (synthetic.is_api_error_message, synthetic.error) == (True, "unknown")
    sub = _first("task_subagent.jsonl", AssistantMessage, lambda m: m.agent_id is not None)
    assert isinstance(sub.message.content[0], ToolUseBlock)
    assert sub.parent_tool_use_id is not None

    result = _first("allow_modified_input.jsonl", UserMessage, lambda m: bool(m.tool_use_result))
    block = result.message.content[0]
    assert isinstance(block, ToolResultBlock)
    assert block.is_error is False
    assert result.tool_use_result_value()["stdout"] == ""
    assert isinstance(result.tool_use_result, msgspec.Raw)
    assert result.tool_result_meta[0].permission_decision.decision == "accept"
    replay = _first("multi_turn.jsonl", UserMessage, lambda m: m.is_replay)
    assert replay.message.content == "first question"
    assert _first("interrupt.jsonl", UserMessage).tool_use_result_value() is None


def test_stream_events() -> None:
    """Every SSE event and delta kind recorded decodes into its class."""
    events = [m for m in _decoded("basic.jsonl") if isinstance(m, StreamEvent)]
    kinds = {type(e.event) for e in events}
    assert {MessageStart, ContentBlockStart, ContentBlockDelta, ContentBlockStop} <= kinds
    assert {MessageDelta, MessageStop} <= kinds
    deltas = {type(e.event.delta) for e in events if isinstance(e.event, ContentBlockDelta)}
    assert {TextDelta, ThinkingDelta, SignatureDelta} <= deltas
    tool = [m for m in _decoded("bash_deny.jsonl") if isinstance(m, StreamEvent)]
    assert any(
        isinstance(e.event, ContentBlockDelta) and isinstance(e.event.delta, InputJsonDelta)
        for e in tool
    )
    stop = next(e.event for e in tool if isinstance(e.event, MessageDelta))
    assert stop.delta.stop_reason == "tool_use"
    start = next(e for e in events if isinstance(e.event, MessageStart))
    assert start.ttft_ms is not None
    assert isinstance(start.event, MessageStart)
    assert start.api_message_id == start.event.message.id
    broken = [
        m for m in _decoded("interrupt.jsonl") if isinstance(m, StreamEvent) and m.abandoned_blocks
    ]
    assert broken[0].abandoned_blocks.from_block_index == 1  # type: ignore[union-attr]


def test_system_messages_from_the_transcripts() -> None:
    """init, status, thinking tokens, task lifecycle and permission_denied carry their fields."""
    init = _first("basic.jsonl", SystemInit)
    assert init.session_id
    assert "Bash" in init.tools
    assert init.permission_mode == "default"
    assert init.claude_code_version == "2.1.332"
    assert init.api_key_source == "ANTHROPIC_API_KEY"
    mcp_init = _first("mcp_sdk.jsonl", SystemInit)
    assert mcp_init.mcp_servers[0].name == "fe"
    assert mcp_init.mcp_servers[0].source == "sdk"
    mode = _first("set_model_and_mode.jsonl", SystemStatus, lambda m: m.status is None)
    assert mode.permission_mode == "acceptEdits"
    assert _first("basic.jsonl", SystemThinkingTokens).estimated_tokens == 4
    assert _first("task_subagent.jsonl", SystemTaskStarted).is_backgrounded is False
    progress = _first("task_subagent.jsonl", SystemTaskProgress)
    assert progress.usage is not None
    assert progress.usage.tool_uses == 1
    assert _first("task_subagent.jsonl", SystemTaskUpdated).patch["status"] == "completed"
    assert _first("task_subagent.jsonl", SystemTaskNotification).status == "completed"
    denied = _first("no_prompt_tool.jsonl", SystemPermissionDenied)
    assert denied.tool_name == "Bash"
    lifecycle = [m for m in _decoded("multi_turn.jsonl") if isinstance(m, CommandLifecycle)]
    assert [m.state for m in lifecycle] == ["queued", "started", "completed"]


# ------------------------------------------------------ kinds not in the transcripts

NOT_RECORDED = [
    (
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,'
        '"retry_delay_ms":612.5,"error_status":529,"error":"overloaded"}',
        SystemApiRetry,
        {"attempt": 1, "retry_delay_ms": 612.5, "error": "overloaded"},
    ),
    (
        '{"type":"system","subtype":"background_tasks_changed","tasks":[{"id":"t"}]}',
        SystemBackgroundTasksChanged,
        {"tasks": [{"id": "t"}]},
    ),
    (
        '{"type":"system","subtype":"compact_boundary",'
        '"compact_metadata":{"trigger":"auto","pre_tokens":1000}}',
        SystemCompactBoundary,
        {},
    ),
    (
        '{"type":"system","subtype":"files_persisted","files":[{"filename":"a"}],"failed":[]}',
        SystemFilesPersisted,
        {"files": [{"filename": "a"}]},
    ),
    (
        '{"type":"system","subtype":"hook_started","hook_id":"h","hook_name":"n",'
        '"hook_event":"PreToolUse"}',
        SystemHookStarted,
        {"hook_event": "PreToolUse"},
    ),
    (
        '{"type":"system","subtype":"hook_progress","hook_id":"h","stdout":"o"}',
        SystemHookProgress,
        {"stdout": "o"},
    ),
    (
        '{"type":"system","subtype":"hook_response","hook_id":"h","exit_code":0,'
        '"outcome":"success"}',
        SystemHookResponse,
        {"exit_code": 0, "outcome": "success"},
    ),
    (
        '{"type":"control_cancel_request","request_id":"af21"}',
        ControlCancelRequest,
        {"request_id": "af21"},
    ),
    (
        '{"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","elapsed_time_seconds":3.5}',
        ToolProgress,
        {"elapsed_time_seconds": 3.5},
    ),
    (
        '{"type":"tool_use_summary","summary":"ran ls","preceding_tool_use_ids":["t"]}',
        ToolUseSummary,
        {"summary": "ran ls"},
    ),
    ('{"type":"keep_alive"}', KeepAlive, {}),
    (
        '{"type":"auth_status","isAuthenticating":true,"output":["open url"]}',
        AuthStatus,
        {"is_authenticating": True, "output": ["open url"]},
    ),
    (
        '{"type":"prompt_suggestion","suggestion":"try x"}',
        PromptSuggestion,
        {"suggestion": "try x"},
    ),
]


@pytest.mark.parametrize(
    ("line", "cls", "fields"), NOT_RECORDED, ids=[c.__name__ for _, c, _ in NOT_RECORDED]
)
def test_kinds_described_but_not_recorded(
    line: str, cls: type[Any], fields: dict[str, Any]
) -> None:
    """Message kinds the notes describe (or the SDK defines) decode into their classes."""
    msg = decode_line(line.encode())
    assert type(msg) is cls
    for key, value in fields.items():
        assert getattr(msg, key) == value
    assert decode_line(encode_message(msg).rstrip(b"\n")) == msg


def test_unknown_message_is_not_a_wire_struct() -> None:
    """UnknownMessage keeps type, subtype and the raw line."""
    msg = UnknownMessage(type="x", raw=b"{}")
    assert msg.subtype is None
    assert msg.raw == b"{}"
