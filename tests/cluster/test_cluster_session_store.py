"""JetStreamSessionStore on a real nats-server answers like the SDK's InMemorySessionStore:
the same operations, the same loads, listings and subkeys (write times aside); and the
SDK's store readers work over it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.cluster.session_store import JetStreamSessionStore
from claudecode.sdk import (
    InMemorySessionStore,
    get_session_messages_from_store,
    list_sessions_from_store,
)

pytestmark = [pytest.mark.anyio, pytest.mark.nats]

PROJECTS = ("-work-a", "-work-b.c", "x" * 220)
SESSIONS = (str(uuid.UUID(int=1)), str(uuid.UUID(int=2)))
SUBPATHS = (None, "subagents/agent-a1", "subagents/agent-b2.meta")


def _entry(n: int, size: int = 10) -> dict[str, Any]:
    return {"type": "user", "uuid": str(uuid.UUID(int=1000 + n)), "text": "é" * size}


_ops = st.lists(
    st.tuples(
        st.sampled_from(["append", "append", "append", "delete"]),
        st.sampled_from(PROJECTS),
        st.sampled_from(SESSIONS),
        st.sampled_from(SUBPATHS),
        st.integers(0, 3),
    ),
    max_size=12,
)


def _key(project: str, session: str, subpath: str | None) -> Any:
    key: dict[str, Any] = {"project_key": project, "session_id": session}
    if subpath:
        key["subpath"] = subpath
    return key


async def _observe(store: Any) -> list[Any]:
    seen: list[Any] = []
    for project in PROJECTS:
        listed = await store.list_sessions(project)
        seen.append(sorted(item["session_id"] for item in listed))
        for session in SESSIONS:
            subkeys = await store.list_subkeys({"project_key": project, "session_id": session})
            seen.append(sorted(subkeys))
            for subpath in SUBPATHS:
                seen.append(await store.load(_key(project, session, subpath)))
    return seen


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(_ops)
async def test_same_answers_as_the_in_memory_store(
    nats_client: Any, ops: list[tuple[str, str, str, str | None, int]]
) -> None:
    js = nats_client.jetstream()
    ours = JetStreamSessionStore(js, prefix=f"t{uuid.uuid4().hex[:10]}")
    reference = InMemorySessionStore()
    for n, (op, project, session, subpath, count) in enumerate(ops):
        key = _key(project, session, subpath)
        for store in (ours, reference):
            if op == "append":
                await store.append(key, [_entry(n * 10 + i) for i in range(count)])
            else:
                await store.delete(key)
    assert await _observe(reference) == await _observe(ours)


async def test_large_batches_and_write_times(nats_client: Any) -> None:
    """A batch past one message's limit is split and loads whole; write times grow."""
    store = JetStreamSessionStore(nats_client.jetstream(), prefix=f"t{uuid.uuid4().hex[:10]}")
    key = _key(PROJECTS[0], SESSIONS[0], None)
    big = [_entry(i, size=100_000) for i in range(30)]  # ~6 MB of UTF-8
    await store.append(key, big)
    first = await store.list_sessions(PROJECTS[0])
    await store.append(key, [_entry(99)])
    second = await store.list_sessions(PROJECTS[0])
    assert [*big, _entry(99)] == await store.load(key)
    assert second[0]["mtime"] > first[0]["mtime"] > 0


async def test_sdk_readers_over_jetstream(nats_client: Any) -> None:
    """list_sessions_from_store / get_session_messages_from_store read a JetStream store."""
    store = JetStreamSessionStore(nats_client.jetstream(), prefix=f"t{uuid.uuid4().hex[:10]}")
    session = SESSIONS[0]
    user = {
        "type": "user",
        "uuid": str(uuid.UUID(int=7)),
        "parentUuid": None,
        "sessionId": session,
        "cwd": "/work/a",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "hello store"},
    }
    await store.append(_key("-work-a", session, None), [user])
    [info] = await list_sessions_from_store(store, directory="/work/a")
    assert (session, "hello store") == (info.session_id, info.summary)
    [message] = await get_session_messages_from_store(store, session, directory="/work/a")
    assert {"role": "user", "content": "hello store"} == message.message
