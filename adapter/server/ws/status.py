"""``session_changed`` for the connections of the endpoint, from one watch of the backend.

A connection gets the changes of the sessions it wants (:meth:`StatusSink.wants`: every
session once it asked for the list, as a UI showing badges does; else those it subscribed
to). With many UIs one state change is a frame to each of them: when many sessions start or
end their turns together that is thousands of frames at once (50 sessions x 100 pages), and
written in one go they would hold up the sessions' events for tens of milliseconds.
:class:`StatusFeed` therefore

* watches the backend once (not once per connection) and encodes each change once;
* keeps, per connection, the newest undelivered frame of each session (a newer change
  replaces an older one not yet handed over: memory per connection is bounded by the number
  of sessions, and the last state each connection gets is exact);
* hands the frames to the connections' writers :data:`SLICE_FRAMES` at a time,
  :data:`SLICE_PAUSE` apart, so the events waiting to be read get the loop (and the clients
  the time to read them) between two slices: state changes are the background work, events
  the foreground (5,000 changes take ~0.3 s to go out);
* skips a connection whose writer is behind (more than :data:`BACKLOG_FRAMES` frames queued)
  until it has caught up: its changes wait in its per-session slots meanwhile.

A connection :meth:`~StatusFeed.attach`\\ es before it reads the session list it sends on
connect and :meth:`~StatusFeed.resume`\\ s once that list is queued, so no change between
the two is lost and none goes out before the list.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Final, Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from claudecode.internal import get_logger

from ...backend import SessionBackend, SessionInfo
from .protocol import SessionChanged, encode_frame

__all__ = ("BACKLOG_FRAMES", "SLICE_FRAMES", "SLICE_PAUSE", "StatusFeed", "StatusSink")

_log = get_logger("claudecode.adapter.ws")

#: ``session_changed`` frames handed to writers at a time.
SLICE_FRAMES: Final = 16
#: Seconds between two slices.
SLICE_PAUSE: Final = 0.001
#: A connection with more frames than this waiting to be written gets no state change until
#: it has written them all.
BACKLOG_FRAMES: Final = 64
#: Seconds before watching again after the backend's watch failed.
_RETRY_SECONDS = 1.0


class StatusSink(Protocol):
    """What the feed needs of a connection."""

    def backlog(self) -> int:
        """Frames waiting to be written."""
        ...

    def wants(self, session_id: str) -> bool:
        """Whether the connection follows this session's state."""
        ...

    def sees(self, info: SessionInfo) -> bool:
        """Whether the connection's user may see this session at all (its owner)."""
        ...

    def put_status(self, text: str) -> None:
        """Queue an encoded ``session_changed`` frame (never waits)."""
        ...


class _Slot:
    """One connection's undelivered changes: the newest frame per session."""

    __slots__ = ("dirty", "held")

    def __init__(self) -> None:
        self.dirty: dict[str, str] = {}
        #: Not handed anything now (before its session list; while its writer is behind).
        self.held = True


class StatusFeed:
    """``session_changed`` frames for every attached connection (see the module docs); use
    ``async with feed.running():`` around the server's life."""

    def __init__(self, backend: SessionBackend) -> None:
        self._backend = backend
        self._slots: dict[StatusSink, _Slot] = {}
        #: Connections with changes to hand over, in order (a dict as an ordered set).
        self._due: dict[StatusSink, None] = {}
        self._wakeup = anyio.Event()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[StatusFeed]:
        """Watch the backend and deliver while the block runs."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            tg.start_soon(self._deliver)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    # -- connections ---------------------------------------------------------------

    def attach(self, sink: StatusSink) -> None:
        """Collect changes for ``sink`` from now on; they are held until :meth:`resume`."""
        self._slots.setdefault(sink, _Slot())

    def detach(self, sink: StatusSink) -> None:
        """Forget ``sink`` (its connection ended)."""
        self._slots.pop(sink, None)
        self._due.pop(sink, None)

    def hold(self, sink: StatusSink) -> None:
        """Hand ``sink`` nothing until :meth:`resume` (while it sends a session list)."""
        slot = self._slots.get(sink)
        if slot is not None:
            slot.held = True

    def resume(self, sink: StatusSink) -> None:
        """``sink`` may take changes again (its session list is queued; its writer caught
        up). Cheap when nothing is held."""
        slot = self._slots.get(sink)
        if slot is None or not slot.held:
            return
        slot.held = False
        if slot.dirty:
            self._due[sink] = None
            self._wakeup.set()

    # -- the watch -----------------------------------------------------------------

    async def _watch(self) -> None:
        while True:
            try:
                async with self._backend.watch() as changes:
                    async for info in changes:
                        self._changed(info)
                return  # the backend ended its watchers: it is closing
            except Exception:
                _log.exception("ws.status_watch_failed")
            await anyio.sleep(_RETRY_SECONDS)

    def _changed(self, info: SessionInfo) -> None:
        text = encode_frame(SessionChanged(session=info)).decode()
        session_id = info.id
        due = self._due
        for sink, slot in self._slots.items():
            if not sink.wants(session_id) or not sink.sees(info):
                continue
            slot.dirty[session_id] = text
            if not slot.held:
                due[sink] = None
        if due:
            self._wakeup.set()

    # -- delivery ------------------------------------------------------------------

    async def _deliver(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
            budget = SLICE_FRAMES
            while self._due:
                sink = next(iter(self._due))
                del self._due[sink]
                slot = self._slots.get(sink)
                if slot is None or slot.held or not slot.dirty:
                    continue
                if sink.backlog() > BACKLOG_FRAMES:
                    slot.held = True  # until its writer catches up (it calls resume())
                    continue
                dirty = slot.dirty
                while dirty and budget:
                    session_id = next(iter(dirty))
                    sink.put_status(dirty.pop(session_id))
                    budget -= 1
                if dirty:
                    self._due[sink] = None  # the rest after the others
                if not budget:
                    # Let the loop run what else is ready (the sessions' events) first, and
                    # the clients read them.
                    await anyio.sleep(SLICE_PAUSE)
                    budget = SLICE_FRAMES
