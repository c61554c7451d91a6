"""The WebSocket front end and the session history, measured.

* **fan-out**: one busy session, ``clients`` WebSocket clients subscribed to it;
* **sessions**: ``sessions`` busy sessions with two clients each;

both with the paced emitter (``BENCH_MODE=paced``: text deltas stamped with
``CLOCK_MONOTONIC`` just before each write) behind a real ``create_app`` server under uvicorn
in a child process (``python -m benchmarks.ws serve``), and ``websockets`` clients in this
one. Latency is from the emitter's write to the client's read of the ``event`` frame (pipe,
client decode, translation, fan-out, the WebSocket frame, the loopback socket, the client's
decode); delivered events per second count every event frame every client received.

* **idle memory**: the server's RSS before and after ``idle`` connections that only received
  their ``session_list`` (per connection);
* **history**: listing ``files`` transcripts (copies of a real one) and a ~200 MB one
  (mostly bookkeeping lines, as long sessions are), time and peak memory, and loading the
  200 MB one into events.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import percentile, serve_paced

__all__ = ("measure_history", "measure_ws")

_FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "history"
    / "projects"
    / "-work-demo"
    / "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7.jsonl"
)


# ------------------------------------------------------------------ the server process


def _serve(cli: str, lines: int, rate: float) -> None:
    """Child: a server over the paced emitter; prints its port, runs until SIGTERM."""
    serve_paced(cli, lines, rate, max_sessions=200)


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
        import socket

        deadline = time.monotonic() + 60
        while True:  # the port is bound before uvicorn listens on it
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the benchmark server did not start") from None
                time.sleep(0.05)

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


# ------------------------------------------------------------------ clients


class _Client:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.n = 0

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = f"r{self.n}"
        await self.conn.send(json.dumps({**frame, "request_id": rid}))
        while True:
            reply: dict[str, Any] = json.loads(await self.conn.recv())
            if reply.get("request_id") == rid:
                return reply


async def _open(url: str) -> _Client:
    from websockets.asyncio.client import connect

    conn = await connect(url, max_size=None, compression=None, open_timeout=120)
    client = _Client(conn)
    first = json.loads(await conn.recv())
    assert first["type"] == "session_list"
    return client


async def _consume(client: _Client, session_id: str, latencies: list[int]) -> int:
    """Read until the session's turn completes; return the event frames received."""
    count = 0
    loads, now = json.loads, time.monotonic_ns
    while True:
        raw = await client.conn.recv()
        stamp = now()
        frame = loads(raw)
        if frame.get("type") != "event" or frame["session_id"] != session_id:
            continue
        count += 1
        event = frame["event"]
        kind = event["type"]
        if kind == "message_chunk":
            text = event["text"].strip()
            if text.startswith("t") and text[1:].isdigit():
                latencies.append(stamp - int(text[1:]))
        elif kind == "complete":
            return count


async def _stream(
    url: str, sessions: int, clients_each: int, log: Callable[[str], None]
) -> dict[str, Any]:
    first = await _open(url)
    ids = []
    for _ in range(sessions):
        ack = await first.request({"type": "create_session"})
        assert ack["type"] == "ack", ack
        ids.append(ack["session_id"])
    clients: list[tuple[_Client, str]] = []
    for sid in ids:
        for _ in range(clients_each):
            c = await _open(url)
            ack = await c.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
            assert ack["type"] == "ack", ack
            clients.append((c, sid))
    log(f"  {sessions} session(s) x {clients_each} client(s) connected")
    latencies: list[int] = []
    started = time.monotonic()
    tasks = [asyncio.ensure_future(_consume(c, sid, latencies)) for c, sid in clients]
    for sid in ids:
        ack = await first.request({"type": "prompt", "session_id": sid, "text": "go"})
        assert ack["type"] == "ack", ack
    counts = await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    for c, _ in clients:
        await c.conn.close()
    for sid in ids:
        await first.request({"type": "close_session", "session_id": sid})
    await first.conn.close()
    values = sorted(x / 1e6 for x in latencies)
    return {
        "sessions": sessions,
        "clients_per_session": clients_each,
        "events_delivered": sum(counts),
        "events_per_s": sum(counts) / elapsed,
        "seconds": elapsed,
        "latency_samples": len(values),
        "p50_ms": percentile(values, 0.50),
        "p99_ms": percentile(values, 0.99),
        "max_ms": values[-1] if values else 0.0,
    }


async def _idle(url: str, server: _Server, count: int) -> dict[str, Any]:
    await asyncio.sleep(0.5)
    before = server.rss()
    clients = [await _open(url) for _ in range(count)]
    await asyncio.sleep(1.0)
    after = server.rss()
    for c in clients:
        await c.conn.close()
    return {
        "connections": count,
        "rss_before": before,
        "rss_after": after,
        "per_connection_bytes": (after - before) / count,
    }


def measure_ws(
    cli: str,
    *,
    fanout_clients: int = 100,
    sessions: int = 50,
    lines: int = 300,
    rate: float = 100.0,
    idle: int = 500,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fan-out, many sessions and idle connections through a real server process."""
    server = _Server(cli, lines, rate)
    try:
        results: dict[str, Any] = {"lines_per_session": lines, "rate": rate}
        log(f"ws: fan-out to {fanout_clients} clients")
        cpu = server.cpu()
        results["fanout"] = asyncio.run(_stream(server.url, 1, fanout_clients, log))
        results["fanout"]["server_cpu_s"] = server.cpu() - cpu
        log(f"ws: {sessions} sessions x 2 clients")
        cpu = server.cpu()
        results["sessions"] = asyncio.run(_stream(server.url, sessions, 2, log))
        results["sessions"]["server_cpu_s"] = server.cpu() - cpu
        log(f"ws: {idle} idle connections")
        results["idle"] = asyncio.run(_idle(server.url, server, idle))
        return results
    finally:
        server.stop()


# ------------------------------------------------------------------ history


def _peak(
    code: str, setup: str = "from adapter.chat import list_sessions, load_events"
) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter after ``setup``; its wall time and peak RSS."""
    wrapper = (
        "import resource, time, json\n"
        f"{setup}\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        f"{code}\n"
        "print(json.dumps({'seconds': time.perf_counter() - t, 'cpu_s': time.process_time() - c, "
        "'peak_rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure_history(
    *, files: int = 1000, big_mb: int = 200, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Listing ``files`` transcripts, listing and loading one of ``big_mb`` MB."""
    real = _FIXTURE.read_bytes()
    with tempfile.TemporaryDirectory(prefix="ccb-history-") as tmp:
        config = Path(tmp) / "many"
        project = config / "projects" / "-work-bench"
        project.mkdir(parents=True)
        for i in range(files):
            (project / f"{i:08d}-0000-4000-8000-000000000000.jsonl").write_bytes(real)
        log(f"history: listing {files} files")
        imports = "from adapter.chat import list_sessions, load_events\n"
        empty = _peak(imports)
        many = _peak(
            imports + f"n = len(list_sessions(config=__import__('pathlib').Path({str(config)!r})))"
        )
        big_config = Path(tmp) / "big"
        big_project = big_config / "projects" / "-work-big"
        big_project.mkdir(parents=True)
        big = big_project / "11111111-2222-4333-8444-555555555555.jsonl"
        filler = (
            json.dumps({"type": "attachment", "attachment": {"content": "x" * 64_000}}) + "\n"
        ).encode()
        with big.open("wb") as fh:
            fh.write(real)
            while fh.tell() < big_mb * 1_000_000:
                fh.write(filler * 16)
                fh.write(real)
        size = big.stat().st_size
        log(f"history: listing and loading one {size / 1e6:.0f} MB file")
        path = f"__import__('pathlib').Path({str(big_config)!r})"
        listed = _peak(f"s = list_sessions(config={path})")
        loaded = _peak(f"e = load_events({str(big)!r})")
        shutil.rmtree(config)
    return {
        "interpreter_peak_rss": empty["peak_rss"],
        "list_many": {"files": files, **many},
        "big": {"bytes": size, "list": listed, "load": loaded},
    }


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        _serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
