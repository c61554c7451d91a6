"""Which AG-UI threads are being started or loaded, so that concurrent requests agree.

A run on a thread that is not in memory first loads the thread (an await). Two requests at
once on a new thread would both load it, get two thread objects and start two sessions (the
first one orphaned). :meth:`ThreadClaims.starting` claims the thread for a run before that
first await: the second request is refused at once (:class:`~adapter.errors.ThreadBusyError`,
409). :meth:`ThreadClaims.load_once` makes the requests that need a thread while it is being
loaded (a ``connect`` beside a run) wait for that load instead of making their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import anyio

from ...errors import ThreadBusyError

__all__ = ("ThreadClaims",)

T = TypeVar("T")


class ThreadClaims:
    """Threads with a run being started, threads being loaded (see the module docs)."""

    def __init__(self) -> None:
        self._starting: set[str] = set()
        self._loading: dict[str, anyio.Event] = {}

    @contextlib.contextmanager
    def starting(self, thread_id: str) -> Iterator[None]:
        """Claim ``thread_id`` while a run is being started on it (no await before this).

        Raises:
            ThreadBusyError: another run is being started on it right now.
        """
        if thread_id in self._starting:
            raise ThreadBusyError(f"thread {thread_id!r} has a run being started")
        self._starting.add(thread_id)
        try:
            yield
        finally:
            self._starting.discard(thread_id)

    async def load_once(
        self, threads: dict[str, T], thread_id: str, load: Callable[[], Awaitable[T | None]]
    ) -> T | None:
        """``threads[thread_id]`` (moved last: ``threads`` is kept in order of use), else the
        result of the one ``load()`` under way for the thread (waited for), else ``load()``'s
        own (which adds it to ``threads`` when it finds it)."""
        while (loading := self._loading.get(thread_id)) is not None:
            await loading.wait()
        found = threads.pop(thread_id, None)
        if found is not None:
            threads[thread_id] = found  # the most recently used last
            return found
        done = self._loading[thread_id] = anyio.Event()
        try:
            return await load()
        finally:
            del self._loading[thread_id]
            done.set()
