"""A worker that answers a create late, as real processes: nats-server, two ``worker``
processes (fake CLI), a gateway in this process. The first worker is paused (SIGSTOP) with
the create for a chosen session id in its socket; the gateway gives up on it
(``ClusterUnavailableError``), the caller retries the same id, which starts on the second
worker. Resumed (SIGCONT), the first worker handles the create it was sent: the id's record
exists, so it ends the CLI it started and frees its claim — one session, one CLI, owned by
the second worker."""

from __future__ import annotations

import dataclasses
import os
import signal
import uuid
from pathlib import Path

import anyio
import pytest

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterUnavailableError,
    LocalNatsServer,
    NatsSettings,
)
from benchmarks.procfs import cmdline, descendants
from claudecode.testing import fake_cli_command, script

from ._waits import eventually
from .test_cluster_claim_lifecycle import claims_of
from .test_cluster_processes import HANG_GUARD, processes, start_worker

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow]


def _clis(pid: int) -> int:
    """How many CLIs process ``pid`` runs (the worker has other children)."""
    return sum(1 for child in descendants(pid) if b"--input-format" in (cmdline(child) or ()))


async def test_a_create_answered_late_ends_instead_of_starting_a_second_cli(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = dataclasses.replace(
        ClusterConfig(prefix=f"s{uuid.uuid4().hex[:8]}"), create_timeout=3.0
    )
    cli = fake_cli_command(script(), tmp_path / "fake")
    settings = NatsSettings(servers=[nats_server.url])
    with processes(tmp_path) as procs:
        start_worker(procs, nats_server, config, "w1", cli, tmp_path)
        async with ClusterBackend(settings, config) as backend:
            registry = backend._require()
            await eventually(lambda: "w1" in registry.workers, HANG_GUARD)
            slow = procs.procs["w1"].pid
            os.kill(slow, signal.SIGSTOP)
            try:
                with anyio.fail_after(HANG_GUARD), pytest.raises(ClusterUnavailableError):
                    await backend.create(SessionSpec(), session_id="once")
                start_worker(procs, nats_server, config, "w2", cli, tmp_path)
                # The paused worker's heartbeat expires: the retry goes to the other one.
                await eventually(
                    lambda: "w2" in registry.workers and "w1" not in registry.workers, HANG_GUARD
                )
                with anyio.fail_after(HANG_GUARD):
                    info = await backend.create(SessionSpec(), session_id="once")
                assert "w2" == info.owner
            finally:
                os.kill(slow, signal.SIGCONT)
            # The late create is handled now: it fails (or, wrongly, starts a session).
            await eventually(
                lambda: "create_failed" in procs.log("w1") or "session_started" in procs.log("w1"),
                HANG_GUARD,
            )
            log = procs.log("w1")
            assert "create_failed" in log and "exists already" in log, log[-3000:]
            assert "session_started" not in log
            await eventually(lambda: _clis(slow) == 0, HANG_GUARD)
            found = await registry.get("once")
            assert found is not None and "w2" == found[0].info.owner
            assert 1 == _clis(procs.procs["w2"].pid)
            # Only the live session's claim is left.
            claims = [value for _, value, _ in await claims_of(backend)._entries()]
            assert [b"once"] == claims
            with anyio.fail_after(HANG_GUARD):
                await backend.close("once")
            assert [] == await claims_of(backend)._entries()
