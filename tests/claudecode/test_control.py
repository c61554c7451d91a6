"""Outbound messages: wire shapes, round trips, user-message building, typed results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec import UNSET

from claudecode import control as ctl
from claudecode._codec import decode_outbound_line, encode_message
from claudecode.content import ImageBlock, TextBlock, ToolResultBlock, UnknownBlock
from claudecode.control import (
    ApplyFlagSettings,
    ControlFailure,
    ControlSuccess,
    GetContextUsage,
    Initialize,
    Interrupt,
    McpMessage,
    McpReconnect,
    McpSetServers,
    McpStatus,
    McpToggle,
    OutboundControlCancelRequest,
    OutboundControlRequest,
    OutboundControlResponse,
    OutboundKeepAlive,
    RawControl,
    RewindFiles,
    SetMaxThinkingTokens,
    SetModel,
    SetPermissionMode,
    StopTask,
    UpdateEnvironmentVariables,
    UserInput,
    UserInputMessage,
    parse_result,
    user_message,
)
from claudecode.errors import RemoteProtocolError, UsageError

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def _wire(msg: object) -> dict[str, Any]:
    data = encode_message(msg)  # type: ignore[arg-type]
    assert data.endswith(b"\n")
    result: dict[str, Any] = json.loads(data)
    return result


# ----------------------------------------------------------------------- wire shapes


def test_user_input_shape_matches_what_the_sdks_send() -> None:
    """A prompt carries parent_tool_use_id null and session_id "default"; uuid only if set."""
    assert _wire(user_message("hi")) == {
        "type": "user",
        "message": {"role": "user", "content": "hi"},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    assert _wire(user_message("hi", uuid="u-1"))["uuid"] == "u-1"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (Initialize(), {"subtype": "initialize"}),
        (
            Initialize(
                hooks={"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["h1"]}]},
                agents={"rev": {"description": "d", "prompt": "p"}},
                sdk_mcp_servers=["fe"],
                system_prompt="sys",
                append_system_prompt="more",
                json_schema={"type": "object"},
            ),
            {
                "subtype": "initialize",
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["h1"]}]},
                "agents": {"rev": {"description": "d", "prompt": "p"}},
                "sdkMcpServers": ["fe"],
                "systemPrompt": "sys",
                "appendSystemPrompt": "more",
                "jsonSchema": {"type": "object"},
            },
        ),
        (Interrupt(), {"subtype": "interrupt"}),
        (SetPermissionMode(mode="plan"), {"subtype": "set_permission_mode", "mode": "plan"}),
        (SetModel(model="claude-haiku-4-5"), {"subtype": "set_model", "model": "claude-haiku-4-5"}),
        (SetModel(), {"subtype": "set_model", "model": None}),
        (
            SetMaxThinkingTokens(max_thinking_tokens=1024),
            {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 1024},
        ),
        (
            ApplyFlagSettings(settings={"effortLevel": "low"}),
            {"subtype": "apply_flag_settings", "settings": {"effortLevel": "low"}},
        ),
        (
            ApplyFlagSettings(settings={"effortLevel": None}),
            {"subtype": "apply_flag_settings", "settings": {"effortLevel": None}},
        ),
        (McpStatus(), {"subtype": "mcp_status"}),
        (
            McpMessage(server_name="fe", message={"jsonrpc": "2.0", "method": "x"}),
            {
                "subtype": "mcp_message",
                "server_name": "fe",
                "message": {"jsonrpc": "2.0", "method": "x"},
            },
        ),
        (McpReconnect(server_name="fe"), {"subtype": "mcp_reconnect", "serverName": "fe"}),
        (
            McpToggle(server_name="fe", enabled=False),
            {"subtype": "mcp_toggle", "serverName": "fe", "enabled": False},
        ),
        (McpSetServers(servers={"a": {}}), {"subtype": "mcp_set_servers", "servers": {"a": {}}}),
        (
            RewindFiles(user_message_id="u1"),
            {"subtype": "rewind_files", "user_message_id": "u1", "dry_run": False},
        ),
        (GetContextUsage(), {"subtype": "get_context_usage"}),
        (StopTask(task_id="t1"), {"subtype": "stop_task", "task_id": "t1"}),
        (RawControl("anything", {"k": 1}), {"subtype": "anything", "k": 1}),
    ],
)
def test_control_request_bodies_use_the_wire_names(body: Any, expected: dict[str, Any]) -> None:
    """Each request body is written with the key names the CLI expects."""
    msg = OutboundControlRequest(request_id="req_1", request=body)
    assert _wire(msg) == {"type": "control_request", "request_id": "req_1", "request": expected}
    assert decode_outbound_line(encode_message(msg)) == msg


def test_small_outbound_messages() -> None:
    """Cancel, keep-alive, environment updates and control responses have their wire shapes."""
    assert _wire(OutboundControlCancelRequest(request_id="r")) == {
        "type": "control_cancel_request",
        "request_id": "r",
    }
    assert _wire(OutboundKeepAlive()) == {"type": "keep_alive"}
    assert _wire(UpdateEnvironmentVariables(variables={"A": "1"})) == {
        "type": "update_environment_variables",
        "variables": {"A": "1"},
    }
    assert _wire(ctl.error_response("r9", "nope")) == {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": "r9", "error": "nope"},
    }
    ok = OutboundControlResponse(response=ControlSuccess(request_id="r", response={"a": 1}))
    assert ok.request_id == "r"
    assert _wire(ok) == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "r", "response": {"a": 1}},
    }


def test_encode_raw_is_encode_message() -> None:
    """control.encode_raw writes the same line as the codec."""
    msg = user_message("x")
    assert ctl.encode_raw(msg) == encode_message(msg)


def test_raw_control_value_semantics() -> None:
    """RawControl compares by subtype and payload and copies the payload."""
    payload = {"a": 1}
    raw = RawControl("x", payload)
    payload["a"] = 2
    assert raw == RawControl("x", {"a": 1})
    assert raw != RawControl("y", {"a": 1})
    assert raw != "x"
    assert hash(raw) == hash(RawControl("x"))
    assert "subtype='x'" in repr(raw)
    assert RawControl("x", {"subtype": "ignored"}).to_wire() == {"subtype": "x"}


# ---------------------------------------------------------------------- user_message


def test_user_message_accepts_block_structs_and_mappings() -> None:
    """Blocks may be structs or Messages-API mappings; known mappings become structs."""
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AA=="},
    }
    msg = user_message([TextBlock(text="look"), image], parent_tool_use_id="toolu_1")
    assert msg.message.content == [
        TextBlock(text="look"),
        ImageBlock(source=image["source"]),  # type: ignore[arg-type]
    ]
    assert _wire(msg)["message"]["content"] == [{"type": "text", "text": "look"}, image]
    assert _wire(msg)["parent_tool_use_id"] == "toolu_1"
    assert decode_outbound_line(encode_message(msg)) == msg


def test_user_message_sends_unknown_block_types_unchanged() -> None:
    """A mapping of a block type this version does not know is written exactly as given."""
    block = {"type": "hologram", "beam": [1]}
    msg = user_message([block])
    assert msg.message.content == [UnknownBlock(block_type="hologram", data=block)]
    assert _wire(msg)["message"]["content"] == [block]


@pytest.mark.parametrize(
    "bad",
    [
        [{"type": "text"}],
        [{"text": "no type"}],
        ["just a string"],
        [Interrupt()],
    ],
)
def test_user_message_rejects_bad_blocks(bad: list[Any]) -> None:
    """Blocks of the wrong shape are the caller's mistake: UsageError."""
    with pytest.raises(UsageError):
        user_message(bad)


# ---------------------------------------------------------------------------- results


def _initialize_payloads() -> list[dict[str, Any]]:
    out = []
    for path in (TRANSCRIPTS / "basic.jsonl", TRANSCRIPTS / "v2.1.197" / "basic.jsonl"):
        for text in path.read_text().splitlines():
            record = json.loads(text)
            msg = record["msg"] if record["dir"] == "from_cli" else {}
            if msg.get("type") == "control_response" and "commands" in (
                msg["response"].get("response") or {}
            ):
                out.append(msg["response"]["response"])
    return out


def test_initialize_result_from_both_cli_versions() -> None:
    """The initialize answers of 2.1.332 and 2.1.197 parse into InitializeResult."""
    payloads = _initialize_payloads()
    assert len(payloads) == 2
    for payload in payloads:
        result = parse_result(ctl.InitializeResult, payload)
        assert result.commands
        assert result.commands[0].name == payload["commands"][0]["name"]
        assert result.commands[0].argument_hint == payload["commands"][0]["argumentHint"]
        assert result.models[0].value == "default"
        assert result.models[0].resolved_model == payload["models"][0]["resolvedModel"]
        assert result.account is not None
        assert result.account.api_key_source == "ANTHROPIC_API_KEY"
        assert result.agents[0].name == "claude"
        assert result.pid == payload["pid"]


def test_lenient_results_accept_missing_payloads() -> None:
    """2.1.197 answers set_model/interrupt without a body: results fall back to defaults."""
    assert parse_result(ctl.SetModelResult, None) == ctl.SetModelResult()
    assert parse_result(ctl.InterruptResult, None).still_queued == []
    assert parse_result(ctl.InterruptResult, {"still_queued": []}).still_queued == []
    assert parse_result(ctl.SetPermissionModeResult, {"mode": "plan"}).mode == "plan"
    assert parse_result(ctl.McpStatusResult, {"mcpServers": [{"name": "fe"}]}).mcp_servers == [
        {"name": "fe"}
    ]
    usage = parse_result(ctl.ContextUsageResult, {"totalTokens": 5, "maxTokens": 10, "x": 1})
    assert (usage.total_tokens, usage.max_tokens) == (5, 10)


def test_result_with_wrong_fields_keeps_what_it_can_read() -> None:
    """A wrong-typed field is dropped (default kept) and logged; the rest of the answer stays.
    Only a payload that is not an object at all is a RemoteProtocolError."""
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        result = parse_result(
            ctl.InitializeResult,
            {"pid": "not a number", "agents": ["claude", "Explore"], "claude_code_version": "9"},
        )
    assert (result.pid, result.agents, result.claude_code_version) == (None, [], "9")
    assert [e["event"] for e in logs] == ["control_result.repaired"]
    with pytest.raises(RemoteProtocolError):
        parse_result(ctl.InitializeResult, ["not", "an", "object"])  # type: ignore[arg-type]


# --------------------------------------------------------------- round-trip property

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)
_obj = st.dictionaries(st.text(max_size=6), _json, max_size=4)
_txt = st.text(max_size=12)
_opt_txt = st.none() | _txt

_blocks = st.lists(
    st.builds(TextBlock, text=_txt)
    | st.builds(ImageBlock, source=_obj)
    | st.builds(
        ToolResultBlock,
        tool_use_id=_txt,
        content=st.none() | _txt | st.lists(_json, max_size=2),
        is_error=st.none() | st.booleans(),
    ),
    max_size=3,
)
_bodies = st.one_of(
    st.builds(
        Initialize,
        hooks=st.none() | _obj,
        agents=st.none() | _obj,
        sdk_mcp_servers=st.none() | st.lists(_txt, max_size=2),
        system_prompt=_opt_txt,
        append_system_prompt=_opt_txt,
        json_schema=st.none() | _obj,
    ),
    st.just(Interrupt()),
    st.builds(SetPermissionMode, mode=_txt),
    st.builds(SetModel, model=_opt_txt),
    st.builds(SetMaxThinkingTokens, max_thinking_tokens=st.none() | st.integers(0, 10**6)),
    st.builds(ApplyFlagSettings, settings=_obj),
    st.just(McpStatus()),
    st.builds(McpMessage, server_name=_txt, message=_obj),
    st.builds(McpReconnect, server_name=_txt),
    st.builds(McpToggle, server_name=_txt, enabled=st.booleans()),
    st.builds(McpSetServers, servers=_obj),
    st.builds(RewindFiles, user_message_id=_txt, dry_run=st.booleans()),
    st.just(GetContextUsage()),
    st.builds(StopTask, task_id=_txt),
    st.builds(
        RawControl,
        st.text(min_size=1, max_size=10).filter(lambda s: s not in ctl_subtypes()),
        st.dictionaries(st.text(max_size=6).filter(lambda k: k != "subtype"), _json, max_size=3),
    ),
)


def ctl_subtypes() -> frozenset[str]:
    """The subtypes with a body class of their own."""
    from claudecode._codec import wire

    return wire.OUTBOUND_REQUEST_SUBTYPES


outbound_messages = st.one_of(
    st.builds(
        UserInput,
        message=st.builds(UserInputMessage, content=_txt | _blocks),
        parent_tool_use_id=_opt_txt,
        session_id=_txt,
        uuid=st.just(UNSET) | _txt,
    ),
    st.builds(OutboundControlRequest, request_id=_txt, request=_bodies),
    st.builds(
        OutboundControlResponse,
        response=st.builds(ControlSuccess, request_id=_txt, response=st.none() | _obj)
        | st.builds(ControlFailure, request_id=_txt, error=_txt, error_code=_opt_txt),
    ),
    st.builds(OutboundControlCancelRequest, request_id=_txt),
    st.just(OutboundKeepAlive()),
    st.builds(UpdateEnvironmentVariables, variables=st.dictionaries(_txt, _txt, max_size=3)),
)


@given(outbound_messages)
def test_every_outbound_message_round_trips(msg: Any) -> None:
    """decode_outbound_line(encode_message(m)) == m for every outbound message type."""
    line = encode_message(msg)
    assert line.count(b"\n") == 1
    assert decode_outbound_line(line.rstrip(b"\n")) == msg
