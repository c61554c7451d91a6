"""The NATS hop, measured: sessions in process against sessions on worker processes.

``python -m benchmarks.cluster [--quick]``. Every run uses the paced emitter
(``benchmarks/emitter.py``) as the CLI and a subscriber of the backend in this process:

* **latency**: ``sessions`` sessions stream text deltas at ``rate`` per second each, every
  delta stamped with ``CLOCK_MONOTONIC`` just before the emitter writes it; the subscriber
  stamps it on receipt. ``local``: :class:`~adapter.LocalBackend` in this process (pipe,
  decode, translation, hub). ``nats``: one ``claudecode-bridge worker`` process runs the
  sessions and this process is the gateway (:class:`~adapter.cluster.ClusterBackend`): the
  worker's batches through a local ``nats-server`` (JetStream, file storage) and an ordered
  consumer per subscription. The difference is the hop.
* **throughput**: one session writes deltas as fast as the pipe takes them; text deltas
  per second at the subscriber (the translator merges deltas that arrive together into one
  chunk, so deltas, not events, are counted), local and through one worker (the share is
  nats / local).
* **aggregate**: three worker processes, two sessions each at full speed; deltas per second
  at the gateway.

Everything runs on one machine: the worker processes, the emitters, nats-server and the
gateway compete for the same cores, so the figures are a floor for a real deployment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio

from ._common import emitter_path, percentile

__all__ = ("measure_cluster",)


def _env(lines: int, rate: float) -> dict[str, str]:
    return {"BENCH_MODE": "paced", "BENCH_LINES": str(lines), "BENCH_RATE": str(rate)}


_STAMP = re.compile(r"t(\d+)")


def _stamps(text: str) -> list[int]:
    # The translator may merge consecutive deltas into one chunk: every stamp counts.
    return [int(found) for found in _STAMP.findall(text)]


@contextlib.contextmanager
def _workers(
    url: str, prefix: str, count: int, cli: str, env: dict[str, str], directory: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(count):
            with open(directory / f"worker-{n}.log", "wb") as log:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "adapter", "worker", "--nats", url,
                         "--nats-prefix", prefix, "--id", f"bench-{n}", "--cli", cli,
                         "--policy", "autonomous", "--max-sessions", "500",
                         "--idle-timeout", "0"],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                        env={**os.environ, **env},
                        start_new_session=True,
                    )
                )  # fmt: skip
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


async def _stream(backend: Any, sessions: int) -> tuple[list[int], int, float]:
    """Create ``sessions``, subscribe, prompt them all at once; (latency samples in ns, one
    per delta; deltas received; seconds from the prompts to the last complete)."""
    from adapter.backend import SessionSpec
    from adapter.events import Complete, MessageChunk

    ids = [(await backend.create(SessionSpec())).id for _ in range(sessions)]
    samples: list[int] = []
    counts = [0]
    ready = anyio.Event()
    subscribed = [0]

    async def consume(session_id: str, task_status: Any) -> None:
        async with backend.subscribe(session_id) as events:
            task_status.started()
            async for event in events:
                if type(event) is MessageChunk:
                    now = time.monotonic_ns()
                    stamps = _stamps(event.text)
                    counts[0] += len(stamps)
                    samples.extend(now - stamp for stamp in stamps)
                elif type(event) is Complete:
                    return

    async with anyio.create_task_group() as tg:
        for session_id in ids:
            await tg.start(consume, session_id)
            subscribed[0] += 1
        ready.set()
        start = time.monotonic()
        async with anyio.create_task_group() as prompts:
            for session_id in ids:
                prompts.start_soon(backend.prompt, session_id, "go")
    wall = time.monotonic() - start
    for session_id in ids:
        with contextlib.suppress(Exception):
            await backend.close(session_id)
    return samples, counts[0], wall


@contextlib.asynccontextmanager
async def _local(cli: str, env: dict[str, str]) -> AsyncIterator[Any]:
    from adapter import PermissionPolicy, SessionConfig
    from adapter.local import LocalBackend

    defaults = SessionConfig(cli_path=cli, env=env, policy=PermissionPolicy("autonomous"))
    async with LocalBackend(defaults, max_sessions=500, idle_timeout=None) as backend:
        yield backend


@contextlib.asynccontextmanager
async def _cluster(
    url: str, cli: str, env: dict[str, str], workers: int, directory: Path
) -> AsyncIterator[Any]:
    from adapter.cluster import ClusterBackend, ClusterConfig, NatsSettings

    config = ClusterConfig(prefix=f"bench{uuid.uuid4().hex[:6]}")
    with _workers(url, config.prefix, workers, cli, env, directory):
        async with ClusterBackend(NatsSettings(servers=[url]), config) as backend:
            registry = backend._require()
            with anyio.fail_after(60):
                while True:
                    if len(registry.workers) >= workers:
                        break
                    await anyio.sleep(0.05)
            yield backend


def _backend(
    kind: str, url: str, cli: str, env: dict[str, str], directory: Path
) -> contextlib.AbstractAsyncContextManager[Any]:
    return _local(cli, env) if kind == "local" else _cluster(url, cli, env, 1, directory)


def _latency_row(kind: str, sessions: int, samples: list[int]) -> dict[str, Any]:
    samples.sort()
    return {
        "backend": kind,
        "sessions": sessions,
        "samples": len(samples),
        "p50_ms": percentile(samples, 0.50) / 1e6,
        "p99_ms": percentile(samples, 0.99) / 1e6,
        "max_ms": (samples[-1] if samples else float("nan")) / 1e6,
    }


async def _measure(sizes: dict[str, int], log: Any) -> dict[str, Any]:
    from adapter.cluster import LocalNatsServer

    cli = emitter_path()
    sessions, paced_lines = sizes["sessions"], sizes["paced_lines"]
    busy_lines = sizes["busy_lines"]
    out: dict[str, Any] = {"latency": [], "throughput": [], "aggregate": {}}
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        directory = Path(tmp)
        with LocalNatsServer(directory / "nats") as server:
            env = _env(paced_lines, 100.0)
            for kind in ("local", "nats"):
                async with _backend(kind, server.url, cli, env, directory) as backend:
                    samples, _, _ = await _stream(backend, sessions)
                row = _latency_row(kind, sessions, samples)
                out["latency"].append(row)
                log(
                    f"  latency {kind:5} x{sessions}: p50 {row['p50_ms']:.2f} ms  "
                    f"p99 {row['p99_ms']:.2f} ms  max {row['max_ms']:.2f} ms (n={row['samples']})"
                )
            env = _env(busy_lines, 1e9)
            for kind in ("local", "nats"):
                async with _backend(kind, server.url, cli, env, directory) as backend:
                    _, events, wall = await _stream(backend, 1)
                rate = events / wall
                out["throughput"].append({"backend": kind, "deltas": events, "deltas_per_s": rate})
                log(f"  throughput {kind:5}: {events} deltas, {rate:,.0f} deltas/s")
            local, nats = (r["deltas_per_s"] for r in out["throughput"])
            out["throughput_share"] = nats / local
            log(f"  throughput share nats/local: {nats / local:.0%}")
            async with _cluster(server.url, cli, env, 3, directory) as backend:
                _, events, wall = await _stream(backend, sizes["aggregate_sessions"])
            out["aggregate"] = {"workers": 3, "deltas": events, "deltas_per_s": events / wall}
            log(f"  aggregate 3 workers: {events} deltas, {events / wall:,.0f} deltas/s")
    return out


#: Run sizes: the full run, ``--quick``, and a smoke run for the test suite.
SIZES = {
    "full": {"sessions": 50, "paced_lines": 100, "busy_lines": 20000, "aggregate_sessions": 6},
    "quick": {"sessions": 10, "paced_lines": 30, "busy_lines": 4000, "aggregate_sessions": 3},
    "smoke": {"sessions": 2, "paced_lines": 5, "busy_lines": 200, "aggregate_sessions": 3},
}


def measure_cluster(*, size: str = "full", log: Any = print) -> dict[str, Any]:
    """Latency, throughput and aggregate figures (see the module docstring); ``size`` is a
    key of :data:`SIZES`."""
    result: dict[str, Any] = anyio.run(_measure, SIZES[size], log, backend="asyncio")
    return result


def markdown(result: dict[str, Any]) -> str:
    """The figures as Markdown tables."""
    lines = [
        "| backend | sessions | samples | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in result["latency"]:
        lines.append(
            f"| {row['backend']} | {row['sessions']} | {row['samples']:,} | {row['p50_ms']:.2f} "
            f"| {row['p99_ms']:.2f} | {row['max_ms']:.2f} |"
        )
    lines += ["", "| run | text deltas | deltas/s |", "|---|---:|---:|"]
    for row in result["throughput"]:
        lines.append(
            f"| one busy session, {row['backend']} | {row['deltas']:,} | "
            f"{row['deltas_per_s']:,.0f} |"
        )
    agg = result["aggregate"]
    lines.append(
        f"| {agg['workers']} workers, aggregate | {agg['deltas']:,} | {agg['deltas_per_s']:,.0f} |"
    )
    lines += ["", f"Throughput share through NATS: {result['throughput_share']:.0%}."]
    return "\n".join(lines)


def main() -> None:
    """``python -m benchmarks.cluster [--quick]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cluster")
    parser.add_argument("--quick", action="store_true", help="fewer sessions and lines")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = measure_cluster(size="quick" if args.quick else "full")
    print(f"\nload average at start: {load:.1f}\n")
    print(markdown(result))


if __name__ == "__main__":
    main()
