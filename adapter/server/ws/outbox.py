"""A connection's outgoing frames (a mixin of
:class:`~adapter.server.ws.endpoint.WebSocketConnection`): one bounded queue, the writer task that
empties it, and the close that ends the connection once the queue is written (or at once,
for a client that does not read).

A frame is written at once when nothing is queued or being written; else it waits in the
queue, and an event frame waits for room there: a slow client holds up only its own
subscriptions, whose events then wait in the session's bounded subscriber queue.

The queue is bounded in size too (``max_queue_bytes``, counted in characters of JSON text,
at least one byte each): event frames wait while it holds half of that; a reply or a state
change that would take it over the whole (a client that sends requests and never reads the
answers) closes the connection at once with ``CLOSE_SLOW_CONSUMER`` (4001).
"""

from __future__ import annotations

import collections

import anyio
import anyio.abc
from starlette.websockets import WebSocket

from ...backend import SessionInfo
from ...events import Event
from ...owners import Caller, may_see
from .encoded import event_text
from .protocol import CLOSE_SLOW_CONSUMER, ServerFrame, encode_frame
from .status import StatusFeed

__all__ = ("Close", "Outbox")


class Close(Exception):
    """End the connection with a close code."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Outbox:
    """Queued frames, the writer task and the close of one connection (a mixin)."""

    ws: WebSocket
    caller: Caller
    feed: StatusFeed
    max_queue: int
    max_queue_bytes: int
    _queued_bytes: int
    _out: collections.deque[str]
    _wakeup: anyio.Event
    _room: anyio.Event
    _close: Close | None
    _writing: bool
    _send_error: Exception | None
    _subs: dict[str, anyio.CancelScope]
    _subscribing: set[str]
    _watching_list: bool
    _tg: anyio.abc.TaskGroup | None

    def send(self, frame: ServerFrame) -> None:
        """Queue a frame (replies and session changes; events go through :meth:`_send_event`)."""
        if self._close is not None:
            return
        self._queue(encode_frame(frame).decode())

    def _queue(self, text: str) -> None:
        """Queue a frame that cannot wait for room (a reply, a state change); one that
        would take the queue over ``max_queue_bytes`` ends the connection instead."""
        size = len(text)
        if self._out and self._queued_bytes + size > self.max_queue_bytes:
            self._end(
                CLOSE_SLOW_CONSUMER,
                f"too slow: over {self.max_queue_bytes} bytes of frames unread",
                flush=False,
            )
            return
        self._queued_bytes += size
        self._out.append(text)
        self._wakeup.set()

    async def _emit(self, text: str) -> None:
        """Write a frame: at once when nothing is queued or being written (one task switch
        less per frame: the writer task would only pass it on), else through the queue,
        once it has room. A slow client holds up only its own subscriptions, whose events
        then wait in the session's bounded subscriber queue."""
        if self._close is not None:
            return
        if not self._out and not self._writing:
            self._writing = True
            try:
                await self.ws.send_text(text)
            except Exception as exc:  # as if the writer had failed: the connection ends
                self._send_error = exc
                assert self._tg is not None
                self._tg.cancel_scope.cancel()
            finally:
                self._writing = False
                if self._out or self._close is not None:
                    self._wakeup.set()
            return
        while self._close is None and (
            len(self._out) >= self.max_queue or 2 * self._queued_bytes >= self.max_queue_bytes
        ):
            self._room = anyio.Event()
            await self._room.wait()
        if self._close is None:
            self._queued_bytes += len(text)
            self._out.append(text)
            self._wakeup.set()

    def backlog(self) -> int:
        """Frames waiting to be written (for the :class:`StatusFeed`)."""
        return len(self._out)

    def wants(self, session_id: str) -> bool:
        """Whether this client follows ``session_id``'s state (for the :class:`StatusFeed`):
        every session's once it asked for the list, else those it subscribed to."""
        return self._watching_list or session_id in self._subs or session_id in self._subscribing

    def sees(self, info: SessionInfo) -> bool:
        """Whether this client's user may see ``info`` (the feed watches every session)."""
        return may_see(self.caller.principal, info.user)

    def put_status(self, text: str) -> None:
        """Queue a ``session_changed`` frame from the :class:`StatusFeed` (never waits: the
        feed holds back a connection whose writer is behind)."""
        if self._close is None:
            self._queue(text)

    async def _send_event(self, event: Event) -> None:
        """Write an event frame (see :meth:`_emit`)."""
        await self._emit(event_text(event))

    def _end(self, code: int, reason: str, *, flush: bool = True) -> None:
        """Close with ``code``: after the queued frames (``flush``) or at once (a writer
        stuck on a client that does not read)."""
        if self._close is None:
            self._close = Close(code, reason)
        self._wakeup.set()
        self._room.set()
        if not flush and self._tg is not None:
            self._tg.cancel_scope.cancel()

    async def _writer(self) -> None:
        while True:
            if not self._writing:  # else a frame is being written at once (see _emit)
                self._writing = True
                try:
                    while self._out:
                        text = self._out.popleft()
                        self._queued_bytes -= len(text)
                        await self.ws.send_text(text)
                        if len(self._out) < self.max_queue:
                            self._room.set()
                finally:
                    self._writing = False
                self.feed.resume(self)  # caught up: state changes held back may come
                if self._close is not None:
                    assert self._tg is not None
                    self._tg.cancel_scope.cancel()
                    return
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
