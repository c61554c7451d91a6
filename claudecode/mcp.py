"""In-process ("sdk") MCP servers, answered over the control plane's ``mcp_message``.

The CLI is told about such a server in ``--mcp-config`` as ``{"type": "sdk", "name": ...}``
and then tunnels the MCP JSON-RPC traffic to us as ``control_request``/``mcp_message``; the
session hands each message to the server's :meth:`SdkMcpServer.handle` and sends back the
reply as ``{"mcp_response": ...}``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec

from ._log import get_logger
from .mcp_schema import input_schema, validation_error

__all__ = ("McpTool", "SdkMcpServer", "ToolHandler")

_log = get_logger("claudecode.mcp")

#: A tool's implementation: takes the call's arguments, returns text, an MCP ``content``
#: list, or a whole MCP ``CallToolResult`` mapping; may be sync or async.
ToolHandler = Callable[[dict[str, Any]], Any]

_LATEST_PROTOCOL = "2025-06-18"

#: The default :attr:`SdkMcpServer.tool_timeout`: five minutes.
DEFAULT_TOOL_TIMEOUT = 300.0


@dataclass(frozen=True)
class McpTool:
    """One tool of an :class:`SdkMcpServer`."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: ToolHandler
    #: MCP tool annotations (``readOnlyHint``, ``title``, ...), listed as they are.
    annotations: Mapping[str, Any] | None = None
    #: The tool's ``_meta`` (``anthropic/maxResultSizeChars``: how long a result the CLI
    #: keeps inline instead of saving it to a file).
    meta: Mapping[str, Any] | None = None


@dataclass
class SdkMcpServer:
    """A minimal MCP server living in this process (tools only).

    Example::

        server = SdkMcpServer("fe")

        @server.tool("echo", "Echo text back", {"type": "object",
                     "properties": {"text": {"type": "string"}}, "required": ["text"]})
        async def echo(args):
            return f"echo: {args['text']}"
    """

    name: str
    version: str = "0.1.0"
    tools: dict[str, McpTool] = field(default_factory=dict)
    #: Seconds a tool call may take before it is answered as a tool error (``None``: no
    #: limit). A tool that raises, returns something JSON cannot encode or runs out of
    #: time becomes an ``isError`` result for the model, never a crash of the session.
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT

    def tool(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any] | type | None = None,
    ) -> Callable[[ToolHandler], ToolHandler]:
        """Decorator registering ``fn`` as the tool ``name``.

        ``input_schema`` is a JSON Schema or one of the shorthands of
        :mod:`claudecode.mcp_schema` (``{"a": float}``, a ``TypedDict``). Calls whose
        arguments do not match it are answered with a tool error, without calling ``fn``.
        """

        def register(fn: ToolHandler) -> ToolHandler:
            self.add_tool(name, description, input_schema, fn)
            return fn

        return register

    def add_tool(
        self,
        name: str,
        description: str,
        schema: Mapping[str, Any] | type | None,
        handler: ToolHandler,
        *,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpTool:
        """Register ``handler`` as the tool ``name`` (what :meth:`tool` does)."""
        tool = McpTool(name, description, input_schema(schema), handler, annotations, meta)
        self.tools[name] = tool
        return tool

    async def handle(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one JSON-RPC message; notifications get an empty result, as the SDK does."""
        method = message.get("method")
        msg_id = message.get("id", 0)
        params = message.get("params") or {}
        if not isinstance(params, Mapping):
            params = {}
        if method == "initialize":
            version = params.get("protocolVersion") or _LATEST_PROTOCOL
            return self._result(
                msg_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": self.name, "version": self.version},
                },
            )
        if isinstance(method, str) and method.startswith("notifications/"):
            return self._result(msg_id, {})
        if method == "tools/list":
            return self._result(msg_id, {"tools": [_listed(t) for t in self.tools.values()]})
        if method == "tools/call":
            return self._result(msg_id, await self._call(params))
        if method == "ping":
            return self._result(msg_id, {})
        return {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }

    async def _call(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return {"content": [{"type": "text", "text": f"unknown tool: {name}"}], "isError": True}
        arguments = params.get("arguments") or {}
        problem = validation_error(arguments, tool.input_schema)
        if problem is not None:
            return _error(f"Input validation error: {problem}")
        limit = self.tool_timeout
        value: Any = None
        # A sync handler runs inline (it cannot be timed out); an async one is bounded.
        with anyio.move_on_after(limit if limit is not None else math.inf) as scope:
            try:
                value = tool.handler(dict(arguments))
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                return self._tool_error(tool, f"{type(exc).__name__}: {exc}")
        if scope.cancelled_caught:
            return self._tool_error(tool, f"the tool did not answer within {limit:g} s")
        if isinstance(value, Mapping) and "content" in value:
            result = dict(value)
            # claude-agent-sdk's handlers flag errors as "is_error"; MCP spells it isError.
            if "is_error" in result:
                result["isError"] = bool(result.pop("is_error"))
        elif isinstance(value, list):
            result = {"content": value}
        else:
            result = {"content": [{"type": "text", "text": str(value)}]}
        try:
            msgspec.json.encode(result)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            return self._tool_error(tool, f"the tool returned a value JSON cannot encode: {exc}")
        return result

    def _tool_error(self, tool: McpTool, text: str) -> dict[str, Any]:
        _log.warning("mcp.tool_failed", server=self.name, tool=tool.name, error=text)
        return _error(text)

    @staticmethod
    def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _listed(tool: McpTool) -> dict[str, Any]:
    listed: dict[str, Any] = {"name": tool.name, "description": tool.description}
    listed["inputSchema"] = dict(tool.input_schema)
    if tool.annotations is not None:
        listed["annotations"] = dict(tool.annotations)
    if tool.meta:
        listed["_meta"] = dict(tool.meta)
    return listed


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
