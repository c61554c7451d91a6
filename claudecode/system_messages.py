"""``system`` lines from the CLI, one class per ``subtype``.

Every class here is a ``{"type": "system", "subtype": ...}`` line. They form their own union
tagged on ``"subtype"``; the codec recognises ``"type": "system"`` first and then decodes the
line a second time with that union (system lines are rare, so the second pass is cheap).
An unknown subtype is not an error: it comes out as
:class:`~claudecode.messages.UnknownMessage`.

Fields are lenient: almost everything is optional, because the CLI versions differ
(2.1.197 sends fewer keys than 2.1.332) and unknown keys are ignored. Encoding one of these
(e.g. in a fake CLI) through :func:`claudecode._codec.encode_message` adds the
``"type": "system"`` key.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

from .lenient_info import LENIENT_KEY, Lenient

__all__ = (
    "CompactMetadata",
    "known_system_subtypes",
    "McpServerInfo",
    "SystemApiRetry",
    "SystemBackgroundTasksChanged",
    "SystemCompactBoundary",
    "SystemElicitationComplete",
    "SystemFilesPersisted",
    "SystemHookProgress",
    "SystemHookResponse",
    "SystemHookStarted",
    "SystemInformational",
    "SystemInit",
    "SystemLocalCommandOutput",
    "SystemMessage",
    "SystemMessageUnion",
    "SystemPermissionDenied",
    "SystemStatus",
    "SystemTaskNotification",
    "SystemTaskProgress",
    "SystemTaskStarted",
    "SystemTaskUpdated",
    "SystemThinkingTokens",
    "TaskUsage",
)


class SystemMessage(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="subtype", omit_defaults=True
):
    """Base class of every ``system`` line (``isinstance(msg, SystemMessage)``)."""

    #: Set when the line only decoded after repairs (see :class:`~claudecode.lenient_info.Lenient`).
    lenient: Lenient | None = msgspec.field(default=None, name=LENIENT_KEY)

    session_id: str | None = None
    uuid: str | None = None


class McpServerInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One MCP server in ``system/init``: ``status`` is e.g. ``"connected"``."""

    name: str
    status: str | None = None
    #: ``"sdk"`` for servers served by the host over ``mcp_message``.
    source: str | None = None


class SystemInit(SystemMessage, frozen=True, tag="init"):
    """Session facts, sent once per turn (after each user message, not at startup)."""

    cwd: str | None = None
    model: str | None = None
    #: The CLI's tool names (note: ``Task`` here is ``Agent`` in the API request).
    tools: list[str] = msgspec.field(default_factory=list)
    mcp_servers: list[McpServerInfo] = msgspec.field(default_factory=list)
    permission_mode: str | None = msgspec.field(default=None, name="permissionMode")
    slash_commands: list[str] | None = None
    api_key_source: str | None = msgspec.field(default=None, name="apiKeySource")
    claude_code_version: str | None = None
    output_style: str | None = None
    agents: list[Any] | None = None
    skills: list[Any] | None = None
    plugins: list[Any] | None = None
    capabilities: list[Any] | None = None
    betas: list[Any] | None = None
    memory_paths: dict[str, Any] | None = None
    additional_directories: list[Any] | None = None
    fast_mode_state: str | None = None


class SystemStatus(SystemMessage, frozen=True, tag="status"):
    """Status change: ``"requesting"`` before an API call, ``None`` after a mode change."""

    status: str | None = None
    permission_mode: str | None = msgspec.field(default=None, name="permissionMode")
    user_message_uuids: list[str] | None = None


class CompactMetadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Why and at what size the conversation was compacted."""

    trigger: str | None = None
    pre_tokens: int | None = None


class SystemCompactBoundary(SystemMessage, frozen=True, tag="compact_boundary"):
    """The conversation was compacted here."""

    compact_metadata: CompactMetadata | None = None


class TaskUsage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Running totals of a sub-agent task."""

    total_tokens: int | None = None
    tool_uses: int | None = None
    duration_ms: int | None = None


class SystemTaskStarted(SystemMessage, frozen=True, tag="task_started"):
    """A sub-agent task started; ``tool_use_id`` is the parent ``Agent`` tool call."""

    task_id: str | None = None
    run_id: str | None = None
    tool_use_id: str | None = None
    description: str | None = None
    subagent_type: str | None = None
    task_type: str | None = None
    prompt: str | None = None
    is_backgrounded: bool | None = None
    spawn_depth: int | None = None


class SystemTaskProgress(SystemMessage, frozen=True, tag="task_progress"):
    """Progress of a sub-agent task."""

    task_id: str | None = None
    run_id: str | None = None
    tool_use_id: str | None = None
    description: str | None = None
    subagent_type: str | None = None
    usage: TaskUsage | None = None
    last_tool_name: str | None = None


class SystemTaskUpdated(SystemMessage, frozen=True, tag="task_updated"):
    """Fields of a task changed; ``patch`` is e.g. ``{"status": "completed", "end_time": ...}``."""

    task_id: str | None = None
    run_id: str | None = None
    patch: dict[str, Any] = msgspec.field(default_factory=dict)


class SystemTaskNotification(SystemMessage, frozen=True, tag="task_notification"):
    """A sub-agent task finished (``status`` ``"completed"``, ``"failed"``, ``"stopped"``)."""

    task_id: str | None = None
    run_id: str | None = None
    tool_use_id: str | None = None
    status: str | None = None
    output_file: str | None = None
    summary: str | None = None
    summary_is_report: bool | None = None
    usage: TaskUsage | None = None


class SystemBackgroundTasksChanged(SystemMessage, frozen=True, tag="background_tasks_changed"):
    """The set of background tasks changed; ``tasks`` kept as plain JSON."""

    tasks: list[Any] = msgspec.field(default_factory=list)


class SystemFilesPersisted(SystemMessage, frozen=True, tag="files_persisted"):
    """Files were uploaded/persisted (``files`` and ``failed`` kept as plain JSON)."""

    files: list[Any] = msgspec.field(default_factory=list)
    failed: list[Any] = msgspec.field(default_factory=list)
    processed_at: str | None = None


class SystemHookStarted(SystemMessage, frozen=True, tag="hook_started"):
    """A configured hook started running."""

    hook_id: str | None = None
    hook_name: str | None = None
    hook_event: str | None = None


class SystemHookProgress(SystemMessage, frozen=True, tag="hook_progress"):
    """Output of a running hook so far."""

    hook_id: str | None = None
    hook_name: str | None = None
    hook_event: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    output: str | None = None


class SystemHookResponse(SystemMessage, frozen=True, tag="hook_response"):
    """A hook finished; ``outcome`` is e.g. ``"success"``, ``"error"``, ``"cancelled"``."""

    hook_id: str | None = None
    hook_name: str | None = None
    hook_event: str | None = None
    output: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    exit_code: int | None = None
    outcome: str | None = None


class SystemApiRetry(SystemMessage, frozen=True, tag="api_retry"):
    """The CLI will retry a failed API request (``error`` e.g. ``"overloaded"``)."""

    attempt: int | None = None
    max_retries: int | None = None
    retry_delay_ms: float | None = None
    error_status: int | None = None
    error: str | None = None


class SystemPermissionDenied(SystemMessage, frozen=True, tag="permission_denied"):
    """A tool call was denied without asking (no ``--permission-prompt-tool stdio``)."""

    tool_name: str | None = None
    tool_use_id: str | None = None
    message: str | None = None


class SystemThinkingTokens(SystemMessage, frozen=True, tag="thinking_tokens"):
    """Estimated thinking tokens so far, sent while thinking deltas stream."""

    estimated_tokens: int | None = None
    estimated_tokens_delta: int | None = None


class SystemElicitationComplete(SystemMessage, frozen=True, tag="elicitation_complete"):
    """An MCP elicitation finished."""

    mcp_server_name: str | None = None
    elicitation_id: str | None = None


class SystemLocalCommandOutput(SystemMessage, frozen=True, tag="local_command_output"):
    """Output of a local slash command."""

    content: str | None = None


class SystemInformational(SystemMessage, frozen=True, tag="informational"):
    """A notice from the CLI, e.g. a hook callback whose answer was treated as empty.

    Seen from 2.1.332: ``{"subtype": "informational", "content": "PreToolUse: Hook callback
    hook_0 failed: ...", "level": "warning", "tag": "hook_callback_failed"}``.
    """

    content: str | None = None
    level: str | None = None
    tag: str | None = None


#: Every known ``system`` line, tagged by ``"subtype"``.
SystemMessageUnion: TypeAlias = (
    SystemInit
    | SystemStatus
    | SystemCompactBoundary
    | SystemTaskStarted
    | SystemTaskProgress
    | SystemTaskUpdated
    | SystemTaskNotification
    | SystemBackgroundTasksChanged
    | SystemFilesPersisted
    | SystemHookStarted
    | SystemHookProgress
    | SystemHookResponse
    | SystemApiRetry
    | SystemPermissionDenied
    | SystemThinkingTokens
    | SystemElicitationComplete
    | SystemLocalCommandOutput
    | SystemInformational
)

_SUBTYPES: Final = frozenset(
    (
        "init",
        "status",
        "compact_boundary",
        "task_started",
        "task_progress",
        "task_updated",
        "task_notification",
        "background_tasks_changed",
        "files_persisted",
        "hook_started",
        "hook_progress",
        "hook_response",
        "api_retry",
        "permission_denied",
        "thinking_tokens",
        "elicitation_complete",
        "local_command_output",
        "informational",
    )
)


def known_system_subtypes() -> frozenset[str]:
    """Return the ``system`` subtypes that decode into a specific class."""
    return _SUBTYPES
