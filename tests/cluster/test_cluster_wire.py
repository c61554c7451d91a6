"""The wire decoders: whatever arrives, a value or a WireError (never another exception);
encoded values decode to themselves."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.backend import SessionInfo, SessionSpec
from adapter.cluster import WireError
from adapter.cluster.wire import (
    AnswerPermission,
    CreateSession,
    ErrorBody,
    Label,
    Prompt,
    Reply,
    SessionRecord,
    SetEffort,
    WorkerInfo,
    batch_range,
    decode_batch,
    decode_command,
    decode_record,
    decode_reply,
    decode_worker,
    encode,
    encode_batch,
    encode_events,
)
from adapter.events import ErrorEvent, MessageChunk
from adapter.images import Image
from adapter.server.agents import AGENT_NAME_PATTERN

DECODERS = (decode_batch, decode_command, decode_record, decode_reply, decode_worker)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize("decode", DECODERS)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes(decode: Any, data: bytes) -> None:
    with contextlib.suppress(WireError):
        decode(data)


@pytest.mark.parametrize("decode", DECODERS)
@given(value=json_values, op=st.sampled_from(["prompt", "create", "close", "label", "nope", None]))
def test_arbitrary_json(decode: Any, value: Any, op: str | None) -> None:
    if isinstance(value, dict) and op is not None:
        value = {**value, "op": op}
    with contextlib.suppress(WireError):
        decode(json.dumps(value).encode())


def test_round_trips() -> None:
    commands = [
        Prompt(text="hi", images=[Image.from_bytes("image/png", b"\x89PNG")]),
        AnswerPermission(pending_id="p", behavior="deny", message="no", interrupt=True),
        SetEffort(effort="low"),
        SetEffort(),
        CreateSession(spec=SessionSpec(cwd="/w", labels={"repo": "api"}), first_seq=7),
        CreateSession(title="the fix", archived=True, cost_usd=0.25),
        Label(title="renamed"),
        Label(archived=False),
        # What a named agent's sessions carry to the worker that runs them.
        CreateSession(
            spec=SessionSpec(
                system_prompt="You review.",
                append_system_prompt="Be brief.",
                allowed_tools=["Read", "Bash(git diff:*)"],
                disallowed_tools=["Write"],
                mcp_servers={"docs": {"type": "http", "url": "http://h/mcp", "headers": {}}},
            )
        ),
    ]
    for command in commands:
        assert command == decode_command(encode(command))
    reply = Reply(error=ErrorBody("control", "bad mode", "set_permission_mode", "invalid_mode"))
    assert reply == decode_reply(encode(reply))
    record = SessionRecord(info=SessionInfo(id="s", owner="w"), spec=SessionSpec(policy="plan"))
    assert record == decode_record(encode(record))
    worker = WorkerInfo(id="w", sessions=2, max_sessions=4, labels={"a": "b"})
    assert worker == decode_worker(encode(worker))
    events = [MessageChunk(seq=3, message_id="m", text="x"), ErrorEvent(seq=4, message="e")]
    assert events == decode_batch(encode_batch(events))


@given(name=st.from_regex(AGENT_NAME_PATTERN, fullmatch=True) | st.none())
def test_a_sessions_named_agent_crosses_the_wire(name: str | None) -> None:
    # The spec takes it to the worker; the record the gateways list gives it back.
    create = CreateSession(spec=SessionSpec(named_agent=name, origin="webui"))
    assert create == decode_command(encode(create))
    record = SessionRecord(info=SessionInfo(id="s", owner="w", named_agent=name), spec=create.spec)
    decoded = decode_record(encode(record))
    assert name == decoded.info.named_agent == decoded.spec.named_agent
    # Without one, nothing on the wire: a peer from before named agents reads the same.
    assert (name is None) == (b"named_agent" not in encode(record))


class _CreateBeforeDeadlines(msgspec.Struct, tag_field="op", tag="create", kw_only=True):
    """``CreateSession`` as workers that predate deadlines decode it."""

    spec: SessionSpec = SessionSpec()
    session_id: str | None = None
    first_seq: int = 1
    created_at: float = 0.0


def test_a_create_carries_its_deadline_and_old_peers_still_understand_each_other() -> None:
    stamped = CreateSession(session_id="s", first_seq=3, created_at=5.0, deadline=1.8e9 + 0.25)
    assert stamped == decode_command(encode(stamped))
    assert b'"deadline":1800000000.25' in encode(stamped)
    # An old worker decodes a new gateway's create, the deadline skipped.
    old = msgspec.json.decode(encode(stamped), type=_CreateBeforeDeadlines)
    assert ("s", 3, 5.0) == (old.session_id, old.first_seq, old.created_at)
    # An old gateway's create has no deadline.
    fresh = decode_command(msgspec.json.encode(_CreateBeforeDeadlines(session_id="s")))
    assert isinstance(fresh, CreateSession)
    assert 0.0 == fresh.deadline and "s" == fresh.session_id


@given(data=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_batch_range_of_anything(data: bytes) -> None:
    found = batch_range(data)
    assert found is None or all(isinstance(n, int) for n in found)


@given(
    first=st.integers(min_value=1, max_value=10**9),
    texts=st.lists(st.text(max_size=20), min_size=1, max_size=8),
)
def test_a_batch_joined_from_encoded_events(first: int, texts: list[str]) -> None:
    # What a publisher sends (each event encoded once, joined) is what encode_batch makes,
    # and its range is read from the body.
    events: list[Any] = [
        MessageChunk(seq=first + n, message_id="m", text=text) for n, text in enumerate(texts)
    ]
    joined = b"[" + b",".join(encode_events(events)) + b"]"
    assert joined == encode_batch(events)
    assert decode_batch(joined) == events
    assert batch_range(joined) == (first, first + len(texts) - 1)
    assert batch_range(b"") is None
    assert batch_range(b"[]") is None
