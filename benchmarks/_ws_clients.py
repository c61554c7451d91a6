"""The WebSocket benchmark's clients: sans-IO ``websockets`` connections on asyncio
(:func:`_open`), the subscriber that timestamps every event it reads, the child process that
runs a share of them (``python -m benchmarks.ws clients``, :func:`_client_process`) and its
handle in the parent (:class:`_ClientProcess`). :mod:`benchmarks.cluster` uses them too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ("CLIENT_NICE", "CLIENT_PROCESSES")

#: The child processes the streaming runs spread their clients over.
CLIENT_PROCESSES = 4
#: Their niceness: the clients stand in for browsers on other machines, so the server under
#: test (and the CLIs beside it) get the CPU first; the clients' own delay in reading a frame
#: still counts in every latency. On this 2-core machine they would otherwise take as much
#: CPU as the server, exactly when it needs it.
CLIENT_NICE = 10


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
