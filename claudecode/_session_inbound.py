"""The inbound half of the control plane: answering the CLI's control requests.

Mixed into :class:`~claudecode.session.Session`. Each request the CLI makes
(``can_use_tool``, ``hook_callback``, ``mcp_message``) runs its callback in its own task, so a
slow approval never blocks the stream; a failing callback answers with a denial or an error
instead of leaving the CLI waiting; an unknown subtype is refused so the CLI does not hang.

A permission request with no callback waits in the message stream for :meth:`respond`; with
``permission_timeout`` set it has a timer here, the one expiry of open permission requests:
when nobody answered in time, the caller's ``on_permission_timeout`` hears of it, then the
request is denied.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Final

import anyio
import msgspec

from . import control as ctl
from ._codec import encode_message
from ._log import get_logger
from ._tasks import TaskSet
from .callbacks import CanUseTool, HookCallback, PermissionTimeoutHook
from .errors import ClaudeCodeError, ControlTimeoutError
from .mcp import SdkMcpServer
from .messages import (
    CanUseToolRequest,
    HookCallbackRequest,
    InboundControlRequest,
    McpMessageRequest,
    UnknownMessage,
)
from .options import ClaudeCodeOptions
from .protocol import ClaudeCodeProtocol

__all__ = ("InboundControl",)

_log = get_logger("claudecode.session")


class _RequestIdOnly(msgspec.Struct):
    request_id: str = ""


_request_id_decoder = msgspec.json.Decoder(_RequestIdOnly)


#: Seconds a hook callback may take when its ``HookMatcher`` sets no ``timeout`` (the
#: CLI's own default for hooks).
DEFAULT_HOOK_TIMEOUT: Final = 60.0


def _answer_problem(req: InboundControlRequest, response: Any) -> str | None:
    """Why ``response`` cannot be sent as the answer to ``req`` (None when it can)."""
    if not isinstance(response, ctl.OutboundControlResponse):
        return f"returned {type(response).__name__}, not a response built from the request"
    if response.request_id != req.request_id:
        return f"answered request {response.request_id!r} instead of {req.request_id!r}"
    try:
        encode_message(response)
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        return f"returned an answer JSON cannot encode: {exc}"
    return None


@contextlib.contextmanager
def _answer_dropped_quietly() -> Iterator[None]:
    """An answer that cannot reach the CLI is logged, not raised: nobody waits for it."""
    try:
        yield
    except ControlTimeoutError as exc:
        _log.warning("control_response.dropped", error=str(exc))
    except ClaudeCodeError as exc:
        _log.debug("control_response.dropped", error=repr(exc))


class InboundControl:
    """Callback dispatch for the CLI's control requests (a ``Session`` mixin)."""

    options: ClaudeCodeOptions
    _protocol: ClaudeCodeProtocol
    _tasks: TaskSet | None
    _handlers: dict[str, anyio.CancelScope]
    _permission_timers: dict[str, anyio.CancelScope]
    _on_permission_timeout: PermissionTimeoutHook | None
    _exited: anyio.Event
    _closing: bool
    _can_use_tool: CanUseTool | None
    _hook_callbacks: dict[str, HookCallback]
    _hook_timeouts: dict[str, float | None]
    _mcp_servers: Mapping[str, SdkMcpServer]

    async def respond(self, response: ctl.OutboundControlResponse) -> None:
        raise NotImplementedError

    async def _write(
        self, data: bytes, *, timeout: float | None = None, what: str = "write"
    ) -> None:
        raise NotImplementedError

    def _dispatch(self, req: InboundControlRequest) -> bool:
        """Run the callback for ``req`` in its own task; False when the consumer must answer."""
        body = req.request
        if isinstance(body, CanUseToolRequest):
            if self._can_use_tool is None:
                if self.options.permission_timeout is not None:
                    assert self._tasks is not None
                    self._permission_timers[req.request_id] = self._tasks.spawn(
                        self._permission_timer, req, name=f"claudecode expiry {req.request_id}"
                    )
                return False
            self._spawn_handler(req, self._answer_permission(req, self._can_use_tool))
            return True
        if isinstance(body, HookCallbackRequest):
            self._spawn_handler(req, self._answer_hook(req))
            return True
        if isinstance(body, McpMessageRequest):
            self._spawn_handler(req, self._answer_mcp(req))
            return True
        return False

    def _spawn_handler(self, req: InboundControlRequest, coro: Any) -> None:
        assert self._tasks is not None

        async def run() -> None:
            try:
                await coro
            finally:
                self._handlers.pop(req.request_id, None)

        self._handlers[req.request_id] = self._tasks.spawn(
            run, name=f"claudecode control {req.request_id}"
        )

    async def _answer_permission(self, req: InboundControlRequest, callback: CanUseTool) -> None:
        limit = self.options.permission_timeout

        def deny(reason: str) -> ctl.OutboundControlResponse:
            # A callback that failed is denied without interrupting, so the model reads why
            # (the CLI replaces an interrupting denial's message with its own); one that never
            # answered stops the turn, like an unanswered prompt.
            timed_out = reason.startswith("did not answer")
            if timed_out:
                self._permission_timed_out(req)
            return req.deny(f"permission callback {reason}", interrupt=timed_out)

        await self._run_callback(req, "can_use_tool", lambda: callback(req), limit, deny)

    async def _answer_hook(self, req: InboundControlRequest) -> None:
        body = req.request
        assert isinstance(body, HookCallbackRequest)
        callback = self._hook_callbacks.get(body.callback_id)
        if callback is None:
            await self._respond_quietly(req.error(f"no hook callback with id {body.callback_id!r}"))
            return

        async def answer() -> Any:
            result = await callback(req)
            if result is None:
                return req.success({})
            if isinstance(result, Mapping):
                return req.success(dict(result))
            return result  # checked by _run_callback

        limit = self._hook_timeouts.get(body.callback_id) or DEFAULT_HOOK_TIMEOUT

        def error(reason: str) -> ctl.OutboundControlResponse:
            return req.error(f"hook callback {reason}")

        await self._run_callback(req, "hook_callback", answer, limit, error)

    async def _answer_mcp(self, req: InboundControlRequest) -> None:
        body = req.request
        assert isinstance(body, McpMessageRequest)
        server = self._mcp_servers.get(body.server_name)
        if server is None:
            await self._respond_quietly(req.error(f"no SDK MCP server named {body.server_name!r}"))
            return

        async def answer() -> ctl.OutboundControlResponse:
            return req.success({"mcp_response": await server.handle(body.message)})

        def error(reason: str) -> ctl.OutboundControlResponse:
            return req.error(f"SDK MCP server {body.server_name!r} {reason}")

        # The server bounds each tool call itself (SdkMcpServer.tool_timeout) and turns its
        # failures into tool errors; this bound is the last resort for the rest of handle().
        limit = server.tool_timeout + 5 if server.tool_timeout is not None else None
        await self._run_callback(req, "mcp_message", answer, limit, error)

    async def _run_callback(
        self,
        req: InboundControlRequest,
        kind: str,
        produce: Callable[[], Awaitable[Any]],
        limit: float | None,
        fallback: Callable[[str], ctl.OutboundControlResponse],
    ) -> None:
        """Answer ``req`` with what ``produce`` returns; whatever goes wrong (it raises, never
        returns within ``limit``, returns something that is not an answer to ``req`` or that
        JSON cannot encode), answer with ``fallback(reason)`` instead and log why."""
        reason: str | None = None
        response: Any = None
        with anyio.move_on_after(limit if limit is not None else math.inf) as scope:
            try:
                response = await produce()
            except Exception as exc:
                reason = f"failed: {type(exc).__name__}: {exc}"
        if scope.cancelled_caught:
            reason = f"did not answer within {limit:g} s"
        elif reason is None:
            reason = _answer_problem(req, response)
        if reason is not None:
            _log.warning(f"{kind}.failed", request_id=req.request_id, error=reason)
            response = fallback(reason)
        await self._respond_quietly(response)

    async def _permission_timer(self, req: InboundControlRequest) -> None:
        limit = self.options.permission_timeout
        assert limit is not None
        try:
            await anyio.sleep(limit)
        finally:
            self._permission_timers.pop(req.request_id, None)
        if self._exited.is_set() or self._closing:
            return  # nothing can be answered any more; closing denies what is open
        if self._protocol.open_inbound_request(req.request_id) is None:
            return  # answered or cancelled meanwhile (and the timer missed being stopped)
        # From here to the write nothing awaits: no answer can slip in between.
        response = req.deny("no answer to the permission request in time", interrupt=True)
        data = self._protocol.expire(response)
        _log.info("permission.timed_out", request_id=req.request_id)
        self._permission_timed_out(req)
        await self._deliver_quietly(data)

    def _permission_timed_out(self, req: InboundControlRequest) -> None:
        hook = self._on_permission_timeout
        if hook is None:
            return
        try:
            hook(req)
        except Exception as exc:  # the caller's bug must not keep the CLI waiting
            _log.warning(
                "permission.timeout_hook_failed", request_id=req.request_id, error=repr(exc)
            )

    def _stop_permission_timer(self, request_id: str) -> None:
        timer = self._permission_timers.pop(request_id, None)
        if timer is not None:
            timer.cancel()

    def _refuse_unknown_request(self, message: UnknownMessage) -> None:
        try:
            request_id = _request_id_decoder.decode(message.raw).request_id
        except msgspec.DecodeError:
            return
        if not request_id:
            return
        if message.reason is not None:  # a known subtype without an essential field
            text = f"malformed {message.subtype or 'control'} request: {message.reason}"
            _log.warning("control_request.malformed", request_id=request_id, error=text)
        else:
            text = f"Unsupported control request subtype: {message.subtype}"
        response = ctl.error_response(request_id, text)
        assert self._tasks is not None
        self._tasks.spawn(self._write_quietly, ctl.encode_raw(response))

    async def _respond_quietly(self, response: ctl.OutboundControlResponse) -> None:
        with _answer_dropped_quietly():
            await self.respond(response)

    async def _deliver_quietly(self, data: bytes) -> None:
        """Write an answer already encoded (and closed) by the protocol; log what fails."""
        with _answer_dropped_quietly():
            await self._write(data, timeout=self.options.control_timeout, what="control_response")

    async def _write_quietly(self, data: bytes) -> None:
        with contextlib.suppress(ClaudeCodeError):
            await self._write(data, timeout=self.options.control_timeout, what="control_response")

    async def _deny_open_requests(self, reason: str) -> None:
        for req in self._protocol.open_inbound_requests:
            if isinstance(req, InboundControlRequest) and isinstance(
                req.request, CanUseToolRequest
            ):
                response = req.deny(reason, interrupt=True)
            elif isinstance(req, InboundControlRequest):
                response = req.error(reason)
            else:
                continue
            with anyio.move_on_after(1):
                await self._respond_quietly(response)
