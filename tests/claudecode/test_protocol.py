"""The sans-IO protocol: framing + typed decode + control-plane bookkeeping, no event loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claudecode import control as ctl
from claudecode._codec import decode_line, decode_outbound_line
from claudecode.content import LargeText, ToolResultBlock
from claudecode.errors import UsageError
from claudecode.messages import (
    ControlCancelRequest,
    InboundControlRequest,
    InboundControlResponse,
    MalformedLine,
    ResultMessage,
    UserMessage,
)
from claudecode.protocol import ClaudeCodeProtocol

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def from_cli_lines(name: str) -> list[bytes]:
    lines = []
    for raw in (TRANSCRIPTS / name).read_text().splitlines():
        entry = json.loads(raw)
        if entry.get("dir") == "from_cli":
            lines.append(json.dumps(entry["msg"]).encode())
    return lines


def cli_line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def success(request_id: str, body: dict[str, Any] | None = None) -> bytes:
    response: dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if body is not None:
        response["response"] = body
    return cli_line({"type": "control_response", "response": response})


BASIC = from_cli_lines("bash_deny.jsonl")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5000), max_size=60))
def test_any_chunking_of_a_transcript_gives_the_decoded_lines(cuts: list[int]) -> None:
    """Cutting a real CLI's stdout anywhere yields exactly the per-line decodes, in order."""
    data = b"".join(line + b"\n" for line in BASIC)
    proto = ClaudeCodeProtocol()
    points = sorted({c % (len(data) + 1) for c in cuts})
    got: list[Any] = []
    last = 0
    for point in [*points, len(data)]:
        if point > last:
            got += proto.receive_data(data[last:point])
            last = point
    got += proto.receive_data(b"")
    want = [decode_line(line, n) for n, line in enumerate(BASIC, 1)]
    assert want == got


def test_control_response_resolves_the_pending_request() -> None:
    """A success answer fills in the result and wakes the waiter; it is not a message."""
    proto = ClaudeCodeProtocol()
    pending, data = proto.start_request(ctl.SetModel(model="claude-haiku-4-5"))
    sent = decode_outbound_line(data.rstrip(b"\n"))
    assert isinstance(sent, ctl.OutboundControlRequest)
    assert sent.request_id == pending.request_id
    assert pending.subtype == "set_model"
    woken: list[str] = []
    pending.on_done = lambda: woken.append(pending.request_id)
    out = proto.receive_data(success(pending.request_id, {"model": "claude-haiku-4-5"}))
    assert [] == out
    assert pending.done and pending.failure is None
    assert {"model": "claude-haiku-4-5"} == pending.result
    assert [pending.request_id] == woken
    assert [] == proto.pending_requests


def test_error_answer_is_a_failure_with_code() -> None:
    """An error answer carries the CLI's text and error code."""
    proto = ClaudeCodeProtocol()
    pending, _ = proto.start_request(ctl.SetPermissionMode(mode="nonsense"))
    proto.receive_data(
        cli_line(
            {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": pending.request_id,
                    "error": "Cannot set permission mode",
                    "error_code": "invalid_mode",
                },
            }
        )
    )
    assert pending.failure is not None
    assert "invalid_mode" == pending.failure.error_code
    assert "Cannot set permission mode" == pending.failure.error


def test_request_ids_are_unique() -> None:
    """Every outbound request gets its own id."""
    proto = ClaudeCodeProtocol()
    ids = {proto.start_request(ctl.Interrupt())[0].request_id for _ in range(100)}
    assert 100 == len(ids)


def test_response_to_unknown_id_is_passed_on() -> None:
    """An answer nobody waits for is delivered as a message, not swallowed."""
    proto = ClaudeCodeProtocol()
    out = proto.receive_data(success("req_nobody"))
    assert [InboundControlResponse] == [type(m) for m in out]


def test_end_of_input_fails_every_pending_request() -> None:
    """When the CLI's output ends, waiters learn it at once (exited)."""
    proto = ClaudeCodeProtocol()
    a, _ = proto.start_request(ctl.Interrupt())
    b, _ = proto.start_request(ctl.McpStatus())
    proto.receive_data(b"")
    assert a.done and a.exited and b.done and b.exited
    with pytest.raises(UsageError):
        proto.start_request(ctl.Interrupt())
    with pytest.raises(UsageError):
        proto.receive_data(b"more")


CAN_USE_TOOL = {
    "type": "control_request",
    "request_id": "cli-1",
    "request": {
        "subtype": "can_use_tool",
        "tool_name": "Bash",
        "input": {"command": "touch x"},
        "tool_use_id": "toolu_1",
    },
}


def test_inbound_request_is_answered_once() -> None:
    """An answer to an open request encodes; a second answer is the caller's mistake."""
    proto = ClaudeCodeProtocol()
    [req] = proto.receive_data(cli_line(CAN_USE_TOOL))
    assert isinstance(req, InboundControlRequest)
    assert [req] == proto.open_inbound_requests
    data = proto.send(req.allow())
    answer = json.loads(data)
    assert {"behavior": "allow", "updatedInput": {"command": "touch x"}} == answer["response"][
        "response"
    ]
    assert "cli-1" == answer["response"]["request_id"]
    assert [] == proto.open_inbound_requests
    with pytest.raises(UsageError):
        proto.send(req.deny("again"))


def test_answer_after_cancel_writes_nothing() -> None:
    """The CLI cancelled the request: a late answer is dropped, as the CLI would ignore it."""
    proto = ClaudeCodeProtocol()
    [req] = proto.receive_data(cli_line(CAN_USE_TOOL))
    assert isinstance(req, InboundControlRequest)
    [cancel] = proto.receive_data(
        cli_line({"type": "control_cancel_request", "request_id": "cli-1"})
    )
    assert isinstance(cancel, ControlCancelRequest)
    assert b"" == proto.send(req.allow())


def test_answer_to_a_request_never_made_is_refused() -> None:
    """Answering an id the CLI never used is a UsageError."""
    proto = ClaudeCodeProtocol()
    with pytest.raises(UsageError):
        proto.send(ctl.error_response("made-up", "no"))


def test_oversized_and_garbage_lines_do_not_stop_the_stream() -> None:
    """A too-long line and a non-JSON line become MalformedLine; the next line decodes."""
    proto = ClaudeCodeProtocol(max_line_bytes=100)
    result = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s"}
    out = proto.receive_data(b"x" * 500 + b"\nnot json\n" + cli_line(result))
    assert [MalformedLine, MalformedLine, ResultMessage] == [type(m) for m in out]
    first, second = out[0], out[1]
    assert isinstance(first, MalformedLine) and isinstance(second, MalformedLine)
    assert ("too_long", 1) == (first.reason, first.line_number)
    assert ("not_json", 2) == (second.reason, second.line_number)


def test_send_many_is_one_buffer() -> None:
    """Several outbound messages encode into one write."""
    proto = ClaudeCodeProtocol()
    data = proto.send_many([ctl.user_message("a"), ctl.user_message("b")])
    lines = data.splitlines()
    assert 2 == len(lines)
    assert ["a", "b"] == [msgspec.json.decode(x)["message"]["content"] for x in lines]


@pytest.mark.slow
def test_default_line_limit_lets_a_64_mib_tool_output_through() -> None:
    """A 64 MiB tool output is written twice in its ``user`` line (block and structured
    result), with escapes and envelope: the default limit takes it, in any chunking."""
    piece = "0123456789 \u51fa\u529b \U0001f600 out\n"
    output = piece * ((64 << 20) // len(piece.encode()))  # 64 MiB of UTF-8
    line = msgspec.json.encode(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": output}],
            },
            "session_id": "s",
            "uuid": "u1",
            "tool_use_result": {"stdout": output, "stderr": "", "interrupted": False},
        }
    )
    assert len(line) > 2 * (64 << 20)
    protocol = ClaudeCodeProtocol()
    messages = []
    step = 1 << 20
    for offset in range(0, len(line), step):
        messages += protocol.receive_data(line[offset : offset + step])
    messages += protocol.receive_data(b"\n")
    [message] = messages
    assert isinstance(message, UserMessage)
    block = message.message.content[0]
    # That large, the text is kept as its wire bytes until read (claudecode.LargeText).
    assert isinstance(block, ToolResultBlock) and isinstance(block.content, LargeText)
    assert str(block.content) == output
