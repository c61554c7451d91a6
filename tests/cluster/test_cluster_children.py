"""Children outlive no one: a process stopped from outside (SIGTERM, so none of its exit code
runs, as when a test run is stopped) takes its nats-server and its worker processes with it,
through the parent-death signal they are started with (``die_with_parent``); a worker killed
with SIGKILL takes its CLIs with it, through the watchdog it starts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from adapter.cluster import ClusterConfig, LocalNatsServer
from benchmarks import procfs
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually, wait_until

pytestmark = [
    pytest.mark.nats,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux"),
]

ROOT = Path(__file__).resolve().parents[2]

# The stopped process: a nats-server as the fixtures start it, a worker as the tests start
# them; it prints their pids and sleeps until it is killed.
PARENT = """
import signal, subprocess, sys, time
from adapter.cluster import LocalNatsServer, die_with_parent

directory = sys.argv[1]
server = LocalNatsServer(directory + "/nats")
server.start()
with open(directory + "/worker.log", "wb") as log:
    worker = subprocess.Popen(
        [sys.executable, "-m", "adapter", "worker", "--nats", server.url, "--nats-prefix",
         "orphans", "--demo", "--idle-timeout", "0"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        preexec_fn=die_with_parent(signal.SIGTERM),
    )
print(server.process.pid, worker.pid, flush=True)
time.sleep(3600)
"""


def wait_gone(pids: list[int]) -> list[int]:
    """Wait (hang guard only) until no pid runs; the ones still running."""
    deadline = time.monotonic() + PROCESSES_GUARD
    while time.monotonic() < deadline:
        left = [pid for pid in pids if procfs.running(pid)]
        if not left:
            return []
        time.sleep(0.1)
    return [pid for pid in pids if procfs.running(pid)]


def wait_for(path: Path, text: str, proc: subprocess.Popen[str]) -> None:

    def written() -> bool:
        assert proc.poll() is None, "the parent died early"
        return path.exists() and text in path.read_text(errors="replace")

    wait_until(written, PROCESSES_GUARD, poll=0.1, what=f"{text!r} in {path}")


def test_nats_server_and_worker_die_with_a_sigtermed_parent(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    children: list[int] = []
    try:
        assert parent.stdout is not None
        children = [int(pid) for pid in parent.stdout.readline().split()]
        assert 2 == len(children), "the parent did not start its children"
        # The worker is connected and serving: it has something to shut down.
        wait_for(tmp_path / "worker.log", "ready", parent)
        assert all(procfs.running(pid) for pid in children)

        parent.send_signal(signal.SIGTERM)  # Python's default: die at once, no cleanup
        assert -signal.SIGTERM == parent.wait(PROCESSES_GUARD)

        # Both go (the worker gets SIGTERM: it closes its CLIs as on any SIGTERM, while its
        # nats-server, gone too, no longer answers).
        assert [] == wait_gone(children)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
        for pid in children:
            if procfs.running(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def marked_children(parent: int) -> list[int]:
    """The processes started by ``parent`` that carry a worker's CLI mark (its CLIs)."""
    from adapter.cluster._reaper import MARK

    mark = MARK.encode()
    return [pid for pid in procfs.children(parent) if mark in (procfs.environ(pid) or {})]


@pytest.mark.anyio
async def test_a_sigkilled_workers_clis_go_too(
    nats_server: LocalNatsServer, cluster_config: ClusterConfig, tmp_path: Path
) -> None:
    # A real worker process runs two sessions (the demo CLI, a real child process each),
    # then is killed with SIGKILL: none of its code runs, yet its CLIs are stopped by the
    # watchdog it started (adapter.cluster._reaper).
    from adapter.backend import SessionSpec
    from adapter.cluster import ClusterBackend, NatsSettings
    from tests.support.processes import child

    args = ["worker", "--nats", nats_server.url, "--nats-prefix", cluster_config.prefix]
    with child(tmp_path / "worker.log", *args, "--demo", "--idle-timeout", "0") as worker:
        settings = NatsSettings(servers=[nats_server.url])
        async with ClusterBackend(settings, cluster_config) as backend:
            registry = backend._require()
            await eventually(lambda: len(registry.workers) == 1, PROCESSES_GUARD)
            for _ in range(2):
                await backend.create(SessionSpec(policy="autonomous"))
            await eventually(lambda: len(marked_children(worker.pid)) == 2, PROCESSES_GUARD)
            clis = marked_children(worker.pid)
            try:
                assert all(procfs.running(pid) for pid in clis)
                worker.kill()  # SIGKILL, the worker alone (not its process group)
                worker.wait()
                assert [] == await anyio.to_thread.run_sync(wait_gone, clis)
            finally:
                for pid in clis:
                    if procfs.running(pid):
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(pid, signal.SIGKILL)
