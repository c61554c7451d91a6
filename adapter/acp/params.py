"""The params of the ACP methods the agent serves, as msgspec Structs (camelCase on the wire).

Unknown fields (``_meta``, later protocol additions) are ignored; a missing required field or
a wrong type is an invalid-params error. Also here: the editor's MCP servers in the CLI's
``--mcp-config`` form (:func:`cli_mcp_servers`) and a prompt's content blocks as the text and
images the CLI takes (:func:`prompt_input`).
"""

from __future__ import annotations

import urllib.parse
from typing import Any, TypeVar

import msgspec

from ..images import Image
from .jsonrpc import INVALID_PARAMS, JsonRpcError

__all__ = (
    "CancelParams",
    "cli_mcp_servers",
    "CloseParams",
    "decode_params",
    "InitializeParams",
    "ListSessionsParams",
    "LoadSessionParams",
    "NewSessionParams",
    "prompt_input",
    "PromptParams",
    "SetConfigOptionParams",
    "SetModeParams",
)


class _Params(msgspec.Struct, rename="camel", kw_only=True):
    pass


class InitializeParams(_Params):
    protocol_version: int
    client_capabilities: dict[str, Any] = {}
    client_info: dict[str, Any] | None = None


class NewSessionParams(_Params):
    cwd: str
    mcp_servers: list[dict[str, Any]] = []
    additional_directories: list[str] = []


class LoadSessionParams(_Params):
    """``session/load`` and ``session/resume`` (the same params)."""

    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] = []
    additional_directories: list[str] = []


class DeleteSessionParams(_Params):
    session_id: str


class ListSessionsParams(_Params):
    cwd: str | None = None
    cursor: str | None = None


class PromptParams(_Params):
    session_id: str
    prompt: list[dict[str, Any]]


class CancelParams(_Params):
    session_id: str


class CloseParams(_Params):
    session_id: str


class SetModeParams(_Params):
    session_id: str
    mode_id: str


class SetConfigOptionParams(_Params):
    session_id: str
    config_id: str
    value: str | bool


_T = TypeVar("_T")


def decode_params(params: Any, kind: type[_T]) -> _T:
    """``params`` as ``kind``, or :class:`JsonRpcError` ``-32602`` saying what is wrong."""
    if not isinstance(params, dict):
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: an object is required")
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None


def _pairs(items: Any, what: str) -> dict[str, str]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise JsonRpcError(INVALID_PARAMS, f"Invalid params: {what} must be a list")
    out: dict[str, str] = {}
    for item in items:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("value"), str)
        ):
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: {what} need name and value")
        out[item["name"]] = item["value"]
    return out


def cli_mcp_servers(servers: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """ACP ``McpServer`` entries as the CLI's ``mcpServers`` mapping (stdio, http, sse)."""
    out: dict[str, dict[str, Any]] = {}
    for server in servers:
        name = server.get("name")
        if not isinstance(name, str) or not name:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: an MCP server needs a name")
        kind = server.get("type", "stdio")
        if kind in ("http", "sse"):
            url = server.get("url")
            if not isinstance(url, str):
                raise JsonRpcError(INVALID_PARAMS, f"Invalid params: MCP server {name}: no url")
            out[name] = {
                "type": kind,
                "url": url,
                "headers": _pairs(server.get("headers"), "headers"),
            }
        elif kind == "stdio":
            command = server.get("command")
            args = server.get("args") or []
            if not isinstance(command, str) or not (
                isinstance(args, list) and all(isinstance(a, str) for a in args)
            ):
                raise JsonRpcError(
                    INVALID_PARAMS, f"Invalid params: MCP server {name}: command and args"
                )
            out[name] = {
                "type": "stdio",
                "command": command,
                "args": list(args),
                "env": _pairs(server.get("env"), "env"),
            }
        else:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: MCP server type {kind!r}")
    return out


def _file_path(uri: str) -> str:
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "file":
        return urllib.parse.unquote(parsed.path)
    return uri


def prompt_input(blocks: list[dict[str, Any]]) -> tuple[str, list[Image]]:
    """A prompt's content blocks as text plus ``(media_type, bytes)`` images.

    Text is joined; a ``resource_link`` becomes an ``@path`` mention (the CLI reads the file
    itself); an embedded text ``resource`` is inlined in a ``<context ref=...>`` block (so
    the editor's unsaved text is what the model sees); images are decoded. Audio and binary
    resources are refused (not advertised in the capabilities).
    """
    parts: list[str] = []
    images: list[Image] = []
    for block in blocks:
        if not isinstance(block, dict):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: a content block is an object")
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append("@" + _file_path(block["uri"]))
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            res = block["resource"]
            if not (isinstance(res.get("text"), str) and isinstance(res.get("uri"), str)):
                raise JsonRpcError(
                    INVALID_PARAMS, "Invalid params: only text resources can be embedded"
                )
            parts.append(f'<context ref="{res["uri"]}">\n{res["text"]}\n</context>')
        elif kind == "image":
            data, mime = block.get("data"), block.get("mimeType")
            if not (isinstance(data, str) and isinstance(mime, str)):
                raise JsonRpcError(INVALID_PARAMS, "Invalid params: an image needs data, mimeType")
            try:
                images.append(Image.from_base64(mime, data))
            except ValueError:
                raise JsonRpcError(
                    INVALID_PARAMS, "Invalid params: image data is not base64"
                ) from None
        else:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: unsupported content {kind!r}")
    if not parts and not images:
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: the prompt is empty")
    return "\n".join(parts), images
