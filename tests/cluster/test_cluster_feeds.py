"""A gateway's subscribers of one session share one JetStream consumer (SessionFeed), each
still getting exactly the events after its own ``after_seq``, gap-free and without repeats,
and ending on its own (real nats-server)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from adapter.cluster import (
    ClusterConfig,
    ClusterEventStream,
    EventPublisher,
    ensure_event_stream,
)
from adapter.cluster._feeds import SessionFeed, open_stream
from adapter.events import Event, MessageChunk
from adapter.fanout import EventHub, SubscriberDropped
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


def chunks(n: int) -> list[Event]:
    return [MessageChunk(message_id="m", text=f"t{i}") for i in range(n)]


async def consumers(js: Any, config: ClusterConfig) -> int:
    info = await js.stream_info(config.event_stream)
    return int(info.state.consumer_count)


async def drain(stream: ClusterEventStream) -> list[int]:
    with anyio.fail_after(HANG_GUARD):
        return [e.seq async for e in stream]


async def test_subscribers_share_one_consumer_each_from_its_own_seq(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    feeds: dict[str, SessionFeed] = {}
    hub = EventHub("s1")
    publisher = EventPublisher(js, cluster_config, "s1")

    async def opened(after: int | None) -> ClusterEventStream:
        stream = ClusterEventStream("s1", after)
        await open_stream(feeds, stream, js, cluster_config)
        return stream

    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher.run, hub)
        first = await opened(0)
        second = await opened(0)
        assert first.feed is not None and first.feed is second.feed
        hub.publish(chunks(6))
        with anyio.fail_after(HANG_GUARD):
            await publisher.wait_published(6)
        feed = first.feed
        await eventually(lambda: feed.source._last == 6)  # the feed has delivered them
        # Behind what the feed delivered, within what it keeps: joins, gets 4.. from it.
        behind = await opened(3)
        # Ahead of it: joins too (nothing to catch up).
        ahead = await opened(6)
        # Live only: a consumer of its own, as before.
        live = await opened(None)
        assert behind.feed is first.feed and ahead.feed is first.feed and live.feed is None
        assert 2 == await consumers(js, cluster_config)
        hub.publish(chunks(3))
        hub.close()
    assert list(range(1, 10)) == await drain(first)
    assert list(range(1, 10)) == await drain(second)
    assert list(range(4, 10)) == await drain(behind)
    assert list(range(7, 10)) == await drain(ahead)
    assert list(range(7, 10)) == await drain(live)
    # The feed ended with the session: a new subscriber starts one of its own, which
    # replays the history and ends.
    assert "s1" not in feeds
    late = await opened(2)
    assert late.feed is not None and late.feed is not first.feed
    assert list(range(3, 10)) == await drain(late)
    for stream in (first, second, behind, ahead, live, late):
        await stream.close()
    assert not feeds

    async def no_consumers() -> bool:
        return await consumers(js, cluster_config) == 0

    await eventually(no_consumers)


async def test_who_the_feed_cannot_serve_gets_a_consumer_of_its_own(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    feeds: dict[str, SessionFeed] = {}
    hub = EventHub("s2")
    publisher = EventPublisher(js, cluster_config, "s2")
    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher.run, hub)
        hub.publish(chunks(20))
        with anyio.fail_after(HANG_GUARD):
            await publisher.wait_published(20)
        late_starter = ClusterEventStream("s2", 10)
        await open_stream(feeds, late_starter, js, cluster_config)
        # Older than where the feed started: its own consumer.
        older = ClusterEventStream("s2", 5)
        await open_stream(feeds, older, js, cluster_config)
        assert late_starter.feed is not None and older.feed is None
        # Behind what the feed still keeps: its own consumer too.
        feed = late_starter.feed
        feed.recent.clear()
        hub.publish(chunks(2))
        await eventually(lambda: feed.source._last == 22)
        kept = list(feed.recent)
        assert [e.seq for e in kept] == [21, 22]
        assert not feed.serves(19) and feed.serves(20) and feed.serves(25)
        hub.close()
    assert list(range(11, 23)) == await drain(late_starter)
    assert list(range(6, 23)) == await drain(older)
    await late_starter.close()
    await older.close()


async def test_a_member_that_falls_behind_is_dropped_alone(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    feeds: dict[str, SessionFeed] = {}
    hub = EventHub("s3")
    publisher = EventPublisher(js, cluster_config, "s3")
    reader = ClusterEventStream("s3", 0)
    slow = ClusterEventStream("s3", 0, max_pending=5)
    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher.run, hub)
        await open_stream(feeds, reader, js, cluster_config)
        await open_stream(feeds, slow, js, cluster_config)
        assert reader.feed is slow.feed is not None
        hub.publish(chunks(10))
        hub.close()
    assert list(range(1, 11)) == await drain(reader)
    with anyio.fail_after(HANG_GUARD), pytest.raises(SubscriberDropped):
        await slow.receive_batch()
    await slow.close()
    await reader.close()
    assert not feeds


async def test_a_retired_feed_takes_no_new_members(
    nats_client: Any, cluster_config: ClusterConfig
) -> None:
    # After a NATS outage every subscription starts afresh: the backend retires its feeds,
    # whose members were ended meanwhile, and the next subscriber starts a new consumer.
    js = nats_client.jetstream()
    await ensure_event_stream(js, cluster_config)
    feeds: dict[str, SessionFeed] = {}
    before = ClusterEventStream("s4", 0)
    await open_stream(feeds, before, js, cluster_config)
    old = before.feed
    assert old is not None
    old.retire()
    assert "s4" not in feeds and not old.serves(0)
    after = ClusterEventStream("s4", 0)
    await open_stream(feeds, after, js, cluster_config)
    assert after.feed is not None and after.feed is not old
    assert 2 == await consumers(js, cluster_config)
    await before.close()
    await after.close()
    assert not feeds
