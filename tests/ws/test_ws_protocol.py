"""The WebSocket protocol as data: decoding arbitrary frames, errors, the published schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.backend import SessionInfo
from adapter.chat import ChatView
from adapter.events import MessageChunk, decode_event
from adapter.server.ws import (
    Ack,
    ClientFrame,
    CreateSession,
    Error,
    GetImage,
    Hello,
    PermissionResponse,
    Ping,
    Prompt,
    Snapshot,
    Subscribe,
    decode_client_frame,
    encode_frame,
    event_frame,
    ws_schema,
)

SCHEMA_FILE = Path(__file__).parents[2] / "docs" / "ws-schema.json"
REGENERATE = (
    "regenerate with: python -c 'import json; from adapter.server.ws import ws_schema; "
    "print(json.dumps(ws_schema(), indent=2, sort_keys=True))' > docs/ws-schema.json"
)


def test_published_schema_is_current() -> None:
    published = json.loads(SCHEMA_FILE.read_text())
    assert json.loads(json.dumps(ws_schema())) == published, REGENERATE


def test_schema_names_every_frame_type() -> None:
    schema = ws_schema()
    client = set(schema["client"]["discriminator"]["mapping"])
    server = set(schema["server"]["discriminator"]["mapping"])
    assert {
        "hello",
        "create_session",
        "list_sessions",
        "subscribe",
        "unsubscribe",
        "prompt",
        "permission_response",
        "interrupt",
        "set_model",
        "set_permission_mode",
        "close_session",
        "ping",
    } <= client
    assert {
        "event",
        "snapshot",
        "session_list",
        "session_changed",
        "ack",
        "error",
        "pong",
    } <= server


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{not json", "invalid_json"),
        (b"", "invalid_json"),
        (b"\xff\xfe", "invalid_json"),
        (b"[1,2]", "invalid_frame"),
        (b'"hello"', "invalid_frame"),
        (b"{}", "invalid_frame"),
        (b'{"type": 5}', "invalid_frame"),
        (b'{"type": "teleport", "request_id": "r1"}', "unknown_type"),
        (b'{"type": "prompt", "session_id": "s"}', "invalid_frame"),
        (b'{"type": "prompt", "session_id": 3, "text": "x"}', "invalid_frame"),
        (b'{"type": "subscribe", "session_id": "s", "since_seq": "1"}', "invalid_frame"),
        (
            b'{"type": "permission_response", "session_id": "s", "pending_id": "p",'
            b' "decision": "maybe"}',
            "invalid_frame",
        ),
    ],
)
def test_bad_frames_get_typed_errors(data: bytes, code: str) -> None:
    result = decode_client_frame(data)
    assert isinstance(result, Error) and code == result.code
    assert result.message


def test_errors_echo_the_request_id_and_name_the_field() -> None:
    result = decode_client_frame(b'{"type":"prompt","session_id":1,"text":"x","request_id":7}')
    assert isinstance(result, Error)
    assert 7 == result.request_id and "session_id" in result.message
    result = decode_client_frame(b'{"type":"nope","request_id":"abc"}')
    assert isinstance(result, Error) and "abc" == result.request_id


def test_good_frames_decode() -> None:
    assert Hello(version=1, client_id="c") == decode_client_frame(
        b'{"type":"hello","version":1,"client_id":"c"}'
    )
    assert Subscribe(session_id="s", since_seq=4, request_id="r") == decode_client_frame(
        b'{"type":"subscribe","session_id":"s","since_seq":4,"request_id":"r"}'
    )
    assert CreateSession() == decode_client_frame(b'{"type":"create_session","extra":1}')
    frame = decode_client_frame(
        b'{"type":"permission_response","session_id":"s","pending_id":"p","decision":"allow",'
        b'"updated_input":{"command":"ls"}}'
    )
    assert isinstance(frame, PermissionResponse) and {"command": "ls"} == frame.updated_input


def test_event_frames_carry_the_public_event_json() -> None:
    event = MessageChunk(message_id="m", text="hi", seq=3, session_id="s1")
    data = json.loads(encode_frame(event_frame(event)))
    assert ("event", "s1", 3) == (data["type"], data["session_id"], data["seq"])
    assert event == decode_event(json.dumps(data["event"]))


def test_snapshot_and_ack_encode() -> None:
    view = ChatView()
    view.apply([MessageChunk(message_id="m", text="hi", seq=1)])
    info = SessionInfo(id="s1", state="idle")
    snap = json.loads(encode_frame(Snapshot(session_id="s1", session=info, chat=view.snapshot())))
    assert 1 == snap["chat"]["last_seq"] and "text" == snap["chat"]["entries"][0]["kind"]
    ack = json.loads(encode_frame(Ack(request_id="r", session_id="s1")))
    assert {"type": "ack", "request_id": "r", "session_id": "s1"} == ack


# ------------------------------------------------------------------ properties

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_types = st.sampled_from(
    [
        "hello",
        "create_session",
        "list_sessions",
        "subscribe",
        "unsubscribe",
        "prompt",
        "permission_response",
        "interrupt",
        "set_model",
        "set_permission_mode",
        "close_session",
        "list_history",
        "get_image",
        "ping",
        "event",
        "",
        "PROMPT",
    ]
)
_fields = st.sampled_from(
    [
        "session_id",
        "text",
        "since_seq",
        "pending_id",
        "decision",
        "version",
        "request_id",
        "images",
        "entry_id",
        "index",
        "mode",
        "model",
        "updated_input",
        "fork",
    ]
)
_frames = st.builds(
    lambda t, fields: {"type": t, **fields},
    _types,
    st.dictionaries(_fields, _json, max_size=6),
)


def _check(result: ClientFrame | Error) -> None:
    if isinstance(result, Error):
        assert result.code in ("invalid_json", "invalid_frame", "unknown_type")
        encode_frame(result)
    else:
        # a decoded frame survives its own round trip
        assert result == decode_client_frame(encode_frame(result))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_get_a_frame_or_a_typed_error(data: bytes) -> None:
    _check(decode_client_frame(data))


@settings(max_examples=400, deadline=None)
@given(_json)
def test_arbitrary_json_gets_a_frame_or_a_typed_error(value: Any) -> None:
    _check(decode_client_frame(json.dumps(value)))


@settings(max_examples=600, deadline=None)
@given(_frames)
def test_frame_shaped_objects_get_a_frame_or_a_typed_error(value: dict[str, Any]) -> None:
    result = decode_client_frame(json.dumps(value))
    _check(result)
    request_id = value.get("request_id")
    readable = isinstance(request_id, str | int) and not isinstance(request_id, bool)
    if isinstance(result, Error) and result.code != "invalid_json" and readable:
        assert request_id == result.request_id


def test_valid_frames_round_trip() -> None:
    for frame in [
        Ping(request_id=1),
        Prompt(session_id="s", text="x"),
        CreateSession(cwd="/w", resume="abc", fork=True),
        GetImage(session_id="s", entry_id="user:3", index=1),
    ]:
        assert frame == decode_client_frame(msgspec.json.encode(frame))
