"""A connection's subscriptions (a mixin of
:class:`~adapter.server.ws.endpoint.WebSocketConnection`): one pump task per subscribed session
moves its events into the connection's outbox, after a snapshot (or from ``since_seq``); a
subscription whose session queue overflowed closes the connection as too slow, at once (also
while its pump waits for room to write)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import anyio.abc

from claudecode.internal import get_logger

from ...backend import EventStream
from ...events import Event
from ...fanout import SubscriberDropped
from ...owners import OwnedBackend
from .errors import error_of
from .protocol import CLOSE_SLOW_CONSUMER, Ack, Error, ServerFrame, Snapshot, Subscribe, Unsubscribe
from .views import SessionViews

__all__ = ("Subscriptions",)

_log = get_logger("claudecode.adapter.ws")

#: The close reason of a client too slow for its subscriptions.
_SLOW = "too slow: reconnect and subscribe with since_seq"


class Subscriptions:
    """``subscribe`` and ``unsubscribe``, and the pump task of each subscription (a mixin)."""

    backend: OwnedBackend
    views: SessionViews
    _subs: dict[str, anyio.CancelScope]
    _subscribing: set[str]
    _tg: anyio.abc.TaskGroup | None

    if TYPE_CHECKING:  # the connection's Outbox provides these

        def send(self, frame: ServerFrame) -> None: ...

        async def _send_event(self, event: Event) -> None: ...

        def _end(self, code: int, reason: str, *, flush: bool = True) -> None: ...

    async def _subscribe(self, frame: Subscribe) -> None:
        old = self._subs.pop(frame.session_id, None)
        if old is not None:
            old.cancel()
        assert self._tg is not None
        self._subscribing.add(frame.session_id)
        try:
            await self._tg.start(self._pump, frame)
        finally:
            self._subscribing.discard(frame.session_id)

    async def _pump(
        self,
        frame: Subscribe,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        session_id = frame.session_id
        started = False
        with anyio.CancelScope() as scope:
            try:
                after = frame.since_seq
                while True:
                    snapshot: Snapshot | None = None
                    if after is None:
                        info = await self.backend.info(session_id)
                        chat = self.views.snapshot(session_id)
                        snapshot = Snapshot(session_id=session_id, session=info, chat=chat)
                        after = chat.last_seq
                    try:
                        async with self.backend.subscribe(session_id, after_seq=after) as stream:
                            if stream.gap and snapshot is None:
                                after = None  # the history lost events: a snapshot instead
                                continue
                            if not started:
                                self._subs[session_id] = scope
                                self.send(Ack(request_id=frame.request_id, session_id=session_id))
                                started = True
                                task_status.started()
                            if snapshot is not None:
                                self.send(snapshot)
                            watcher = anyio.CancelScope()
                            assert self._tg is not None
                            self._tg.start_soon(self._watch_drop, stream, watcher)
                            try:
                                while True:
                                    for event in await stream.receive_batch():
                                        after = event.seq
                                        await self._send_event(event)
                            finally:
                                watcher.cancel()
                    except SubscriberDropped:
                        # The session's queue for this client overflowed: the client is too slow.
                        self._end(CLOSE_SLOW_CONSUMER, _SLOW, flush=False)
                        return
            except anyio.EndOfStream:
                pass  # the session ended; its last events were sent
            except Exception as exc:
                if not started:
                    raise
                code, message = error_of(exc)
                _log.warning("ws.subscription_failed", session_id=session_id, error=message)
                self.send(Error(code=code, message=message, session_id=session_id))
            finally:
                if self._subs.get(session_id) is scope:
                    del self._subs[session_id]

    async def _watch_drop(self, stream: EventStream, scope: anyio.CancelScope) -> None:
        """Close the connection as too slow as soon as the session drops this subscription:
        the pump may be waiting for room to write to the client (which reads nothing), and
        would only find out at its next ``receive_batch``."""
        with scope:
            await stream.wait_dropped()
            self._end(CLOSE_SLOW_CONSUMER, _SLOW, flush=False)

    async def _unsubscribe(self, frame: Unsubscribe) -> None:
        scope = self._subs.pop(frame.session_id, None)
        if scope is not None:
            scope.cancel()
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))
