"""Waiting on a cluster: a worker known, a lost session moved, a transcript mirrored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapter.backend import SessionBackend, SessionInfo
from adapter.cluster import ClusterBackend, ClusterConfig, NatsSettings
from adapter.cluster.transcripts import find_transcript, mirrored_size

from .timeouts import HANG_GUARD, PROCESSES_GUARD
from .waits import eventually


async def until_a_worker_is_known(
    url: str, config: ClusterConfig, guard: float = PROCESSES_GUARD
) -> None:
    """Return once the cluster on NATS ``url`` reports a worker (worker processes start
    slowly: the guard spans a Python process starting)."""
    nats = NatsSettings(servers=[url], name="test-probe")
    async with ClusterBackend(nats, config, history=False) as probe:

        async def known() -> bool:
            return bool((await probe.readiness())["workers"] >= 1)

        await eventually(known, guard, poll=0.1, what="a worker known")


async def until_moved(
    backend: SessionBackend, session_id: str, owner: str, guard: float = HANG_GUARD
) -> SessionInfo:
    """The session's info once it runs on ``owner`` again after being lost (a hang guard of
    ``guard`` seconds, not a timing)."""

    async def moved() -> SessionInfo | None:
        now = await backend.info(session_id)
        return now if now.owner == owner and now.status != "lost" else None

    info: SessionInfo = await eventually(moved, guard, poll=0.05, what=f"moved to {owner}")
    return info


async def until_mirrored(
    js: Any, config: ClusterConfig, source: Path, cli_session_id: str, guard: float = HANG_GUARD
) -> int:
    """Once the CLI's transcript under ``source`` (a ``.claude`` folder) is wholly mirrored
    to the cluster's stream (``js``: the backend's JetStream context); its size."""

    async def mirrored() -> int | None:
        path = find_transcript(source, cli_session_id)
        size = path.stat().st_size if path else -1
        if size > 0 and size == await mirrored_size(js, config, cli_session_id):
            return size
        return None

    size: int = await eventually(mirrored, guard, poll=0.2, what=f"{cli_session_id} mirrored")
    return size
