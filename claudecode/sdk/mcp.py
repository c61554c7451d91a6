"""``tool`` and ``create_sdk_mcp_server``: in-process MCP tools, the official SDK's way.

The server is the client's :class:`~claudecode.mcp.SdkMcpServer`: input schemas may be
JSON Schema or the shorthands (``{"a": float}``, a ``TypedDict``), and arguments are
validated before the handler runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypedDict, TypeVar

from ..errors import UsageError
from ..mcp import SdkMcpServer

__all__ = ("McpSdkServerConfig", "SdkMcpTool", "ToolAnnotations", "create_sdk_mcp_server", "tool")

T = TypeVar("T")


# The hints in either spelling: mcp 1.x names them in camelCase, 2.x in snake_case.
_HINTS = {
    "title": "title",
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
    "max_result_size_chars": "maxResultSizeChars",
}
_WIRE_HINTS = frozenset(_HINTS.values())
_META_SIZE = "anthropic/maxResultSizeChars"


class ToolAnnotations:
    """Hints about a tool (``readOnlyHint``, ``destructiveHint``, ...) plus Claude Code's
    ``maxResultSizeChars``: how long a result the CLI keeps inline.

    Takes each hint in either spelling (``readOnlyHint=True`` or ``read_only_hint=True``)
    and reads back in both. The hints are listed in ``tools/list`` as the tool's
    ``annotations``; ``maxResultSizeChars`` travels in its ``_meta``. An
    ``mcp.types.ToolAnnotations`` (or a plain dict) is accepted wherever this is.
    """

    def __init__(self, **data: Any) -> None:
        wire: dict[str, Any] = {}
        for key, value in data.items():
            name = _HINTS.get(key, key)
            if name not in wire or key == name:  # given both, the wire spelling wins
                wire[name] = value
        self._data = {k: v for k, v in wire.items() if v is not None}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        key = _HINTS.get(name, name)
        if key in _WIRE_HINTS or key in self._data:
            return self._data.get(key)
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolAnnotations) and self._data == other._data

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items(), key=lambda item: item[0])))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._data.items())
        return f"ToolAnnotations({fields})"

    def _wire(self) -> dict[str, Any]:
        return dict(self._data)


ToolAnnotations.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
        for name in _HINTS.values()
    ]
    + [inspect.Parameter("data", inspect.Parameter.VAR_KEYWORD)]
)


def wire_annotations(annotations: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(annotations, _meta)`` of a tool as ``tools/list`` gives them."""
    if annotations is None:
        return None, None
    if isinstance(annotations, ToolAnnotations):
        data = annotations._wire()
    elif isinstance(annotations, Mapping):
        data = ToolAnnotations(**{str(k): v for k, v in annotations.items()})._wire()
    elif callable(getattr(annotations, "model_dump", None)):  # mcp.types.ToolAnnotations
        data = annotations.model_dump(by_alias=True, mode="json", exclude_none=True)
    else:
        raise UsageError(
            f"annotations must be a ToolAnnotations or a dict, not {type(annotations).__name__}"
        )
    size = data.pop("maxResultSizeChars", None)
    meta = None if size is None else {_META_SIZE: size}
    return data, meta


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
        annotations, meta = wire_annotations(definition.annotations)
        server.add_tool(
            definition.name,
            definition.description,
            definition.input_schema,
            definition.handler,
            annotations=annotations,
            meta=meta,
        )
    return {"type": "sdk", "name": name, "instance": server}
