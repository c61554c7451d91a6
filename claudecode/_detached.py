"""A task that belongs to no task group, so any task may stop it or wait for it.

An async generator that owns a task group cannot be abandoned safely: a program that
returns from inside ``async for`` leaves the generator to be finalized later, in another
task (the event loop's async-generator hook), and exiting the group's cancel scope there
cancels the wrong task or fails. Work that outlives one ``yield`` therefore runs in a
detached task: a plain asyncio task, or a trio system task in its own cancel scope.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import sniffio

from ._log import get_logger

__all__ = ("DetachedTask", "spawn_detached")

_log = get_logger("claudecode")


class DetachedTask:
    """Handle of a task started by :func:`spawn_detached`; usable from any task."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel = cancel
        self._done = anyio.Event()
        self._error: BaseException | None = None
        self._cancelled = False

    def cancel(self) -> None:
        """Ask the task to stop (no-op once it is done)."""
        if not self._done.is_set():
            self._cancel()

    def done(self) -> bool:
        return self._done.is_set()

    async def wait(self) -> None:
        """Wait for the task; raise what it raised, unless it was cancelled."""
        await self._done.wait()
        if self._error is not None and not self._cancelled:
            raise self._error

    def _finish(self, error: BaseException | None, cancelled: bool) -> None:
        self._error, self._cancelled = error, cancelled
        self._done.set()


def spawn_detached(coro: Coroutine[Any, Any, None], *, name: str) -> DetachedTask:
    """Run ``coro`` outside every task group of the caller (asyncio or trio)."""
    backend = sniffio.current_async_library()
    if backend == "asyncio":
        import asyncio

        task = asyncio.get_running_loop().create_task(coro, name=name)

        def cancel() -> None:
            task.cancel()

        handle = DetachedTask(cancel)

        def finished(done: asyncio.Task[None]) -> None:
            if done.cancelled():
                handle._finish(None, True)
            else:
                handle._finish(done.exception(), False)

        task.add_done_callback(finished)
        return handle
    if backend == "trio":
        import trio

        scope = trio.CancelScope()
        trio_handle = DetachedTask(scope.cancel)

        async def run() -> None:
            error: BaseException | None = None
            try:
                with scope:
                    await coro
            except BaseException as exc:  # a system task must not raise: kept for wait()
                error = exc
            cancelled = scope.cancelled_caught or isinstance(error, trio.Cancelled)
            if error is not None and not cancelled:
                _log.debug("detached.failed", task=name, error=repr(error))
            trio_handle._finish(error, cancelled)

        trio.lowlevel.spawn_system_task(run, name=name, context=contextvars.copy_context())
        return trio_handle
    coro.close()
    raise RuntimeError(f"unsupported async library {backend!r} (asyncio or trio)")
