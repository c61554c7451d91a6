"""Fan-out of one session's events to any number of subscribers, with a bounded history.

Theory of operation. :meth:`EventHub.publish` is synchronous and never waits: it numbers the
events (``seq``, gap-free from 1), stamps the session id, appends them to a bounded history
and hands them to every subscriber's own bounded queue. A subscriber whose queue is full is
*dropped* — its stream ends with :class:`SubscriberDropped` carrying the reason and the last
sequence number it received — so a slow consumer never slows the session or the other
subscribers, and memory stays bounded. A dropped (or late) subscriber catches up by
subscribing again with ``after_seq``: the history replays what it missed, as far back as it
reaches (:attr:`Subscription.gap` tells when events were lost before the history starts).

Sizing keeps that promise: a subscriber may fall at most half the history behind
(``subscriber_buffer`` is capped at ``history // 2``, and so is a subscription's
``max_pending``). When it is dropped it has missed its buffer plus the one publish that
overflowed it, so the history still holds all of that, with about ``history // 2`` events of
room left: it loses nothing if it resubscribes before that many more were published. (A
subscription opened with a longer backlog than half the history may lag as far as its
backlog; if it is dropped again, its next catch-up may report a ``gap``.)
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from types import TracebackType

import anyio

from .events import Event

__all__ = ("EventHub", "Subscription", "SubscriberDropped")


class SubscriberDropped(Exception):
    """Raised to a subscriber that fell too far behind (or whose hub closed with an error)."""

    def __init__(self, reason: str, last_seq: int) -> None:
        super().__init__(f"{reason} (last event received: seq {last_seq})")
        self.reason = reason
        self.last_seq = last_seq


class Subscription:
    """One subscriber's view of a session's events: ``async for event in subscription``.

    Events arrive in order with no gaps; :meth:`receive_batch` hands over everything pending
    at once (for consumers that encode many events per write). Use as a context manager (or
    call :meth:`close`) to unsubscribe.
    """

    def __init__(self, hub: EventHub, max_pending: int, gap: int) -> None:
        self._hub = hub
        self._max = max_pending
        self._queue: collections.deque[Event] = collections.deque()
        self._wakeup = anyio.Event()
        self._ended = False
        self._dropped: str | None = None
        self._fell_behind: anyio.Event | None = None  # made by the first wait_dropped
        self._behind = False
        self.last_seq = 0
        #: How many events were lost before the history's start when subscribing late.
        self.gap = gap

    def _push(self, events: Sequence[Event]) -> None:
        if self._ended:
            return
        self._queue.extend(events)
        if len(self._queue) > self._max:
            self._queue.clear()
            self._dropped = (
                f"subscriber fell behind: more than {self._max} events waiting; resubscribe "
                "with after_seq to catch up"
            )
            self._ended = True
            self._behind = True
            if self._fell_behind is not None:
                self._fell_behind.set()
            self._hub._forget(self)
        self._wakeup.set()

    def _end(self, reason: str | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        self._dropped = reason
        self._wakeup.set()

    @property
    def pending(self) -> int:
        """Events waiting to be received."""
        return len(self._queue)

    async def receive_batch(self) -> list[Event]:
        """Every event pending now (at least one), waiting if there is none.

        Raises:
            anyio.EndOfStream: the session ended and everything was received.
            SubscriberDropped: this subscriber fell behind and was dropped.
        """
        while not self._queue:
            if self._ended:
                if self._dropped is not None:
                    raise SubscriberDropped(self._dropped, self.last_seq)
                raise anyio.EndOfStream
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
        batch = list(self._queue)
        self._queue.clear()
        self.last_seq = batch[-1].seq
        return batch

    async def wait_dropped(self) -> None:
        """Return once this subscriber was dropped for falling behind (never otherwise)."""
        if not self._behind:
            if self._fell_behind is None:
                self._fell_behind = anyio.Event()
            await self._fell_behind.wait()

    def __aiter__(self) -> _SubscriptionIterator:
        return _SubscriptionIterator(self)

    def close(self) -> None:
        """Unsubscribe; pending events are discarded."""
        self._queue.clear()
        self._end()
        self._hub._forget(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _SubscriptionIterator:
    __slots__ = ("_batch", "_pos", "_sub")

    def __init__(self, sub: Subscription) -> None:
        self._sub = sub
        self._batch: list[Event] = []
        self._pos = 0

    def __aiter__(self) -> _SubscriptionIterator:
        return self

    async def __anext__(self) -> Event:
        if self._pos >= len(self._batch):
            try:
                self._batch = await self._sub.receive_batch()
            except anyio.EndOfStream:
                raise StopAsyncIteration from None
            self._pos = 0
        event = self._batch[self._pos]
        self._pos += 1
        return event


class EventHub:
    """Numbers, records and distributes one session's events.

    Args:
        session_id: stamped on every event.
        history: how many recent events are kept for late subscribers (at least 2).
        subscriber_buffer: how many undelivered events a subscriber may have before it is
            dropped; at most ``history // 2`` (see the module docstring).
    """

    def __init__(self, session_id: str, *, history: int = 10_000, subscriber_buffer: int = 5_000):
        self.session_id = session_id
        size = max(2, history)
        self._history: collections.deque[Event] = collections.deque(maxlen=size)
        self._subscribers: list[Subscription] = []
        self._max_lag = size // 2
        self._buffer = max(1, min(subscriber_buffer, self._max_lag))
        self._seq = 0
        self._closed = False

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest event (0 before the first)."""
        return self._seq

    @property
    def history_size(self) -> int:
        """How many recent events the history keeps."""
        return self._history.maxlen or 0

    @property
    def subscriber_buffer(self) -> int:
        """How many undelivered events a subscriber may have (by default) before it is dropped."""
        return self._buffer

    @property
    def subscriber_count(self) -> int:
        """How many subscribers are attached."""
        return len(self._subscribers)

    def rename(self, session_id: str) -> None:
        """Stamp ``session_id`` from now on, and on the events already recorded (a warm
        session handed out under the id its creator asked for)."""
        self.session_id = session_id
        for event in self._history:
            event.session_id = session_id

    def history(self, after_seq: int = 0) -> list[Event]:
        """The recorded events with ``seq > after_seq`` (as far back as the history reaches)."""
        return [e for e in self._history if e.seq > after_seq]

    def publish(self, events: Iterable[Event]) -> list[Event]:
        """Stamp, record and deliver ``events``; never blocks. Returns them, stamped."""
        stamped = list(events)
        if not stamped or self._closed:
            return []
        seq = self._seq
        session_id = self.session_id
        for event in stamped:
            seq += 1
            event.seq = seq
            event.session_id = session_id
        self._seq = seq
        self._history.extend(stamped)
        for sub in list(self._subscribers):
            sub._push(stamped)
        return stamped

    def subscribe(
        self, after_seq: int | None = None, *, max_pending: int | None = None
    ) -> Subscription:
        """A new subscription: live events, preceded by history newer than ``after_seq``.

        ``after_seq=None`` means live events only; ``0`` replays the whole history.
        ``max_pending`` overrides the hub's ``subscriber_buffer`` (capped the same way).
        """
        limit = max(1, min(max_pending or self._buffer, self._max_lag))
        backlog: list[Event] = [] if after_seq is None else self.history(after_seq)
        gap = 0
        if after_seq is not None:
            first = backlog[0].seq if backlog else self._seq + 1
            gap = max(0, first - after_seq - 1)
        sub = Subscription(self, max(limit, len(backlog)), gap)
        if backlog:
            sub._push(backlog)
        if self._closed:
            sub._end()
        else:
            self._subscribers.append(sub)
        return sub

    def _forget(self, sub: Subscription) -> None:
        if sub in self._subscribers:
            self._subscribers.remove(sub)

    def close(self, reason: str | None = None) -> None:
        """End every subscription (after its pending events), with ``reason`` if abnormal."""
        self._closed = True
        for sub in self._subscribers:
            sub._end(reason)
        self._subscribers.clear()
