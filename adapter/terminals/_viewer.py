"""One viewer's feed of a terminal session: bounded, and dropped rather than waited for."""

from __future__ import annotations

from collections import deque

import anyio

from ._errors import TerminalError, TerminalFailedError
from ._types import ViewerItem

__all__ = ("TerminalViewer", "ViewerDroppedError")


class ViewerDroppedError(TerminalError):
    """The viewer fell more than its buffer behind and was dropped; attach again for a fresh
    screen."""

    def __init__(self, session_id: str, limit: int) -> None:
        super().__init__(
            f"viewer of terminal session {session_id!r} fell more than {limit} bytes behind"
        )
        self.session_id = session_id
        self.limit = limit


class TerminalViewer:
    """What :meth:`~terminals.TerminalManager.attach` yields.

    The first item is the current screen (bytes that redraw it on a fresh terminal) and the
    session's status; then live output and control events (:data:`~terminals.ViewerItem`)
    until :class:`~terminals.TerminalExit`, after which :meth:`receive` raises
    :class:`anyio.EndOfStream`, or :class:`~terminals.TerminalFailedError` when the session
    ended because its own tasks failed (the exit's reason is then ``failed``). A viewer whose
    unread output exceeds its byte budget is dropped (the session never waits for a viewer):
    :meth:`receive` then raises :class:`ViewerDroppedError`.
    """

    def __init__(self, session_id: str, max_bytes: int) -> None:
        self.session_id = session_id
        self._max_bytes = max_bytes
        self._items: deque[ViewerItem] = deque()
        self._bytes = 0
        self._wakeup = anyio.Event()
        self._ended = False
        self._failure: str | None = None
        self._dropped = False

    @property
    def dropped(self) -> bool:
        """Whether the viewer was dropped for falling behind."""
        return self._dropped

    def _push(self, item: ViewerItem, *, force: bool = False) -> bool:
        """Queue ``item``; ``False`` (and the viewer is dropped) when over budget."""
        if self._ended or self._dropped:
            return not self._dropped
        if isinstance(item, bytes):
            if not force and self._bytes + len(item) > self._max_bytes:
                self._dropped = True
                self._items.clear()
                self._bytes = 0
                self._wakeup.set()
                return False
            self._bytes += len(item)
        self._items.append(item)
        self._wakeup.set()
        return True

    def _end(self, failure: str | None = None) -> None:
        """No more items; ``failure``: the cause of a failed session (see TerminalFailedError)."""
        if not self._ended:
            self._failure = failure
        self._ended = True
        self._wakeup.set()

    async def receive(self) -> list[ViewerItem]:
        """Every item pending (at least one), adjacent output joined into one ``bytes``."""
        while not self._items:
            if self._dropped:
                raise ViewerDroppedError(self.session_id, self._max_bytes)
            if self._ended:
                if self._failure is not None:
                    raise TerminalFailedError(self.session_id, self._failure)
                raise anyio.EndOfStream
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        batch: list[ViewerItem] = []
        chunks: list[bytes] = []
        while self._items:
            item = self._items.popleft()
            if isinstance(item, bytes):
                chunks.append(item)
                continue
            if chunks:
                batch.append(b"".join(chunks))
                chunks = []
            batch.append(item)
        if chunks:
            batch.append(b"".join(chunks))
        self._bytes = 0
        return batch

    def __aiter__(self) -> TerminalViewer:
        return self

    async def __anext__(self) -> list[ViewerItem]:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
