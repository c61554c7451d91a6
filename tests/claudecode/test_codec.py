"""The line codec: every recorded line decodes into its specific type, bad lines never raise."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claudecode import _codec
from claudecode._codec import decode_line, decode_outbound_line, encode_message
from claudecode._codec import wire as codec_wire
from claudecode.content import TextBlock, UnknownBlock
from claudecode.control import (
    OutboundControlRequest,
    RawControl,
    UserInput,
    user_message,
)
from claudecode.messages import (
    AssistantMessage,
    CommandLifecycle,
    ControlCancelRequest,
    InboundControlRequest,
    InboundControlResponse,
    InboundMessage,
    KeepAlive,
    MalformedLine,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemInit,
    SystemMessage,
    SystemStatus,
    UnknownMessage,
    UserMessage,
)
from claudecode.stream_events import ContentBlockStart, MessageStart
from claudecode.system_messages import known_system_subtypes

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
TRANSCRIPT_FILES = sorted(
    p
    for p in [*TRANSCRIPTS.glob("*.jsonl"), *TRANSCRIPTS.glob("v2.1.197/*.jsonl")]
    if not p.name.endswith(".api.jsonl")
)
INBOUND_CLASSES = typing.get_args(InboundMessage)


def _lines(path: Path, direction: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for number, text in enumerate(path.read_text().splitlines(), 1):
        record = json.loads(text)
        if record["dir"] == direction:
            out.append((number, record["msg"]))
    return out


def _wire(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, ensure_ascii=False).encode()


def _id(path: Path) -> str:
    return str(path.relative_to(TRANSCRIPTS))


def _expected_tag(msg: dict[str, Any]) -> str:
    return str(msg["subtype"]) if msg["type"] == "system" else str(msg["type"])


def _wire_tag(decoded: object) -> str:
    tag = type(decoded).__struct_config__.tag  # type: ignore[attr-defined]
    return str(tag)


def test_transcripts_are_present() -> None:
    """The recorded transcripts (both CLI versions) are there to test against."""
    assert len(TRANSCRIPT_FILES) >= 30
    assert any(p.parent.name == "v2.1.197" for p in TRANSCRIPT_FILES)


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=_id)
def test_every_cli_line_decodes_into_its_specific_type(path: Path) -> None:
    """Every from_cli line decodes into the class of its type/subtype, never Unknown/Malformed."""
    offenders = []
    for number, msg in _lines(path, "from_cli"):
        decoded = decode_line(_wire(msg), number)
        if isinstance(decoded, (UnknownMessage, MalformedLine)):
            offenders.append(f"line {number}: {decoded!r:.300}")
        elif _wire_tag(decoded) != _expected_tag(msg):
            offenders.append(f"line {number}: {msg['type']} decoded as {type(decoded).__name__}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=_id)
def test_cli_lines_survive_a_round_trip(path: Path) -> None:
    """Re-encoding a decoded from_cli line and decoding it again gives the same message."""
    for _, msg in _lines(path, "from_cli"):
        decoded = decode_line(_wire(msg))
        assert decode_line(encode_message(decoded).rstrip(b"\n")) == decoded


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=_id)
def test_every_host_line_decodes_and_re_encodes_identically(path: Path) -> None:
    """Every to_cli line decodes into a specific outbound type and re-encodes to the same JSON."""
    offenders = []
    for number, msg in _lines(path, "to_cli"):
        decoded = decode_outbound_line(_wire(msg), number)
        if isinstance(decoded, (UnknownMessage, MalformedLine)):
            offenders.append(f"line {number}: {decoded!r:.300}")
            continue
        again = json.loads(encode_message(decoded))
        if again != msg:
            offenders.append(f"line {number}: {msg} re-encoded as {again}")
    assert not offenders, "\n".join(offenders)


def test_compact_and_spaced_json_decode_the_same() -> None:
    """Whitespace between tokens (the transcripts' style) does not matter."""
    msg = _lines(TRANSCRIPTS / "basic.jsonl", "from_cli")[-1][1]
    compact = json.dumps(msg, separators=(",", ":")).encode()
    assert decode_line(compact) == decode_line(_wire(msg))


# ----------------------------------------------------------------------- forward compat


def test_unknown_type_is_an_unknown_message_with_the_raw_line() -> None:
    """Unknown message types are forwarded as UnknownMessage with the raw bytes."""
    line = b'{"type":"brand_new","subtype":"x","data":[1,2]}'
    assert decode_line(line) == UnknownMessage(type="brand_new", subtype="x", raw=line)


def test_unknown_system_subtype_is_an_unknown_message() -> None:
    """An unknown system subtype is UnknownMessage, not an error."""
    line = b'{"type":"system","subtype":"brand_new","session_id":"s"}'
    assert decode_line(line) == UnknownMessage(type="system", subtype="brand_new", raw=line)


def test_unknown_control_request_subtype_is_an_unknown_message() -> None:
    """A control request of an unknown subtype is UnknownMessage carrying that subtype."""
    line = b'{"type":"control_request","request_id":"r1","request":{"subtype":"elicit"}}'
    assert decode_line(line) == UnknownMessage(type="control_request", subtype="elicit", raw=line)


def test_unknown_control_response_subtype_is_an_unknown_message() -> None:
    """A control response of an unknown subtype is UnknownMessage."""
    line = b'{"type":"control_response","response":{"subtype":"partial","request_id":"r"}}'
    assert decode_line(line) == UnknownMessage(type="control_response", subtype="partial", raw=line)


def test_unknown_stream_event_and_delta_types_are_unknown_messages() -> None:
    """An SSE event or delta type we do not know gives UnknownMessage with that type."""
    event = b'{"type":"stream_event","event":{"type":"brand_new_event"}}'
    assert decode_line(event) == UnknownMessage(
        type="stream_event", subtype="brand_new_event", raw=event
    )
    delta = (
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
        b'"delta":{"type":"hologram_delta","x":1}}}'
    )
    assert decode_line(delta) == UnknownMessage(
        type="stream_event", subtype="hologram_delta", raw=delta
    )


def test_unknown_content_block_becomes_unknown_block_and_re_encodes_as_sent() -> None:
    """A message with an unknown block type still decodes; the block keeps its original JSON."""
    block = {"type": "hologram", "beam": [1, 2]}
    msg = {
        "type": "assistant",
        "message": {"id": "m", "content": [{"type": "text", "text": "hi"}, block]},
        "uuid": "u",
    }
    decoded = decode_line(_wire(msg))
    assert isinstance(decoded, AssistantMessage)
    assert decoded.message.content == [
        TextBlock(text="hi"),
        UnknownBlock(block_type="hologram", data=block),
    ]
    assert json.loads(encode_message(decoded))["message"]["content"][1] == block


def test_unknown_block_in_stream_events_and_user_lines() -> None:
    """content_block_start, message_start and user lines also accept unknown blocks."""
    start = {
        "type": "stream_event",
        "event": {"type": "content_block_start", "index": 0, "content_block": {"type": "zz"}},
    }
    decoded = decode_line(_wire(start))
    assert isinstance(decoded, StreamEvent)
    assert isinstance(decoded.event, ContentBlockStart)
    assert decoded.event.content_block == UnknownBlock(block_type="zz", data={"type": "zz"})
    assert json.loads(encode_message(decoded)) == start

    mstart = {
        "type": "stream_event",
        "event": {"type": "message_start", "message": {"id": "m", "content": [{"type": "q"}]}},
    }
    decoded = decode_line(_wire(mstart))
    assert isinstance(decoded, StreamEvent)
    assert isinstance(decoded.event, MessageStart)
    assert decoded.event.message.content == [UnknownBlock(block_type="q", data={"type": "q"})]

    user = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "q", "a": 1}]},
        "tool_use_result": {"x": 1},
    }
    decoded = decode_line(_wire(user))
    assert isinstance(decoded, UserMessage)
    assert decoded.message.content == [UnknownBlock(block_type="q", data={"type": "q", "a": 1})]
    assert decoded.tool_use_result_value() == {"x": 1}


def test_unknown_fields_are_ignored() -> None:
    """Keys a struct does not declare are ignored."""
    line = b'{"type":"keep_alive","future_key":{"deep":[1]}}'
    assert decode_line(line) == KeepAlive()


def test_rate_limit_has_two_type_names() -> None:
    """Both rate_limit_event and the older rate_limit decode into RateLimitEvent."""
    for typ in ("rate_limit_event", "rate_limit"):
        line = (
            b'{"type":"%s","rate_limit_info":{"status":"allowed_warning","resetsAt":1700000000,'
            b'"rateLimitType":"five_hour","utilization":0.9}}' % typ.encode()
        )
        decoded = decode_line(line)
        assert isinstance(decoded, RateLimitEvent)
        assert decoded.rate_limit_info.status == "allowed_warning"
        assert decoded.rate_limit_info.resets_at == 1700000000
        assert decoded.rate_limit_info.rate_limit_type == "five_hour"


# --------------------------------------------------------------------------- bad lines


def test_not_json_is_malformed_with_its_line_number() -> None:
    """A line that is not JSON becomes MalformedLine(reason="not_json") with its number."""
    decoded = decode_line(b"Loading configuration...", 17)
    assert isinstance(decoded, MalformedLine)
    assert decoded.reason == "not_json"
    assert decoded.line_number == 17
    assert decoded.line == b"Loading configuration..."
    assert decoded.error


@pytest.mark.parametrize(
    "line",
    [b"[1,2]", b"42", b'"text"', b"null", b'{"no_type":1}', b'{"type":7}'],
)
def test_json_of_the_wrong_shape_is_malformed(line: bytes) -> None:
    """JSON that is not an object with a string type is MalformedLine(reason="wrong_shape")."""
    decoded = decode_line(line, 3)
    assert isinstance(decoded, MalformedLine)
    assert decoded.reason == "wrong_shape"
    assert decoded.line_number == 3


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"assistant","message":5}',
        b'{"type":"system"}',
        b'{"type":"control_request","request":{"subtype":"can_use_tool","tool_name":"B"}}',
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":"0",'
        b'"delta":{"type":"text_delta","text":"x"}}}',
    ],
)
def test_known_type_without_an_essential_field_is_unknown(line: bytes) -> None:
    """A known type missing an essential field (or its subtype) is an UnknownMessage with the
    raw line and the reason; the other lenient cases are in test_lenient.py."""
    decoded = decode_line(line)
    assert isinstance(decoded, UnknownMessage)
    assert decoded.raw == line
    assert decoded.reason


def test_truncated_json_is_not_json() -> None:
    """A cut-off line is not_json even when its start already looks wrong."""
    for line in (b'{"type":"assistant","message":{', b"[1,", b'{"type": "user"'):
        decoded = decode_line(line)
        assert isinstance(decoded, MalformedLine)
        assert decoded.reason == "not_json"


def test_malformed_line_is_truncated_to_one_kib() -> None:
    """MalformedLine keeps at most MALFORMED_LINE_MAX bytes of the line."""
    decoded = decode_line(b"x" * 100_000)
    assert isinstance(decoded, MalformedLine)
    assert len(decoded.line) == _codec.MALFORMED_LINE_MAX == 1024


def test_absurd_nesting_does_not_raise() -> None:
    """Nesting deeper than the decoder supports is reported, not raised."""
    for line in (b"[" * 100_000, b'{"type":"user","message":' + b"[" * 50_000):
        assert isinstance(decode_line(line), MalformedLine)


def test_trailing_carriage_return_is_tolerated() -> None:
    """A CRLF line ending decodes like LF."""
    assert decode_line(b'{"type":"keep_alive"}\r') == KeepAlive()
    assert decode_outbound_line(b'{"type":"keep_alive"}\r') == decode_outbound_line(
        b'{"type":"keep_alive"}'
    )


def test_decode_accepts_bytearray_and_memoryview() -> None:
    """Any bytes-like line decodes."""
    line = b'{"type":"control_cancel_request","request_id":"r"}'
    assert decode_line(bytearray(line)) == ControlCancelRequest(request_id="r")  # type: ignore[arg-type]
    assert decode_line(memoryview(line)) == ControlCancelRequest(request_id="r")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- encoding


def test_encoded_messages_are_single_lines() -> None:
    """encode_message writes compact JSON and exactly one trailing newline."""
    data = encode_message(user_message("line one\nline two"))
    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1


def test_system_messages_encode_with_their_type() -> None:
    """Encoding a system message writes "type": "system" back."""
    status = SystemStatus(status="requesting", session_id="s")
    data = encode_message(status)
    assert json.loads(data) == {
        "type": "system",
        "subtype": "status",
        "status": "requesting",
        "session_id": "s",
    }
    assert decode_line(data.rstrip(b"\n")) == status


def test_unknown_and_malformed_encode_as_their_lines() -> None:
    """A fake CLI can write UnknownMessage / MalformedLine back verbatim."""
    unknown = decode_line(b'{"type":"zz","a":1}')
    assert encode_message(unknown) == b'{"type":"zz","a":1}\n'
    garbage = decode_line(b"not json at all", 1)
    assert encode_message(garbage) == b"not json at all\n"


def test_encoding_something_unencodable_raises_type_error() -> None:
    """Objects that are not JSON are a TypeError, not a silent bad line."""
    bad = OutboundControlRequest(request_id="r", request=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_message(bad)


def test_raw_control_encodes_flat() -> None:
    """A RawControl body is written as {"subtype": ..., **payload}."""
    msg = OutboundControlRequest(request_id="r1", request=RawControl("future", {"a": [1]}))
    assert json.loads(encode_message(msg)) == {
        "type": "control_request",
        "request_id": "r1",
        "request": {"subtype": "future", "a": [1]},
    }


# ---------------------------------------------------------------------- outbound decode


def test_outbound_unknown_subtype_decodes_as_raw_control() -> None:
    """A control request of an unknown subtype decodes with a RawControl body."""
    line = b'{"type":"control_request","request_id":"r","request":{"subtype":"zz","k":1}}'
    assert decode_outbound_line(line) == OutboundControlRequest(
        request_id="r", request=RawControl("zz", {"k": 1})
    )


def test_outbound_unknown_and_malformed() -> None:
    """decode_outbound_line never raises either."""
    assert decode_outbound_line(b'{"type":"zz"}') == UnknownMessage(type="zz", raw=b'{"type":"zz"}')
    bad = decode_outbound_line(b"{", 9)
    assert isinstance(bad, MalformedLine)
    assert (bad.reason, bad.line_number) == ("not_json", 9)
    wrong = decode_outbound_line(b'{"type":"control_request","request":{"subtype":"interrupt"}}')
    assert isinstance(wrong, MalformedLine)
    assert wrong.reason == "wrong_shape"
    bad_resp = decode_outbound_line(b'{"type":"control_response","response":{"subtype":"maybe"}}')
    assert isinstance(bad_resp, UnknownMessage)
    assert bad_resp.subtype == "maybe"


def test_outbound_user_message_with_unknown_block() -> None:
    """An outbound user message with an unknown block decodes and re-encodes unchanged."""
    msg = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "hologram", "x": 1}]},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    decoded = decode_outbound_line(_wire(msg))
    assert isinstance(decoded, UserInput)
    assert json.loads(encode_message(decoded)) == msg


# --------------------------------------------------------------------------- properties

_KNOWN_TYPES = [*sorted(codec_wire.INBOUND_TYPES), "brand_new"]
_FIELD_NAMES = [
    "type",
    "subtype",
    "message",
    "event",
    "request",
    "response",
    "request_id",
    "content",
    "delta",
    "index",
    "content_block",
    "session_id",
    "uuid",
    "tool_use_result",
    "usage",
    "modelUsage",
    "input",
    "text",
]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_FIELD_NAMES) | st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)
block_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "thinking", "image", "zz"])},
    optional={"text": json_values, "id": json_values, "name": json_values, "input": json_values},
)
typed_objects = st.builds(
    lambda extra, typ, sub, inner: {**extra, "type": typ, **sub, **inner},
    st.dictionaries(st.sampled_from(_FIELD_NAMES) | st.text(max_size=8), json_values, max_size=6),
    st.sampled_from(_KNOWN_TYPES),
    st.sampled_from([{}, {"subtype": "x"}])
    | st.builds(lambda s: {"subtype": s}, st.sampled_from(sorted(known_system_subtypes()))),
    st.sampled_from([{}])
    | st.builds(lambda b: {"message": {"content": b}}, st.lists(block_like, max_size=3))
    | st.builds(
        lambda t, b: {"event": {"type": t, "index": 0, "content_block": b, "delta": b}},
        st.sampled_from(["content_block_start", "content_block_delta", "message_stop", "zz"]),
        block_like,
    )
    | st.builds(
        lambda s, d: {"request_id": "r", "request": {"subtype": s, **d}},
        st.sampled_from(["can_use_tool", "hook_callback", "mcp_message", "zz"]),
        st.dictionaries(st.sampled_from(_FIELD_NAMES), json_values, max_size=3),
    ),
)


def _check(result: object) -> None:
    assert isinstance(result, INBOUND_CLASSES)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    """Any bytes decode to some InboundMessage; nothing raises."""
    _check(decode_line(data, 1))
    result = decode_outbound_line(data, 1)
    assert result is not None


@given(json_values)
def test_arbitrary_json_never_raises(value: Any) -> None:
    """Any JSON value decodes to some InboundMessage; nothing raises."""
    line = json.dumps(value).encode()
    result = decode_line(line)
    _check(result)
    if not isinstance(value, dict):
        assert isinstance(result, MalformedLine)
        assert result.reason == "wrong_shape"


@given(typed_objects)
def test_objects_with_known_types_and_random_fields_never_raise(value: dict[str, Any]) -> None:
    """Known types with random fields decode to a typed message, Unknown or Malformed."""
    line = json.dumps(value).encode()
    result = decode_line(line)
    _check(result)
    decode_outbound_line(line)
    if isinstance(result, UnknownMessage):
        assert result.raw == line
    elif not isinstance(result, MalformedLine):
        # Whatever decoded must also survive a round trip.
        assert decode_line(encode_message(result).rstrip(b"\n")) == result


# ------------------------------------------------------------------------- performance


def test_hot_path_is_one_typed_decode() -> None:
    """stream_event / assistant / user lines decode with the typed decoder alone (no fallback)."""
    for path in TRANSCRIPT_FILES:
        for _, msg in _lines(path, "from_cli"):
            if msg["type"] in ("stream_event", "assistant", "user"):
                line = _wire(msg)
                assert codec_wire.inbound_decoder.decode(line) == decode_line(line)


def test_decoded_types_cover_the_recorded_kinds() -> None:
    """The transcripts exercise the main message classes (guards against empty fixtures)."""
    seen: set[type] = set()
    for path in TRANSCRIPT_FILES:
        for _, msg in _lines(path, "from_cli"):
            seen.add(type(decode_line(_wire(msg))))
    for cls in (
        AssistantMessage,
        UserMessage,
        ResultMessage,
        StreamEvent,
        SystemInit,
        InboundControlRequest,
        InboundControlResponse,
        CommandLifecycle,
    ):
        assert cls in seen
    assert any(issubclass(c, SystemMessage) for c in seen)
