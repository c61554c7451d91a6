"""Session events through JetStream: batched, de-duplicated publishing; subscriptions that
replay from ``after_seq`` and go on live with no gap and no repeat; bad messages dropped."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from adapter.cluster import (
    ClusterConfig,
    ClusterEventStream,
    EventPublisher,
    LocalNatsServer,
    ensure_event_stream,
    last_published_seq,
)
from adapter.cluster.fencing import FencedError
from adapter.events import ErrorEvent, Event, MessageChunk
from adapter.fanout import EventHub, SubscriberDropped
from tests.support.timeouts import HANG_GUARD

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


def chunks(n: int, start: int = 0) -> list[Event]:
    return [MessageChunk(message_id="m", text=f"t{i}") for i in range(start, start + n)]


async def subscribe(
    js: Any, config: ClusterConfig, sid: str, after: int | None
) -> ClusterEventStream:
    stream = ClusterEventStream(sid, after)
    await stream.start(js, config)
    return stream


async def drain(stream: ClusterEventStream) -> list[int]:
    with anyio.fail_after(HANG_GUARD):
        return [e.seq async for e in stream]


async def test_publish_then_replay_and_live(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """A subscriber from seq 0, from the middle and from the end gets exactly what follows;
    a live-only subscriber gets what is published after it subscribed; all end together."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    hub = EventHub("s1")
    publisher = EventPublisher(js, cluster_config, "s1")
    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher.run, hub)
        hub.publish(chunks(5))
        hub.publish(chunks(3))
        with anyio.fail_after(HANG_GUARD):
            await publisher.wait_published(8)
        assert 8 == await last_published_seq(js, cluster_config, "s1")
        everything = await subscribe(js, cluster_config, "s1", 0)
        middle = await subscribe(js, cluster_config, "s1", 6)
        at_end = await subscribe(js, cluster_config, "s1", 8)
        live = await subscribe(js, cluster_config, "s1", None)
        hub.publish(chunks(4))
        hub.close()
    assert list(range(1, 13)) == await drain(everything)
    assert list(range(7, 13)) == await drain(middle)
    assert list(range(9, 13)) == await drain(at_end)
    assert list(range(9, 13)) == await drain(live)
    late = await subscribe(js, cluster_config, "s1", 3)
    assert list(range(4, 13)) == await drain(late)
    ended = await subscribe(js, cluster_config, "s1", None)
    assert [] == await drain(ended)
    for stream in (everything, middle, at_end, live, late, ended):
        await stream.close()


async def test_events_keep_their_session_id_and_content(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """What arrives is the event that was published (type, fields, seq, session id)."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    hub = EventHub("sx")
    stream = await subscribe(js, cluster_config, "sx", 0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(EventPublisher(js, cluster_config, "sx").run, hub)
        hub.publish([MessageChunk(message_id="m1", text="héllo <b>"), ErrorEvent(message="x")])
        hub.close()
    with anyio.fail_after(HANG_GUARD):
        events = [e async for e in stream]
    assert [
        MessageChunk(seq=1, session_id="sx", message_id="m1", text="héllo <b>"),
        ErrorEvent(seq=2, session_id="sx", message="x"),
    ] == events
    await stream.close()


async def test_retried_and_republished_batches_are_delivered_once(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """The same batch published twice (a retry) is stored once (Nats-Msg-Id); a batch that
    overlaps what was delivered (a resumed publisher) only adds the new events."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    stream = await subscribe(js, cluster_config, "dup", 0)
    hub = EventHub("dup")
    stamped = hub.publish(chunks(3))
    publisher = EventPublisher(js, cluster_config, "dup")
    await publisher.publish(stamped)
    await publisher.publish(stamped)  # a retry: same message id
    info = await js.stream_info(cluster_config.event_stream)
    assert 1 == info.state.messages
    stamped += hub.publish(chunks(2))
    await publisher.publish(stamped[1:])  # overlaps seq 2-3, adds 4-5
    with anyio.fail_after(HANG_GUARD):
        got = await stream.receive_batch()
        while got[-1].seq < 5:
            got += await stream.receive_batch()
    assert [1, 2, 3, 4, 5] == [e.seq for e in got]
    await stream.close()


async def test_a_resumed_publisher_continues_the_numbering(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """``first_seq`` renumbers a new session's events to continue an earlier one's."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    first = EventHub("r")
    await EventPublisher(js, cluster_config, "r").publish(first.publish(chunks(4)))
    second = EventHub("r")
    stream = await subscribe(js, cluster_config, "r", 2)
    async with anyio.create_task_group() as tg:
        tg.start_soon(EventPublisher(js, cluster_config, "r", first_seq=5).run, second)
        second.publish(chunks(3))
        second.close()
    assert [3, 4, 5, 6, 7] == await drain(stream)
    await stream.close()


async def test_malformed_messages_are_logged_and_dropped(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """Garbage, an unknown event type and a batch with a hole in seq on a session's subject
    are logged and skipped; the events around them arrive."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    stream = await subscribe(js, cluster_config, "bad", 0)
    hub = EventHub("bad")
    publisher = EventPublisher(js, cluster_config, "bad")
    subject = cluster_config.event_subject("bad")
    with capture_logs() as logs:
        await publisher.publish(hub.publish(chunks(2)))
        await js.publish(subject, b"not json")
        await js.publish(subject, b'[{"type":"no_such_event","seq":3}]')
        await js.publish(
            subject,
            b'[{"type":"error","seq":3,"message":"a"},{"type":"error","seq":9,"message":"b"}]',
        )
        await js.publish(subject, b"[]")
        await nats_client.publish(subject, b"\xff\xfe")  # core NATS, no ack
        await nats_client.flush()
        # Whatever another writer put on the subject fences the first publisher off (a
        # session's subject has one writer); a new one takes over after it.
        later = hub.publish(chunks(2))
        with pytest.raises(FencedError):
            await publisher.publish(later)
        await EventPublisher(js, cluster_config, "bad").publish(later)
        hub.close()
        with anyio.fail_after(HANG_GUARD):
            got = await stream.receive_batch()
            while got[-1].seq < 4:
                got += await stream.receive_batch()
    assert [1, 2, 3, 4] == [e.seq for e in got]
    assert all(isinstance(e, MessageChunk) for e in got)
    dropped = [entry for entry in logs if entry["event"] == "cluster.malformed_events"]
    assert len(dropped) >= 4
    await stream.close()


async def test_a_huge_event_becomes_an_error_event_with_its_seq(
    nats_server: LocalNatsServer, cluster_config: ClusterConfig
) -> None:
    """An event larger than the server's max payload keeps its seq as an error event."""
    import nats

    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await ensure_event_stream(js, cluster_config)
        hub = EventHub("big")
        huge = MessageChunk(message_id="m", text="x" * (nc.max_payload + 10))
        stamped = hub.publish([*chunks(1), huge, *chunks(1)])
        with capture_logs():
            await EventPublisher(js, cluster_config, "big").publish(stamped)
        stream = await subscribe(js, cluster_config, "big", 0)
        with anyio.fail_after(HANG_GUARD):
            got = await stream.receive_batch()
            while got[-1].seq < 3:
                got += await stream.receive_batch()
        assert [1, 2, 3] == [e.seq for e in got]
        assert isinstance(got[1], ErrorEvent)
        assert "too large" in got[1].message
        await stream.close()
    finally:
        await nc.close()


async def test_a_slow_subscriber_is_dropped_and_resubscribes(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """More than ``max_pending`` events waiting ends the stream with SubscriberDropped
    (last seq received) and returns ``wait_dropped``; subscribing again with that seq
    continues with no gap."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    hub = EventHub("slow")
    publisher = EventPublisher(js, cluster_config, "slow")
    stream = ClusterEventStream("slow", 0, max_pending=5)
    await stream.start(js, cluster_config)
    await publisher.publish(hub.publish(chunks(3)))
    with anyio.fail_after(HANG_GUARD):
        first = await stream.receive_batch()
        while first[-1].seq < 3:
            first += await stream.receive_batch()
    for _ in range(4):
        await publisher.publish(hub.publish(chunks(2)))

    async def receive_until_dropped() -> None:
        while True:
            await stream.receive_batch()

    with anyio.fail_after(HANG_GUARD), pytest.raises(SubscriberDropped) as dropped:
        await receive_until_dropped()
    with anyio.fail_after(HANG_GUARD):
        await stream.wait_dropped()  # what a consumer busy elsewhere waits on
    await stream.close()
    assert 3 == dropped.value.last_seq
    again = await subscribe(js, cluster_config, "slow", dropped.value.last_seq)
    hub.close()
    await publisher.publish([])
    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher._publish_end)
    assert list(range(4, 12)) == await drain(again)
    await again.close()


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=12),
    switch=st.integers(min_value=0, max_value=12),
    after=st.one_of(st.none(), st.integers(min_value=0, max_value=200)),
)
def test_replay_then_live_is_gap_free_property(
    nats_server: LocalNatsServer, batches: list[int], switch: int, after: int | None
) -> None:
    """Whatever the batch sizes, the moment of subscribing and ``after_seq``, the subscriber
    gets exactly the events after ``after_seq`` (or, live, after the moment it joined), in
    order, each once, then the end."""
    asyncio.run(_replay_then_live(nats_server.url, batches, switch, after))


async def _replay_then_live(url: str, batches: list[int], switch: int, after: int | None) -> None:
    import nats

    config = ClusterConfig(prefix=f"p{uuid.uuid4().hex[:10]}")
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await ensure_event_stream(js, config)
        hub = EventHub("prop")
        publisher = EventPublisher(js, config, "prop")
        switch = min(switch, len(batches))
        published = 0
        for size in batches[:switch]:
            await publisher.publish(hub.publish(chunks(size)))
            published += size
        stream = ClusterEventStream("prop", after)
        await stream.start(js, config)
        expected_from = (published if after is None else after) + 1
        for size in batches[switch:]:
            await publisher.publish(hub.publish(chunks(size)))
            published += size
        await publisher._publish_end()
        with anyio.fail_after(HANG_GUARD):
            got = [e.seq async for e in stream]
        assert list(range(expected_from, published + 1)) == got
        assert 0 == stream.gap
        await stream.close()
    finally:
        await nc.close()


async def test_leaving_an_async_for_mid_batch_loses_nothing(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    """Breaking out of ``async for`` in the middle of a batch and iterating again continues
    with the next event of that batch."""
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    hub = EventHub("brk")
    await EventPublisher(js, cluster_config, "brk").publish(hub.publish(chunks(6)))
    stream = await subscribe(js, cluster_config, "brk", 0)
    got: list[int] = []
    with anyio.fail_after(HANG_GUARD):
        for stop in (2, 5, 6):
            async for event in stream:
                got.append(event.seq)
                if event.seq == stop:
                    break
    assert [1, 2, 3, 4, 5, 6] == got
    await stream.close()
