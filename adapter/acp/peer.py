"""The JSON-RPC side of the ACP agent: one peer over a line-delimited byte stream.

:class:`JsonRpcPeer` reads byte chunks from any async iterator and writes whole lines through
an async ``send`` callable. Each request runs in its own task (at most ``max_requests`` at
once; past that the reader waits and the pipe pushes back on the editor), so a long request
never blocks a cancel or an answer; every request gets a result or an error, never a stack
trace, and a bad frame never stops the peer. Requests of our own (:meth:`JsonRpcPeer.call`)
are matched with their responses. What the methods and notifications do is up to the owner
(the ACP agent), through the callables it passes in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from claudecode.internal import get_logger

from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Invalid,
    JsonRpcError,
    LineSplitter,
    Notification,
    Request,
    Response,
    encode_error,
    encode_request,
    encode_result,
    parse_frame,
)

__all__ = ("Handler", "JsonRpcPeer", "Outgoing", "Send", "Then")

_log = get_logger("claudecode.adapter.acp")

Send = Callable[[bytes], Awaitable[None]]
Handler = Callable[[Any], Awaitable[Any]]


async def _nothing() -> None:
    return None


async def _ignore(note: Notification) -> None:
    return None


def _unknown(exc: Exception) -> JsonRpcError | None:
    return None


@dataclass
class Then:
    """A result, and what to do once it was sent (start following a new session)."""

    result: Any
    after: Callable[[], None]


@dataclass
class Outgoing:
    """A request of ours: ``done`` is set when its response came (or it was withdrawn)."""

    done: anyio.Event = field(default_factory=anyio.Event)
    response: Response | None = None


class JsonRpcPeer:
    """Serves ``methods`` (name -> handler of the params) over a line-delimited stream.

    Args:
        send: writes whole lines.
        methods: the handlers; one returns the result, or a :class:`Then`.
        max_requests: requests served at once.
        on_notification: acts on a notification from the other side.
        known_error: the error to answer for an exception a handler may raise (``None``:
            a bug, answered ``Internal error`` and logged).
        on_shutdown: closes what the owner holds once the input has ended.
    """

    def __init__(
        self,
        send: Send,
        methods: dict[str, Handler],
        *,
        max_requests: int,
        on_notification: Callable[[Notification], Awaitable[None]] = _ignore,
        known_error: Callable[[Exception], JsonRpcError | None] = _unknown,
        on_shutdown: Callable[[], Awaitable[None]] = _nothing,
    ) -> None:
        self._send = send
        self._methods = methods
        self._on_notification = on_notification
        self._known_error = known_error
        self._on_shutdown = on_shutdown
        self._outgoing: dict[int, Outgoing] = {}
        self._next_id = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._limiter = anyio.Semaphore(max_requests)
        #: The requests being served, by id.
        self.running: dict[str | int, Request] = {}

    async def serve(self, chunks: AsyncIterator[bytes]) -> None:
        """Serve until ``chunks`` ends, then let ``on_shutdown`` close what is open."""
        splitter = LineSplitter()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                async for chunk in chunks:
                    for line in splitter.feed(chunk):
                        if line is None:
                            await self._send(
                                encode_error(None, INVALID_REQUEST, "Invalid request: too long")
                            )
                        else:
                            await self.handle_line(line)
            finally:
                with anyio.CancelScope(shield=True):
                    for out in self._outgoing.values():
                        out.done.set()
                    self._outgoing.clear()
                    await self._on_shutdown()
                tg.cancel_scope.cancel()

    def start_soon(
        self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any, name: str
    ) -> None:
        """Run ``func(*args)`` in the peer's task group (while :meth:`serve` runs)."""
        assert self._tg is not None
        self._tg.start_soon(func, *args, name=name)

    async def handle_line(self, line: bytes) -> None:
        """Act on one incoming line (requests run in their own task)."""
        frame = parse_frame(line)
        if isinstance(frame, Invalid):
            if frame.reply is not None:
                await self._send(frame.reply)
            else:
                _log.info("acp.frame_ignored", reason=frame.reason)
        elif isinstance(frame, Request):
            assert self._tg is not None
            # Bounded: past the limit the reader waits, and the pipe pushes back on the editor.
            await self._limiter.acquire()
            self._tg.start_soon(self._serve_request, frame)
        elif isinstance(frame, Notification):
            await self._on_notification(frame)
        elif isinstance(frame, Response):
            out = self._outgoing.pop(frame.id, None) if isinstance(frame.id, int) else None
            if out is not None:
                out.response = frame
                out.done.set()

    async def _serve_request(self, req: Request) -> None:
        self.running[req.id] = req
        try:
            await self._answer_request(req)
        finally:
            self.running.pop(req.id, None)
            self._limiter.release()

    async def _answer_request(self, req: Request) -> None:
        handler = self._methods.get(req.method)
        try:
            if handler is None:
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {req.method}")
            result = await handler(req.params)
        except JsonRpcError as exc:
            await self._send(encode_error(req.id, exc.code, exc.message, exc.data))
        except Exception as exc:
            known = self._known_error(exc)
            if known is None:  # never a stack trace to the client; the log has it
                _log.exception("acp.request_failed", method=req.method)
                known = JsonRpcError(INTERNAL_ERROR, f"Internal error: {exc}")
            await self._send(encode_error(req.id, known.code, known.message, known.data))
        else:
            after = None
            if isinstance(result, Then):
                result, after = result.result, result.after
            await self._send(encode_result(req.id, result))
            if after is not None:
                after()

    async def call(self, method: str, params: Any) -> tuple[int, Outgoing]:
        """Send a request of ours; its id, and where its response will be."""
        self._next_id += 1
        request_id = self._next_id
        out = Outgoing()
        self._outgoing[request_id] = out
        await self._send(encode_request(request_id, method, params))
        return request_id, out

    def withdraw(self, request_id: int) -> None:
        """Stop waiting for the response to one of our requests (its waiter wakes up)."""
        out = self._outgoing.pop(request_id, None)
        if out is not None:
            out.done.set()

    async def send(self, data: bytes) -> None:
        """Write whole lines."""
        await self._send(data)
