"""The WebSocket front end and the session history, measured.

* **fan-out**: one busy session, ``clients`` WebSocket clients subscribed to it;
* **sessions**: ``sessions`` busy sessions with two clients each;

both with the paced emitter (``BENCH_MODE=paced``: text deltas stamped with
``CLOCK_MONOTONIC`` just before each write) behind a real ``create_app`` server under uvicorn
in a child process (``python -m benchmarks.ws serve``; ``BENCH_WS_PROFILE=<path>`` writes a
cProfile of it), and ``websockets`` clients spread over :data:`CLIENT_PROCESSES` child
processes (``python -m benchmarks.ws clients``; this process creates the sessions and
prompts them once every client subscribed). Latency is from the emitter's write to the
client's read of the ``event`` frame (pipe, client decode, translation, fan-out, the
WebSocket frame, the loopback socket, the client's decode); delivered events per second
count every event frame every client received.

* **idle memory**: the server's RSS before and after ``idle`` connections that only received
  their ``session_list`` (per connection);
* **history**: listing ``files`` transcripts (copies of a real one) and a ~200 MB one
  (mostly bookkeeping lines, as long sessions are), time and peak memory, and loading the
  200 MB one into events (:mod:`benchmarks.history`, re-exported here).

The clients are in :mod:`benchmarks._ws_clients`; this module runs the server child and the
measurements, and is the entry point of both child processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import percentile, serve_paced
from ._ws_clients import CLIENT_NICE, CLIENT_PROCESSES, _client_process

# Re-exported (the ``as`` form): benchmarks.cluster imports them from here.
from ._ws_clients import _ClientProcess as _ClientProcess
from ._ws_clients import _open as _open
from .history import measure_history

__all__ = (
    "CLIENT_NICE",
    "CLIENT_PROCESSES",
    "measure_history",
    "measure_ws",
    "measure_ws_sessions",
)

#: The server child's listen backlog (as uvicorn's default): the clients connect in bursts.
_BACKLOG = 2048

# ------------------------------------------------------------------ the server process


def _serve(cli: str, lines: int, rate: float) -> None:
    """Child: a server over the paced emitter; prints its port (already listening), runs
    until SIGTERM."""
    profile = os.environ.get("BENCH_WS_PROFILE")
    if not profile:
        serve_paced(cli, lines, rate, max_sessions=200, backlog=_BACKLOG)
        return
    # Where the server's CPU goes: cProfile stats written to that path at exit.
    # uvicorn re-raises the SIGTERM it handled once it shut down: end with SystemExit then.
    import cProfile

    def leave(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)
    with cProfile.Profile() as prof, contextlib.suppress(SystemExit):
        serve_paced(cli, lines, rate, max_sessions=200, backlog=_BACKLOG)
    prof.dump_stats(profile)


class _Server:
    def __init__(self, cli: str, lines: int, rate: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.ws", "serve", cli, str(lines), str(rate)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    def rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


async def _stream(
    url: str,
    sessions: int,
    clients_each: int,
    log: Callable[[str], None],
    *,
    processes: int = CLIENT_PROCESSES,
    server_cpu: Callable[[], float] | None = None,
    watch_list: bool = False,
) -> dict[str, Any]:
    """``sessions`` busy sessions, ``clients_each`` clients on each, the clients spread over
    ``processes`` child processes (one Python process reading 100 busy connections measures
    its own queueing as much as the server's)."""
    first = await _open(url)
    ids = []
    for _ in range(sessions):
        ack = await first.request({"type": "create_session"})
        assert ack["type"] == "ack", ack
        ids.append(ack["session_id"])
    every = [sid for sid in ids for _ in range(clients_each)]
    groups = [every[i::processes] for i in range(processes) if every[i::processes]]
    children = [_ClientProcess(url, group, watch_list) for group in groups]
    try:
        for child in children:
            await asyncio.to_thread(child.ready)
        log(
            f"  {sessions} session(s) x {clients_each} client(s) connected "
            f"({len(children)} client processes)"
        )
        started = time.monotonic_ns()
        cpu = server_cpu() if server_cpu is not None else 0.0
        # Every prompt at once (not one round trip after another), so all the sessions stream
        # together for the whole run.
        acks = await asyncio.gather(
            *(first.request({"type": "prompt", "session_id": sid, "text": "go"}) for sid in ids)
        )
        assert all(ack["type"] == "ack" for ack in acks), acks
        prompted = time.monotonic_ns()
        results = [await asyncio.to_thread(child.result) for child in children]
        # The server's CPU while the sessions streamed (prompts to the last client's end).
        stream_cpu = server_cpu() - cpu if server_cpu is not None else None
    finally:
        for child in children:
            child.kill()
    for sid in ids:
        await first.request({"type": "close_session", "session_id": sid})
    await first.close()
    events = sum(r["events"] for r in results)
    elapsed = (max(r["last_ns"] for r in results) - started) / 1e9
    values = sorted(lat / 1e6 for r in results for _, lat in r["samples_ns"])
    # While every session streams: deltas written after the last prompt was acknowledged and
    # before the first session completed (the sessions start and end together, and each
    # start and end is a state change sent to every connection).
    end = min(r["first_complete_ns"] for r in results)
    steady = sorted(
        lat / 1e6 for r in results for at, lat in r["samples_ns"] if prompted <= at < end
    )
    return {
        "sessions": sessions,
        "clients_per_session": clients_each,
        "clients_watch_list": watch_list,
        "client_processes": len(children),
        "events_delivered": events,
        "events_per_s": events / elapsed,
        "clients_cpu_s": sum(r["cpu_s"] for r in results),
        "server_cpu_stream_s": stream_cpu,
        "seconds": elapsed,
        "latency_samples": len(values),
        "p50_ms": percentile(values, 0.50),
        "p99_ms": percentile(values, 0.99),
        "max_ms": values[-1] if values else 0.0,
        "prompts_s": (prompted - started) / 1e9,
        "steady_samples": len(steady),
        "steady_p50_ms": percentile(steady, 0.50),
        "steady_p99_ms": percentile(steady, 0.99),
        "steady_max_ms": steady[-1] if steady else 0.0,
        "timeline": _timeline(results, started),
        "started_ns": started,
        "prompted_ns": prompted,
    }


def _timeline(results: list[dict[str, Any]], started: int, window_ms: int = 250) -> list[Any]:
    """``[window start ms, deltas, p99 ms, max ms]`` per ``window_ms`` of the emitters' write
    time since the prompts went out: where in the run the tail is."""
    windows: dict[int, list[float]] = {}
    for r in results:
        for at, lat in r["samples_ns"]:
            windows.setdefault((at - started) // (window_ms * 1_000_000), []).append(lat / 1e6)
    rows = []
    for index in sorted(windows):
        values = sorted(windows[index])
        rows.append([index * window_ms, len(values), percentile(values, 0.99), values[-1]])
    return rows


async def _idle(url: str, server: _Server, count: int) -> dict[str, Any]:
    await asyncio.sleep(0.5)
    before = server.rss()
    clients = [await _open(url) for _ in range(count)]
    await asyncio.sleep(1.0)
    after = server.rss()
    for c in clients:
        await c.close()
    return {
        "connections": count,
        "rss_before": before,
        "rss_after": after,
        "per_connection_bytes": (after - before) / count,
    }


def _measured_stream(
    server: _Server,
    sessions: int,
    clients: int,
    log: Callable[[str], None],
    processes: int,
    *,
    watch_list: bool = False,
) -> dict[str, Any]:
    """One streaming run on ``server`` (see ``_stream``) with the server's CPU seconds in it."""
    cpu = server.cpu()
    run = asyncio.run(
        _stream(
            server.url,
            sessions,
            clients,
            log,
            processes=processes,
            server_cpu=server.cpu,
            watch_list=watch_list,
        )
    )
    run["server_cpu_s"] = server.cpu() - cpu
    return run


def measure_ws(
    cli: str,
    *,
    fanout_clients: int = 100,
    sessions: int = 50,
    lines: int = 300,
    rate: float = 100.0,
    idle: int = 500,
    processes: int = CLIENT_PROCESSES,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fan-out, many sessions and idle connections through a real server process, the
    streaming clients spread over ``processes`` child processes."""
    server = _Server(cli, lines, rate)
    try:
        results: dict[str, Any] = {"lines_per_session": lines, "rate": rate}
        log(f"ws: fan-out to {fanout_clients} clients")
        results["fanout"] = _measured_stream(server, 1, fanout_clients, log, processes)
        log(f"ws: {sessions} sessions x 2 clients")
        results["sessions"] = _measured_stream(server, sessions, 2, log, processes)
        log(f"ws: {sessions} sessions x 2 clients watching the session list")
        results["sessions_list"] = _measured_stream(
            server, sessions, 2, log, processes, watch_list=True
        )
        log(f"ws: {idle} idle connections")
        results["idle"] = asyncio.run(_idle(server.url, server, idle))
        return results
    finally:
        server.stop()


def measure_ws_sessions(
    cli: str,
    *,
    sessions: int = 50,
    rounds: int = 3,
    lines: int = 300,
    rate: float = 100.0,
    processes: int = CLIENT_PROCESSES,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Only the ``sessions`` x 2 clients run, ``rounds`` times on one server (after a
    one-session warm-up): the round-to-round spread of the whole-run p99. Each round runs
    twice: clients that only subscribe (``rounds``), then clients that also watch the session
    list as web UI pages do (``rounds_list``: every session's state changes to every
    connection)."""
    server = _Server(cli, lines, rate)
    try:
        log("ws: warm-up (1 session x 2 clients)")
        asyncio.run(_stream(server.url, 1, 2, log, processes=processes))
        found: dict[str, Any] = {"lines_per_session": lines, "rate": rate}
        found["rounds"], found["rounds_list"] = [], []
        for index in range(rounds):
            for key, watch_list in (("rounds", False), ("rounds_list", True)):
                what = " watching the list" if watch_list else ""
                log(f"ws: round {index + 1}: {sessions} sessions x 2 clients{what}")
                run = _measured_stream(server, sessions, 2, log, processes, watch_list=watch_list)
                log(
                    f"  p99 {run['p99_ms']:.2f} ms (while streaming {run['steady_p99_ms']:.2f})"
                    f", max {run['max_ms']:.1f}, p50 {run['p50_ms']:.2f}, "
                    f"server CPU {run['server_cpu_s']:.2f} s"
                )
                found[key].append(run)
        return found
    finally:
        server.stop()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        _serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "clients":
        os.nice(int(os.environ.get("BENCH_WS_CLIENT_NICE", CLIENT_NICE)))
        asyncio.run(_client_process(sys.argv[2], sys.argv[3].split(","), "list" in sys.argv[4:]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "rounds":
        # python -m benchmarks.ws rounds [ROUNDS [SESSIONS [OUT.json]]]: the sessions run alone.
        from ._common import emitter_path

        argv = sys.argv[2:]
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        found = measure_ws_sessions(
            emitter_path(),
            rounds=int(argv[0]) if argv else 3,
            sessions=int(argv[1]) if len(argv) > 1 else 50,
        )
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        for key in ("rounds", "rounds_list"):
            p99s = sorted(round(r["p99_ms"], 2) for r in found[key])
            print(f"{key}: whole-run p99 {p99s}, median {p99s[len(p99s) // 2]:.2f} ms")
        if len(argv) > 2:
            Path(argv[2]).write_text(json.dumps(found))
