"""Shapes of message payloads in ``claude-agent-sdk``: message origins, the ``init``
system message's data, task and model usage, rate-limit and task statuses.

Declarations only, mirrored from claude-agent-sdk 0.2.189 (MIT licence, Copyright (c)
2025 Anthropic, PBC; see ``LICENSE-claude-agent-sdk`` beside this file) so that programs
which annotate with these names import them from ``claudecode.sdk.types`` unchanged.
tests/claudecode/test_sdk_surface.py compares them with the installed SDK.
"""

from typing import Literal, NotRequired, Required, TypedDict

from .permissions import PermissionMode

ServerToolName = Literal[
    "advisor",
    "web_search",
    "web_fetch",
    "code_execution",
    "bash_code_execution",
    "text_editor_code_execution",
    "tool_search_tool_regex",
    "tool_search_tool_bm25",
]


AssistantMessageError = Literal[
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
]


MessageOriginKind = Literal[
    "human",
    "channel",
    "peer",
    "task-notification",
    "coordinator",
    "unclassified",
    "observer",
    "auto-continuation",
    "observer-activity",
]


TaskNotificationOriginSubkind = Literal["scheduled-trigger", "peer-send-message"]


MessageOrigin = TypedDict(
    "MessageOrigin",
    {
        "kind": Required[MessageOriginKind],
        "server": str,
        "from": str,
        "name": str,
        "fromSession": str,
        "senderTaskId": str,
        "body": str,
        "verifiedPeerPid": int,
        "subkind": TaskNotificationOriginSubkind,
    },
    total=False,
)


class SystemInitMcpServer(TypedDict):
    """An MCP server listed in :class:`SystemInitData`."""

    name: str
    status: str
    source: NotRequired[str]


class SystemInitPlugin(TypedDict):
    """A loaded plugin listed in :class:`SystemInitData`."""

    name: str
    path: str
    version: NotRequired[str]


class SystemInitPluginError(TypedDict):
    """A plugin load failure listed in :class:`SystemInitData`."""

    plugin: str
    type: str
    message: str
    path: NotRequired[str]


FastModeState = Literal["off", "cooldown", "on"]


FastModeDisabledReason = Literal[
    "free",
    "preference",
    "extra_usage_disabled",
    "network_error",
    "unknown",
    "not_first_party",
    "disabled_by_env",
    "model_not_allowed",
    "sdk_opt_in_required",
    "pending",
]


class SystemInitData(TypedDict):
    """Shape of :attr:`SystemMessage.data` for a ``system``/``init`` message."""

    type: Literal["system"]
    subtype: Literal["init"]
    uuid: str
    session_id: str
    agents: NotRequired[list[str]]
    apiKeySource: str
    betas: NotRequired[list[str]]
    claude_code_version: str
    cwd: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    model: str
    permissionMode: PermissionMode
    slash_commands: list[str]
    terminal_slash_commands: NotRequired[list[str]]
    output_style: str
    skills: list[str]
    plugins: list[SystemInitPlugin]
    plugin_errors: NotRequired[list[SystemInitPluginError]]
    fast_mode_state: NotRequired[FastModeState]
    fast_mode_disabled_reason: NotRequired[FastModeDisabledReason]
    capabilities: NotRequired[list[str]]


class TaskUsage(TypedDict):
    """Usage statistics reported in task_progress and task_notification messages."""

    total_tokens: int
    tool_uses: int
    duration_ms: int


TaskNotificationStatus = Literal["completed", "failed", "stopped"]


TaskUpdatedStatus = Literal["pending", "running", "paused", "completed", "failed", "killed"]


TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})


class ModelUsage(TypedDict):
    """Per-model token usage and cost breakdown."""

    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int
    canonicalModel: NotRequired[str]
    provider: NotRequired[str]


RateLimitStatus = Literal["allowed", "allowed_warning", "rejected"]


RateLimitType = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "overage"]
