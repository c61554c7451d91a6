"""StatusFeed: one backend watch, the newest change per session for each connection, handed
over in slices, held back from a connection before its session list and while it is behind."""

from __future__ import annotations

import collections
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from adapter import SessionInfo
from adapter.server.ws.status import BACKLOG_FRAMES, SLICE_FRAMES, StatusFeed
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


def info(session_id: str, state: str) -> SessionInfo:
    return SessionInfo(id=session_id, status="active", state=state)  # type: ignore[arg-type]


class Backend:
    """Only ``watch()``: the changes the test puts in (each watch fails while ``failing``).
    Like the real backends' watch streams, it hands over what is waiting without yielding to
    the event loop."""

    def __init__(self, *, fail_first: bool = False) -> None:
        self.waiting: collections.deque[SessionInfo] = collections.deque()
        self.wakeup = anyio.Event()
        self.watches = 0
        self.fail_first = fail_first
        self.retried = anyio.Event()

    def put(self, change: SessionInfo) -> None:
        self.waiting.append(change)
        self.wakeup.set()

    async def _changes(self) -> AsyncIterator[SessionInfo]:
        while True:
            while not self.waiting:
                await self.wakeup.wait()
                self.wakeup = anyio.Event()
            yield self.waiting.popleft()

    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[AsyncIterator[SessionInfo]]:
        self.watches += 1
        if self.watches == 2:
            self.retried.set()
        if self.fail_first and self.watches == 1:
            raise OSError("the backend is not reachable")
        yield self._changes()


class Sink:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.queued = 0
        self.got = anyio.Event()
        self.ignored: set[str] = set()

    def backlog(self) -> int:
        return self.queued

    def wants(self, session_id: str) -> bool:
        return session_id not in self.ignored

    def sees(self, info: object) -> bool:
        return True

    def put_status(self, text: str) -> None:
        frame = json.loads(text)
        assert "session_changed" == frame["type"]
        self.frames.append(frame["session"])
        self.got.set()

    def states(self) -> list[tuple[str, str]]:
        return [(f["id"], f["state"]) for f in self.frames]


async def settle() -> None:
    await anyio.wait_all_tasks_blocked()


async def test_newest_change_per_session_held_until_resumed() -> None:
    backend = Backend()
    feed = StatusFeed(backend)  # type: ignore[arg-type]
    with anyio.fail_after(HANG_GUARD):
        async with feed.running():
            early, late = Sink(), Sink()
            feed.attach(early)
            feed.resume(early)
            feed.attach(late)  # its session list is not out yet
            for state in ("busy", "waiting", "idle"):
                backend.put(info("s1", state))
                await settle()
            backend.put(info("s2", "busy"))
            await settle()
            assert [("s1", "busy"), ("s1", "waiting"), ("s1", "idle"), ("s2", "busy")] == (
                early.states()
            )
            assert [] == late.states(), "nothing before its session list"
            feed.resume(late)
            await settle()
            assert [("s1", "idle"), ("s2", "busy")] == late.states(), "the newest of each"
            feed.detach(late)
            backend.put(info("s2", "idle"))
            await settle()
            assert ("s2", "idle") == early.states()[-1]
            assert ("s2", "busy") == late.states()[-1], "a detached connection gets nothing"


async def test_only_the_sessions_a_connection_wants() -> None:
    backend = Backend()
    feed = StatusFeed(backend)  # type: ignore[arg-type]
    with anyio.fail_after(HANG_GUARD):
        async with feed.running():
            sink = Sink()
            sink.ignored.add("other")
            feed.attach(sink)
            feed.resume(sink)
            backend.put(info("other", "busy"))
            backend.put(info("mine", "busy"))
            await settle()
            assert [("mine", "busy")] == sink.states()


async def test_a_connection_behind_is_held_until_it_caught_up() -> None:
    backend = Backend()
    feed = StatusFeed(backend)  # type: ignore[arg-type]
    with anyio.fail_after(HANG_GUARD):
        async with feed.running():
            slow, fast = Sink(), Sink()
            for sink in (slow, fast):
                feed.attach(sink)
                feed.resume(sink)
            slow.queued = BACKLOG_FRAMES + 1
            for state in ("busy", "idle"):
                for n in range(3):
                    backend.put(info(f"s{n}", state))
            await settle()
            idle = [("s0", "idle"), ("s1", "idle"), ("s2", "idle")]
            assert idle == sorted(fast.states()), "changes not yet handed over coalesce"
            assert [] == slow.frames
            slow.queued = 0
            feed.resume(slow)  # what the connection's writer does once it wrote its queue
            await settle()
            assert idle == sorted(slow.states())


async def test_frames_go_out_in_slices_between_which_the_loop_runs() -> None:
    """A burst (every session changes, many connections) is handed over at most
    SLICE_FRAMES at a time: other ready tasks run in between."""
    backend = Backend()
    feed = StatusFeed(backend)  # type: ignore[arg-type]
    sinks = [Sink() for _ in range(10)]
    handed: list[int] = []
    with anyio.fail_after(HANG_GUARD):
        async with feed.running():
            for sink in sinks:
                feed.attach(sink)
                feed.resume(sink)
            for n in range(20):
                backend.put(info(f"s{n}", "busy"))

            async def count() -> None:
                # One reading per pass of the event loop while the burst is handed over.
                while sum(len(s.frames) for s in sinks) < 200:
                    handed.append(sum(len(s.frames) for s in sinks))
                    await anyio.lowlevel.checkpoint()

            await count()
            await settle()
    assert all(20 == len(s.frames) for s in sinks)
    steps = [b - a for a, b in zip(handed, [*handed[1:], 200], strict=True)]
    # At most one slice between two readings (two on trio, which runs the tasks of one
    # pass in random order): never the whole burst at once.
    assert max(steps) <= 2 * SLICE_FRAMES < 200


async def test_a_failed_watch_is_retried() -> None:
    backend = Backend(fail_first=True)
    feed = StatusFeed(backend)  # type: ignore[arg-type]
    sink = Sink()
    with anyio.fail_after(HANG_GUARD):
        async with feed.running():
            feed.attach(sink)
            feed.resume(sink)
            await backend.retried.wait()
            backend.put(info("s1", "busy"))
            await sink.got.wait()
    assert [("s1", "busy")] == sink.states()
