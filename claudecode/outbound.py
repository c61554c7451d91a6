"""Outbound messages (us -> CLI): what we write on the CLI's stdin, one JSON object per line.

* :class:`UserInput` -- a prompt (``{"type": "user", "message": {...}, ...}``);
* :class:`OutboundControlRequest` -- ``{"type": "control_request", "request_id": ..., "request":
  {"subtype": ..., ...}}`` with one body struct per subtype (:class:`Initialize`,
  :class:`Interrupt`, ...), plus :class:`RawControl` to send any subtype at all;
* :class:`OutboundControlResponse` -- our answer to a request of the CLI
  (``{"type": "control_response", "response": {"subtype": "success"|"error", "request_id": ...}}``).
  Build these with the reply helpers on :class:`~claudecode.messages.InboundControlRequest`
  rather than by hand;
* :class:`OutboundControlCancelRequest`, :class:`OutboundKeepAlive`,
  :class:`UpdateEnvironmentVariables`.

Field names are Python-style; where the wire spells a key in camelCase (``serverName``,
``sdkMcpServers``, ``updatedInput`` ...) the struct field carries the wire name. Optional
fields left at their default are not written. The typed results of our control requests are
:mod:`claudecode.results`; :mod:`claudecode.control` gathers both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .content import ContentBlock, UnknownBlock, known_block_types
from .errors import UsageError

__all__ = (
    "ApplyFlagSettings",
    "ControlFailure",
    "ControlRequestBody",
    "ControlResponseBody",
    "ControlSuccess",
    "error_response",
    "GetContextUsage",
    "Initialize",
    "Interrupt",
    "McpMessage",
    "McpReconnect",
    "McpSetServers",
    "McpStatus",
    "McpToggle",
    "OutboundControlCancelRequest",
    "OutboundControlRequest",
    "OutboundControlResponse",
    "OutboundKeepAlive",
    "OutboundMessage",
    "RawControl",
    "RewindFiles",
    "SetMaxThinkingTokens",
    "SetModel",
    "SetPermissionMode",
    "StopTask",
    "UpdateEnvironmentVariables",
    "user_message",
    "UserInput",
    "UserInputMessage",
)


# --------------------------------------------------------------------------- user input


class UserInputMessage(msgspec.Struct, frozen=True, kw_only=True):
    """The ``message`` of a :class:`UserInput`: a string or content blocks (text, images)."""

    content: str | list[ContentBlock]
    role: str = "user"


class _Outbound(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of the top-level outbound messages."""


class UserInput(_Outbound, frozen=True, tag="user", omit_defaults=False):
    """A user prompt.

    ``parent_tool_use_id`` and ``session_id`` are always written (the CLI ignores our
    ``session_id``; ``"default"`` is what the SDKs send). Set ``uuid`` to have the CLI echo it
    back in ``user_message_uuids`` and ``command_lifecycle`` lines. ``client_composed``
    asks the CLI to deliver the text as written (no ``@path`` expansion, no slash commands).
    """

    message: UserInputMessage
    parent_tool_use_id: str | None = None
    session_id: str = "default"
    uuid: str | UnsetType = UNSET
    client_composed: bool | UnsetType = UNSET
    #: Where the prompt comes from (``{"kind": "human"}`` is the kind a host may stamp);
    #: the CLI hands it back on the turn's result.
    origin: dict[str, Any] | UnsetType = UNSET


def _to_block(item: Mapping[str, Any] | ContentBlock) -> ContentBlock:
    if isinstance(item, msgspec.Struct):
        if not isinstance(item, ContentBlock):
            raise UsageError(f"{type(item).__name__} is not a content block")
        return item
    if not isinstance(item, Mapping):
        raise UsageError(f"a content block must be a mapping or a block struct, not {item!r}")
    block_type = item.get("type")
    if not isinstance(block_type, str):
        raise UsageError(f"content block without a string 'type': {item!r}")
    if block_type not in known_block_types():
        # Sent as given: encode_message writes an UnknownBlock as its original object.
        return UnknownBlock(block_type=block_type, data=dict(item))
    try:
        block: ContentBlock = msgspec.convert(dict(item), type=ContentBlock)
        return block
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid {block_type!r} content block: {exc}") from exc


def user_message(
    prompt: str | Sequence[Mapping[str, Any] | ContentBlock],
    *,
    uuid: str | None = None,
    parent_tool_use_id: str | None = None,
    client_composed: bool = False,
    origin: Mapping[str, Any] | None = None,
) -> UserInput:
    """Build a :class:`UserInput` from text or content blocks.

    Blocks may be given as structs (:class:`~claudecode.content.TextBlock`,
    :class:`~claudecode.content.ImageBlock` ...) or as plain mappings in Messages-API shape
    (``{"type": "image", "source": {...}}``). A mapping of a block type this version does not
    know is sent unchanged.

    Raises:
        UsageError: a block is not a mapping or block struct, or a known block type has the
            wrong fields.
    """
    content = prompt if isinstance(prompt, str) else [_to_block(item) for item in prompt]
    return UserInput(
        message=UserInputMessage(content=content),
        parent_tool_use_id=parent_tool_use_id,
        uuid=UNSET if uuid is None else uuid,
        client_composed=True if client_composed else UNSET,
        origin=UNSET if origin is None else dict(origin),
    )


# ------------------------------------------------------------------ control request bodies


class _Req(msgspec.Struct, frozen=True, kw_only=True, tag_field="subtype", omit_defaults=True):
    """Base of the bodies of our control requests."""


class Initialize(_Req, frozen=True, tag="initialize"):
    """Register hooks, agents, SDK MCP servers and prompts; answered by :class:`InitializeResult`.

    ``hooks`` maps an event name to matchers, e.g.
    ``{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_1"]}]}``.
    """

    hooks: dict[str, Any] | None = None
    agents: dict[str, Any] | None = None
    #: Names of the in-process MCP servers the host serves over ``mcp_message``.
    sdk_mcp_servers: list[str] | None = msgspec.field(default=None, name="sdkMcpServers")
    system_prompt: str | None = msgspec.field(default=None, name="systemPrompt")
    append_system_prompt: str | None = msgspec.field(default=None, name="appendSystemPrompt")
    json_schema: dict[str, Any] | None = msgspec.field(default=None, name="jsonSchema")
    #: Skill names the session may use (absent: every skill the CLI finds).
    skills: list[str] | None = None
    exclude_dynamic_sections: bool | None = msgspec.field(
        default=None, name="excludeDynamicSections"
    )
    forward_subagent_text: bool | None = msgspec.field(default=None, name="forwardSubagentText")
    #: Keep the system prompt as first built for the whole session (preset or custom).
    system_prompt_snapshot: bool | None = msgspec.field(default=None, name="systemPromptSnapshot")


class Interrupt(_Req, frozen=True, tag="interrupt"):
    """Stop the running turn; answered by :class:`InterruptResult`."""


class SetPermissionMode(_Req, frozen=True, tag="set_permission_mode"):
    """Change the permission mode (``default``, ``acceptEdits``, ``plan``, ...)."""

    mode: str


class SetModel(_Req, frozen=True, tag="set_model", omit_defaults=False):
    """Change the model; ``None`` (written as ``null``) returns to the default model."""

    model: str | None = None


class SetMaxThinkingTokens(_Req, frozen=True, tag="set_max_thinking_tokens", omit_defaults=False):
    """Change the thinking budget; ``None`` (written as ``null``) removes the limit."""

    max_thinking_tokens: int | None = None


class ApplyFlagSettings(_Req, frozen=True, tag="apply_flag_settings"):
    """Change settings of the running session in the CLI's flag-settings layer (the one
    ``--settings`` fills: above the user and project files, written to none of them), from
    the next model request on; answered with no body.

    ``settings`` uses the keys of Claude Code's settings files, e.g. ``{"effortLevel":
    "low"}``; a key set to ``None`` (written as ``null``) leaves the layer, so the setting
    falls back to the files' or the model's default. The CLI refuses a body that is not an
    object, and drops a value its settings schema does not accept without saying so: check
    values before sending them (:meth:`~claudecode.Session.set_effort` does).
    """

    settings: dict[str, Any]


class McpStatus(_Req, frozen=True, tag="mcp_status"):
    """Ask for the MCP servers' status; answered by :class:`McpStatusResult`."""


class McpMessage(_Req, frozen=True, tag="mcp_message"):
    """Send a JSON-RPC message to an MCP server managed by the CLI."""

    server_name: str
    message: dict[str, Any]


class McpReconnect(_Req, frozen=True, tag="mcp_reconnect"):
    """Reconnect an MCP server."""

    server_name: str = msgspec.field(name="serverName")


class McpToggle(_Req, frozen=True, tag="mcp_toggle"):
    """Enable or disable an MCP server."""

    server_name: str = msgspec.field(name="serverName")
    enabled: bool


class McpSetServers(_Req, frozen=True, tag="mcp_set_servers"):
    """Replace the dynamic MCP server configuration (name -> config)."""

    servers: dict[str, Any]


class RewindFiles(_Req, frozen=True, tag="rewind_files", omit_defaults=False):
    """Restore files to their state at a user message (``dry_run`` only reports)."""

    user_message_id: str
    dry_run: bool = False


class GetContextUsage(_Req, frozen=True, tag="get_context_usage"):
    """Ask for the context-window breakdown; answered by :class:`ContextUsageResult`."""


class StopTask(_Req, frozen=True, tag="stop_task"):
    """Stop a background task (sub-agent) by id."""

    task_id: str


#: Every control request body with a class of its own, tagged by ``"subtype"``.
ControlRequestBody: TypeAlias = (
    Initialize
    | Interrupt
    | SetPermissionMode
    | SetModel
    | SetMaxThinkingTokens
    | ApplyFlagSettings
    | McpStatus
    | McpMessage
    | McpReconnect
    | McpToggle
    | McpSetServers
    | RewindFiles
    | GetContextUsage
    | StopTask
)


class RawControl:
    """Escape hatch: a control request body of any ``subtype`` with a free-form payload.

    Encodes as ``{"subtype": subtype, **payload}``. Use it for subtypes this version has no
    class for (and in tests, for subtypes the CLI does not know). Only
    :func:`claudecode._codec.encode_message` knows how to encode it.
    """

    __slots__ = ("payload", "subtype")

    def __init__(self, subtype: str, payload: Mapping[str, Any] | None = None) -> None:
        self.subtype = subtype
        self.payload: dict[str, Any] = dict(payload or {})

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object to write as the request body."""
        return {**self.payload, "subtype": self.subtype}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawControl):
            return NotImplemented
        return self.subtype == other.subtype and self.payload == other.payload

    def __hash__(self) -> int:
        return hash(self.subtype)

    def __repr__(self) -> str:
        return f"RawControl(subtype={self.subtype!r}, payload={self.payload!r})"


class OutboundControlRequest(_Outbound, frozen=True, tag="control_request"):
    """A control request from us; ``request_id`` is ours to allocate and unique per session."""

    request_id: str
    request: ControlRequestBody | RawControl


# ---------------------------------------------------------------- control responses


class _Resp(msgspec.Struct, frozen=True, kw_only=True, tag_field="subtype", omit_defaults=True):
    """Base of the ``response`` of a ``control_response``."""


class ControlSuccess(_Resp, frozen=True, tag="success"):
    """A successful answer to the request ``request_id``; ``response`` is its payload.

    The same shape is used in both directions. 2.1.332 adds ``pending_permission_requests``
    and ``pending_user_dialog_requests`` next to ``response`` in its answer to ``initialize``.
    """

    request_id: str
    response: dict[str, Any] | None = None
    pending_permission_requests: list[Any] | None = None
    pending_user_dialog_requests: list[Any] | None = None


class ControlFailure(_Resp, frozen=True, tag="error"):
    """A failed answer to the request ``request_id``.

    ``error_code`` is machine-readable when present (2.1.332: ``unsupported_request``,
    ``invalid_mode``; 2.1.197 sends none).
    """

    request_id: str
    error: str
    error_code: str | None = None


#: The ``response`` of a ``control_response``, tagged by ``"subtype"``.
ControlResponseBody: TypeAlias = ControlSuccess | ControlFailure


class OutboundControlResponse(_Outbound, frozen=True, tag="control_response"):
    """Our answer to a control request of the CLI (``request_id`` is inside ``response``)."""

    response: ControlResponseBody

    @property
    def request_id(self) -> str:
        """The id of the request this answers."""
        return self.response.request_id


def error_response(request_id: str, message: str) -> OutboundControlResponse:
    """Build an error answer to the CLI's request ``request_id`` (any subtype, even unknown)."""
    return OutboundControlResponse(response=ControlFailure(request_id=request_id, error=message))


class OutboundControlCancelRequest(_Outbound, frozen=True, tag="control_cancel_request"):
    """Withdraw one of our pending control requests."""

    request_id: str


class OutboundKeepAlive(_Outbound, frozen=True, tag="keep_alive"):
    """A no-op line that keeps the connection alive."""


class UpdateEnvironmentVariables(_Outbound, frozen=True, tag="update_environment_variables"):
    """Set environment variables in the running CLI process."""

    variables: dict[str, str]


#: Everything we write to the CLI.
OutboundMessage: TypeAlias = (
    UserInput
    | OutboundControlRequest
    | OutboundControlResponse
    | OutboundControlCancelRequest
    | OutboundKeepAlive
    | UpdateEnvironmentVariables
)
