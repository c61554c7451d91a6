"""Publishes of many sessions leave together: fewer socket writes for the same events.

Every session's publisher publishes its batch as soon as it has one, and nats-py writes
whatever is pending in one socket write per event-loop turn. Under load the sessions'
batches are ready at different moments (each CLI writes when it writes), so a worker
publishing for fifty busy sessions makes a write — and nats-server a read, and an
acknowledgement write back — per batch, and those system calls are a large share of the
CPU a delta costs. :class:`PublishGate` holds a publisher that is ready for at most
``linger`` seconds, so that the batches that get ready meanwhile (of any session) are
published in the same turn and leave in one write.

It only holds anything while the worker is busy: while fewer than ``min_batch`` batches
would be ready within one window (the rate of the last tenth of a second), a wait costs
latency and saves nothing, and the publisher goes at once. Holding batches makes them
bigger and fewer, so once busy the gate stays so until the rate falls below half of that
(without the margin it would switch itself off and on again).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

__all__ = ("PublishGate", "timer_linger")

#: Seconds over which the publish rate is counted.
_RATE_PERIOD = 0.1


def timer_linger(seconds: float) -> float:
    """``seconds`` rounded up to whole milliseconds (0 stays 0): what a window lasts on
    either event loop. Their timers count milliseconds: uvloop (libuv) rounds a wait to
    the nearest one, so 0.5 ms waited nothing and 1.5 ms waited 2; asyncio's selector
    rounds its timeout up. Each window then ends ~0.1 ms after its whole millisecond."""
    if seconds <= 0:
        return 0.0
    return math.ceil(round(seconds * 1000, 6)) / 1000


class PublishGate:
    """A window of ``linger`` seconds that the publishers ready within it leave together
    (``linger <= 0``: never any wait; see the module docstring)."""

    def __init__(
        self,
        linger: float,
        *,
        min_batch: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.linger = linger
        self.min_batch = min_batch
        self._clock = clock
        # asyncio's own primitives: the publishers run on nats-py, so on asyncio, and this
        # runs once per batch (anyio's Event asks sniffio for the library each time).
        self._window: asyncio.Event | None = None
        self._since = clock()
        self._calls = 0
        #: Whether the last period's rate makes a window worth it.
        self.busy = False

    async def wait(self) -> None:
        """Return at the end of the current window (the first waiter opens one), or at
        once while the worker is not busy."""
        if self.linger <= 0:
            return
        self._calls += 1
        now = self._clock()
        elapsed = now - self._since
        if elapsed >= _RATE_PERIOD:
            per_window = self._calls / elapsed * self.linger
            self.busy = per_window >= (self.min_batch / 2 if self.busy else self.min_batch)
            self._since, self._calls = now, 0
        window = self._window
        if window is not None:
            await window.wait()
            return
        if not self.busy:
            return
        window = self._window = asyncio.Event()
        try:
            await asyncio.sleep(self.linger)
        finally:
            # Also when the opener is cancelled: the others must not wait for it.
            self._window = None
            window.set()
