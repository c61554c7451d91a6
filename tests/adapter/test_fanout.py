"""EventHub: numbering, history catch-up, fan-out, slow subscribers dropped."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.events import MessageChunk
from adapter.fanout import EventHub, SubscriberDropped

pytestmark = pytest.mark.anyio


def chunks(n: int, start: int = 0) -> list[MessageChunk]:
    return [MessageChunk(message_id="m", text=str(i)) for i in range(start, start + n)]


async def drain(sub: object) -> list[int]:
    return [e.seq async for e in sub]  # type: ignore[attr-defined]


async def test_events_are_numbered_and_stamped() -> None:
    """Sequence numbers start at 1 with no gaps; the session id is stamped."""
    hub = EventHub("s1")
    sub = hub.subscribe()
    hub.publish(chunks(3))
    hub.publish(chunks(2))
    hub.close()
    events = [e async for e in sub]
    assert [1, 2, 3, 4, 5] == [e.seq for e in events]
    assert {"s1"} == {e.session_id for e in events}


async def test_every_subscriber_gets_every_event() -> None:
    """Fan-out: all subscribers see the same events in the same order."""
    hub = EventHub("s")
    subs = [hub.subscribe() for _ in range(5)]
    hub.publish(chunks(10))
    hub.close()
    for sub in subs:
        assert list(range(1, 11)) == await drain(sub)


async def test_late_subscriber_catches_up_from_history() -> None:
    """after_seq replays what was missed, then goes on live."""
    hub = EventHub("s")
    hub.publish(chunks(5))
    sub = hub.subscribe(after_seq=2)
    hub.publish(chunks(2))
    hub.close()
    assert [3, 4, 5, 6, 7] == await drain(sub)
    assert 0 == sub.gap


async def test_history_is_bounded_and_gaps_are_reported() -> None:
    """Only the newest events are kept; a subscriber further behind learns the gap."""
    hub = EventHub("s", history=3)
    hub.publish(chunks(10))
    sub = hub.subscribe(after_seq=0)
    hub.close()
    assert [8, 9, 10] == await drain(sub)
    assert 7 == sub.gap


async def test_slow_subscriber_is_dropped_without_hurting_others() -> None:
    """A subscriber that never reads is dropped with a reason; others go on."""
    hub = EventHub("s", subscriber_buffer=10)
    slow = hub.subscribe()
    fast = hub.subscribe()
    received: list[int] = []
    for i in range(5):
        hub.publish(chunks(4, i * 4))
        received += [e.seq for e in await fast.receive_batch()]
    assert list(range(1, 21)) == received
    with pytest.raises(SubscriberDropped) as info:
        await slow.receive_batch()
    assert "fell behind" in info.value.reason
    assert 1 == hub.subscriber_count


async def test_wait_dropped_tells_a_consumer_busy_elsewhere() -> None:
    """``wait_dropped`` returns when the subscriber is dropped for falling behind (a waiter
    from before, and one after), never for a session that ended, even with a reason."""
    hub = EventHub("s", subscriber_buffer=3)
    slow = hub.subscribe()
    told: list[str] = []

    async def waiter() -> None:
        await slow.wait_dropped()
        told.append("dropped")

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        hub.publish(chunks(3))
        await anyio.wait_all_tasks_blocked()
        assert [] == told  # full, not over
        hub.publish(chunks(1, 3))
    assert ["dropped"] == told
    with anyio.fail_after(1):
        await slow.wait_dropped()  # already dropped: at once

    ended = EventHub("e")
    slow = ended.subscribe()
    told.clear()
    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        ended.publish(chunks(2))
        ended.close("the CLI crashed")
        await anyio.wait_all_tasks_blocked()
        assert [] == told  # still waiting
        tg.cancel_scope.cancel()


async def test_closed_subscription_stops_receiving() -> None:
    """Unsubscribing detaches from the hub."""
    hub = EventHub("s")
    with hub.subscribe():
        assert 1 == hub.subscriber_count
    assert 0 == hub.subscriber_count


async def test_abnormal_close_reaches_subscribers_after_pending_events() -> None:
    """Pending events are delivered, then the reason is raised."""
    hub = EventHub("s")
    sub = hub.subscribe()
    hub.publish(chunks(2))
    hub.close("the CLI crashed")
    assert [1, 2] == [e.seq for e in await sub.receive_batch()]
    with pytest.raises(SubscriberDropped):
        await sub.receive_batch()


async def test_receive_waits_for_publish() -> None:
    """A waiting subscriber wakes when events are published from another task."""
    hub = EventHub("s")
    sub = hub.subscribe()
    async with anyio.create_task_group() as tg:

        async def later() -> None:
            await anyio.sleep(0.01)
            hub.publish(chunks(1))

        tg.start_soon(later)
        with anyio.fail_after(5):
            batch = await sub.receive_batch()
    assert [1] == [e.seq for e in batch]


@given(st.lists(st.integers(min_value=0, max_value=5), max_size=30), st.integers(0, 40))
def test_catch_up_always_gives_a_gap_free_suffix(sizes: list[int], after: int) -> None:
    """Whatever was published, history after any seq is a contiguous run ending at last_seq."""
    hub = EventHub("s", history=20)
    for n in sizes:
        hub.publish(chunks(n))
    seqs = [e.seq for e in hub.history(after)]
    if seqs:
        assert list(range(seqs[0], hub.last_seq + 1)) == seqs
        assert seqs[0] > after
