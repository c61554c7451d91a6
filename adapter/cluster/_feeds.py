"""One ordered consumer per session, shared by a gateway's subscribers of that session.

A gateway's front ends subscribe to a session more than once: the WebSocket front end
follows every session for its chat view, and each client that shows the session
subscribes too. With a JetStream consumer per subscription, nats-server delivers every
batch once per subscriber, and the gateway parses each delivery (protocol, headers, the
ordered consumer's bookkeeping) and decodes its events again: at 50 busy sessions that was
a third of nats-server's CPU and a fifth of the gateway's, and the queueing it caused on a
busy machine was most of the hop's tail latency.

:class:`SessionFeed` is one :class:`~adapter.cluster.ClusterEventStream` (its *source*, with
the consumer) whose accepted events go to the member streams attached to it, decoded once;
each member keeps its own position, queue and limit, so a member that falls behind is
dropped alone. A subscriber joins a running feed when the feed delivers everything it asks
for: when it started no later than the subscriber's ``after_seq`` and has delivered nothing
newer that it no longer keeps (:data:`KEEP_EVENTS` of the newest events are kept for those
who join a little late, such as a client subscribing after the seq of a snapshot); any
other subscriber gets a consumer of its own, as before. The consumer goes when the last
member leaves.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio

from .eventlog import ClusterEventStream

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext

    from ..events import Event
    from .config import ClusterConfig

__all__ = ("KEEP_EVENTS", "SessionFeed", "open_stream")

#: The newest events a feed keeps for subscribers that join it a little behind.
KEEP_EVENTS = 512


class SessionFeed:
    """The shared consumer of one session's events (see the module docstring)."""

    def __init__(
        self,
        session_id: str,
        after_seq: int,
        *,
        keep: int = KEEP_EVENTS,
        on_done: Callable[[SessionFeed], None] | None = None,
    ) -> None:
        self.session_id = session_id
        #: Every event after this seq comes through the feed.
        self.after_seq = after_seq
        self.source = ClusterEventStream(session_id, after_seq)
        self.source._fan_out = self._fan_out
        self.source._on_end = self._end
        self.members: list[ClusterEventStream] = []
        self.recent: collections.deque[Event] = collections.deque(maxlen=keep)
        #: Set once the source's consumer was started (or failed to start).
        self.started = anyio.Event()
        self.usable = False
        self.closed = False
        self.retired = False
        #: Called when the feed takes no new members any more (ended or closed).
        self._on_done = on_done

    async def start(self, js: JetStreamContext, config: ClusterConfig) -> None:
        """Start the source's consumer (:meth:`ClusterEventStream.start`); on failure the
        feed is closed and the error raised."""
        try:
            await self.source.start(js, config)
            self.usable = True
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close()
            raise
        finally:
            self.started.set()

    def serves(self, after_seq: int) -> bool:
        """Whether a subscriber asking for the events after ``after_seq`` can join: the
        feed delivers all of them (none it no longer keeps, none before it started)."""
        if not self.usable or self.closed or self.retired or self.source._ended:
            return False
        if after_seq < self.after_seq:
            return False
        last = self.source._last
        delivered = self.after_seq if last is None else last
        if after_seq >= delivered:
            return True
        return bool(self.recent) and self.recent[0].seq <= after_seq + 1

    def attach(self, stream: ClusterEventStream) -> None:
        """Make ``stream`` a member: the kept events it lacks now, the rest as they come.
        Call only when :meth:`serves` its ``after_seq``."""
        after = stream._after or 0
        behind = [event for event in self.recent if event.seq > after]
        if behind:
            stream.deliver(behind)
        stream.feed = self
        self.members.append(stream)

    async def detach(self, stream: ClusterEventStream) -> None:
        """Remove a member; the last one out deletes the consumer."""
        if stream in self.members:
            self.members.remove(stream)
        if not self.members and self.started.is_set():
            await self.close()

    def retire(self) -> None:
        """Take no new members (the ones it has stay until they leave)."""
        self.retired = True
        if self._on_done is not None:
            self._on_done(self)

    def _fan_out(self, events: Sequence[Event]) -> None:
        self.recent.extend(events)
        for member in self.members:
            member.deliver(events)

    def _end(self, reason: str | None) -> None:
        # The session's events ended (or went missing): every member ends alike, after
        # the events it holds, and the feed takes no new members (a new subscriber starts
        # a feed of its own).
        if self._on_done is not None:
            self._on_done(self)
        for member in self.members:
            member._end(reason)

    async def close(self) -> None:
        """Delete the consumer (members get no more events)."""
        if self.closed:
            return
        self.closed = True
        if self._on_done is not None:
            self._on_done(self)
        await self.source.close()


async def open_stream(
    feeds: dict[str, SessionFeed],
    stream: ClusterEventStream,
    js: JetStreamContext,
    config: ClusterConfig,
) -> None:
    """Start ``stream``: as a member of the session's feed in ``feeds`` when it serves the
    stream's ``after_seq`` (a new feed when there is none), else with a consumer of its own
    (a live-only subscription, ``after_seq=None``, always has its own)."""
    after = stream._after
    if after is not None:
        session_id = stream.session_id
        feed = feeds.get(session_id)
        if feed is None:
            feed = SessionFeed(session_id, after, on_done=lambda done: _forget(feeds, done))
            feeds[session_id] = feed
            await feed.start(js, config)
            if feed.serves(after):
                feed.attach(stream)
                return
            await feed.close()  # nobody else joined yet: no consumer left behind
        else:
            await feed.started.wait()
            if feed.serves(after):
                feed.attach(stream)
                return
    await stream.start(js, config)


def _forget(feeds: dict[str, SessionFeed], feed: SessionFeed) -> None:
    if feeds.get(feed.session_id) is feed:
        del feeds[feed.session_id]
