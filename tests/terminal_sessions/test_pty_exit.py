"""PtyProcess.wait_exited with many waiters at once, on a real child: the session's main task,
a stop and a kill may all wait for the same exit. Every waiter wakes when the child exits,
a cancelled waiter (even the one watching the child) leaves the others waiting, and closing
the process wakes them all with ClosedResourceError. The child is never reaped by a wait."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.abc
import pytest

from adapter.terminals._pty import PtyProcess
from benchmarks import procfs
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.pty]

WAITERS = 5
CHILD = (
    "import signal, time\n"
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(3600)\n"
)


@pytest.fixture
async def child() -> AsyncIterator[PtyProcess]:
    """A real child on a pty that runs until it is killed (a hang-up, as closing the pty
    sends, leaves it running)."""
    proc = PtyProcess.spawn(
        [sys.executable, "-c", CHILD],
        cwd=None,
        env=dict(os.environ),
        cols=80,
        rows=24,
    )
    try:
        output = b""
        with anyio.fail_after(HANG_GUARD):
            while b"ready" not in output:
                output += await proc.read()
        yield proc
    finally:
        proc.signal_group(signal.SIGKILL)
        if not proc.has_exited():
            # polled: the proc may be closed
            await eventually(proc.has_exited, what="the child exited")
        proc.reap()
        proc.close()


def _waiter(proc: PtyProcess, done: list[str], name: str) -> Callable[[], object]:
    async def wait() -> None:
        await proc.wait_exited()
        done.append(name)

    return wait


async def test_every_waiter_wakes_when_the_child_exits(child: PtyProcess) -> None:
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            for index in range(WAITERS):
                tg.start_soon(_waiter(child, done, f"w{index}"))
            await anyio.wait_all_tasks_blocked()
            assert [] == done and not child.has_exited()
            assert child.signal_group(signal.SIGKILL)
    assert sorted(f"w{index}" for index in range(WAITERS)) == sorted(done)
    # Waiting does not reap: the child is a zombie until reap() collects it.
    assert child.has_exited() and procfs.exists(child.pid) and not procfs.running(child.pid)
    assert -signal.SIGKILL == child.reap()
    assert not procfs.exists(child.pid)
    # Once it has exited (and even once reaped), a wait returns at once.
    with anyio.fail_after(HANG_GUARD):
        await child.wait_exited()


async def test_a_cancelled_waiter_leaves_the_others_waiting(child: PtyProcess) -> None:
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            # The first waiter watches the child; cancelling it hands the watch on.
            first = anyio.CancelScope()

            async def cancellable() -> None:
                with first:
                    await _waiter(child, done, "first")()

            tg.start_soon(cancellable)
            await anyio.wait_all_tasks_blocked()
            for index in range(WAITERS - 1):
                tg.start_soon(_waiter(child, done, f"w{index}"))
            await anyio.wait_all_tasks_blocked()
            first.cancel()
            await anyio.wait_all_tasks_blocked()
            assert [] == done and not child.has_exited()
            # A waiter that gives up after a while (as a stop's grace does) is one more.
            with anyio.move_on_after(0.01):
                await child.wait_exited()
            await anyio.wait_all_tasks_blocked()
            assert [] == done
            assert child.signal_group(signal.SIGKILL)
    assert sorted(f"w{index}" for index in range(WAITERS - 1)) == sorted(done)


async def test_closing_wakes_every_waiter(child: PtyProcess) -> None:
    errors: list[str] = []

    async def wait() -> None:
        with pytest.raises(anyio.ClosedResourceError):
            await child.wait_exited()
        errors.append("closed")

    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            for _ in range(WAITERS):
                tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            child.close()
    assert ["closed"] * WAITERS == errors
    assert not child.has_exited()
    # A wait that starts after the close refuses at once too (no pidfd to watch).
    with pytest.raises(anyio.ClosedResourceError):
        await child.wait_exited()
