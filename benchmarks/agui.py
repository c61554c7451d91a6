"""The AG-UI endpoint, measured: text-delta latency over SSE with many runs at once.

``python -m benchmarks.agui [--runs 50] [--lines 300] [--rate 100]``

A real ``create_app`` server under uvicorn in a child process (``python -m benchmarks.agui
serve``) over the paced emitter (``BENCH_MODE=paced``: text deltas stamped with
``CLOCK_MONOTONIC`` just before each write); ``runs`` threads each get a first run (which
starts its session: not measured), then ``runs`` runs at once, one per thread, each read by
an httpx streaming client in this process. Latency is from the emitter's write
to the client's read of the ``TEXT_MESSAGE_CONTENT`` frame (pipe, client decode, adapter
translation, fan-out, AG-UI translation, SSE encoding, the loopback socket, the client's SSE
split and JSON decode). Also reported: frames per second delivered and the server's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import emitter_path, percentile, serve_paced

__all__ = ("measure_agui",)


def _serve(cli: str, lines: int, rate: float) -> None:
    """Child: the server over the paced emitter; prints its port, runs until SIGTERM."""
    serve_paced(cli, lines, rate, max_sessions=500, backlog=2048)


class _Server:
    def __init__(self, cli: str, lines: int, rate: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.agui", "serve", cli, str(lines), str(rate)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


async def _run(client: Any, url: str, thread_id: str, latencies: list[int]) -> int:
    """One AG-UI run on ``thread_id``; returns the frames received."""
    body = {
        "threadId": thread_id,
        "runId": uuid.uuid4().hex,
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": "go"}],
    }
    frames = 0
    loads, now = json.loads, time.monotonic_ns
    buffer = b""
    async with client.stream("POST", url + "/agui", json=body) as response:
        if response.status_code != 200:
            raise RuntimeError(f"the run failed: {response.status_code}")
        async for chunk in response.aiter_raw():
            stamp = now()
            buffer += chunk
            *complete, buffer = buffer.split(b"\n\n")
            for frame in complete:
                if not frame.startswith(b"data: "):
                    continue
                frames += 1
                event = loads(frame[6:])
                if event["type"] == "TEXT_MESSAGE_CONTENT":
                    # Deltas read together from the CLI arrive as one chunk: every stamp counts.
                    for token in event["delta"].split():
                        if token.startswith("t") and token[1:].isdigit():
                            latencies.append(stamp - int(token[1:]))
                elif event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    return frames
    return frames


async def _runs(url: str, runs: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=runs + 10, max_keepalive_connections=runs + 10)
    threads = [uuid.uuid4().hex for _ in range(runs)]
    latencies: list[int] = []
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        # A first run per thread starts its session (spawn + initialize): not measured.
        await asyncio.gather(*(_run(client, url, t, []) for t in threads))
        started = time.monotonic()
        counts = await asyncio.gather(*(_run(client, url, t, latencies) for t in threads))
        elapsed = time.monotonic() - started
    values = sorted(x / 1e6 for x in latencies)
    return {
        "runs": runs,
        "frames": sum(counts),
        "frames_per_s": sum(counts) / elapsed,
        "seconds": elapsed,
        "latency_samples": len(values),
        "p50_ms": percentile(values, 0.50),
        "p99_ms": percentile(values, 0.99),
        "max_ms": values[-1] if values else 0.0,
    }


def measure_agui(
    cli: str,
    *,
    runs: int = 50,
    lines: int = 300,
    rate: float = 100.0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Concurrent AG-UI runs through a real server process (see the module docs)."""
    server = _Server(cli, lines, rate)
    try:
        results: dict[str, Any] = {"lines_per_run": lines, "rate": rate}
        log(f"agui: {runs} threads, a run each to start their sessions, then {runs} runs at once")
        cpu = server.cpu()
        results["concurrent"] = asyncio.run(_runs(server.url, runs))
        results["concurrent"]["server_cpu_s"] = server.cpu() - cpu
        return results
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.agui``: print the figures as JSON."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["serve"]:
        _serve(args[1], int(args[2]), float(args[3]))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agui")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--rate", type=float, default=100.0)
    parsed = parser.parse_args(args)
    results = measure_agui(
        emitter_path(),
        runs=parsed.runs,
        lines=parsed.lines,
        rate=parsed.rate,
        log=lambda text: print(text, file=sys.stderr, flush=True),
    )
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
