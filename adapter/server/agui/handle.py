"""One AG-UI run's SSE frames, for any number of listeners (the request that started the
run, an ``agent/connect`` that joins it)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec

from .events import MessagesSnapshot, RunFinished, RunStarted, sse_frame

__all__ = ("connect_frames", "KEEPALIVE", "RunHandle")

#: SSE frames a run keeps for late listeners.
_MAX_FRAMES = 100_000

#: The comment an idle stream sends.
KEEPALIVE = b": keep-alive\n\n"


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
        self.stop_requested = anyio.Event()

    def push(self, frames: list[bytes]) -> None:
        """Append frames and wake the listeners."""
        if not frames:
            return
        self.frames.extend(frames)
        if len(self.frames) > _MAX_FRAMES:
            drop = len(self.frames) - _MAX_FRAMES // 2
            del self.frames[:drop]
            self.offset += drop
        self._wake()

    def close(self) -> None:
        """No more frames."""
        self.done = True
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
