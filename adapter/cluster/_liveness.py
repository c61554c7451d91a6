"""A worker's liveness: its heartbeat key in the workers bucket, and the sweep for lost sessions.

The key carries the worker's load and labels (placement reads them) and its wall clock
(create deadlines compare clocks); it is renewed every ``heartbeat_interval`` and expires
after ``heartbeat_ttl``. Every interval the worker also sweeps: a worker whose key lapsed
and who does not answer on its ``alive`` subject has lost its sessions, which are declared
lost and, with ``resume_lost``, resumed here or elsewhere.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING

import anyio

from claudecode.internal import get_logger

from .recovery import sweep_lost_sessions
from .wire import WorkerInfo

if TYPE_CHECKING:
    from .worker import ClusterWorker

__all__ = ("Heartbeat", "host_token")

_log = get_logger("claudecode.adapter.cluster.worker")


class Heartbeat:
    """The heartbeat and the sweep of one worker (it reads the worker's load and settings)."""

    def __init__(self, worker: ClusterWorker) -> None:
        self._worker = worker

    def info(self) -> WorkerInfo:
        """What the key says: this worker's load, limits and labels, and its clock."""
        w = self._worker
        return WorkerInfo(
            id=w.id,
            sessions=len(w._hosted) + w._starting,
            max_sessions=w.max_sessions,
            labels=w.labels,
            host=socket.gethostname(),
            started_at=w._started_at,
            clock=time.time(),
        )

    async def once(self) -> None:
        """Write the key once (raises what the write raises)."""
        w = self._worker
        assert w.registry is not None
        await w.registry.heartbeat(self.info())

    async def now(self) -> None:
        """Write the key now, when the load changed (never raises: the next beat retries)."""
        w = self._worker
        try:
            await self.once()
        except Exception as exc:
            _log.debug("cluster.heartbeat_failed", worker=w.id, error=repr(exc))

    async def run(self) -> None:
        """Renew the key every ``heartbeat_interval``, for as long as the worker runs."""
        w = self._worker
        while True:
            await anyio.sleep(w.config.heartbeat_interval)
            try:
                await self.once()
            except Exception as exc:  # NATS away: keep trying, the key may expire meanwhile
                _log.warning("cluster.heartbeat_failed", worker=w.id, error=repr(exc))

    async def sweep(self) -> None:
        """Every interval, declare lost (and maybe resume) the sessions of workers whose
        key lapsed and who do not answer."""
        w = self._worker
        assert w.registry is not None
        registry = w.registry
        while True:
            await anyio.sleep(w.config.heartbeat_interval)
            # Not our own sessions: our key lapsed (NATS was away), we still run them.
            await sweep_lost_sessions(
                w._nc,
                registry,
                w.config,
                resume=w.resume_lost,
                claims=w._claims,
                own_id=w.id,
            )


def host_token() -> str:
    """This host's name and this process's id, as a worker id begins (letters, digits, - _)."""
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname())
    return (name or "worker")[:40] + f"-{os.getpid()}"
