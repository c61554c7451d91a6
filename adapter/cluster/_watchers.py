"""Registry changes fanned out to :meth:`~adapter.cluster.ClusterBackend.watch` callers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec

from ..backend import SessionInfo
from .wire import SessionRecord

__all__ = ("Watchers",)


class Watchers:
    """Fan-out of registry changes to :meth:`ClusterBackend.watch` callers, bounded: each
    watcher holds at most the newest snapshot per session.

    Like :class:`~adapter.LocalBackend`'s, only changes that matter are reported: a record
    whose only news is its ``last_seq`` / ``last_activity`` (a busy session's worker
    refreshes them every few seconds) is not, so every client of every gateway does not get
    a ``session_changed`` per busy session every few seconds."""

    def __init__(self) -> None:
        self._all: list[tuple[dict[str, SessionInfo], list[anyio.Event]]] = []
        # Per session, the last reported snapshot without its times and seq.
        self._reported: dict[str, SessionInfo] = {}

    def publish(self, record: SessionRecord) -> None:
        info = record.info
        key = msgspec.structs.replace(info, last_seq=0, last_activity=0.0)
        if self._reported.get(info.id) == key:
            return
        if info.state == "closed":
            self._reported.pop(info.id, None)  # its last record: keep nothing per session
        else:
            self._reported[info.id] = key
        for latest, wake in self._all:
            latest.pop(info.id, None)
            latest[info.id] = info
            wake[0].set()

    @asynccontextmanager
    async def watch(self) -> AsyncIterator[AsyncIterator[SessionInfo]]:
        latest: dict[str, SessionInfo] = {}
        wake = [anyio.Event()]
        entry = (latest, wake)
        self._all.append(entry)

        async def changes() -> AsyncIterator[SessionInfo]:
            while True:
                while not latest:
                    await wake[0].wait()
                    wake[0] = anyio.Event()
                key = next(iter(latest))
                yield latest.pop(key)

        try:
            yield changes()
        finally:
            self._all.remove(entry)
