"""Figures (i)-(k): terminal sessions.

(i) Output throughput: ``cat`` of a large file through a terminal session to one WebSocket
    viewer (a real uvicorn server and a real ``websockets`` client), with the server-side
    screen on and off, as a share of the raw pseudo-terminal read rate measured in the same
    run (the same ``cat`` on a bare pty, read in a tight non-blocking loop). Bytes counted are
    what the terminal delivers (the line discipline turns ``\\n`` into ``\\r\\n``).
(j) Keystroke echo latency: a key typed into a terminal running ``cat`` (the kernel echoes
    it) until the echo reaches a viewer of the session, p50 / p99, while 20 other terminals
    stream output (each prints 200 short lines every 20 ms, ~45 KB/s), screen on and off.

The server runs in a thread of this process (uvicorn); the WebSocket viewer of (i) is a
separate process, as a browser would be.
(k) Memory per idle terminal session: what this process allocates per terminal (a ``cat``
    waiting for input, server-side screen on, its screen read once), by tracemalloc over 50
    of them, and the RSS growth; the children's memory is not ours and is not counted.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from ._common import percentile, rss_bytes

__all__ = ("measure_terminals",)

_BLOCK = b"".join(
    b"%07d the quick brown fox jumps over the lazy dog 0123456789\n" % i for i in range(1000)
)


#: What a busy terminal runs: 200 numbered lines every 20 ms (~45 KB/s), no fork per burst.
_BUSY_PRINTER = (
    "import sys, time\n"
    "block = ''.join('%d\\n' % i for i in range(1, 201))\n"
    "while True:\n"
    "    sys.stdout.write(block); sys.stdout.flush(); time.sleep(0.02)\n"
)


def _make_file(directory: Path, size: int) -> Path:
    path = directory / "big.txt"
    with path.open("wb") as out:
        written = 0
        while written < size:
            out.write(_BLOCK)
            written += len(_BLOCK)
    return path


async def _raw_pty_rate(path: Path) -> tuple[float, int]:
    from adapter.terminals._pty import PtyProcess

    proc = PtyProcess.spawn(["cat", str(path)], cwd=None, env=dict(os.environ), cols=80, rows=24)
    total = 0
    started = time.perf_counter()
    while True:
        chunk = await proc.read()
        if not chunk:
            break
        total += len(chunk)
    seconds = time.perf_counter() - started
    await proc.wait_exited()
    proc.reap()
    proc.close()
    return total / seconds, total


@contextmanager
def _server(app: Any) -> Iterator[str]:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the benchmark server did not start")
        time.sleep(0.01)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()


#: The viewer: a separate process (as a browser would be) reading every frame until the exit.
_VIEWER = """
import json, sys, time
import websockets.sync.client as ws_client
with ws_client.connect(sys.argv[1], max_size=None) as ws:
    ws.recv(timeout=60)  # status
    ws.recv(timeout=60)  # the screen
    ws.send(b"go\\r")
    started = time.perf_counter()
    total = 0
    while True:
        frame = ws.recv(timeout=300)
        if isinstance(frame, bytes):
            total += len(frame)
        elif json.loads(frame)["type"] == "exit":
            break
    print(json.dumps({"bytes": total, "seconds": time.perf_counter() - started}))
"""


def _websocket_rate(path: Path, *, screen: bool) -> tuple[float, int]:
    import httpx

    from adapter.server import ServerSettings, create_app
    from adapter.server.terminal_routes import make_terminal_routes
    from adapter.terminals import Agent, TerminalManager

    # The program waits for a line, so the viewer is connected before the output starts.
    agent = Agent(
        name="bench-cat",
        command="sh",
        args=("-c", f'read go; exec cat "{path}"'),
        install_hint="sh",
    )
    routes = make_terminal_routes(
        lambda: TerminalManager(
            agents={"bench-cat": agent}, screen=screen, viewer_max_bytes=64 << 20
        )
    )
    app = create_app(settings=ServerSettings(), providers=[routes])
    with _server(app) as host:
        info = httpx.post(f"http://{host}/api/terminals", json={"agent": "bench-cat"}).json()
        url = f"ws://{host}/ws/pty/{info['id']}"
        done = subprocess.run(
            [sys.executable, "-c", _VIEWER, url], capture_output=True, check=True, timeout=900
        )
    result = json.loads(done.stdout)
    # The echo of "go" is part of the count; it is a handful of bytes.
    return result["bytes"] / result["seconds"], int(result["bytes"])


async def _echo_latency(
    keys: int, busy: int, log: Callable[[str], None], screen: bool = True
) -> dict[str, Any]:
    from adapter.terminals import Agent, TerminalManager

    agents = {
        "echo": Agent(name="echo", command="cat", install_hint="cat"),
        "busy": Agent(
            name="busy",
            command=sys.executable,
            args=("-S", "-c", _BUSY_PRINTER),
            install_hint="python",
        ),
    }
    samples: list[float] = []
    async with TerminalManager(agents=agents, spawn_timeout=None, screen=screen) as terminals:
        for i in range(busy):
            await terminals.start(f"busy{i}", "busy")
        await terminals.start("echo", "echo")
        async with terminals.attach("echo") as viewer:
            await viewer.receive()  # the screen and status
            await anyio.sleep(1.0)  # let the busy terminals get going
            for i in range(keys):
                key = b"abcdefghijklmnopqrstuvwxyz"[i % 26 : i % 26 + 1]
                started = time.perf_counter()
                await terminals.send_input("echo", key)
                seen = b""
                while key not in seen:
                    seen = b"".join(x for x in await viewer.receive() if isinstance(x, bytes))
                samples.append(time.perf_counter() - started)
                if i % 26 == 25:
                    await terminals.send_input("echo", b"\r")
                    await viewer.receive()
                await anyio.sleep(0.005)
        busy_bytes = sum(terminals._sessions[f"busy{i}"].output_bytes for i in range(busy))
    samples.sort()
    log(f"terminals (j): {keys} keys, p99 {percentile(samples, 0.99) * 1e3:.2f} ms")
    return {
        "keys": keys,
        "busy_terminals": busy,
        "busy_bytes": busy_bytes,
        "p50_ms": percentile(samples, 0.5) * 1e3,
        "p99_ms": percentile(samples, 0.99) * 1e3,
        "max_ms": samples[-1] * 1e3,
    }


async def _idle_memory(count: int) -> dict[str, Any]:
    import tracemalloc

    from adapter.terminals import Agent, TerminalManager

    agent = Agent(name="idle", command="cat", install_hint="cat")
    async with TerminalManager(
        agents={"idle": agent}, max_sessions=count + 1, spawn_timeout=None
    ) as terminals:
        await terminals.start("warm", "idle")  # first-use imports and allocations
        await anyio.sleep(0.5)
        before = rss_bytes()
        tracemalloc.start()
        traced_before = tracemalloc.get_traced_memory()[0]
        for i in range(count):
            await terminals.start(f"idle{i}", "idle")
        await anyio.sleep(1.0)
        for i in range(count):
            terminals.screen_text(f"idle{i}")
        traced = tracemalloc.get_traced_memory()[0] - traced_before
        tracemalloc.stop()
        after = rss_bytes()
    return {
        "terminals": count,
        "rss_before": before,
        "rss_after": after,
        "rss_per_terminal": (after - before) / count,
        "per_terminal": traced / count,
    }


def measure_terminals(
    *, quick: bool, backend: str = "asyncio", log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Figures (i)-(k); see the module docstring."""
    size = (20 if quick else 200) * 1_000_000
    results: dict[str, Any] = {"file_bytes": size}
    with tempfile.TemporaryDirectory(prefix="bench-terminals-") as tmp:
        path = _make_file(Path(tmp), size)
        raw, raw_bytes = anyio.run(_raw_pty_rate, path, backend=backend)
        log(f"terminals (i): raw pty {raw / 1e6:.0f} MB/s")
        rows: dict[str, Any] = {"raw": {"bytes_per_s": raw, "bytes": raw_bytes}}
        for screen in (False, True):
            rate, total = _websocket_rate(path, screen=screen)
            key = "screen_on" if screen else "screen_off"
            rows[key] = {"bytes_per_s": rate, "bytes": total, "share_of_raw": rate / raw}
            log(f"terminals (i): websocket, {key}: {rate / 1e6:.0f} MB/s ({rate / raw:.0%})")
        raw_again, _ = anyio.run(_raw_pty_rate, path, backend=backend)
        rows["raw_after"] = {"bytes_per_s": raw_again}
        results["throughput"] = rows
    keys = 100 if quick else 400
    results["echo"] = {
        key: anyio.run(_echo_latency, keys, 20, log, screen, backend=backend)
        for key, screen in (("screen_off", False), ("screen_on", True))
    }
    results["memory"] = anyio.run(_idle_memory, 20 if quick else 50, backend=backend)
    log(f"terminals (k): {results['memory']['per_terminal'] / 1024:.0f} KiB per idle terminal")
    return results


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(measure_terminals(quick="--quick" in sys.argv), indent=1))
