"""PublishGate: the publishers ready within one window leave together; nothing waits while
the worker is not busy, or for a cancelled opener. A worker's linger is rounded up to whole
milliseconds (what the event loops' timers wait)."""

from __future__ import annotations

import anyio
import pytest

from adapter.cluster import ClusterConfig
from adapter.cluster import worker as cluster_worker
from adapter.cluster._gate import PublishGate, timer_linger
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("seconds", "window"),
    [(0.0, 0.0), (-1.0, 0.0), (0.0001, 0.001), (0.0005, 0.001), (0.001, 0.001),
     (0.0015, 0.002), (0.002, 0.002), (0.003, 0.003), (0.0030000001, 0.003)],
)  # fmt: skip
def test_a_linger_is_whole_milliseconds(seconds: float, window: float) -> None:
    assert window == timer_linger(seconds)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def count_busy(gate: PublishGate, clock: Clock) -> None:
    # A thousand publishes within one rate period (each goes at once: the gate does not
    # know the rate yet); the next wait after the period finds the worker busy.
    for _ in range(1000):
        await gate.wait()
    assert not gate.busy
    clock.now += 0.1


async def test_no_linger_never_waits() -> None:
    gate = PublishGate(0.0)
    with anyio.fail_after(HANG_GUARD):
        for _ in range(1000):
            await gate.wait()
    assert not gate.busy


async def test_not_busy_goes_at_once() -> None:
    clock = Clock()
    gate = PublishGate(0.001, clock=clock)
    with anyio.fail_after(HANG_GUARD):
        for _ in range(5):
            await gate.wait()
            clock.now += 0.05  # 20 publishes a second: far below min_batch per window
    assert not gate.busy and gate._window is None


async def test_busy_waiters_leave_together() -> None:
    clock = Clock()
    gate = PublishGate(0.01, clock=clock)
    await count_busy(gate, clock)
    released: list[int] = []
    windows: list[object] = []

    async def waiter(n: int) -> None:
        await gate.wait()
        released.append(n)

    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(waiter, n)
            await anyio.wait_all_tasks_blocked()
            windows.append(gate._window)
            assert gate.busy and released == [] and windows[0] is not None
    assert sorted(released) == [0, 1, 2]
    assert gate._window is None


async def test_a_cancelled_opener_frees_the_others() -> None:
    clock = Clock()
    gate = PublishGate(3600.0, clock=clock)
    await count_busy(gate, clock)
    released: list[str] = []
    opener = anyio.CancelScope()

    async def first() -> None:
        with opener:
            await gate.wait()
        released.append("opener cancelled" if opener.cancelled_caught else "opener")

    async def other() -> None:
        await gate.wait()
        released.append("other")

    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(other)
            await anyio.wait_all_tasks_blocked()
            assert released == []  # both wait for the hour-long window
            opener.cancel()
    assert sorted(released) == ["opener cancelled", "other"]


async def test_busy_until_the_rate_falls_below_half() -> None:
    clock = Clock()
    gate = PublishGate(0.0001, clock=clock)  # 2 per window: 20,000 a second
    gate.busy = True  # as if the last period had been busy
    with anyio.fail_after(HANG_GUARD):
        for _ in range(1200):  # 12,000 a second: above half, still busy
            await gate.wait()
        clock.now += 0.1
        await gate.wait()
        assert gate.busy
        for _ in range(500):  # 5,000 a second: below half
            await gate.wait()
        clock.now += 0.1
        await gate.wait()
        assert not gate.busy


@pytest.mark.parametrize(("per_second", "busy"), [(1000, False), (1400, False), (1600, True)])
async def test_a_worker_with_the_defaults_holds_batches_from_fifteen_busy_sessions(
    per_second: int, busy: bool
) -> None:
    """Ten sessions at the CLI's top pace (100 deltas a second each) go at once; from
    fifteen, batches wait for the window (the worker's gate with the default linger)."""
    clock = Clock()
    gate = PublishGate(
        timer_linger(ClusterConfig().publish_linger),
        min_batch=cluster_worker._MIN_BATCH,
        clock=clock,
    )
    with anyio.fail_after(HANG_GUARD):
        for _ in range(per_second // 10):  # a tenth of a second's batches
            await gate.wait()
        clock.now += 0.1
        await gate.wait()
    assert busy == gate.busy
