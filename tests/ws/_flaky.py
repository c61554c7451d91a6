"""A backend that can be made unavailable and available again (as a gateway that lost NATS):
a LocalBackend whose subscriptions fail with ``BackendUnavailableError`` while ``down``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from adapter import LocalBackend
from adapter.backend import BackendUnavailableError

DOWN = "the NATS server is not reachable"


class Stream:
    """A subscription that fails once the backend is down (its events stay in the
    session's history, for the next subscription to replay)."""

    def __init__(self, stream: Any, backend: Flaky) -> None:
        self._stream = stream
        self._backend = backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def receive_batch(self) -> Any:
        batch = await self._stream.receive_batch()
        if self._backend.down:
            raise BackendUnavailableError(DOWN)
        return batch


class Flaky:
    """A LocalBackend whose subscriptions fail while ``down`` is set (set from the test's
    thread: a plain attribute the server's loop reads)."""

    def __init__(self, inner: LocalBackend) -> None:
        self.inner = inner
        self.down = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @contextlib.asynccontextmanager
    async def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AsyncIterator[Any]:
        if self.down:
            raise BackendUnavailableError(DOWN)
        async with self.inner.subscribe(session_id, after_seq=after_seq) as stream:
            yield Stream(stream, self)
