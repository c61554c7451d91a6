"""A worker's writes of its sessions' records: over its own last write only, refreshed.

Each hosted session's record (:class:`~adapter.cluster.wire.SessionRecord`) is written when
its state changes and refreshed about every ``REFRESH`` seconds while it runs; each write is
conditional on the revision this worker wrote last, so a record someone else wrote in
between (the session was declared lost and resumed elsewhere) is never overwritten: the
writer raises :class:`~adapter.cluster.fencing.FencedError` and the worker fences the session.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import msgspec

from claudecode.internal import get_logger

from .fencing import FencedError, is_wrong_last_sequence

if TYPE_CHECKING:
    from ._hosted import Hosted
    from .registry import Registry

__all__ = ("REFRESH", "RecordWriter", "refresh_period")

_log = get_logger("claudecode.adapter.cluster.worker")

#: A record's times and seq are refreshed about this often (state changes go at once).
REFRESH = 2.0


def refresh_period() -> float:
    """Seconds until a record's next refresh: :data:`REFRESH` on average, drawn anew after
    each write from half to one and a half times it. Sessions prompted together would
    otherwise refresh together, every ``REFRESH`` seconds: fifty records written in one
    instant, and every watcher (each gateway, each worker) decoding all of them at once,
    held up the events of every session by tens of milliseconds."""
    return REFRESH * (0.5 + random.random())


class RecordWriter:
    """Writes the records of one worker's sessions (see the module docstring).

    ``on_fenced(hosted, reason)`` is called when a final write finds the record is not this
    worker's any more; :meth:`write` and :meth:`sync` raise :class:`FencedError` instead.
    """

    def __init__(
        self,
        worker_id: str,
        registry: Registry,
        *,
        closed_retention: float,
        on_fenced: Callable[[Hosted, str], None],
    ) -> None:
        self._worker_id = worker_id
        self._registry = registry
        self._closed_retention = closed_retention
        self._on_fenced = on_fenced

    async def write(self, hosted: Hosted, *, ttl: float | None = None) -> None:
        """Write the session's record over this worker's own last write only.

        Raises:
            FencedError: someone else wrote it since (the session was declared lost).
        """
        record = hosted.record(self._worker_id)
        try:
            hosted.revision = await self._registry.put(record, ttl=ttl, revision=hosted.revision)
            return
        except Exception as exc:
            if not is_wrong_last_sequence(exc):
                raise
        found = await self._registry.get(hosted.session.id)
        mine = found is not None and found[0].info.owner == self._worker_id
        if found is None or not mine or found[0].info.status == "lost":
            raise FencedError(f"the record of session {hosted.session.id} is not ours any more")
        # Our own earlier write landed (its acknowledgement was lost): write over it.
        hosted.revision = await self._registry.put(record, ttl=ttl, revision=found[1])

    async def final(self, hosted: Hosted) -> None:
        if hosted.finalized.is_set():
            return
        try:
            await self.write(hosted, ttl=self._closed_retention)
        except FencedError as exc:
            self._on_fenced(hosted, str(exc))
        except Exception as exc:
            _log.warning("cluster.record_failed", session_id=hosted.session.id, error=repr(exc))
        hosted.finalized.set()

    async def sync(self, hosted: Hosted) -> None:
        # Write the record when the state changes (at once: a command, or a published batch
        # whose state key differs, see Hosted.published) or times / seq moved (checked
        # about every _REFRESH seconds, spread: _refresh_period; not per batch); one write
        # in flight per session.
        hosted.written_state = hosted.state()
        last = hosted.record(self._worker_id).info
        written, period = time.monotonic(), refresh_period()
        while True:
            with anyio.move_on_after(period):
                await hosted.changed.wait()
            hosted.changed = anyio.Event()
            state = hosted.state()
            record = hosted.record(self._worker_id)
            info = record.info
            moved = (info.last_seq, info.last_activity) != (last.last_seq, last.last_activity)
            changed = msgspec.structs.replace(
                info, last_seq=0, last_activity=0.0
            ) != msgspec.structs.replace(last, last_seq=0, last_activity=0.0)
            if not changed:
                # The record written says the same: this state is accounted for.
                hosted.written_state = state
                if not (moved and time.monotonic() - written >= period):
                    continue
            try:
                await self.write(hosted)
            except FencedError:
                raise
            except Exception as exc:
                _log.warning("cluster.record_failed", session_id=info.id, error=repr(exc))
                continue
            last, written, period = info, time.monotonic(), refresh_period()
            hosted.written_state = state
