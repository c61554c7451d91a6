"""One AG-UI run's SSE frames, for any number of listeners (the request that started the
run, an ``agent/connect`` that joins it).

A listener that has caught up with the run lends the handle its write (:meth:`RunHandle.follow`):
the run's pump then writes each batch's frames itself, in the step that made them, instead of
waking the listener's task to do it (one task wake-up per batch of CLI output fewer). The
pump never waits for a slow client: a write that would wait (the server's send buffer is
full) is left to the listener's task to finish, and that listener reads on from the handle
as any other until it catches up again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from typing import Any

import anyio
import msgspec

from .events import MessagesSnapshot, RunFinished, RunStarted, sse_frame

__all__ = ("connect_frames", "KEEPALIVE", "RunHandle")

#: SSE frames a run keeps for late listeners.
_MAX_FRAMES = 100_000

#: The comment an idle stream sends.
KEEPALIVE = b": keep-alive\n\n"

#: A listener's write: sends one chunk of SSE to its client.
Write = Callable[[bytes], Coroutine[Any, Any, None]]


class _Resume:
    """Awaits the rest of a coroutine that another task started and that suspended.

    ``first`` is what the coroutine yielded when it suspended (the future it waits for):
    handed to the awaiting task, which resumes this when it is done, as a task does with
    what its own coroutine yields. asyncio only (a trio checkpoint belongs to the task that
    made it), which :meth:`RunHandle.follow` checks before it lends its write.
    """

    __slots__ = ("_coro", "_first")

    def __init__(self, coro: Coroutine[Any, Any, None], first: Any) -> None:
        self._coro = coro
        self._first = first

    def __await__(self) -> Generator[Any, Any, None]:
        coro, value = self._coro, self._first
        while True:
            try:
                sent = yield value
            except BaseException as exc:  # cancelled while it waits: the coroutine's to handle
                try:
                    value = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    value = coro.send(sent)
                except StopIteration:
                    return

    def close(self) -> None:
        self._coro.close()


class _Sink:
    """A listener's write, lent to the run's pump (see the module docs)."""

    __slots__ = ("blocked", "failed", "sent", "write")

    def __init__(self, write: Write, sent: int) -> None:
        self.write = write
        self.sent = sent  # frames written so far (an index, as ``start``)
        self.blocked: _Resume | None = None  # a write that suspended: the listener finishes it
        self.failed: BaseException | None = None  # a write that raised


class RunHandle:
    """One run's SSE frames, for any number of listeners."""

    def __init__(self, thread_id: str, run_id: str, messages_before: bytes):
        self.thread_id = thread_id
        self.run_id = run_id
        #: The thread's messages when the run started, as a JSON array, for a page that joins
        #: the run later. Encoded once (a C call) rather than deep-copied: a copy of a long
        #: thread at every run start cost more than the run's first deltas.
        self.messages_before = messages_before
        self.frames: list[bytes] = []
        self.offset = 0  # frames dropped from the front (very long runs)
        self.done = False
        self.shutdown = False
        self.listeners = 0
        self._changed = anyio.Event()
        # The backend's class, called directly for each wake-up: ``anyio.Event()`` looks the
        # backend up every time (~0.5 µs per frame and listener).
        self._event_class = type(self._changed)
        self._closed = anyio.Event()
        self._last_wake = time.monotonic()
        self._ticking = False  # a keep_alive timer wakes idle listeners
        self._ticks = 0  # wake-ups for keep-alive comments so far
        self._sink: _Sink | None = None  # the listener whose write the pump uses
        self.stop_requested = anyio.Event()

    def push(self, frames: list[bytes]) -> None:
        """Append frames, write them to the listener that lent its write, and wake the
        other listeners."""
        if not frames:
            return
        self.frames.extend(frames)
        if len(self.frames) > _MAX_FRAMES:
            drop = len(self.frames) - _MAX_FRAMES // 2
            del self.frames[:drop]
            self.offset += drop
        sink = self._sink
        if sink is not None and self._write_to(sink) and self.listeners == 1:
            self._last_wake = time.monotonic()  # not idle: no keep-alive due
            return
        self._wake()

    def _write_to(self, sink: _Sink) -> bool:
        """Write the frames the sink has not had, as far as its write goes without waiting;
        whether it took them (otherwise it is let go, for its listener to carry on)."""
        available = len(self.frames) + self.offset
        if sink.sent < self.offset:  # out of the kept window: its listener ends
            self._sink = None
            return False
        coro = sink.write(b"".join(self.frames[sink.sent - self.offset :]))
        sink.sent = available
        try:
            waits_for = coro.send(None)
        except StopIteration:
            return True  # written (the common case: the send buffer had room)
        except BaseException as exc:  # the listener raises it in its task
            sink.failed = exc
        else:
            # The client reads slower than the run goes: the listener's task finishes this
            # write, and reads on from the handle; the pump goes on without waiting.
            sink.blocked = _Resume(coro, waits_for)
        self._sink = None
        return False

    def close(self) -> None:
        """No more frames."""
        self.done = True
        self._sink = None
        self._closed.set()
        self._wake()

    def _wake(self) -> None:
        self._last_wake = time.monotonic()
        changed, self._changed = self._changed, self._event_class()
        changed.set()

    def use_ticks(self) -> None:
        """Its owner calls :meth:`tick` periodically (one timer for many runs): listeners then
        send keep-alive comments on its ticks instead of timing out their own waits."""
        self._ticking = True

    def tick(self, interval: float) -> None:
        """Wake the listeners if nothing woke them for ``interval`` seconds (each then sends
        a ``: keep-alive`` comment)."""
        if not self.done and time.monotonic() - self._last_wake >= interval:
            self._ticks += 1
            self._wake()

    async def keep_alive(self, interval: float) -> None:
        """Until the run ends, wake the listeners whenever nothing woke them for
        ``interval`` seconds, so each sends a ``: keep-alive`` comment.

        One timer per run instead of a timeout around every wait of every listener: a
        cancel scope per frame was the largest cost of :meth:`listen` on a busy server.
        """
        self._ticking = True
        try:
            while not self.done:
                now = time.monotonic()
                due = self._last_wake + interval
                if now >= due:
                    self._ticks += 1
                    self._wake()
                    continue
                with anyio.move_on_after(due - now):
                    await self._closed.wait()
        finally:
            self._ticking = False

    async def listen(self, *, start: int = 0, keepalive: float = 15.0) -> AsyncIterator[bytes]:
        """Frames from index ``start`` on, live; ``: keep-alive`` comments while idle.

        The comments come from :meth:`keep_alive` or :meth:`tick` when the handle has them
        (a service's runs do); otherwise after ``keepalive`` idle seconds of this listener.
        """
        index = start
        self.listeners += 1
        try:
            while True:
                if index < self.offset:
                    return  # fell out of the kept window
                available = len(self.frames) + self.offset
                if index < available:
                    # Everything pending in one write: one ASGI send per wake-up, not per event.
                    yield b"".join(self.frames[index - self.offset :])
                    index = available
                    continue
                if self.done:
                    return
                changed = self._changed
                if self._ticking:
                    # keep_alive wakes us when idle: a wake-up with nothing new is its tick.
                    await changed.wait()
                    if not self.done and index >= len(self.frames) + self.offset:
                        yield KEEPALIVE
                    continue
                with anyio.move_on_after(keepalive) as scope:
                    await changed.wait()
                if scope.cancelled_caught:
                    yield KEEPALIVE
        finally:
            self.listeners -= 1

    async def follow(self, write: Write, *, start: int = 0, keepalive: float = 15.0) -> None:
        """What :meth:`listen` yields, written with ``write``: frames from index ``start``
        on, live, ``: keep-alive`` comments while idle; returns at the run's end.

        Caught up, the listener lends ``write`` to the run's pump (one listener at a time;
        see the module docs), and takes it back for a keep-alive comment, a write that
        would have waited, and the run's end.
        """
        index = start
        lend = self._ticking and _on_asyncio()  # a lent write sends no keep-alive of its own
        sink: _Sink | None = None
        self.listeners += 1
        try:
            while True:
                if sink is not None:
                    if self._sink is sink:  # still lent: wait for a reason to take it back
                        ticks, changed = self._ticks, self._changed
                        await changed.wait()
                        if self._sink is not sink or (self._ticks == ticks and not self.done):
                            continue
                        self._sink = None
                    index = sink.sent  # what the pump wrote
                    blocked, failed, sink = sink.blocked, sink.failed, None
                    if failed is not None:
                        raise failed
                    if blocked is not None:
                        await blocked
                    elif not self.done and index >= len(self.frames) + self.offset:
                        await write(KEEPALIVE)  # woken by a tick: idle
                    continue
                if index < self.offset:
                    return  # fell out of the kept window
                available = len(self.frames) + self.offset
                if index < available:
                    await write(b"".join(self.frames[index - self.offset :]))
                    index = available
                    continue
                if self.done:
                    return
                if lend and self._sink is None:
                    sink = self._sink = _Sink(write, index)
                    continue
                changed = self._changed
                if self._ticking:
                    await changed.wait()
                    if not self.done and index >= len(self.frames) + self.offset:
                        await write(KEEPALIVE)
                    continue
                with anyio.move_on_after(keepalive) as scope:
                    await changed.wait()
                if scope.cancelled_caught:
                    await write(KEEPALIVE)
        finally:
            self.listeners -= 1
            if sink is not None:
                if self._sink is sink:
                    self._sink = None
                if sink.blocked is not None:
                    sink.blocked.close()


def _on_asyncio() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # another event loop (trio)
        return False


def _now_ms() -> int:
    return int(time.time() * 1000)


def connect_frames(
    thread_id: str, run_id: str, messages: list[dict[str, Any]], live: RunHandle | None
) -> list[bytes]:
    """What ``agent/connect`` sends first on a known thread: with a ``live`` run, that run's
    ``RUN_STARTED`` and the messages it started with (its own frames follow from index 1);
    otherwise a run of its own holding the thread's ``messages`` (encoded at once, before
    they can change: the log's own dicts, no copy)."""
    now = _now_ms
    if live is not None:
        return [
            sse_frame(RunStarted(thread_id=live.thread_id, run_id=live.run_id, timestamp=now())),
            sse_frame(
                MessagesSnapshot(
                    messages=msgspec.json.decode(live.messages_before), timestamp=now()
                )
            ),
        ]
    return [
        sse_frame(RunStarted(thread_id=thread_id, run_id=run_id, timestamp=now())),
        sse_frame(MessagesSnapshot(messages=messages, timestamp=now())),
        sse_frame(RunFinished(thread_id=thread_id, run_id=run_id, timestamp=now())),
    ]
