"""An ``mcp.server.Server`` (the ``mcp`` package's low-level server, or FastMCP's) served
in process, as the SDK accepts in ``mcp_servers={"x": {"type": "sdk", "instance": server}}``.

The server runs its own ``Server.run`` over a pair of in-memory streams, in a detached task
started on the first message; each JSON-RPC message from the CLI is handed to it and a
request waits for the response with its id. Requests the server makes of the client
(sampling, roots, elicitation) are refused at once; its notifications are dropped. ``mcp``
is optional: without it no such instance can exist, and this module is never needed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._detached import DetachedTask, spawn_detached
from .._log import get_logger
from ..mcp import SdkMcpServer

__all__ = ("McpServerBridge", "is_mcp_server")

_log = get_logger("claudecode.sdk")
_NOT_SUPPORTED = {"code": -32601, "message": "not supported by this client"}
_GONE = {"code": -32603, "message": "the MCP server stopped"}


#: Where the ``mcp`` package defines ``Server``. The package is imported only once a
#: program has made a server of its own: importing it (pydantic models by the hundred) took
#: ~0.4 s, and every ``import claudecode.sdk`` and ``claudecode-bridge`` command paid it.
_SERVER_MODULE = "mcp.server.lowlevel.server"


def is_mcp_server(instance: object) -> bool:
    """Whether ``instance`` is an ``mcp.server.Server`` (False without ``mcp``).

    An instance exists only after its module was imported, so a program that never imported
    ``mcp`` has none, and this check does not import it either."""
    module = sys.modules.get(_SERVER_MODULE)
    server = getattr(module, "Server", None)
    return isinstance(server, type) and isinstance(instance, server)


def _parse(message: Mapping[str, Any]) -> Any:
    # Only reached with a server in hand: ``mcp`` is already imported.
    import mcp.types as mcp_types
    from mcp.shared.message import SessionMessage

    if hasattr(mcp_types, "jsonrpc_message_adapter"):  # mcp 2.x: a plain union
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(dict(message)))
    legacy: Any = mcp_types.JSONRPCMessage  # mcp 1.x: a RootModel
    return SessionMessage(legacy.model_validate(dict(message)))


def _dump(item: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


class McpServerBridge(SdkMcpServer):
    """An :class:`~claudecode.mcp.SdkMcpServer` whose messages go to an mcp ``Server``."""

    def __init__(self, name: str, server: Any) -> None:
        super().__init__(name)
        self._server = server
        self._pending: dict[Any, tuple[anyio.Event, list[dict[str, Any]]]] = {}
        self._to_server: MemoryObjectSendStream[Any] | None = None
        self._task: DetachedTask | None = None
        self._ready: anyio.Event | None = None
        self._ended = False

    async def handle(self, message: Mapping[str, Any]) -> dict[str, Any]:
        msg_id = message.get("id")
        if self._task is None:
            self._ready = anyio.Event()
            self._task = spawn_detached(self._run(), name=f"mcp server {self.name}")
        assert self._ready is not None
        await self._ready.wait()
        is_request = msg_id is not None and "method" in message
        if self._ended or self._to_server is None:
            return {"jsonrpc": "2.0", "id": msg_id or 0, "error": _GONE}
        try:
            parsed = _parse(message)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            return {
                "jsonrpc": "2.0",
                "id": msg_id or 0,
                "error": {"code": -32600, "message": str(exc)},
            }
        if not is_request:
            await self._to_server.send(parsed)
            return {"jsonrpc": "2.0", "id": msg_id or 0, "result": {}}
        done, answer = anyio.Event(), list[dict[str, Any]]()
        self._pending[msg_id] = (done, answer)
        try:
            await self._to_server.send(parsed)
            await done.wait()
        finally:
            self._pending.pop(msg_id, None)
        return answer[0]

    async def aclose(self) -> None:
        """Stop the server (its ``run`` ends once its input does) and wait for it."""
        if self._to_server is not None:
            self._to_server.close()
        if self._task is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._task.wait()
            self._task.cancel()

    async def _run(self) -> None:
        to_server, server_input = anyio.create_memory_object_stream[Any](16)
        server_output, from_server = anyio.create_memory_object_stream[Any](16)
        self._to_server = to_server
        assert self._ready is not None
        self._ready.set()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._serve, server_input, server_output)
                async with from_server:
                    async for item in from_server:
                        await self._deliver(item)
        except Exception as exc:
            _log.warning("sdk.mcp_server_failed", server=self.name, error=repr(exc))
        finally:
            self._ended = True
            for done, answer in list(self._pending.values()):
                answer.append({"jsonrpc": "2.0", "id": 0, "error": _GONE})
                done.set()

    async def _serve(
        self,
        server_input: MemoryObjectReceiveStream[Any],
        server_output: MemoryObjectSendStream[Any],
    ) -> None:
        async with server_output:
            await self._server.run(
                server_input,
                server_output,
                self._server.create_initialization_options(),
                raise_exceptions=False,
            )

    async def _deliver(self, item: Any) -> None:
        if isinstance(item, Exception):
            return
        data = _dump(item)
        if "method" not in data:  # a response to one of the CLI's requests
            slot = self._pending.get(data.get("id"))
            if slot is not None:
                slot[1].append(data)
                slot[0].set()
            return
        if "id" in data and self._to_server is not None:
            # The server asks something of the client: nobody here can answer it.
            refusal = {"jsonrpc": "2.0", "id": data["id"], "error": _NOT_SUPPORTED}
            await self._to_server.send(_parse(refusal))
