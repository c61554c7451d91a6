"""Messages handled in nats-py's read loop (``adapter.cluster._inline``), against a real
nats-server: the hook relies on nats-py internals, so these tests fail loudly when a
nats-py release changes them (the code then falls back to the callback, slower)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import anyio
import pytest

from adapter.cluster import ClusterConfig
from adapter.cluster._acks import AckInbox
from adapter.cluster._inline import InlineQueue, dispatch_inline
from adapter.cluster.eventlog import ClusterEventStream, EventPublisher, ensure_event_stream
from adapter.events import MessageChunk
from tests.support.timeouts import HANG_GUARD

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_a_plain_subscription_is_handled_in_the_read_loop(nats_client: Any) -> None:
    subject = f"inline.{uuid.uuid4().hex[:8]}"
    seen: list[bytes] = []
    via_callback: list[bytes] = []
    all_seen = anyio.Event()

    async def callback(msg: Any) -> None:
        via_callback.append(msg.data)

    def handle(msg: Any) -> None:
        seen.append(msg.data)
        if len(seen) == 100:
            all_seen.set()

    sub = await nats_client.subscribe(subject, cb=callback)
    assert dispatch_inline(sub, handle)
    assert isinstance(sub._pending_queue, InlineQueue)
    for n in range(100):
        await nats_client.publish(subject, str(n).encode())
    with anyio.fail_after(HANG_GUARD):
        await all_seen.wait()
    assert seen == [str(n).encode() for n in range(100)]
    assert via_callback == []
    # nats-py's slow-consumer accounting: nothing is counted as waiting.
    assert sub.pending_bytes == 0
    assert sub.pending_msgs == 0
    await sub.unsubscribe()


async def test_a_failing_handler_is_logged_and_the_connection_stays(nats_client: Any) -> None:
    subject = f"inline.{uuid.uuid4().hex[:8]}"
    seen: list[bytes] = []
    both_seen = anyio.Event()

    def handle(msg: Any) -> None:
        if msg.data == b"bad":
            raise ValueError("boom")
        seen.append(msg.data)
        if len(seen) == 2:
            both_seen.set()

    async def callback(msg: Any) -> None:
        raise AssertionError("not through the callback")

    sub = await nats_client.subscribe(subject, cb=callback)
    assert dispatch_inline(sub, handle)
    for data in (b"one", b"bad", b"two"):
        await nats_client.publish(subject, data)
    with anyio.fail_after(HANG_GUARD):
        await both_seen.wait()
    assert seen == [b"one", b"two"]
    assert nats_client.is_connected
    await sub.unsubscribe()


async def test_a_subscription_with_messages_waiting_is_left_alone() -> None:
    class Sub:
        _pending_size = 0

        def __init__(self) -> None:
            self._pending_queue: asyncio.Queue[Any] = asyncio.Queue()

    sub = Sub()
    sub._pending_queue.put_nowait(object())
    assert not dispatch_inline(sub, lambda msg: None)
    assert type(sub._pending_queue) is asyncio.Queue

    class Changed:
        _pending_messages = ()

    assert not dispatch_inline(Changed(), lambda msg: None)


async def test_the_ack_inbox_and_an_ordered_consumer_take_effect(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    acks = AckInbox(nats_client)
    await acks.start()
    assert acks.inline
    stream = ClusterEventStream("s1", 0)
    try:
        await stream.start(js, cluster_config)
        assert isinstance(stream._sub._sub._pending_queue, InlineQueue)
        publisher = EventPublisher(js, cluster_config, "s1", acks=acks)
        events = [
            MessageChunk(seq=n, session_id="s1", message_id="m", text=f"t{n}")
            for n in range(1, 201)
        ]
        with anyio.fail_after(HANG_GUARD):
            for n in range(0, 200, 20):
                await publisher.publish(events[n : n + 20])
            got: list[Any] = []
            while len(got) < 200:
                got.extend(await stream.receive_batch())
        assert [e.seq for e in got] == list(range(1, 201))
        assert acks.pending == 0
        assert stream._sub._sub.pending_bytes == 0
    finally:
        await stream.close()
        await acks.close()
