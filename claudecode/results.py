"""The typed results of our control requests: the ``response`` payload of the CLI's answers.

They are lenient (every field optional, unknown keys ignored) because versions differ:
2.1.197 answers ``set_model`` and ``interrupt`` with no body at all. Use
:func:`parse_result` to convert a payload; a field of the wrong type is dropped and logged,
never a reason to refuse the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from ._codec.lenient import lenient_convert
from ._log import get_logger
from .errors import RemoteProtocolError

__all__ = (
    "AccountInfo",
    "AgentInfo",
    "ContextUsageResult",
    "InitializeResult",
    "InterruptResult",
    "McpStatusResult",
    "ModelInfo",
    "parse_result",
    "SetModelResult",
    "SetPermissionModeResult",
    "SlashCommand",
)


class _Result(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the lenient result structs."""


class SlashCommand(_Result, frozen=True):
    """A slash command the CLI offers."""

    name: str = ""
    description: str = ""
    argument_hint: str = msgspec.field(default="", name="argumentHint")
    builtin: bool | None = None


class AgentInfo(_Result, frozen=True):
    """An agent the CLI can run as a sub-agent."""

    name: str = ""
    description: str | None = None
    model: str | None = None


class ModelInfo(_Result, frozen=True, rename="camel"):
    """A model choice (``value`` is what ``set_model`` takes)."""

    value: str = ""
    resolved_model: str | None = None
    display_name: str | None = None
    description: str | None = None
    supports_effort: bool | None = None
    supported_effort_levels: list[str] | None = None


class AccountInfo(_Result, frozen=True, rename="camel"):
    """Who the CLI authenticates as (e.g. ``api_key_source="ANTHROPIC_API_KEY"``)."""

    token_source: str | None = None
    api_key_source: str | None = None
    api_provider: str | None = None
    email: str | None = None
    organization: str | None = None
    subscription_type: str | None = None


class InitializeResult(_Result, frozen=True):
    """The payload of the CLI's answer to :class:`Initialize`."""

    commands: list[SlashCommand] = msgspec.field(default_factory=list)
    agents: list[AgentInfo] = msgspec.field(default_factory=list)
    models: list[ModelInfo] = msgspec.field(default_factory=list)
    account: AccountInfo | None = None
    pid: int | None = None
    claude_code_version: str | None = None
    current_permission_mode: str | None = None
    output_style: str | None = None
    available_output_styles: list[str] | None = None
    #: ``True`` when the CLI accepted the hooks sent in :class:`Initialize`.
    hooks_applied: bool | None = None
    #: ``True`` when the CLI honours ``onFailure`` on hook matchers.
    hook_on_failure_supported: bool | None = None
    session_state: str | None = None
    capabilities: list[str] | None = None
    fast_mode_state: str | None = None


class SetModelResult(_Result, frozen=True):
    """The payload of the answer to :class:`SetModel` (2.1.197 sends no payload)."""

    model: str | None = None


class SetPermissionModeResult(_Result, frozen=True):
    """The payload of the answer to :class:`SetPermissionMode`."""

    mode: str | None = None


class McpStatusResult(_Result, frozen=True):
    """The payload of the answer to :class:`McpStatus`; servers kept as plain JSON."""

    mcp_servers: list[dict[str, Any]] = msgspec.field(default_factory=list, name="mcpServers")


class InterruptResult(_Result, frozen=True):
    """The payload of the answer to :class:`Interrupt` (2.1.197 sends no payload)."""

    still_queued: list[Any] = msgspec.field(default_factory=list)


class ContextUsageResult(_Result, frozen=True, rename="camel"):
    """The payload of the answer to :class:`GetContextUsage` (the main numbers only)."""

    categories: list[dict[str, Any]] = msgspec.field(default_factory=list)
    total_tokens: int | None = None
    max_tokens: int | None = None
    raw_max_tokens: int | None = None
    percentage: float | None = None
    model: str | None = None
    auto_compact_threshold: int | None = None
    is_auto_compact_enabled: bool | None = None


_R = TypeVar("_R")


def parse_result(result_type: type[_R], payload: Mapping[str, Any] | None) -> _R:
    """Convert the ``response`` payload of a :class:`ControlSuccess` into ``result_type``.

    A missing payload (``None``) gives the all-defaults result. Fields of the wrong type are
    dropped (they keep their defaults) and logged as a warning, like lines that decode only
    leniently: an answer is never refused for a field nobody needs.

    Raises:
        RemoteProtocolError: the payload is not a JSON object.
    """
    if payload is not None and not isinstance(payload, Mapping):
        raise RemoteProtocolError(
            f"control response payload is not a JSON object: {type(payload).__name__}"
        )
    try:
        return msgspec.convert(dict(payload or {}), type=result_type)
    except msgspec.ValidationError as exc:
        try:
            result, repairs = lenient_convert(payload or {}, result_type)
        except (ValueError, msgspec.ValidationError) as err:
            raise RemoteProtocolError(
                f"control response payload is not a valid {result_type.__name__}: {exc}"
            ) from err
        get_logger("claudecode.control").warning(
            "control_result.repaired", result_type=result_type.__name__, repairs=list(repairs)
        )
        return result  # type: ignore[no-any-return]
