"""Background tasks that can be cancelled without cancelling the task group's host.

A session enters its task group in ``__aenter__``, so the caller's own code runs inside that
group's cancel scope: cancelling the scope to stop the session's tasks would cancel the
caller too. :class:`TaskSet` gives every task its own scope instead, and cancels those.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

__all__ = ("TaskSet",)


class TaskSet:
    """Tasks started in ``task_group`` that :meth:`cancel_all` can stop, host untouched."""

    def __init__(self, task_group: anyio.abc.TaskGroup) -> None:
        self._tg = task_group
        self._scopes: set[anyio.CancelScope] = set()
        self._closed = False

    def spawn(
        self, fn: Callable[..., Awaitable[Any]], *args: Any, name: str | None = None
    ) -> anyio.CancelScope:
        """Start ``fn(*args)`` in its own cancel scope; returns the scope."""
        scope = anyio.CancelScope()
        if self._closed:
            scope.cancel()
        self._scopes.add(scope)

        async def run() -> None:
            try:
                with scope:
                    await fn(*args)
            finally:
                self._scopes.discard(scope)

        self._tg.start_soon(run, name=name)
        return scope

    def cancel_all(self) -> None:
        """Cancel every task started so far, and any started later."""
        self._closed = True
        for scope in list(self._scopes):
            scope.cancel()
