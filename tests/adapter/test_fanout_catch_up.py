"""The README's promise: a subscriber dropped for lag catches up from history, nothing lost or
repeated, when it resubscribes with ``after_seq`` promptly."""

from __future__ import annotations

import anyio
from hypothesis import given
from hypothesis import strategies as st

from adapter.config import SessionConfig
from adapter.events import Event, MessageChunk
from adapter.fanout import EventHub, SubscriberDropped, Subscription


def chunks(n: int) -> list[Event]:
    return [MessageChunk(message_id="m", text=str(i)) for i in range(n)]


def pending_now(sub: Subscription) -> list[int]:
    """Every event delivered to ``sub`` so far, without waiting (the hub is synchronous)."""

    async def take() -> list[int]:
        seqs: list[int] = []
        with anyio.move_on_after(0):
            while True:
                seqs += [e.seq for e in await sub.receive_batch()]
        return seqs

    return anyio.run(take)


def dropped_at(sub: Subscription) -> int:
    async def take() -> int:
        try:
            while True:
                await sub.receive_batch()
        except SubscriberDropped as dropped:
            return dropped.last_seq

    return anyio.run(take)


def _drop_and_catch_up(hub: EventHub, batch: int, extra: int, max_pending: int | None) -> None:
    """A subscriber reads some events, then stops reading until it is dropped; ``extra`` more
    events are published; it resubscribes from the last seq it got and must get exactly the
    rest."""
    sub = hub.subscribe(max_pending=max_pending)
    received: list[int] = []
    for _ in range(3):
        hub.publish(chunks(1))
        received += pending_now(sub)
    while hub.subscriber_count:
        hub.publish(chunks(batch))
    last = dropped_at(sub)
    assert received[-1] == last
    hub.publish(chunks(extra))
    again = hub.subscribe(after_seq=last)
    assert 0 == again.gap
    assert list(range(last + 1, hub.last_seq + 1)) == pending_now(again)


def test_with_the_default_sizes_a_dropped_subscriber_catches_up() -> None:
    cfg = SessionConfig()
    hub = EventHub("s", history=cfg.history_size, subscriber_buffer=cfg.subscriber_buffer)
    _drop_and_catch_up(hub, batch=7, extra=100, max_pending=None)


def test_a_buffer_as_large_as_the_history_is_capped() -> None:
    """Asking for a buffer as large as the history (the old defaults) still leaves room."""
    hub = EventHub("s", history=1000, subscriber_buffer=1000)
    assert 500 == hub.subscriber_buffer
    _drop_and_catch_up(hub, batch=1, extra=499, max_pending=None)
    hub = EventHub("s", history=1000, subscriber_buffer=1000)
    _drop_and_catch_up(hub, batch=3, extra=497, max_pending=5000)


@given(
    history=st.integers(2, 300),
    buffer=st.integers(1, 400),
    max_pending=st.none() | st.integers(1, 400),
    batch=st.integers(1, 9),
    data=st.data(),
)
def test_any_sizes_keep_the_catch_up_promise(
    history: int, buffer: int, max_pending: int | None, batch: int, data: st.DataObject
) -> None:
    """For any history / buffer / max_pending, the dropped subscriber has
    ``history - history // 2`` events of room beyond the publish that overflowed it; a
    resubscribe within that room is gap-free and repeats nothing."""
    hub = EventHub("s", history=history, subscriber_buffer=buffer)
    room = hub.history_size - hub.history_size // 2 - 1
    batch = min(batch, max(1, room))
    extra = data.draw(st.integers(0, max(0, room - batch + 1)))
    _drop_and_catch_up(hub, batch=batch, extra=extra, max_pending=max_pending)
