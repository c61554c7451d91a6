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
  200 MB one into events.
"""

from __future__ import annotations

import asyncio
import contextlib
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

__all__ = (
    "CLIENT_NICE",
    "CLIENT_PROCESSES",
    "measure_history",
    "measure_ws",
    "measure_ws_sessions",
)

#: The child processes the streaming runs spread their clients over.
CLIENT_PROCESSES = 4
#: Their niceness: the clients stand in for browsers on other machines, so the server under
#: test (and the CLIs beside it) get the CPU first; the clients' own delay in reading a frame
#: still counts in every latency. On this 2-core machine they would otherwise take as much
#: CPU as the server, exactly when it needs it.
CLIENT_NICE = 10
#: The server child's listen backlog (as uvicorn's default): the clients connect in bursts.
_BACKLOG = 2048

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


# ------------------------------------------------------------------ clients


class _Client(asyncio.Protocol):
    """A WebSocket client connection as an asyncio protocol over websockets' sans-IO
    ``ClientProtocol`` (no task or future per frame: the clients cost their process little,
    so the CPU goes to the server under test). Frames are read as they arrive, always:
    replies go to the request that waits for them, every other frame to ``on_frame``.

    A connection must never stop reading: a client that does lets its keepalive pongs wait
    unread and is closed with 1011 after the ping timeout (what lost the 50-session run when
    the connection that created the sessions stopped reading while the run streamed)."""

    def __init__(self, url: str, on_frame: Callable[[dict[str, Any], int], None]) -> None:
        from websockets.client import ClientProtocol
        from websockets.uri import parse_uri

        self.proto = ClientProtocol(parse_uri(url), max_size=None)
        self.on_frame = on_frame
        self.n = 0
        loop = asyncio.get_running_loop()
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.session_list: asyncio.Future[dict[str, Any]] = loop.create_future()
        #: Done when the connection is gone (with the error, if it broke).
        self.reader: asyncio.Future[None] = loop.create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.proto.send_request(self.proto.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        from websockets.frames import Frame, Opcode

        stamp = time.monotonic_ns()
        self.proto.receive_data(data)
        for event in self.proto.events_received():
            if not isinstance(event, Frame) or event.opcode is not Opcode.TEXT:
                continue  # the handshake response, pings (answered by the protocol), close
            frame = json.loads(bytes(event.data))
            rid = frame.get("request_id")
            if rid is not None and rid in self.pending:
                self.pending.pop(rid).set_result(frame)
            elif frame["type"] == "session_list" and not self.session_list.done():
                self.session_list.set_result(frame)
            else:
                self.on_frame(frame, stamp)
        self._flush()
        if self.proto.handshake_exc is not None:
            self._end(self.proto.handshake_exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(exc)

    def _end(self, exc: BaseException | None) -> None:
        """The connection is gone: fail whoever waits; ``reader`` ends (with ``exc``)."""
        gone = exc or ConnectionError("the connection closed")
        for fut in [self.session_list, *self.pending.values()]:
            if not fut.done():
                fut.set_exception(gone)
        if not self.reader.done():
            if exc is None:
                self.reader.set_result(None)
            else:
                self.reader.set_exception(exc)
        if self.transport is not None:
            self.transport.close()

    def _flush(self) -> None:
        assert self.transport is not None
        for data in self.proto.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = f"r{self.n}"
        fut = self.pending[rid] = asyncio.get_running_loop().create_future()
        self.proto.send_text(json.dumps({**frame, "request_id": rid}).encode())
        self._flush()
        reply: dict[str, Any] = await fut
        return reply

    async def close(self) -> None:
        if not self.reader.done():
            self.proto.send_close(1000)
            self._flush()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.reader), 10)
        if self.transport is not None:
            self.transport.close()


def _ignore(frame: dict[str, Any], stamp: int) -> None:
    pass


async def _open(url: str, on_frame: Callable[[dict[str, Any], int], None] = _ignore) -> _Client:
    from websockets.uri import parse_uri

    uri = parse_uri(url)
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: _Client(url, on_frame), uri.host, uri.port)
    await asyncio.wait_for(client.session_list, 120)
    return client


class _Subscriber:
    """One client subscribed to one session: counts its event frames, collects the write
    time and latency of each stamped text delta, and is done at the session's ``complete``
    (``completed``: when it read it)."""

    def __init__(self, session_id: str, samples: list[tuple[int, int]]) -> None:
        self.session_id = session_id
        self.samples = samples
        self.count = 0
        self.last = 0
        self.completed = 0
        self.done = asyncio.get_running_loop().create_future()

    def __call__(self, frame: dict[str, Any], stamp: int) -> None:
        if frame["type"] != "event" or frame["session_id"] != self.session_id:
            return
        self.count += 1
        self.last = stamp
        event = frame["event"]
        kind = event["type"]
        if kind == "message_chunk":
            # Deltas read together from the CLI arrive as one chunk: every stamp counts.
            for token in event["text"].split():
                if token.startswith("t") and token[1:].isdigit():
                    written = int(token[1:])
                    self.samples.append((written, stamp - written))
        elif kind == "complete" and not self.done.done():
            self.completed = stamp
            self.done.set_result(None)


async def _client_process(url: str, session_ids: list[str], watch_list: bool = False) -> None:
    """A client child: one connection per entry of ``session_ids``, subscribed to it (and
    watching the session list, as a web UI page does, with ``watch_list``); prints ``ready``,
    reads until every session completed, prints its counts and latencies."""
    samples: list[tuple[int, int]] = []
    subs = [_Subscriber(sid, samples) for sid in session_ids]
    clients = []
    for sub in subs:
        client = await _open(url, sub)
        if watch_list:
            listed = await client.request({"type": "list_sessions"})
            assert listed["type"] == "session_list", listed
        ack = await client.request(
            {"type": "subscribe", "session_id": sub.session_id, "since_seq": 0}
        )
        assert ack["type"] == "ack", ack
        clients.append(client)
    print("ready", flush=True)
    done: asyncio.Future[Any] = asyncio.gather(*(s.done for s in subs))
    waiting: set[asyncio.Future[Any]] = {done, *(c.reader for c in clients)}
    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    if not done.done():  # a connection ended before its session completed
        for c in clients:
            if c.reader.done():
                c.reader.result()  # raises what broke it
        raise RuntimeError("a connection ended before its session completed")
    result = {
        "events": sum(s.count for s in subs),
        "last_ns": max(s.last for s in subs),
        "samples_ns": samples,
        "first_complete_ns": min(s.completed for s in subs),
        "cpu_s": time.process_time(),
    }
    print(json.dumps(result), flush=True)
    for c in clients:
        await c.close()


class _ClientProcess:
    def __init__(self, url: str, session_ids: list[str], watch_list: bool = False) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.ws",
                "clients",
                url,
                ",".join(session_ids),
                *(["list"] if watch_list else []),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )

    def ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.proc.kill()
            raise RuntimeError(f"a client process did not get ready: {line!r}")

    def result(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.proc.wait(60)
        if self.proc.returncode != 0 or not line:
            raise RuntimeError(f"a client process failed (exit {self.proc.returncode})")
        result: dict[str, Any] = json.loads(line)
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
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


# ------------------------------------------------------------------ history


def _peak(
    code: str, setup: str = "from adapter.chat import list_sessions, load_events"
) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter after ``setup``; its wall time and peak RSS.

    The peak is the child's own ``VmHWM``: ``ru_maxrss`` survives ``exec``, so a child of a
    big benchmark process would report its parent's peak."""
    wrapper = (
        "import time, json\n"
        f"{setup}\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        f"{code}\n"
        "w, cpu = time.perf_counter() - t, time.process_time() - c\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(json.dumps({'seconds': w, 'cpu_s': cpu, 'peak_rss': int(hwm.split()[1]) * 1024}))\n"
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
