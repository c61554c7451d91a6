"""``ClaudeAgentOptions`` and ``AgentDefinition``, as ``claude-agent-sdk`` spells them.

:func:`session_args` turns them into what :class:`claudecode.Session` takes: a
:class:`~claudecode.ClaudeCodeOptions` (the CLI flags, with the official SDK's defaults),
the permission callback, the hooks and the in-process MCP servers. Every field is checked
when the options are built: a wrong type is a :class:`~claudecode.UsageError`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._option_check import check_callable, check_mapping, check_number, check_str
from ..errors import UsageError
from ..mcp import SdkMcpServer
from ..options import ClaudeCodeOptions
from ._mcp_bridge import McpServerBridge, is_mcp_server
from ._types_config import (
    EffortLevel,
    McpServerConfig,
    SandboxSettings,
    SdkBeta,
    SdkPluginConfig,
    SettingSource,
    SystemPromptCustom,
    SystemPromptFile,
    SystemPromptPreset,
    TaskBudget,
    ThinkingConfig,
    ToolsPreset,
)
from ._types_sessions import SessionStore, SessionStoreFlushMode
from .permissions import CanUseTool, HookEvent, HookMatcher, PermissionMode

if TYPE_CHECKING:
    from ._bridge import SessionArgs

__all__ = ("AgentDefinition", "ClaudeAgentOptions")


@dataclass
class AgentDefinition:
    """A sub-agent the model can delegate to (sent in ``initialize``)."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None
    model: str | None = None
    skills: list[str] | None = None
    memory: Literal["user", "project", "local"] | None = None
    mcpServers: list[str | dict[str, Any]] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: str | int | None = None
    permissionMode: PermissionMode | None = None


@dataclass
class ClaudeAgentOptions:
    """Options of a query or client, field for field those of ``claude-agent-sdk``.

    Every field of the SDK is here; :mod:`claudecode.sdk` lists the few that behave
    differently.
    """

    tools: list[str] | ToolsPreset | None = None
    allowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | SystemPromptPreset | SystemPromptCustom | SystemPromptFile | None = None
    mcp_servers: dict[str, McpServerConfig] | str | Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    permission_mode: PermissionMode | None = None
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    fallback_model: str | None = None
    betas: list[SdkBeta] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cwd: str | Path | None = None
    cli_path: str | Path | None = None
    settings: str | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    extra_args: dict[str, str | None] = field(default_factory=dict)
    max_buffer_size: int | None = None
    debug_stderr: Any = sys.stderr
    stderr: Callable[[str], None] | None = None
    can_use_tool: CanUseTool | None = None
    hooks: dict[HookEvent, list[HookMatcher]] | None = None
    user: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    verbatim_prompts: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    agents: dict[str, AgentDefinition] | None = None
    setting_sources: list[SettingSource] | None = None
    skills: list[str] | Literal["all"] | None = None
    sandbox: SandboxSettings | None = None
    plugins: list[SdkPluginConfig] = field(default_factory=list)
    max_thinking_tokens: int | None = None
    thinking: ThinkingConfig | None = None
    effort: EffortLevel | None = None
    output_format: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    session_store: SessionStore | None = None
    session_store_flush: SessionStoreFlushMode = "batched"
    load_timeout_ms: int = 60000
    task_budget: TaskBudget | None = None
    client_app: str | None = None

    def __post_init__(self) -> None:
        session_args(self)


def session_args(options: ClaudeAgentOptions) -> SessionArgs:
    """Check ``options`` and turn them into the client's session arguments."""
    from ._bridge import SessionArgs, wrap_can_use_tool, wrap_hooks

    check_callable("can_use_tool", options.can_use_tool)
    check_number("max_buffer_size", options.max_buffer_size, integer=True, minimum=1)
    if options.can_use_tool is not None and options.permission_prompt_tool_name:
        raise UsageError(
            "can_use_tool callback cannot be used with permission_prompt_tool_name. "
            "Please use one or the other."
        )
    mcp_config, servers = _mcp(options.mcp_servers)
    env = dict(check_mapping("env", options.env))
    # What the official SDK tells the CLI about its host, so the CLI behaves the same.
    env.setdefault("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    if options.client_app is not None:
        check_str("client_app", options.client_app)
        env["CLAUDE_AGENT_SDK_CLIENT_APP"] = options.client_app  # names the app to the API
    extra: dict[str, str | None] = dict(check_mapping("extra_args", options.extra_args))
    task_budget = None
    if options.task_budget is not None:
        task_budget = check_mapping("task_budget", options.task_budget, required={"total": int})
    agents = None
    if options.agents is not None:
        agents = {
            name: {k: v for k, v in asdict(agent).items() if v is not None}
            if isinstance(agent, AgentDefinition)
            else agent
            for name, agent in check_mapping("agents", options.agents).items()
        }
    client_options = ClaudeCodeOptions(
        cli_path=options.cli_path,
        cwd=options.cwd,
        env=env,
        user=options.user,
        stderr=options.stderr,
        model=options.model,
        fallback_model=options.fallback_model,
        permission_mode=options.permission_mode,
        permission_prompt_tool_name=options.permission_prompt_tool_name,
        include_partial_messages=options.include_partial_messages,
        include_hook_events=options.include_hook_events,
        continue_conversation=options.continue_conversation,
        resume=options.resume or None,
        resume_session_at=options.resume_session_at or None,
        resume_drops_turn=options.resume_drops_turn,
        forward_subagent_text=options.forward_subagent_text,
        verbatim_prompts=options.verbatim_prompts,
        enable_file_checkpointing=options.enable_file_checkpointing,
        task_budget=None if task_budget is None else task_budget["total"],
        fork_session=options.fork_session,
        session_id=options.session_id or None,
        mcp_config=mcp_config,
        strict_mcp_config=options.strict_mcp_config,
        tools=options.tools,
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
        # The official SDK starts the CLI with an empty system prompt unless given one.
        system_prompt="" if options.system_prompt is None else options.system_prompt,
        max_turns=options.max_turns or None,
        max_budget_usd=options.max_budget_usd,
        max_thinking_tokens=options.max_thinking_tokens,
        thinking=options.thinking,
        effort=options.effort,
        betas=options.betas,
        output_format=_output_format(options.output_format),
        setting_sources=options.setting_sources,
        settings=options.settings,
        sandbox=options.sandbox,
        plugins=options.plugins,
        skills=options.skills,
        agents=agents,
        add_dirs=options.add_dirs,
        extra_args=extra,
        max_line_bytes=options.max_buffer_size or ClaudeCodeOptions.max_line_bytes,
    )
    return SessionArgs(
        options=client_options,
        can_use_tool=wrap_can_use_tool(options.can_use_tool),
        hooks=wrap_hooks(options.hooks),
        mcp_servers=servers,
    )


def _output_format(value: dict[str, Any] | None) -> dict[str, Any] | None:
    # The official SDK ignores anything but a json_schema format with a schema.
    if isinstance(value, dict) and value.get("type") == "json_schema" and "schema" in value:
        return value
    if value is not None and not isinstance(value, dict):
        raise UsageError(f"output_format must be a dict, not {type(value).__name__}")
    return None


def _mcp(
    servers: dict[str, Any] | str | Path,
) -> tuple[str | Path | dict[str, Any] | None, list[SdkMcpServer]]:
    """Split ``mcp_servers`` into the CLI's ``--mcp-config`` and in-process servers."""
    if isinstance(servers, str | os.PathLike):
        return servers, []
    external: dict[str, Any] = {}
    in_process: list[SdkMcpServer] = []
    for name, config in check_mapping("mcp_servers", servers).items():
        check_mapping(f"mcp_servers[{name!r}]", config)
        if config.get("type") == "sdk":
            instance = config.get("instance")
            if is_mcp_server(instance):
                # Built with the mcp package (or FastMCP): served through its own run().
                instance = McpServerBridge(name, instance)
            if not isinstance(instance, SdkMcpServer):
                raise UsageError(
                    f"mcp_servers[{name!r}] must come from create_sdk_mcp_server() "
                    "or be an mcp.server.Server"
                )
            # The CLI knows the server by its key (tools are mcp__<key>__<tool>).
            in_process.append(instance if instance.name == name else replace(instance, name=name))
        else:
            external[name] = config
    return ({"mcpServers": external} if external else None), in_process
