"""Each session's events in a JetStream stream: the worker publishes, gateways subscribe.

One stream (``<PREFIX>_EVENTS``, limits on age and bytes) holds every session, one subject
per session. :class:`EventPublisher` runs on the worker next to the session: it drains the
session's own hub subscription (so the session never waits for NATS) and publishes what
accumulated as one message per batch while the previous publish was being acknowledged —
batches grow under load, and cost one round trip when the session is quiet. The
``Nats-Msg-Id`` header (``<session>:<last seq>``) makes a retried publish a no-op.

:class:`ClusterEventStream` is a gateway's view of a session: one JetStream *ordered
consumer* on the session's subject, started at the first message that can hold
``after_seq + 1`` (a binary search by stream sequence), so history and live events come
through the same consumer — there is no switch-over where events could be lost or repeated.
The stream still drops any event it has already delivered and reports holes.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import msgspec

from claudecode.internal import get_logger

from ..events import ErrorEvent, Event
from ..fanout import SubscriberDropped
from ._gate import PublishGate
from ._inline import dispatch_inline
from ._streams import ensure_stream
from .config import ClusterConfig
from .fencing import FencedError, conditional_publish, last_subject_seq
from .wire import (
    END_HEADER,
    MSG_ID_HEADER,
    WireError,
    batch_range,
    decode_batch,
    encode_batch,
    encode_events,
)

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.msg import Msg
    from nats.js.client import JetStreamContext

    from ..fanout import Subscription
    from ._acks import AckInbox
    from ._feeds import SessionFeed


class EventSource(Protocol):
    """What the publisher drains: an :class:`~adapter.AgentSession` or an
    :class:`~adapter.EventHub`."""

    def subscribe(
        self, after_seq: int | None = None, *, max_pending: int | None = None
    ) -> Subscription: ...


__all__ = (
    "ClusterEventStream",
    "EventPublisher",
    "EventSource",
    "ensure_event_stream",
    "last_published_seq",
)

_log = get_logger("claudecode.adapter.cluster.events")


async def ensure_event_stream(js: JetStreamContext, config: ClusterConfig) -> None:
    """Create the event stream (or update its limits)."""
    from nats.js import api

    stream = api.StreamConfig(
        name=config.event_stream,
        subjects=[config.event_subjects],
        retention=api.RetentionPolicy.LIMITS,
        discard=api.DiscardPolicy.OLD,
        max_age=config.event_max_age,
        max_bytes=config.event_max_bytes,
        max_msg_size=-1,
        storage=api.StorageType.FILE,
        num_replicas=config.replicas,
        duplicate_window=120.0,
        allow_direct=True,
    )
    await ensure_stream(js, stream)


async def last_published_seq(js: JetStreamContext, config: ClusterConfig, session_id: str) -> int:
    """The seq of the newest event of a session in the stream (0: none)."""
    from nats.js.errors import NotFoundError

    try:
        msg = await js.get_last_msg(config.event_stream, config.event_subject(session_id))
    except NotFoundError:
        return 0
    headers = msg.headers or {}
    if END_HEADER in headers:
        try:
            return int(headers[END_HEADER])
        except ValueError:
            return 0
    found = batch_range(msg.data)
    return found[1] if found else 0


class EventPublisher:
    """Publishes one session's events to the stream, batched, acknowledged, retried.

    Every publish is conditional on the subject's newest message being this publisher's
    last one: when another process wrote in between (the session was declared lost and
    moved to another worker), :meth:`run` / :meth:`publish` raise
    :class:`~adapter.cluster.fencing.FencedError` and publish nothing more.

    ``first_seq`` is the seq the session's first event gets on the wire (a session resumed
    on another worker continues its predecessor's numbering); ``on_published`` is called
    with each acknowledged batch; ``gate``, shared by a worker's publishers, lets the
    batches of its sessions that get ready together leave in one socket write; ``acks``,
    shared too, publishes through one acknowledgement inbox instead of a nats-py request
    per batch (:mod:`adapter.cluster._acks`).
    """

    def __init__(
        self,
        js: JetStreamContext,
        config: ClusterConfig,
        session_id: str,
        *,
        first_seq: int = 1,
        on_published: Callable[[Sequence[Event]], None] | None = None,
        gate: PublishGate | None = None,
        acks: AckInbox | None = None,
    ) -> None:
        self._js = js
        self._acks = acks
        self._gate = gate
        self._on_published = on_published
        self._config = config
        self._subject = config.event_subject(session_id)
        self.session_id = session_id
        self._offset = first_seq - 1
        #: The wire seq of the newest event the stream acknowledged.
        self.published_seq = first_seq - 1
        # asyncio's own events here and in ClusterEventStream: nats-py runs on asyncio only,
        # and anyio.Event() asks sniffio for the running library each time one is made (one
        # per batch; ~5% of a gateway's CPU at 50 busy sessions). Made only while someone
        # waits in wait_published (nobody does on a worker).
        self._published: asyncio.Event | None = None
        # The stream sequence of this subject's newest message as far as this writer knows
        # (None: not read yet); every publish expects it, so a writer fenced off by another
        # one (the session was declared lost and moved) is refused (adapter.cluster.fencing).
        self._subject_seq: int | None = None

    async def prime(self) -> None:
        """Read where the session's subject stands now, before anything is published: the
        first publish then expects it, so a worker that is cut off before its first publish
        and comes back after the session moved is refused like any other stale writer.
        (Without it the first publish reads it then.)"""
        self._subject_seq = (
            await last_subject_seq(self._js, self._config.event_stream, self._subject)
        )[0]

    async def run(self, session: EventSource) -> None:
        """Publish everything the session emits until its events end; then the end marker."""
        after = 0
        while True:
            with session.subscribe(after_seq=after) as sub:
                if sub.gap:
                    _log.error(
                        "cluster.events_lost",
                        session_id=self.session_id,
                        lost=sub.gap,
                        reason="the publisher fell behind the session's history",
                    )
                try:
                    while True:
                        batch = await sub.receive_batch()
                        if self._gate is not None:
                            await self._gate.wait()
                        await self.publish(batch)
                        after = batch[-1].seq
                except anyio.EndOfStream:
                    await self._publish_end()
                    return
                except SubscriberDropped:
                    continue  # fell behind the hub: resubscribe from what was published

    async def wait_published(self, seq: int) -> None:
        """Wait until the stream acknowledged the event numbered ``seq`` (wire numbering)."""
        while self.published_seq < seq:
            if self._published is None:
                self._published = asyncio.Event()
            await self._published.wait()

    def _renumber(self, events: Sequence[Event]) -> list[Event]:
        if not self._offset:
            return list(events)
        offset = self._offset
        return [msgspec.structs.replace(e, seq=e.seq + offset) for e in events]

    async def publish(self, events: Sequence[Event]) -> None:
        """Publish ``events`` (the session's numbering) as one or more messages (each
        event encoded once, split where a message would exceed ``max_message_bytes``)."""
        if not events:
            return
        renumbered = self._renumber(events)
        parts = encode_events(renumbered)
        limit = self._config.max_message_bytes
        start, size = 0, 0
        for index, part in enumerate(parts):
            if index > start and size + len(part) + 1 > limit:
                await self._publish_chunk(renumbered[start:index], parts[start:index])
                start, size = index, 0
            size += len(part) + 1
        await self._publish_chunk(renumbered[start:], parts[start:])

    async def _publish_chunk(self, chunk: list[Event], parts: list[bytes]) -> None:
        from nats.errors import MaxPayloadError

        first, last = chunk[0].seq, chunk[-1].seq
        payload = b"[" + b",".join(parts) + b"]"
        try:
            await self._send(payload, f"{self.session_id}:{last}")
        except MaxPayloadError:
            # One event bigger than NATS takes: keep the numbering, say what was lost.
            if len(chunk) > 1:
                for event, part in zip(chunk, parts, strict=True):
                    await self._publish_chunk([event], [part])
                return
            _log.error("cluster.event_too_large", session_id=self.session_id, seq=first)
            stand_in = ErrorEvent(
                seq=first,
                session_id=self.session_id,
                message=f"an event of {len(payload)} bytes was too large for NATS and was dropped",
                kind="internal",
            )
            await self._send(encode_batch([stand_in]), f"{self.session_id}:{last}")
        self.published_seq = last
        if self._published is not None:
            self._published.set()
            self._published = None
        if self._on_published is not None:
            self._on_published(chunk)

    async def _publish_end(self) -> None:
        last = self.published_seq
        await self._send(b"", f"{self.session_id}:end:{last}", {END_HEADER: str(last)})

    async def _send(
        self, payload: bytes, msg_id: str, headers: dict[str, str] | None = None
    ) -> None:
        from nats.errors import MaxPayloadError

        delay = 0.05
        stream = self._config.event_stream
        while True:
            try:
                if self._subject_seq is None:
                    self._subject_seq = (await last_subject_seq(self._js, stream, self._subject))[0]
                self._subject_seq, _ = await conditional_publish(
                    self._js,
                    stream,
                    self._subject,
                    payload,
                    {MSG_ID_HEADER: msg_id, **headers} if headers else {MSG_ID_HEADER: msg_id},
                    self._subject_seq,
                    timeout=self._config.request_timeout,
                    acks=self._acks,
                )
                return
            except (MaxPayloadError, FencedError):
                raise
            except Exception as exc:  # disconnected, timed out, no stream leader yet: retry
                _log.warning("cluster.publish_retry", session_id=self.session_id, error=repr(exc))
                await anyio.sleep(delay)
                delay = min(delay * 2, 2.0)


class ClusterEventStream:
    """A gateway's subscription to one session's events (see the module docstring).

    Implements :class:`~adapter.EventStream`. ``max_pending`` bounds what waits here: a
    consumer that falls that far behind is dropped (:class:`~adapter.SubscriberDropped`) and
    may subscribe again with ``after_seq``.
    """

    def __init__(self, session_id: str, after_seq: int | None, *, max_pending: int = 10_000):
        self.session_id = session_id
        self.gap = 0
        self._after = after_seq
        self._last: int | None = after_seq
        self._max = max_pending
        self._queue: collections.deque[Event] = collections.deque()
        self._wakeup = asyncio.Event()
        self._fell_behind = asyncio.Event()  # dropped for falling behind (wait_dropped)
        self._ended = False
        self._error: str | None = None
        self._raise: Exception | None = None
        self._sub: Any = None
        self._first = True
        self._held: collections.deque[Event] = collections.deque()
        self.last_seq = after_seq or 0
        #: Set when this stream is one of a :class:`~adapter.cluster._feeds.SessionFeed`'s
        #: members (events through the feed's consumer, not a consumer of its own).
        self.feed: SessionFeed | None = None
        # A feed's source: the events it accepts go to these instead of the queue.
        self._fan_out: Callable[[Sequence[Event]], None] | None = None
        self._on_end: Callable[[str | None], None] | None = None

    async def start(self, js: JetStreamContext, config: ClusterConfig) -> None:
        """Create the ordered consumer (a binary search finds where to start)."""
        from nats.js import api

        stream = config.event_stream
        subject = config.event_subject(self.session_id)
        start = await self._start_sequence(js, config)
        consumer = api.ConsumerConfig(
            deliver_policy=api.DeliverPolicy.ALL
            if start is None
            else api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=start,
        )
        self._sub = await js.subscribe(
            subject,
            stream=stream,
            cb=self._on_message,
            ordered_consumer=True,
            config=consumer,
            idle_heartbeat=2.0,
        )
        # Each batch is handled in the client's read loop (it only decodes and queues).
        dispatch_inline(self._sub, self._take)

    async def _start_sequence(self, js: JetStreamContext, config: ClusterConfig) -> int | None:
        from nats.js.errors import NotFoundError

        stream = config.event_stream
        subject = config.event_subject(self.session_id)
        try:
            last = await js.get_last_msg(stream, subject)
        except NotFoundError:
            return None  # nothing yet: from the start of the stream, whatever comes
        headers = last.headers or {}
        assert last.seq is not None
        if END_HEADER in headers:
            if self._after is None:
                self._end(None)
                return last.seq
            return None if self._after == 0 else await self._search(js, stream, subject, last.seq)
        found = batch_range(last.data)
        if self._after is None:
            # Live only: everything from here on is new.
            if found is not None:
                self._last = found[1]
            return last.seq + 1
        if found is not None and found[1] <= self._after:
            return last.seq + 1
        if self._after == 0:
            return None
        return await self._search(js, stream, subject, last.seq)

    async def _search(self, js: JetStreamContext, stream: str, subject: str, hi: int) -> int:
        # The first stream message of this subject whose last event is newer than after_seq.
        from nats.js.errors import NotFoundError

        assert self._after is not None
        lo = 1
        while lo < hi:
            mid = (lo + hi) // 2
            try:
                msg = await js.get_msg(stream, seq=mid, subject=subject, next=True)
            except NotFoundError:
                lo = mid + 1
                continue
            assert msg.seq is not None
            found = batch_range(msg.data)
            if found is None or found[1] > self._after:
                hi = mid  # the answer is at or before mid
            else:
                lo = msg.seq + 1  # everything up to this message is older
        return lo

    async def _on_message(self, msg: Msg) -> None:
        self._take(msg)

    def _take(self, msg: Msg) -> None:
        if self._ended:
            return
        headers = msg.headers or {}
        if END_HEADER in headers:
            self._end(None)
            return
        try:
            events = decode_batch(msg.data)
        except WireError as exc:
            _log.warning("cluster.malformed_events", session_id=self.session_id, error=str(exc))
            return
        self.deliver(events)

    def deliver(self, events: Sequence[Event]) -> None:
        """Take a batch of the session's events (consecutive seqs): what this stream already
        has is dropped, a hole is a ``gap`` on the first delivery and the end of the stream
        after it."""
        if self._ended:
            return
        last = self._last
        if last is not None and events[0].seq != last + 1:
            events = [e for e in events if e.seq > last]
            if not events:
                return  # already delivered (a republished batch)
            expected = last + 1
            if events[0].seq != expected:
                missing = events[0].seq - expected
                if self._first:
                    # The first delivery: the stream's limits removed older events.
                    self.gap = missing
                else:
                    self._end(
                        f"{missing} events after seq {last} are missing from the stream; "
                        "resubscribe with after_seq"
                    )
                    return
        self._first = False
        self._last = events[-1].seq
        if self._fan_out is not None:
            self._fan_out(events)
            return
        self._queue.extend(events)
        if len(self._queue) > self._max:
            self._queue.clear()
            self._fell_behind.set()
            self._end(
                f"subscriber fell behind: more than {self._max} events waiting; resubscribe "
                "with after_seq to catch up"
            )
            return
        self._wakeup.set()

    def _end(self, reason: str | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = reason
        self._wakeup.set()
        if self._on_end is not None:
            self._on_end(reason)

    def fail(self, reason: str) -> None:
        """End the stream with :class:`~adapter.SubscriberDropped` (after pending events)."""
        self._end(reason)

    def abort(self, exc: Exception) -> None:
        """End the stream with ``exc`` (after pending events): the gateway lost NATS."""
        if not self._ended:
            self._raise = exc
        self._end(None)

    async def receive_batch(self) -> list[Event]:
        """Every pending event (at least one), waiting if there is none.

        Raises:
            anyio.EndOfStream: the session ended and everything was received.
            SubscriberDropped: this subscriber fell behind, or events went missing.
            BackendUnavailableError: ended by :meth:`abort` (the gateway lost NATS).
        """
        if self._held:
            held = list(self._held)
            self._held.clear()
            return held
        while not self._queue:
            if self._ended:
                if self._raise is not None:
                    raise self._raise
                if self._error is not None:
                    raise SubscriberDropped(self._error, self.last_seq)
                raise anyio.EndOfStream
            await self._wakeup.wait()
            self._wakeup = asyncio.Event()
        batch = list(self._queue)
        self._queue.clear()
        self.last_seq = batch[-1].seq
        return batch

    async def wait_dropped(self) -> None:
        """Return once this stream was dropped for falling behind (never otherwise)."""
        await self._fell_behind.wait()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        # Events of a batch not yet yielded stay on the stream (not in this generator), so
        # leaving one `async for` and starting another loses nothing.
        held = self._held
        while True:
            if not held:
                try:
                    batch = await self.receive_batch()
                except anyio.EndOfStream:
                    return
                held.extend(batch)
            yield held.popleft()

    async def close(self) -> None:
        """Delete the consumer (a feed's member: leave the feed)."""
        feed, self.feed = self.feed, None
        sub, self._sub = self._sub, None
        self._end(None)
        if feed is not None:
            await feed.detach(self)
        if sub is not None:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # the connection may be gone already
                _log.debug("cluster.unsubscribe_failed", error=repr(exc))
