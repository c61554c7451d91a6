"""Lines that bend without breaking: a field nobody needs never costs a line or a session.

Unit cases of the lenient decode, a property test over every recorded line with one field
deleted or of another type, and sessions against a fake CLI that writes such lines.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claudecode._codec import decode_inbound as _decode_inbound
from claudecode._codec import decode_line, encode_message
from claudecode._codec import wire as codec_wire
from claudecode._codec.lenient import ESSENTIAL_FIELDS
from claudecode.content import TextBlock, ToolUseBlock
from claudecode.messages import (
    AssistantMessage,
    InboundMessage,
    MalformedLine,
    ResultMessage,
    StreamEvent,
    UnknownMessage,
    UserMessage,
)
from claudecode.protocol import ClaudeCodeProtocol
from claudecode.session import Session
from claudecode.stream_events import ContentBlockStart
from tests.claudecode._scripted_cli import result_line, scripted_options
from tests.support.timeouts import HANG_GUARD

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


# ------------------------------------------------------------------------ unit cases


def test_assistant_line_with_an_integer_timestamp_keeps_its_tool_call() -> None:
    line = (
        b'{"type":"assistant","timestamp":1732590000,"session_id":"s","message":{"id":"m",'
        b'"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash",'
        b'"input":{"command":"ls"}}]}}'
    )
    msg = decode_line(line)
    assert isinstance(msg, AssistantMessage)
    assert msg.message.content == [ToolUseBlock(id="toolu_1", name="Bash", input={"command": "ls"})]
    assert msg.timestamp is None and msg.session_id == "s"
    assert msg.lenient is not None and msg.lenient.raw == line
    assert any("$.timestamp" in r for r in msg.lenient.repairs)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"drop": ["subtype"]}, {"subtype": "", "total_cost_usd": 0.25, "num_turns": 1}),
        ({"total_cost_usd": None}, {"subtype": "success", "total_cost_usd": 0.0}),
        ({"num_turns": "1"}, {"num_turns": 0, "total_cost_usd": 0.25}),
        ({"usage": "lots", "modelUsage": {"m": {"inputTokens": "x"}}}, {"usage": None}),
    ],
)
def test_result_with_a_wrong_field_is_still_a_result(
    change: dict[str, Any], expected: dict[str, Any]
) -> None:
    msg = decode_line(json.dumps(result_line(**change)).encode())
    assert isinstance(msg, ResultMessage)
    assert msg.result == "done" and msg.session_id == "s1"
    for key, value in expected.items():
        assert getattr(msg, key) == value
    assert msg.lenient is not None and msg.lenient.repairs


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"type": "text"}, TextBlock(text="")),
        ({"type": "tool_use", "id": "toolu_9", "name": "Read"}, None),
    ],
)
def test_content_block_start_without_text_or_input(block: dict[str, Any], expected: object) -> None:
    line = {"type": "stream_event", "event": {"type": "content_block_start", "index": 2}}
    line["event"]["content_block"] = block  # type: ignore[index]
    msg = decode_line(json.dumps(line).encode())
    assert isinstance(msg, StreamEvent)
    assert isinstance(msg.event, ContentBlockStart) and msg.event.index == 2
    if expected is None:
        assert msg.event.content_block == ToolUseBlock(id="toolu_9", name="Read", input={})
    else:
        assert msg.event.content_block == expected


def test_system_line_without_subtype_is_unknown_with_the_raw_line() -> None:
    line = b'{"type":"system","session_id":"s","model":"m"}'
    msg = decode_line(line)
    assert msg == UnknownMessage(type="system", raw=line, reason="no string 'subtype'")


def test_control_request_without_an_essential_field_is_unknown_with_a_reason() -> None:
    line = b'{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool"}}'
    msg = decode_line(line)
    assert isinstance(msg, UnknownMessage)
    assert (msg.type, msg.subtype, msg.raw) == ("control_request", "can_use_tool", line)
    assert msg.reason is not None and "tool_name" in msg.reason


@pytest.mark.parametrize(
    ("escape", "text"),
    [
        (b"\\ud83d", "\ufffd"),
        (b"cut \\ud83d", "cut \ufffd"),
        (b"\\ude00 low first", "\ufffd low first"),
        (b"\\ud83d\\ude00 ok \\ud83d", "\U0001f600 ok \ufffd"),
        (b"\\\\ud83d is text", "\\ud83d is text"),
    ],
)
def test_lone_surrogate_escapes_become_replacement_characters(escape: bytes, text: str) -> None:
    line = b'{"type":"assistant","message":{"content":[{"type":"text","text":"' + escape + b'"}]}}'
    msg = decode_line(line)
    assert isinstance(msg, AssistantMessage)
    assert msg.message.content == [TextBlock(text=text)]
    if "\ufffd" in text:
        assert msg.lenient is not None and msg.lenient.raw == line


def test_a_leniently_decoded_line_encodes_back_as_it_came() -> None:
    line = json.dumps(result_line(num_turns="1")).encode()
    assert encode_message(decode_line(line)) == line + b"\n"


def test_strict_lines_never_take_the_lenient_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback runs only when the strict decode failed: the hot path is unchanged."""

    def boom(*args: object) -> None:
        raise AssertionError("lenient path taken")

    monkeypatch.setattr(_decode_inbound, "lenient_decode", boom)
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for obj in _from_cli(path):
            msg = decode_line(json.dumps(obj).encode())
            assert getattr(msg, "lenient", None) is None


def test_malformed_result_line_is_recognisable() -> None:
    cut = decode_line(b'{"type":"result","subtype":"success","result":"cut he')
    assert isinstance(cut, MalformedLine) and cut.type_hint == "result"
    # 2.1.332 writes "type" after the result's text, far into the line
    late = b'{"result":"' + b"x" * 5000 + b'","type":"result","subtype":"succ'
    assert decode_line(late).type_hint == "result"  # type: ignore[union-attr]
    inside = b'{"type":"assistant","message":{"content":[{"type":"text","text":"\\"type\\": '
    assert decode_line(inside + b'\\"result\\""').type_hint == "assistant"  # type: ignore[union-attr]
    assert decode_line(b"not json").type_hint is None  # type: ignore[union-attr]


# ------------------------------------------------------------------ property test


def _from_cli(path: Path) -> list[dict[str, Any]]:
    out = []
    for text in path.read_text().splitlines():
        record = json.loads(text)
        if record.get("dir") == "from_cli":
            out.append(record["msg"])
    return out


def _all_lines() -> list[tuple[str, list[dict[str, Any]]]]:
    files = sorted(
        p
        for p in [*TRANSCRIPTS.glob("*.jsonl"), *TRANSCRIPTS.glob("v2.1.197/*.jsonl")]
        if not p.name.endswith(".api.jsonl")
    )
    return [(str(p.relative_to(TRANSCRIPTS)), _from_cli(p)) for p in files]


ALL_LINES = _all_lines()
_VALUES_BY_TYPE: list[Any] = [None, 7, 2.5, "text", True, [], {}, [1, "x"], {"k": 1}]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``obj`` (dict keys and list indices)."""
    out: list[tuple[Any, ...]] = []
    items: Any = []
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    for key, value in items:
        path = (*prefix, key)
        out.append(path)
        if len(path) < 6:
            out.extend(_paths(value, path))
    return out


def _mutate(obj: Any, path: tuple[Any, ...], new: Any, delete: bool) -> None:
    node = obj
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = new


def _same_json_type(a: Any, b: Any) -> bool:
    def kind(v: Any) -> str:
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int | float):
            return "number"
        return type(v).__name__

    return kind(a) == kind(b)


def _wire(msg: Any) -> bytes:
    return json.dumps(msg, ensure_ascii=False).encode()


@st.composite
def mutated_window(draw: st.DrawFn) -> tuple[list[bytes], int, tuple[Any, ...], bool]:
    """A few consecutive recorded lines, one of them with one field deleted or retyped."""
    _, lines = draw(st.sampled_from([entry for entry in ALL_LINES if entry[1]]))
    start = draw(st.integers(0, len(lines) - 1))
    window = [json.loads(json.dumps(line)) for line in lines[start : start + 5]]
    target = draw(st.integers(0, len(window) - 1))
    # The top-level "type" says what a line is: without it no line is anything.
    paths = [p for p in _paths(window[target]) if p != ("type",)]
    path = draw(st.sampled_from(paths))
    delete = isinstance(path[-1], str) and draw(st.booleans())
    old = window[target]
    for key in path:
        old = old[key]
    new = draw(st.sampled_from([v for v in _VALUES_BY_TYPE if not _same_json_type(v, old)]))
    _mutate(window[target], path, new, delete)
    return [_wire(line) for line in window], target, path, delete


def _feed(lines: list[bytes], cuts: list[int]) -> list[InboundMessage]:
    protocol = ClaudeCodeProtocol()
    data = b"".join(line + b"\n" for line in lines)
    out: list[InboundMessage] = []
    points = sorted({min(c, len(data)) for c in cuts})
    previous = 0
    for point in [*points, len(data)]:
        if point > previous:  # b"" would mean the end of input
            out += protocol.receive_data(data[previous:point])
            previous = point
    out += protocol.receive_data(b"")
    return out


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_window(), st.lists(st.integers(0, 200_000), max_size=4))
def test_one_bent_field_never_costs_the_line_or_its_neighbours(
    case: tuple[list[bytes], int, tuple[Any, ...], bool], cuts: list[int]
) -> None:
    lines, target, path, _ = case
    original = [decode_line(line) for line in lines]
    mutated = decode_line(lines[target])
    type_name = json.loads(lines[target])["type"]
    if isinstance(mutated, UnknownMessage):
        # Only an essential field (or the subtype choosing the class) costs the line's type,
        # and even then the whole line is kept.
        assert mutated.type == type_name
        assert mutated.raw == lines[target]
        assert mutated.reason is not None or mutated.subtype is not None
        if len(path) == 1 and path[0] != "subtype":
            unmutated = decode_line(_wire(json.loads(lines[target]) | {path[0]: None}))
            cls = type(unmutated)
            assert path[0] in ESSENTIAL_FIELDS.get(cls, frozenset()) or isinstance(
                unmutated, UnknownMessage
            )
    else:
        assert not isinstance(mutated, MalformedLine), mutated
    # The line arrives as its own type whenever it is not unknown.
    expected_class = _expected_class(lines, target)
    if not isinstance(mutated, UnknownMessage) and expected_class is not None:
        assert type(mutated) is expected_class
    # The stream survives and no other line changes (the protocol consumes nothing here:
    # these control responses answer no request of this protocol object).
    streamed = _feed(lines, cuts)
    assert len(streamed) == len(lines)
    for index, (got, want) in enumerate(zip(streamed, original, strict=True)):
        if index != target:
            assert got == want


def _expected_class(lines: list[bytes], target: int) -> type | None:
    """The class the recorded (unmutated) line decodes to, known from its tag."""
    obj = json.loads(lines[target])
    typ = obj["type"]
    if typ == "system":
        return None  # the subtype may be what was bent
    for cls in typing.get_args(codec_wire.InboundWire):
        if cls.__struct_config__.tag == typ:
            return typing.cast(type, cls)
    return None


def test_every_top_level_field_of_every_line_is_optional_or_essential() -> None:
    """Deleting any one top-level field of any recorded line keeps the line's type, except
    for the documented essential fields (then: UnknownMessage with the raw line)."""
    failures = []
    for name, lines in ALL_LINES:
        for obj in lines:
            strict = decode_line(_wire(obj))
            for key in obj:
                if key == "type":
                    continue
                bent = {k: v for k, v in obj.items() if k != key}
                msg = decode_line(_wire(bent))
                essential = key in ESSENTIAL_FIELDS.get(type(strict), frozenset()) or (
                    obj["type"] == "system" and key == "subtype"
                )
                ok = (
                    isinstance(msg, UnknownMessage) and msg.raw == _wire(bent)
                    if essential
                    else type(msg) is type(strict)
                )
                if not ok:
                    failures.append(f"{name}: {obj['type']} without {key!r}: {msg!r:.200}")
    assert not failures, "\n".join(failures[:20])


# --------------------------------------------------------------------- sessions


async def _turn(session: Session) -> list[InboundMessage]:
    return [m async for m in session.receive_response()]


@pytest.mark.anyio
async def test_initialize_answer_with_agents_as_strings_connects(tmp_path: Path) -> None:
    plan = {
        "initialize": {"agents": ["claude", "Explore"], "commands": [], "pid": "1234"},
        "user": [[result_line()]],
    }
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            assert session.initialize_result is not None
            assert session.initialize_result.agents == []
            await session.send("hi")
            assert isinstance((await _turn(session))[-1], ResultMessage)


@pytest.mark.anyio
async def test_turn_of_bent_lines_keeps_tool_call_cost_and_ends(tmp_path: Path) -> None:
    """An integer timestamp, a streamed tool call without input, a lone surrogate and a
    result without subtype and with a null cost: every line arrives, the turn ends."""
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    plan = {
        "user": [
            [
                {
                    "type": "stream_event",
                    "event": {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash"},
                    },
                },
                {
                    "type": "assistant",
                    "timestamp": 1732590000,
                    "message": {"role": "assistant", "content": [tool_use]},
                },
                '{"type":"assistant","message":{"content":[{"type":"text","text":"\\ud83d"}]}}',
                result_line(drop=["subtype"], total_cost_usd=0.5, num_turns="2"),
            ],
            [result_line(result="second")],
        ]
    }
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            await session.send("go")
            got = await _turn(session)
            await session.send("again")
            second = await _turn(session)
    kinds = [StreamEvent, AssistantMessage, AssistantMessage, ResultMessage]
    assert [type(m) for m in got] == kinds
    start, tool, text, result = got
    assert isinstance(start, StreamEvent) and isinstance(start.event, ContentBlockStart)
    assert start.event.content_block == ToolUseBlock(id="toolu_1", name="Bash", input={})
    assert isinstance(tool, AssistantMessage)
    assert tool.message.content == [
        ToolUseBlock(id="toolu_1", name="Bash", input={"command": "ls"})
    ]
    assert isinstance(text, AssistantMessage)
    assert text.message.content == [TextBlock(text="\ufffd")]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.total_cost_usd, result.result) == ("", 0.5, "done")
    assert result.lenient is not None
    assert [type(m) for m in second] == [ResultMessage]


@pytest.mark.anyio
async def test_unreadable_result_line_still_ends_the_turn(tmp_path: Path) -> None:
    plan = {
        "user": [
            ['{"type":"result","subtype":"success","result":"cut of', {"type": "keep_alive"}],
            [result_line(result="next")],
        ]
    }
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            await session.send("go")
            got = await _turn(session)
            assert [type(m) for m in got] == [MalformedLine]
            await session.send("again")
            rest = await _turn(session)
    assert [type(m) for m in rest][-1] is ResultMessage
    assert rest[-1].result == "next"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_malformed_can_use_tool_request_gets_an_error_answer(tmp_path: Path) -> None:
    """Every control request of the CLI is answered, malformed or not."""
    plan = {
        "user": [
            [
                {
                    "type": "control_request",
                    "request_id": "cli-1",
                    "request": {"subtype": "can_use_tool", "input": {"command": "ls"}},
                }
            ]
        ],
        "control_response": ['{"type":"result","subtype":"success","result":"{echo}"}'],
    }
    allowed: list[Any] = []

    async def can_use_tool(req: Any) -> Any:
        allowed.append(req)
        return req.allow()

    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan), can_use_tool=can_use_tool) as s:
            await s.send("go")
            got = await _turn(s)
    unknown, result = got
    assert isinstance(unknown, UnknownMessage) and unknown.subtype == "can_use_tool"
    assert isinstance(result, ResultMessage) and result.result is not None
    answer = json.loads(result.result)
    assert answer["response"]["subtype"] == "error"
    assert answer["response"]["request_id"] == "cli-1"
    assert "tool_name" in answer["response"]["error"]
    assert allowed == []  # the callback never saw a request it could not read


def test_user_message_with_bad_tool_use_result_keeps_its_content() -> None:
    line = (
        b'{"type":"user","timestamp":5,"message":{"content":[{"type":"tool_result",'
        b'"tool_use_id":"t","content":"x"}]},"tool_use_result":{"stdout":"x"}}'
    )
    msg = decode_line(line)
    assert isinstance(msg, UserMessage)
    assert msg.tool_use_result_value() == {"stdout": "x"}
    assert msg.message.content[0].tool_use_id == "t"  # type: ignore[union-attr,index]
    assert isinstance(msgspec.json.decode(encode_message(msg)), dict)


@pytest.mark.parametrize("chunk", [None, 1, 97, 5000])
def test_too_long_result_with_its_type_at_the_end_is_recognised(chunk: int | None) -> None:
    """2.1.332 writes a result's "type" after its text: a too-long result is still known
    as one (from the line's tail), so receive_response() stops there."""
    line = json.dumps(
        {"result": "x" * 20_000, "type": "result", "subtype": "success", "uuid": "u" * 500}
    ).encode()
    data = line + b"\n" + b'{"type":"keep_alive"}\n'
    protocol = ClaudeCodeProtocol(max_line_bytes=2000)
    step = chunk or len(data)
    out: list[InboundMessage] = []
    for i in range(0, len(data), step):
        out += protocol.receive_data(data[i : i + step])
    too_long, keep_alive = out
    assert isinstance(too_long, MalformedLine) and too_long.reason == "too_long"
    assert too_long.type_hint == "result"
    assert type(keep_alive).__name__ == "KeepAlive"
