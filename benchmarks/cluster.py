"""The NATS hop, measured: sessions in process against sessions on worker processes.

``python -m benchmarks.cluster [--quick] [--only ws,backend,throughput,aggregate]
[--sessions N] [--rate N]``. Every run uses the paced emitter (``benchmarks/emitter.py``) as
the CLI:

* **ws** (the hop as a user sees it): ``sessions`` sessions stream text deltas at ``rate``
  per second each, every delta stamped with ``CLOCK_MONOTONIC`` just before the emitter
  writes it; one WebSocket connection per session in this process prompts its session (all
  at once) and stamps each delta when it reads the ``event`` frame. ``local``: a
  ``claudecode-bridge serve`` process (``LocalBackend``) runs the sessions. ``nats``:
  ``claudecode-bridge serve --nats`` (a gateway) in front of one ``claudecode-bridge
  worker`` process, a local ``nats-server`` in between. Same client, same emitter, same
  run: the difference is the hop. Also reported: the steady state, the deltas written once
  every session was prompted (50 sessions starting at once delay the first deltas of both);
  *while every session streams*, the steady state's deltas written before the first
  session's ``complete`` was read, as the WebSocket benchmark counts (``benchmarks.ws``: the
  sessions end together too, and each end is a state change, a registry record written and
  a ``session_changed`` sent to every connection); and the 100 ms of writes with the worst
  median (:func:`_worst_window`).
* **backend latency**: the same sessions, read by a subscriber of the backend in this
  process (no WebSocket, no server process). ``local``: :class:`~adapter.LocalBackend` in
  this process (pipe, decode, translation, hub). ``nats``: one ``claudecode-bridge worker``
  process runs the sessions and this process is the gateway
  (:class:`~adapter.cluster.ClusterBackend`): the worker's batches through a local
  ``nats-server`` (JetStream, file storage) and an ordered consumer per subscription.
* **throughput**: one session writes deltas as fast as the pipe takes them; text deltas
  per second at the subscriber (the translator merges deltas that arrive together into one
  chunk, so deltas, not events, are counted), local and through one worker (the share is
  nats / local).
* **aggregate**: three worker processes, two sessions each at full speed; deltas per second
  at the gateway (this process).

Everything runs on one machine: the worker processes, the emitters, nats-server and the
gateway compete for the same cores, so the figures are a floor for a real deployment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from . import _cluster_processes as bench_procs
from . import procfs
from ._common import cpu_of, emitter_path, percentile, process_cpu_seconds

__all__ = ("measure_cluster",)


def _env(lines: int, rate: float) -> dict[str, str]:
    return {"BENCH_MODE": "paced", "BENCH_LINES": str(lines), "BENCH_RATE": str(rate)}


_STAMP = re.compile(r"t(\d+)")


def _stamps(text: str) -> list[int]:
    # The translator may merge consecutive deltas into one chunk: every stamp counts.
    return [int(found) for found in _STAMP.findall(text)]


async def _ws_request(client: Any, frame: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = await client.request(frame)
    if reply.get("type") != "ack":
        raise RuntimeError(f"{frame['type']}: {reply}")
    return reply


#: The child processes the WebSocket clients are spread over (``benchmarks.ws`` clients, at
#: its ``CLIENT_NICE``).
CLIENT_PROCESSES = 2


async def _ws_stream(
    url: str, sessions: int, pids: dict[str, int] | None = None
) -> tuple[list[int], int, float, dict[str, float], float, dict[str, list[int]], dict[str, float]]:
    """Like :func:`_stream`, through a server's WebSocket endpoint: one connection here
    creates the sessions; one more per session, in :data:`CLIENT_PROCESSES` client
    processes, subscribes; then this process prompts every session at once and the clients
    read. Besides the samples, the deltas and the wall time: the CPU share of each process
    of ``pids`` from the prompts to the last ``complete``, with ``emitters`` (the CLI
    stand-ins, children of those processes), ``clients`` (the client processes) and
    ``machine`` (the cores busy on the whole machine meanwhile); and the seconds until the
    last prompt was acknowledged (how far apart the sessions started); the samples of the
    deltas written after that (``steady``) and of those written before the first
    ``complete`` was read too (``streaming``); and :func:`_worst_window`.

    The clients are the WebSocket benchmark's (``benchmarks.ws``): sans-IO connections (no
    task or future per frame) in child processes at nice 10, as there: they stand in for
    browsers on other machines, so the bridge processes (and the CLIs beside them) get the
    CPU first, while the clients' own delay in reading a frame still counts in every
    latency. The same for both paths: run in this process at normal priority, they took
    ~25% of a core, competing with the three processes of the NATS path on two cores."""
    from .ws import _ClientProcess, _open

    pids = pids or {}
    control = await _open(url)
    ids = [
        (await _ws_request(control, {"type": "create_session"}))["session_id"]
        for _ in range(sessions)
    ]
    clients = [
        _ClientProcess(url, ids[n::CLIENT_PROCESSES])
        for n in range(min(CLIENT_PROCESSES, len(ids)))
    ]
    try:
        for client in clients:
            await anyio.to_thread.run_sync(client.ready)
        emitters = procfs.children(pids.values())
        before = {role: process_cpu_seconds(pid) for role, pid in pids.items()}
        before_emitters = cpu_of(emitters)
        before_clients = cpu_of([client.proc.pid for client in clients])
        machine = bench_procs.machine_cpu()
        start = time.monotonic()
        acked = [0.0]

        async def prompt(session_id: str) -> None:
            await _ws_request(control, {"type": "prompt", "session_id": session_id, "text": "go"})
            acked[0] = max(acked[0], time.monotonic())

        async with anyio.create_task_group() as tg:
            for session_id in ids:
                tg.start_soon(prompt, session_id)
        results = [await anyio.to_thread.run_sync(client.result) for client in clients]
    finally:
        for client in clients:
            client.kill()
    wall = max(r["last_ns"] for r in results) / 1e9 - start
    cpu = {role: (process_cpu_seconds(pid) - before[role]) / wall for role, pid in pids.items()}
    cpu["emitters"] = (cpu_of(emitters) - before_emitters) / wall
    cpu["clients"] = (sum(r["cpu_s"] for r in results) - before_clients) / wall
    busy, total = (now - then for now, then in zip(bench_procs.machine_cpu(), machine, strict=True))
    # Every process on the machine (emitters, nats-server, the clients, anything else), in
    # cores: how close the machine was to saturation while the deltas streamed.
    cpu["machine"] = busy / total * (os.cpu_count() or 1) if total else 0.0
    for session_id in ids:
        with contextlib.suppress(Exception):
            await _ws_request(control, {"type": "close_session", "session_id": session_id})
    await control.close()
    # Steady state: the deltas written once every session had been prompted (the starts of
    # 50 sessions at once hold up the first deltas of every path alike).
    settled = int(acked[0] * 1e9)
    pairs = [pair for r in results for pair in r["samples_ns"]]
    samples = [latency for _, latency in pairs]
    steady = [latency for written, latency in pairs if written >= settled]
    # While every session streams (as benchmarks.ws counts): the turns end together too.
    ended = min(r["first_complete_ns"] for r in results)
    streaming = [latency for written, latency in pairs if settled <= written < ended]
    worst = _worst_window(pairs, int(start * 1e9))
    parts = {"steady": steady, "streaming": streaming}
    return samples, len(pairs), wall, cpu, max(0.0, acked[0] - start), parts, worst


#: The width of the windows :func:`_worst_window` compares, in nanoseconds.
WINDOW_NS = 100_000_000


def _worst_window(pairs: list[tuple[int, int]], start_ns: int) -> dict[str, float]:
    """The 100 ms of writes whose *median* latency is the highest: a stall that holds up
    every session at once (a collection, a periodic task, a store flush) shows as one
    window far above the others, where queueing raises every window a little. Returns its
    start (seconds after the prompts), median and max in ms, and the median of all the
    windows' medians for comparison."""
    windows: dict[int, list[int]] = {}
    for written, latency in pairs:
        windows.setdefault((written - start_ns) // WINDOW_NS, []).append(latency)
    medians = {key: sorted(values)[len(values) // 2] for key, values in windows.items()}
    if not medians:
        return {}
    if os.environ.get("BENCH_CLUSTER_WINDOWS"):
        print("    windows' p50 ms:", " ".join(f"{medians[k] / 1e6:.1f}" for k in sorted(medians)))
    worst = max(medians, key=lambda key: medians[key])
    typical = sorted(medians.values())[len(medians) // 2]
    return {
        "at_s": worst * WINDOW_NS / 1e9,
        "p50_ms": medians[worst] / 1e6,
        "max_ms": max(windows[worst]) / 1e6,
        "typical_p50_ms": typical / 1e6,
    }


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
    try:
        with bench_procs.workers(url, config.prefix, workers, cli, env, directory) as procs:
            async with ClusterBackend(NatsSettings(servers=[url]), config) as backend:
                registry = backend._require()
                with anyio.move_on_after(60):
                    while True:
                        # Done, or a worker died (no use waiting for it).
                        if len(registry.workers) >= workers or any(
                            p.poll() is not None for p in procs
                        ):
                            break
                        await anyio.sleep(0.05)
                if len(registry.workers) < workers:
                    missing = bench_procs.workers_missing(procs, registry.workers, directory)
                    raise RuntimeError(missing)
                yield backend
    finally:
        with anyio.move_on_after(30, shield=True):
            await bench_procs.drop_streams(url, config.prefix)


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


SECTIONS = ("ws", "backend", "throughput", "aggregate")


async def _measure(sizes: dict[str, int], only: tuple[str, ...], log: Any) -> dict[str, Any]:
    from adapter.cluster import LocalNatsServer

    cli = emitter_path()
    sessions, paced_lines = sizes["sessions"], sizes["paced_lines"]
    busy_lines = sizes["busy_lines"]
    out: dict[str, Any] = {"ws": [], "latency": [], "throughput": [], "aggregate": {}}
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        directory = Path(tmp)
        with LocalNatsServer(directory / "nats") as server:
            env = _env(paced_lines, sizes.get("rate", 100))
            if "ws" in only:
                for kind in ("local", "nats"):
                    prefix = f"bench{uuid.uuid4().hex[:6]}"
                    serving = bench_procs.server(kind, server.url, cli, env, directory, prefix)
                    with serving as (url, pids):
                        if kind == "nats":
                            assert server.process is not None
                            pids["nats-server"] = server.process.pid
                        samples, _, _, cpu, prompting, parts, worst = await _ws_stream(
                            url, sessions, pids
                        )
                    if kind == "nats":
                        await bench_procs.drop_streams(server.url, prefix)
                    row = _latency_row(kind, sessions, samples)
                    row["cpu_share"] = cpu
                    row["prompting_s"] = prompting
                    row["steady"] = _latency_row(kind, sessions, parts["steady"])
                    row["streaming"] = _latency_row(kind, sessions, parts["streaming"])
                    row["worst_window"] = worst
                    out["ws"].append(row)
                    log(
                        f"  websocket {kind:5} x{sessions}: p50 {row['p50_ms']:.2f} ms  "
                        f"p99 {row['p99_ms']:.2f} ms  max {row['max_ms']:.2f} ms "
                        f"(n={row['samples']}; prompted within {prompting * 1e3:.0f} ms); CPU "
                        + ", ".join(f"{role} {share:.0%}" for role, share in cpu.items())
                    )
                    for label, part in (
                        ("steady state", row["steady"]),
                        ("while every session streams", row["streaming"]),
                    ):
                        log(
                            f"    {label}: p50 {part['p50_ms']:.2f} ms  p99 "
                            f"{part['p99_ms']:.2f} ms  max {part['max_ms']:.2f} ms "
                            f"(n={part['samples']})"
                        )
                    if worst:
                        log(
                            f"    worst 100 ms of writes: at +{worst['at_s']:.1f} s, p50 "
                            f"{worst['p50_ms']:.2f} ms, max {worst['max_ms']:.2f} ms (the "
                            f"windows' typical p50 {worst['typical_p50_ms']:.2f} ms)"
                        )
                local, nats = out["ws"]
                out["ws_added"] = {
                    "p50_ms": nats["p50_ms"] - local["p50_ms"],
                    "p99_ms": nats["p99_ms"] - local["p99_ms"],
                    "steady_p50_ms": nats["steady"]["p50_ms"] - local["steady"]["p50_ms"],
                    "steady_p99_ms": nats["steady"]["p99_ms"] - local["steady"]["p99_ms"],
                    "streaming_p50_ms": nats["streaming"]["p50_ms"] - local["streaming"]["p50_ms"],
                    "streaming_p99_ms": nats["streaming"]["p99_ms"] - local["streaming"]["p99_ms"],
                }
                added = out["ws_added"]
                log(
                    f"  websocket added by NATS: p50 {added['p50_ms']:+.2f} ms, "
                    f"p99 {added['p99_ms']:+.2f} ms; steady state p50 "
                    f"{added['steady_p50_ms']:+.2f} ms, p99 {added['steady_p99_ms']:+.2f} ms; "
                    f"while every session streams p50 {added['streaming_p50_ms']:+.2f} ms, "
                    f"p99 {added['streaming_p99_ms']:+.2f} ms"
                )
            if "backend" in only:
                for kind in ("local", "nats"):
                    async with _backend(kind, server.url, cli, env, directory) as backend:
                        samples, _, _ = await _stream(backend, sessions)
                    row = _latency_row(kind, sessions, samples)
                    out["latency"].append(row)
                    log(
                        f"  backend   {kind:5} x{sessions}: p50 {row['p50_ms']:.2f} ms  "
                        f"p99 {row['p99_ms']:.2f} ms  max {row['max_ms']:.2f} ms "
                        f"(n={row['samples']})"
                    )
            env = _env(busy_lines, 1e9)
            if "throughput" in only:
                for kind in ("local", "nats"):
                    async with _backend(kind, server.url, cli, env, directory) as backend:
                        _, events, wall = await _stream(backend, 1)
                    rate = events / wall
                    out["throughput"].append(
                        {"backend": kind, "deltas": events, "deltas_per_s": rate}
                    )
                    log(f"  throughput {kind:5}: {events} deltas, {rate:,.0f} deltas/s")
                local_rate, nats_rate = (r["deltas_per_s"] for r in out["throughput"])
                out["throughput_share"] = nats_rate / local_rate
                log(f"  throughput share nats/local: {nats_rate / local_rate:.0%}")
            if "aggregate" in only:
                async with _cluster(server.url, cli, env, 3, directory) as backend:
                    _, events, wall = await _stream(backend, sizes["aggregate_sessions"])
                out["aggregate"] = {"workers": 3, "deltas": events, "deltas_per_s": events / wall}
                log(f"  aggregate 3 workers: {events} deltas, {events / wall:,.0f} deltas/s")
    return out


#: Run sizes: the full run, ``--quick``, and a smoke run for the test suite.
SIZES = {
    "full": {"sessions": 50, "paced_lines": 300, "busy_lines": 20000, "aggregate_sessions": 6},
    "quick": {"sessions": 10, "paced_lines": 30, "busy_lines": 4000, "aggregate_sessions": 3},
    "smoke": {"sessions": 2, "paced_lines": 5, "busy_lines": 200, "aggregate_sessions": 3},
}


def measure_cluster(
    *, size: str = "full", only: tuple[str, ...] = SECTIONS, log: Any = print
) -> dict[str, Any]:
    """Latency, throughput and aggregate figures (see the module docstring); ``size`` is a
    key of :data:`SIZES`, ``only`` the sections of :data:`SECTIONS` to run."""
    result: dict[str, Any] = anyio.run(_measure, SIZES[size], only, log, backend="asyncio")
    return result


def _latency_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| backend | sessions | samples | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['backend']} | {row['sessions']} | {row['samples']:,} | {row['p50_ms']:.2f} "
            f"| {row['p99_ms']:.2f} | {row['max_ms']:.2f} |"
        )
    shares = [
        f"{row['backend']}: "
        + ", ".join(f"{role} {share:.0%}" for role, share in row["cpu_share"].items())
        for row in rows
        if row.get("cpu_share")
    ]
    if shares:
        lines += ["", "CPU of a core while streaming: " + "; ".join(shares) + "."]
    return lines


def markdown(result: dict[str, Any]) -> str:
    """The figures as Markdown tables."""
    lines: list[str] = []
    if result["ws"]:
        added = result["ws_added"]
        lines += ["Emitter -> WebSocket client:", "", *_latency_table(result["ws"]), ""]
        steady = [row["steady"] for row in result["ws"]]
        lines += ["The same, deltas written after the last prompt was acknowledged:", ""]
        lines += [*_latency_table(steady), ""]
        streaming = [row["streaming"] for row in result["ws"]]
        lines += ["The same, and written before the first session's `complete` was read:", ""]
        lines += [*_latency_table(streaming), ""]
        lines += [
            f"Added by the NATS hop: p50 {added['p50_ms']:+.2f} ms, p99 {added['p99_ms']:+.2f} ms;"
            f" steady state p50 {added['steady_p50_ms']:+.2f} ms, "
            f"p99 {added['steady_p99_ms']:+.2f} ms; while every session streams p50 "
            f"{added['streaming_p50_ms']:+.2f} ms, p99 {added['streaming_p99_ms']:+.2f} ms.",
            "",
        ]
    if result["latency"]:
        lines += ["Emitter -> backend subscriber:", "", *_latency_table(result["latency"]), ""]
    if result["throughput"] or result["aggregate"]:
        lines += ["| run | text deltas | deltas/s |", "|---|---:|---:|"]
        for row in result["throughput"]:
            lines.append(
                f"| one busy session, {row['backend']} | {row['deltas']:,} | "
                f"{row['deltas_per_s']:,.0f} |"
            )
        agg = result["aggregate"]
        if agg:
            lines.append(
                f"| {agg['workers']} workers, aggregate | {agg['deltas']:,} | "
                f"{agg['deltas_per_s']:,.0f} |"
            )
    if result["throughput"]:
        lines += ["", f"Throughput share through NATS: {result['throughput_share']:.0%}."]
    return "\n".join(lines)


def main() -> None:
    """``python -m benchmarks.cluster [--quick] [--only SECTION,...]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cluster")
    parser.add_argument("--quick", action="store_true", help="fewer sessions and lines")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: all of {','.join(SECTIONS)})",
    )
    parser.add_argument("--sessions", type=int, help="latency sessions (default: 50, quick 10)")
    parser.add_argument(
        "--rate", type=int, help="text deltas per second of each latency session (default: 100)"
    )
    parser.add_argument(
        "--publish-linger", metavar="MS", help="the workers' --publish-linger (default: theirs)"
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        help="the event loop of every bridge process (serve, workers; default: theirs)",
    )
    args = parser.parse_args()
    if args.loop is not None:
        bench_procs.BRIDGE_OPTIONS[:] = ["--loop", args.loop]
    if args.publish_linger is not None:
        bench_procs.WORKER_OPTIONS[:] = ["--publish-linger", args.publish_linger]
    only = tuple(name.strip() for name in args.only.split(",") if name.strip())
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    load = os.getloadavg()
    size = "quick" if args.quick else "full"
    if args.sessions:
        SIZES["custom"] = {**SIZES[size], "sessions": args.sessions}
        size = "custom"
    if args.rate:
        SIZES["custom"] = {**SIZES[size], "rate": args.rate}
        size = "custom"
    result = measure_cluster(size=size, only=only)
    after = os.getloadavg()
    print(f"\nload average at start: {load[0]:.2f} (1 min), at the end: {after[0]:.2f}\n")
    print(markdown(result))


if __name__ == "__main__":
    main()
