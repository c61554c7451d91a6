"""The inbound half of the control plane: answering the CLI's control requests.

Mixed into :class:`~claudecode.session.Session`. Each request the CLI makes
(``can_use_tool``, ``hook_callback``, ``mcp_message``) runs its callback in its own task, so a
slow approval never blocks the stream; a failing callback answers with a denial or an error
instead of leaving the CLI waiting; an unknown subtype is refused so the CLI does not hang.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import anyio
import msgspec

from . import control as ctl
from ._log import get_logger
from ._tasks import TaskSet
from .callbacks import CanUseTool, HookCallback
from .errors import ClaudeCodeError
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


class InboundControl:
    """Callback dispatch for the CLI's control requests (a ``Session`` mixin)."""

    options: ClaudeCodeOptions
    _protocol: ClaudeCodeProtocol
    _tasks: TaskSet | None
    _handlers: dict[str, anyio.CancelScope]
    _can_use_tool: CanUseTool | None
    _hook_callbacks: dict[str, HookCallback]
    _mcp_servers: Mapping[str, SdkMcpServer]

    async def respond(self, response: ctl.OutboundControlResponse) -> None:
        raise NotImplementedError

    async def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _dispatch(self, req: InboundControlRequest) -> bool:
        """Run the callback for ``req`` in its own task; False when the consumer must answer."""
        body = req.request
        if isinstance(body, CanUseToolRequest):
            if self._can_use_tool is None:
                if self.options.permission_timeout is not None:
                    assert self._tasks is not None
                    self._tasks.spawn(self._permission_timer, req)
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
        try:
            response = await callback(req)
        except Exception as exc:
            _log.warning("can_use_tool.failed", request_id=req.request_id, error=repr(exc))
            response = req.deny(f"permission callback failed: {exc}")
        await self._respond_quietly(response)

    async def _answer_hook(self, req: InboundControlRequest) -> None:
        body = req.request
        assert isinstance(body, HookCallbackRequest)
        callback = self._hook_callbacks.get(body.callback_id)
        if callback is None:
            await self._respond_quietly(req.error(f"no hook callback with id {body.callback_id!r}"))
            return
        try:
            answer = await callback(req)
        except Exception as exc:
            _log.warning("hook_callback.failed", callback_id=body.callback_id, error=repr(exc))
            await self._respond_quietly(req.error(f"hook callback failed: {exc}"))
            return
        if answer is None:
            answer = req.success({})
        elif not isinstance(answer, ctl.OutboundControlResponse):
            answer = req.success(dict(answer))
        await self._respond_quietly(answer)

    async def _answer_mcp(self, req: InboundControlRequest) -> None:
        body = req.request
        assert isinstance(body, McpMessageRequest)
        server = self._mcp_servers.get(body.server_name)
        if server is None:
            await self._respond_quietly(req.error(f"no SDK MCP server named {body.server_name!r}"))
            return
        reply = await server.handle(body.message)
        await self._respond_quietly(req.success({"mcp_response": reply}))

    async def _permission_timer(self, req: InboundControlRequest) -> None:
        assert self.options.permission_timeout is not None
        await anyio.sleep(self.options.permission_timeout)
        if any(r.request_id == req.request_id for r in self._protocol.open_inbound_requests):
            _log.info("permission.timed_out", request_id=req.request_id)
            await self._respond_quietly(
                req.deny("no answer to the permission request in time", interrupt=True)
            )

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
        try:
            await self.respond(response)
        except ClaudeCodeError as exc:
            _log.debug("control_response.dropped", error=repr(exc))

    async def _write_quietly(self, data: bytes) -> None:
        with contextlib.suppress(ClaudeCodeError):
            await self._write(data)

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
