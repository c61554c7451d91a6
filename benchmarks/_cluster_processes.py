"""The processes of the NATS-hop benchmark (``benchmarks.cluster``): bridge workers and
servers as child processes, their CPU, and the cleanup of a run's streams."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]

__all__ = (
    "BRIDGE_OPTIONS",
    "WORKER_OPTIONS",
    "drop_streams",
    "machine_cpu",
    "server",
    "start",
    "stop",
    "wait_for_line",
    "workers",
    "workers_missing",
)

#: Extra options of every ``claudecode-bridge worker`` the runs start (``--publish-linger``).
WORKER_OPTIONS: list[str] = []

#: Extra options of every bridge process the runs start, workers and ``serve`` (``--loop``).
BRIDGE_OPTIONS: list[str] = []


@contextlib.contextmanager
def workers(
    url: str, prefix: str, count: int, cli: str, env: dict[str, str], directory: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(count):
            procs.append(
                start(
                    ["worker", "--nats", url, "--nats-prefix", prefix, "--id", f"bench-{n}",
                     "--cli", cli, "--policy", "autonomous", "--max-sessions", "500",
                     "--idle-timeout", "0", *WORKER_OPTIONS, *BRIDGE_OPTIONS],
                    env, directory / f"worker-{n}.log",
                )
            )  # fmt: skip
        yield procs
    finally:
        stop(procs)


def start(
    args: list[str], env: dict[str, str], log_path: Path, *, stdout: int | None = None
) -> subprocess.Popen[bytes]:
    """``python -m adapter ARGS`` in its own process group, SIGTERMed if this process dies."""
    from adapter.cluster import die_with_parent

    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "adapter", *args],
            stdin=subprocess.DEVNULL,
            stdout=log if stdout is None else stdout,
            stderr=log,
            env={**os.environ, **env},
            cwd=_ROOT,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM every process group (clean shutdown), SIGKILL what is left after 30 s; reap."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def wait_for_line(path: Path, text: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{path.name}: no {text!r}: {path.read_text(errors='replace')}")
        time.sleep(0.05)


@contextlib.contextmanager
def server(
    kind: str, url: str, cli: str, env: dict[str, str], directory: Path, prefix: str
) -> Iterator[tuple[str, dict[str, int]]]:
    """A real ``claudecode-bridge serve`` process; yields its WebSocket URL and the pids of
    the bridge processes by role. ``local`` runs the sessions itself; ``nats`` is a gateway
    in front of one worker process, on subjects and streams named after ``prefix``."""
    pids: dict[str, int] = {}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        serve = ["serve", "--port", "0", "--max-sessions", "500", *BRIDGE_OPTIONS]
        if kind == "nats":
            log = directory / "ws-worker.log"
            worker = start(
                ["worker", "--nats", url, "--nats-prefix", prefix, "--id", "bench-ws", "--cli",
                 cli, "--policy", "autonomous", "--max-sessions", "500", "--idle-timeout", "0",
                 *WORKER_OPTIONS, *BRIDGE_OPTIONS],
                env, log,
            )  # fmt: skip
            procs.append(worker)
            pids["worker"] = worker.pid
            wait_for_line(log, "ready", worker, 60)
            serve += ["--nats", url, "--nats-prefix", prefix]
        else:
            serve += ["--cli", cli, "--policy", "autonomous"]
        gateway = start(serve, env, directory / f"ws-{kind}.log", stdout=subprocess.PIPE)
        procs.append(gateway)
        pids["gateway" if kind == "nats" else "server"] = gateway.pid
        assert gateway.stdout is not None
        line = gateway.stdout.readline().decode()
        if "serving on http://" not in line:
            raise RuntimeError(f"serve: {(directory / f'ws-{kind}.log').read_text()}")
        base = line.split("serving on http://", 1)[1].split()[0].rstrip("/")
        yield f"ws://{base}/ws", pids
    finally:
        stop(procs)


def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far (Linux ``/proc/stat``)."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


async def drop_streams(url: str, prefix: str) -> None:
    """Delete a finished run's event and transcript streams. Each prefix reserves their
    ``max_bytes`` (1.25 GiB by default) in the JetStream store, which nats-server caps at
    75% of the free disk: the sections' reservations together need not fit on one server,
    one at a time do."""
    from nats.js.errors import NotFoundError

    from adapter.cluster import ClusterConfig, NatsSettings

    config = ClusterConfig(prefix=prefix)
    nc = await NatsSettings(servers=[url]).connect()
    try:
        js = nc.jetstream()
        for name in (config.event_stream, config.transcript_stream):
            with contextlib.suppress(NotFoundError):
                await js.delete_stream(name)
    finally:
        await nc.close()


def workers_missing(
    procs: list[subprocess.Popen[bytes]], seen: Any, directory: Path, lines: int = 30
) -> str:
    """Why workers never registered: each missing one's exit status and the tail of its log
    (the logs live in a temporary directory that is gone once the run fails)."""
    report = [f"only {sorted(seen)} of {len(procs)} workers registered (waited up to 60 s)"]
    for n, proc in enumerate(procs):
        if f"bench-{n}" in seen:
            continue
        status = proc.poll()
        tail = (directory / f"worker-{n}.log").read_text(errors="replace").splitlines()[-lines:]
        report.append(
            f"--- bench-{n} ({'running' if status is None else f'exited {status}'}), log tail:"
        )
        report.extend(tail)
    return "\n".join(report)
