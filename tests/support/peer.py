"""A CLI peer in memory: a real :class:`claudecode.Transport` whose other end is the test.

For tests that must decide exactly when each line reaches the session (interleavings of
requests, answers, cancellations and time), which a CLI process cannot promise. The test
writes the CLI's lines with :meth:`MemoryPeer.emit` and reads what the session wrote from
:attr:`MemoryPeer.written`; everything between (framing, decoding, the session's tasks) is the
real code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from claudecode import Transport

__all__ = ("MemoryPeer", "can_use_tool_line", "control_cancel_line")


def can_use_tool_line(
    request_id: str,
    tool_input: dict[str, Any] | None = None,
    *,
    tool_name: str = "Bash",
    tool_use_id: str | None = None,
) -> dict[str, Any]:
    """A ``can_use_tool`` control request as the CLI writes it."""
    body: dict[str, Any] = {
        "subtype": "can_use_tool",
        "tool_name": tool_name,
        "input": tool_input if tool_input is not None else {"command": "ls"},
    }
    if tool_use_id is not None:
        body["tool_use_id"] = tool_use_id
    return {"type": "control_request", "request_id": request_id, "request": body}


def control_cancel_line(request_id: str) -> dict[str, Any]:
    """The CLI withdrawing its request ``request_id``."""
    return {"type": "control_cancel_request", "request_id": request_id}


class MemoryPeer(Transport):
    """The session's stdout and stdin as memory channels; the test plays the CLI."""

    def __init__(self, on_line: Callable[[dict[str, Any]], None] | None = None) -> None:
        #: Called with each line the session writes, as it is written (to see what the
        #: session had done by then).
        self.on_line = on_line
        # Unbounded on purpose: the test writes a handful of lines and never reads back.
        self._out, self._in = anyio.create_memory_object_stream[bytes](float("inf"))
        #: Every JSON line the session wrote, decoded, in order.
        self.written: list[dict[str, Any]] = []
        self._ended = anyio.Event()
        self._returncode: int | None = None
        self._input_closed = False

    def emit(self, *messages: dict[str, Any]) -> None:
        """Write lines to the session in one chunk (one read, one batch), as the CLI's
        stdout would."""
        self._out.send_nowait(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def responses(self, request_id: str) -> list[dict[str, Any]]:
        """The bodies of the ``control_response`` lines the session wrote for ``request_id``."""
        return [
            line["response"]
            for line in self.written
            if line.get("type") == "control_response"
            and line["response"].get("request_id") == request_id
        ]

    def end(self, returncode: int = 0) -> None:
        """The CLI exits: its output ends."""
        if self._returncode is None:
            self._returncode = returncode
        self._out.close()
        self._ended.set()

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        return None

    async def send(self, data: bytes) -> None:
        if self._input_closed:
            raise anyio.BrokenResourceError
        for line in data.splitlines():
            if line.strip():
                self.written.append(json.loads(line))
                if self.on_line is not None:
                    self.on_line(self.written[-1])

    async def receive(self) -> bytes:
        try:
            return await self._in.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._in.close()
            return b""

    async def close_input(self) -> None:
        self._input_closed = True
        self.end()  # a CLI whose input ends exits

    async def aclose(self, *, force: bool = False) -> None:
        self._input_closed = True
        self.end(-9 if force else 0)

    async def wait(self) -> int | None:
        await self._ended.wait()
        return self._returncode

    @property
    def returncode(self) -> int | None:
        return self._returncode
