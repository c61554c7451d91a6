"""``tool`` and ``create_sdk_mcp_server``: in-process MCP tools, the official SDK's way.

The server is the client's :class:`~claudecode.mcp.SdkMcpServer`: input schemas may be
JSON Schema or the shorthands (``{"a": float}``, a ``TypedDict``), and arguments are
validated before the handler runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypedDict, TypeVar

from ..mcp import SdkMcpServer

__all__ = ("McpSdkServerConfig", "SdkMcpTool", "create_sdk_mcp_server", "tool")

T = TypeVar("T")


@dataclass
class SdkMcpTool(Generic[T]):
    """A tool for :func:`create_sdk_mcp_server`: its handler takes the arguments dict."""

    name: str
    description: str
    input_schema: type[T] | dict[str, Any]
    handler: Callable[[T], Awaitable[dict[str, Any]]]
    annotations: Any = None


class McpSdkServerConfig(TypedDict):
    """An in-process server for ``ClaudeAgentOptions.mcp_servers``."""

    type: Literal["sdk"]
    name: str
    instance: SdkMcpServer


def tool(
    name: str,
    description: str,
    input_schema: type | dict[str, Any],
    annotations: Any = None,
) -> Callable[[Callable[[Any], Awaitable[dict[str, Any]]]], SdkMcpTool[Any]]:
    """Decorator turning ``async def handler(args) -> {"content": [...]}`` into a tool.

    A handler may flag a failure with ``"is_error": True``; an exception it raises is
    reported to the model as an error result too.
    """

    def decorator(handler: Callable[[Any], Awaitable[dict[str, Any]]]) -> SdkMcpTool[Any]:
        return SdkMcpTool(name, description, input_schema, handler, annotations)

    return decorator


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: list[SdkMcpTool[Any]] | None = None
) -> McpSdkServerConfig:
    """An in-process MCP server to put in ``ClaudeAgentOptions.mcp_servers[name]``."""
    server = SdkMcpServer(name, version=version)
    for definition in tools or []:
        server.add_tool(
            definition.name, definition.description, definition.input_schema, definition.handler
        )
    return {"type": "sdk", "name": name, "instance": server}
