"""Waiting for a child process's exit without reaping it.

A child that has exited but is not yet reaped keeps its process id, and so its process
group id: until it is reaped, ``killpg(pid, ...)`` reaches exactly the group it led (its
leftover children), never an unrelated process that got the id again. So the exit is
awaited on a pidfd (Linux), falling back to polling ``waitid(WNOWAIT)`` elsewhere, and the
owner reaps only after it is done signalling the group.
"""

from __future__ import annotations

import contextlib
import os

import anyio

__all__ = ("ChildExit",)

_POLL_INTERVAL = 0.05


class ChildExit:
    """The exit of one child process of ours, observed without reaping it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._pidfd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(pid)
            except OSError:
                self._pidfd = None

    def has_exited(self) -> bool:
        """Whether the child has exited (or is already reaped)."""
        try:
            result = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return result is not None

    async def wait(self) -> None:
        """Wait until the child exits, without reaping it.

        Raises :class:`anyio.ClosedResourceError` when :meth:`close` is called meanwhile."""
        fd = self._pidfd
        if fd is not None:
            while not self.has_exited():
                await anyio.wait_readable(fd)
            return
        # No pidfd on this platform: poll (an exit raises no event we could wait for).
        while not self.has_exited():  # noqa: ASYNC110
            await anyio.sleep(_POLL_INTERVAL)

    def close(self) -> None:
        """Release the pidfd (wakes a waiter with ClosedResourceError). Idempotent."""
        fd, self._pidfd = self._pidfd, None
        if fd is not None:
            anyio.notify_closing(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
