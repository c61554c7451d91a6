"""Creates that a worker gets to late, as real processes: nats-server, ``worker`` processes
(fake CLI), a gateway in this process. Every create carries its deadline (when the gateway
stops waiting for the answer), and a worker refuses one whose deadline has passed:

* on receipt, before any CLI starts: a worker paused (SIGSTOP) with the create in its
  socket, the gateway gives up (``ClusterUnavailableError``); resumed (SIGCONT), the worker
  starts nothing — whether the caller retried the id elsewhere or the id was the gateway's
  own and nobody will ever ask for it;
* at the commit point, right before the session's record is written: a CLI that takes
  longer to start than the gateway waits is ended, its claim freed, no record written; and
  a lost session's resume that recovery gave up on (and closed) stays closed.

Each worker's CLI is a wrapper that notes every launch in a file (so "no CLI ever started"
is checked, not just "none runs now") and, for the slow start, waits for a gate file the
test creates once the gateway has given up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import uuid
from collections.abc import AsyncIterator
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
from adapter.cluster.registry import Registry
from benchmarks.procfs import cmdline, descendants
from claudecode.testing import fake_cli_command, script
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually

from ._support import Processes, claims_of, processes, start_worker

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow]


def _clis(pid: int) -> int:
    """How many CLIs process ``pid`` runs (the worker has other children)."""
    return sum(1 for child in descendants(pid) if b"--input-format" in (cmdline(child) or ()))


def _noting_cli(fake: Path, directory: Path, *, gated: bool = False) -> Path:
    """A CLI that appends a line to ``directory/launches`` for every session's CLI started
    (not for other runs, such as a version probe) and then runs ``fake``; ``gated``: first
    waits until ``directory/gate`` exists."""
    directory.mkdir()
    wait = f'while [ ! -e "{directory}/gate" ]; do sleep 0.05; done' if gated else ":"
    wrapper = directory / "claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --input-format "*)\n'
        f'  echo launched >> "{directory}/launches"\n'
        f"  {wait};;\n"
        "esac\n"
        f'exec "{fake}" "$@"\n'
    )
    wrapper.chmod(0o700)
    return wrapper


def _handled(log: str) -> bool:
    """Whether a worker's log shows it handled a create: refused it as late (or, wrongly,
    started the session, or failed it another way)."""
    return any(word in log for word in ("create_expired", "session_started", "create_failed"))


def _launches(directory: Path) -> int:
    path = directory / "launches"
    return len(path.read_text().splitlines()) if path.exists() else 0


async def _session_keys(registry: Registry) -> list[str]:
    """Every key of the sessions bucket, read from NATS (not the registry's watched copy)."""
    from nats.js.errors import NoKeysError

    try:
        return list(await registry.sessions_kv.keys())
    except NoKeysError:
        return []


@contextlib.asynccontextmanager
async def _w1_and_gateway(
    server: LocalNatsServer, tmp_path: Path, config: ClusterConfig, cli: Path
) -> AsyncIterator[tuple[Processes, ClusterBackend, Registry]]:
    """A ``worker`` process named ``w1`` running ``cli``, and a gateway in this process
    that has seen its heartbeat (the processes killed at the end)."""
    with processes(tmp_path) as procs:
        start_worker(procs, server, config, "w1", cli, tmp_path)
        async with ClusterBackend(NatsSettings(servers=[server.url]), config) as backend:
            registry = backend._require()
            await eventually(lambda: "w1" in registry.workers, PROCESSES_GUARD)
            yield procs, backend, registry


def _config(create_timeout: float = 3.0) -> ClusterConfig:
    return dataclasses.replace(
        ClusterConfig(prefix=f"s{uuid.uuid4().hex[:8]}"), create_timeout=create_timeout
    )


async def test_a_create_answered_late_is_refused_before_a_cli_starts(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = _config()
    fake = fake_cli_command(script(), tmp_path / "fake")
    async with _w1_and_gateway(
        nats_server, tmp_path, config, _noting_cli(fake, tmp_path / "c1")
    ) as (procs, backend, registry):
        slow = procs.procs["w1"].pid
        os.kill(slow, signal.SIGSTOP)
        try:
            with anyio.fail_after(PROCESSES_GUARD), pytest.raises(ClusterUnavailableError):
                await backend.create(SessionSpec(), session_id="once")
            start_worker(procs, nats_server, config, "w2", fake, tmp_path)
            # The paused worker's heartbeat expires: the retry goes to the other one.
            await eventually(
                lambda: "w2" in registry.workers and "w1" not in registry.workers, PROCESSES_GUARD
            )
            with anyio.fail_after(PROCESSES_GUARD):
                info = await backend.create(SessionSpec(), session_id="once")
            assert "w2" == info.owner
        finally:
            os.kill(slow, signal.SIGCONT)
        # The late create is handled now: refused before any CLI starts.
        await eventually(lambda: _handled(procs.log("w1")), PROCESSES_GUARD)
        log = procs.log("w1")
        assert "create_expired" in log and "on receipt" in log, log[-3000:]
        assert "session_started" not in log and "create_failed" not in log
        assert 0 == _launches(tmp_path / "c1") == _clis(slow)
        found = await registry.get("once")
        assert found is not None and "w2" == found[0].info.owner
        assert 1 == _clis(procs.procs["w2"].pid)
        # Only the live session's claim is there.
        claims = [value for _, value, _ in await claims_of(backend)._entries()]
        assert [b"once"] == claims
        with anyio.fail_after(PROCESSES_GUARD):
            await backend.close("once")
        assert [] == await claims_of(backend)._entries()


async def test_a_late_create_of_a_gateway_made_id_starts_nothing(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    # No caller-chosen id: nobody can retry it, so before deadlines the paused worker ran a
    # CLI for a session that nobody knew of.
    config = _config()
    fake = fake_cli_command(script(), tmp_path / "fake")
    async with _w1_and_gateway(
        nats_server, tmp_path, config, _noting_cli(fake, tmp_path / "c1")
    ) as (procs, backend, registry):
        slow = procs.procs["w1"].pid
        os.kill(slow, signal.SIGSTOP)
        try:
            with anyio.fail_after(PROCESSES_GUARD), pytest.raises(ClusterUnavailableError):
                await backend.create(SessionSpec())
        finally:
            os.kill(slow, signal.SIGCONT)
        await eventually(lambda: _handled(procs.log("w1")), PROCESSES_GUARD)
        log = procs.log("w1")
        assert "create_expired" in log and "on receipt" in log, log[-3000:]
        assert "session_started" not in log
        assert 0 == _launches(tmp_path / "c1") == _clis(slow)
        assert [] == await _session_keys(registry)
        assert [] == await claims_of(backend)._entries()


async def test_a_cli_slower_to_start_than_the_gateway_waits_is_ended_unregistered(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = _config(10.0)
    fake = fake_cli_command(script(), tmp_path / "fake")
    gated = tmp_path / "c1"
    cli = _noting_cli(fake, gated, gated=True)
    async with _w1_and_gateway(nats_server, tmp_path, config, cli) as (procs, backend, registry):
        worker = procs.procs["w1"].pid
        try:
            with anyio.fail_after(PROCESSES_GUARD), pytest.raises(ClusterUnavailableError):
                await backend.create(SessionSpec())
            # The CLI was launched (the create passed the check on receipt: the worker
            # had ten seconds to get it) and waits; the gateway has given up, so the
            # deadline has passed.
            await eventually(lambda: _launches(gated) == 1, PROCESSES_GUARD)
        finally:
            (gated / "gate").touch()
        await eventually(lambda: _handled(procs.log("w1")), PROCESSES_GUARD)
        log = procs.log("w1")
        assert "create_expired" in log and "before registering" in log, log[-3000:]
        assert "session_started" not in log
        await eventually(lambda: _clis(worker) == 0, PROCESSES_GUARD)
        assert [] == await _session_keys(registry)
        # The claim the worker made for the fresh session's CLI session is gone too.
        assert [] == await claims_of(backend)._entries()


async def test_a_lost_sessions_resume_that_recovery_gave_up_on_stays_closed(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    # Recovery places the lost session's resume on the only other worker, whose CLI is
    # held back; recovery gives up and closes the session. Before deadlines the worker
    # then wrote its record over the closed one and ran the session after all.
    config = _config(10.0)
    fake = fake_cli_command(script(), tmp_path / "fake")
    gated = tmp_path / "c2"
    async with _w1_and_gateway(nats_server, tmp_path, config, fake) as (procs, backend, registry):
        with anyio.fail_after(PROCESSES_GUARD):
            info = await backend.create(SessionSpec())
        assert "w1" == info.owner
        start_worker(
            procs,
            nats_server,
            config,
            "w2",
            _noting_cli(fake, gated, gated=True),
            tmp_path,
            "--nats-create-timeout",
            "10",
        )
        await eventually(lambda: "w2" in registry.workers, PROCESSES_GUARD)
        worker = procs.procs["w2"].pid
        try:
            procs.kill("w1")
            # The resume reached the other worker (within its ten seconds) and waits.
            await eventually(lambda: _launches(gated) == 1, PROCESSES_GUARD)

            def closed() -> bool:
                found = registry.sessions.get(info.id)
                return found is not None and "closed" == found[0].info.state

            await eventually(closed, PROCESSES_GUARD)  # recovery gave up
        finally:
            (gated / "gate").touch()
        await eventually(lambda: _handled(procs.log("w2")), PROCESSES_GUARD)
        log = procs.log("w2")
        assert "create_expired" in log and "before registering" in log, log[-3000:]
        assert "session_started" not in log
        await eventually(lambda: _clis(worker) == 0, PROCESSES_GUARD)
        found = await registry.get(info.id)
        assert found is not None
        assert ("closed", "errored", "w1") == (
            found[0].info.state,
            found[0].info.status,
            found[0].info.owner,
        )
        assert [] == await claims_of(backend)._entries()
