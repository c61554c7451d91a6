"""The streaming clients of the AG-UI benchmarks.

:func:`http_run` is one AG-UI run read with httpx (the throughput figure: one stream at a
time). :func:`lean_run` is one run spoken with ``h11`` straight from the socket's callbacks
(:class:`LeanStream`), for the latency figure: httpx costs ~115 µs of CPU per frame, as much
as the server, and 50 streams share two cores with it. ``python -m benchmarks.agui client
URL THREAD...`` (:func:`client_main`) is a latency client process: a first run on each thread,
``ready``, then on ``go`` one measured run on each thread at once, and the results as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from .agui_stages import STAGES_ENV, client_stamps_path

__all__ = (
    "LeanStream",
    "client_main",
    "delta_stamps",
    "http_client",
    "http_run",
    "lean_run",
    "run_body",
)

#: Called with each decoded event and the monotonic time (ns) its bytes were read.
OnEvent = Callable[[dict[str, Any], int], None]


def run_body(thread_id: str, text: str = "go") -> dict[str, Any]:
    """A RunAgentInput with one new user message."""
    return {
        "threadId": thread_id,
        "runId": uuid.uuid4().hex,
        "state": {},
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


async def http_run(
    client: Any, url: str, thread_id: str, on_event: OnEvent | None = None
) -> tuple[int, str]:
    """One AG-UI run on ``thread_id`` with httpx: (frames received, the terminal event)."""
    frames = 0
    loads, now = json.loads, time.monotonic_ns
    buffer = b""
    async with client.stream("POST", url + "/agui", json=run_body(thread_id)) as response:
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
                kind = event["type"]
                if on_event is not None:
                    on_event(event, stamp)
                if kind in ("RUN_FINISHED", "RUN_ERROR"):
                    return frames, kind
    return frames, "EOF"


def http_client(connections: int) -> Any:
    """An ``httpx.AsyncClient`` for ``connections`` streams at once."""
    import httpx

    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(timeout=600, limits=limits)


def delta_stamps(latencies: list[int], pairs: list[tuple[int, int]] | None = None) -> OnEvent:
    """An ``on_event`` that appends the latency (ns) of every stamped delta in a text frame
    (and ``(emitter stamp, read time)`` to ``pairs``, for the stage report)."""

    def on_event(event: dict[str, Any], stamp: int) -> None:
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            # Deltas read together from the CLI arrive as one frame: every stamp counts.
            for token in event["delta"].split():
                if token.startswith("t") and token[1:].isdigit():
                    latencies.append(stamp - int(token[1:]))
                    if pairs is not None:
                        pairs.append((int(token[1:]), stamp))

    return on_event


class LeanStream(asyncio.Protocol):
    """One AG-UI run over a connection of its own, spoken with ``h11`` straight from the
    socket's callbacks: an HTTP/1.1 streaming client that costs a fraction of httpx per
    frame, so that 50 streams read in one process measure the server, not the client."""

    def __init__(self, request: bytes, host: str, on_event: OnEvent | None) -> None:
        import h11

        self.h11 = h11
        self.conn = h11.Connection(our_role=h11.CLIENT)
        self.request = h11.Request(
            method="POST",
            target="/agui",
            headers=[
                ("Host", host),
                ("Content-Type", "application/json"),
                ("Accept", "text/event-stream"),
                ("Content-Length", str(len(request))),
            ],
        )
        self.body = request
        self.on_event = on_event
        self.buffer = b""
        self.frames = 0
        self.done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        send = self.conn.send
        transport.write(send(self.request) + send(self.h11.Data(data=self.body)))
        transport.write(send(self.h11.EndOfMessage()))

    def data_received(self, data: bytes) -> None:
        stamp = time.monotonic_ns()
        h11 = self.h11
        self.conn.receive_data(data)
        while not self.done.done():
            event = self.conn.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Response) and event.status_code != 200:
                self.done.set_exception(RuntimeError(f"the run failed: {event.status_code}"))
            elif isinstance(event, h11.Data):
                self._frames(bytes(event.data), stamp)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                self.done.set_result("EOF")

    def _frames(self, chunk: bytes, stamp: int) -> None:
        self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n\n")
        for frame in complete:
            if not frame.startswith(b"data: "):
                continue
            self.frames += 1
            event = json.loads(frame[6:])
            if self.on_event is not None:
                self.on_event(event, stamp)
            if event["type"] in ("RUN_FINISHED", "RUN_ERROR") and not self.done.done():
                self.done.set_result(event["type"])

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result("EOF")


async def lean_run(url: str, thread_id: str, on_event: OnEvent | None = None) -> tuple[int, str]:
    """One run with :class:`LeanStream`: (frames received, the terminal event)."""
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(run_body(thread_id)).encode()
    loop = asyncio.get_running_loop()
    transport, stream = await loop.create_connection(
        lambda: LeanStream(body, f"{host}:{port}", on_event), host, int(port)
    )
    try:
        end = await stream.done
    finally:
        transport.close()
    return stream.frames, end


def _write_stamps(path: str, pairs: list[tuple[int, int]]) -> None:
    with open(path, "w") as fh:  # after the measured runs: nothing waits on it
        json.dump(pairs, fh)


async def client_main(url: str, threads: list[str]) -> None:
    """A latency client process: first runs, ``ready``, wait for ``go``, measured runs,
    JSON on stdout (with ``--stages``, every delta's stamps to a file next to the
    server's)."""
    latencies: list[int] = []
    stages = os.environ.get(STAGES_ENV)
    pairs: list[tuple[int, int]] | None = [] if stages else None
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(lean_run(url, t) for t in threads))
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    cpu, started = time.process_time(), time.monotonic()
    on_event = delta_stamps(latencies, pairs)
    results = await asyncio.gather(*(lean_run(url, t, on_event) for t in threads))
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    if stages and pairs is not None:
        _write_stamps(client_stamps_path(stages, os.getpid()), pairs)
    print(
        json.dumps(
            {
                "frames": sum(frames for frames, _ in results),
                "ends": [end for _, end in results],
                "latencies": latencies,
                "seconds": elapsed,
                "cpu_s": cpu,
            }
        ),
        flush=True,
    )
