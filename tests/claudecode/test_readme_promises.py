"""The README's promises about the client, one test each: timeouts and "nothing lost".

* ``permission_timeout``: a permission request nobody answers is denied (``interrupt``).
* ``control_timeout``: a control request the CLI never answers is a ``ControlTimeoutError``
  and the session goes on.
* Nothing lost: every line the CLI writes arrives as exactly one message, in order, and its
  bytes can be had back — unknown types, garbage, bent fields, lone surrogates alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claudecode import ControlTimeoutError
from claudecode._codec import decode_line, encode_message
from claudecode.control import Interrupt
from claudecode.messages import InboundMessage, MalformedLine, ResultMessage, UnknownMessage
from claudecode.protocol import ClaudeCodeProtocol
from claudecode.session import Session
from tests.claudecode._scripted_cli import result_line, scripted_options
from tests.support.timeouts import HANG_GUARD

_ASK = {
    "type": "control_request",
    "request_id": "cli-perm",
    "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}},
}

#: One of each kind of line a CLI may write; the result comes last.
MIXED_LINES: list[str] = [
    '{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[]}',
    '{"type":"brand_new_type","x":1}',
    '{"type":"system","subtype":"brand_new_subtype"}',
    "this is not json",
    '{"type":"assistant","timestamp":5,"message":{"content":[{"type":"text","text":"bent"}]}}',
    '{"type":"assistant","message":{"content":[{"type":"text","text":"cut \\ud83d"}]}}',
    '{"type":"assistant","message":{"content":[{"type":"future_block","data":1}]}}',
    '{"type":"stream_event","event":{"type":"content_block_start","index":0,'
    '"content_block":{"type":"tool_use","id":"t","name":"Bash"}}}',
    "[1, 2, 3]",
    '{"type":"system"}',
    json.dumps(result_line(num_turns="1", total_cost_usd=None)),
]


def _bytes_back(message: InboundMessage) -> bytes:
    """The line a message came from (or its strict re-encoding)."""
    if isinstance(message, UnknownMessage):
        return message.raw
    if isinstance(message, MalformedLine):
        return message.line
    lenient = getattr(message, "lenient", None)
    if lenient is not None:
        return bytes(lenient.raw)
    return encode_message(message).rstrip(b"\n")


@pytest.mark.anyio
async def test_permission_timeout_denies_an_unanswered_request(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    plan = {"user": [[_ASK]], "control_response": [json.dumps(result_line())]}
    opts = scripted_options(
        tmp_path, plan, permission_timeout=0.5, script_options={"record_path": str(record)}
    )
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            await session.send("go")
            turn = [m async for m in session.receive_response()]  # nobody answers
    assert isinstance(turn[-1], ResultMessage)
    received = [json.loads(line)["received"] for line in record.read_text().splitlines()[1:]]
    deny = next(m["response"] for m in received if m["type"] == "control_response")
    assert deny["request_id"] == "cli-perm"
    assert deny["response"]["behavior"] == "deny" and deny["response"]["interrupt"] is True


@pytest.mark.anyio
async def test_control_timeout_bounds_an_unanswered_request(tmp_path: Path) -> None:
    plan = {"control_request": [], "user": [[result_line(result="after")]]}  # never answers
    opts = scripted_options(tmp_path, plan, initialize=False, control_timeout=20)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            with pytest.raises(ControlTimeoutError):
                await session.request(Interrupt(), timeout=0.5)
            await session.send("still there?")
            turn = [m async for m in session.receive_response()]
    assert turn[-1].result == "after"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_nothing_is_lost_between_the_cli_and_the_consumer(tmp_path: Path) -> None:
    plan = {"user": [MIXED_LINES]}
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            await session.send("go")
            got = [m async for m in session.receive_response()]
    assert len(got) == len(MIXED_LINES)
    for message, line in zip(got, MIXED_LINES, strict=True):
        assert _bytes_back(message) == decode_line_bytes(line)


def decode_line_bytes(line: str) -> bytes:
    """What the client gives back for ``line``: the line itself, or for a line that decodes
    strictly, its re-encoding (the same JSON)."""
    message = decode_line(line.encode())
    return _bytes_back(message)


@settings(max_examples=200)
@given(
    st.lists(st.sampled_from(MIXED_LINES), min_size=1, max_size=30),
    st.lists(st.integers(1, 4000), max_size=6),
)
def test_nothing_is_lost_in_any_order_or_chunking(lines: list[str], cuts: list[int]) -> None:
    data = b"".join(line.encode() + b"\n" for line in lines)
    protocol = ClaudeCodeProtocol()
    out: list[Any] = []
    previous = 0
    for point in [*sorted(set(cuts)), len(data)]:
        if previous < point <= len(data):
            out += protocol.receive_data(data[previous:point])
            previous = point
    out += protocol.receive_data(b"")
    assert [_bytes_back(m) for m in out] == [decode_line_bytes(line) for line in lines]
    assert all(not isinstance(m, MalformedLine) or m.line.strip() for m in out)
