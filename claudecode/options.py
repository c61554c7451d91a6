"""Session options: everything a session needs, checked when built.

:class:`ClaudeCodeOptions` holds what to put on the CLI's command line, how to run the
process, and the client's own limits and timeouts. :meth:`ClaudeCodeOptions.to_argv` turns it
into the argument list (never a shell string; the flags are spelled in
:mod:`claudecode._cli_args`); the checks made at construction are in
:mod:`claudecode._option_rules`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from ._cli_args import BASE_FLAGS, EFFORT_LEVELS, PERMISSION_MODES, SETTING_SOURCES, build_argv
from ._framing import DEFAULT_MAX_LINE_BYTES
from ._option_rules import validate_options
from .errors import UsageError

__all__ = (
    "BASE_FLAGS",
    "ClaudeCodeOptions",
    "EFFORT_LEVELS",
    "PERMISSION_MODES",
    "SETTING_SOURCES",
    "SdkPluginConfig",
    "SystemPromptFile",
    "SystemPromptPreset",
    "ThinkingConfig",
    "ToolsPreset",
)


class SystemPromptPreset(TypedDict):
    """Claude Code's own system prompt, optionally with text appended."""

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    #: Move per-machine sections (cwd, git status...) out of the system prompt.
    exclude_dynamic_sections: NotRequired[bool]
    #: Keep the prompt as first built for the whole session.
    snapshot: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """A system prompt read from a file (``--system-prompt-file``)."""

    type: Literal["file"]
    path: str


class ToolsPreset(TypedDict):
    """Claude Code's default set of built-in tools."""

    type: Literal["preset"]
    preset: Literal["claude_code"]


class SdkPluginConfig(TypedDict):
    """A plugin loaded from a local directory (``--plugin-dir``)."""

    type: Literal["local"]
    path: str


#: ``{"type": "adaptive"}``, ``{"type": "enabled", "budget_tokens": N}`` or
#: ``{"type": "disabled"}``, each but the last with an optional ``"display"``.
ThinkingConfig: TypeAlias = Mapping[str, Any]

#: A string, or a :class:`SystemPromptPreset`, :class:`SystemPromptFile` or
#: ``{"type": "custom", "prompt": ...}`` mapping.
SystemPrompt: TypeAlias = str | Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class ClaudeCodeOptions:
    """What to run and how. Every field has a working default; a wrong type is a
    :class:`~claudecode.errors.UsageError` at construction.

    The fields shared with ``claude-agent-sdk``'s ``ClaudeAgentOptions`` have its names and
    meaning.

    Permission prompts:
        permission_prompt_tool_name: who answers the CLI's permission prompts. ``None``
            (default): over stdio when the session has a ``can_use_tool`` callback, and
            otherwise nobody — the CLI decides by its permission mode and allow / deny rules,
            and denies what would need a prompt, so code that never reads control requests
            cannot hang on the first tool that needs approval. ``"stdio"``: always over stdio;
            without a callback the requests arrive in the message stream as
            :class:`~claudecode.messages.InboundControlRequest`, to answer with
            ``session.respond(...)`` (what the event adapter does). Any other value names an
            MCP tool that answers (``--permission-prompt-tool``).

    CLI flags:
        model: ``--model``; fallback_model: ``--fallback-model``.
        permission_mode: ``--permission-mode`` (one of :data:`PERMISSION_MODES`).
        include_partial_messages: ``--include-partial-messages`` (token-level
            ``stream_event`` lines); on by default.
        include_hook_events: ``--include-hook-events``.
        replay_user_messages: ``--replay-user-messages``.
        continue_conversation: ``--continue`` (the most recent session in ``cwd``).
        resume: ``--resume=<session id>``; resume_session_at: ``--resume-session-at=<uuid>``;
            fork_session: ``--fork-session``; session_id: ``--session-id=<uuid>`` (the id of
            a new session); resume_drops_turn: ``--resume-drops-turn=<uuid>`` (the resume
            must drop exactly that turn, or fail).
        mcp_config: ``--mcp-config``: a path, a JSON string, or a mapping (encoded as JSON).
            In-process SDK servers passed to the session are merged into it. A session
            passes inline JSON (here and in ``settings``) through a private temporary file
            (0600, removed at close), never on the command line where tokens would show.
            strict_mcp_config: ``--strict-mcp-config`` (only those servers).
        tools: the built-in tools available (``--tools``): a list of names (``[]``: none) or
            ``{"type": "preset", "preset": "claude_code"}`` (the default set).
        allowed_tools / disallowed_tools: ``--allowedTools`` / ``--disallowedTools``
            (permission rules, not availability).
        system_prompt: a string replaces Claude Code's system prompt (``--system-prompt``);
            ``{"type": "preset", "preset": "claude_code", "append": "..."}`` keeps it and
            appends (``--append-system-prompt``); ``{"type": "file", "path": ...}`` reads it
            from a file (``--system-prompt-file``); ``{"type": "custom", "prompt": ...}`` is
            the same as the string. append_system_prompt: ``--append-system-prompt``.
        max_turns: ``--max-turns``; max_budget_usd: ``--max-budget-usd`` (the turn ends with
            ``error_max_budget_usd`` once spent); task_budget: ``--task-budget`` (tokens the
            model is told it may spend on the task).
        thinking: ``{"type": "adaptive"}`` (``--thinking adaptive``), ``{"type": "enabled",
            "budget_tokens": N}`` (``--max-thinking-tokens N``) or ``{"type": "disabled"}``,
            optionally with ``"display"`` (``--thinking-display``); it takes precedence over
            max_thinking_tokens (``--max-thinking-tokens``). effort: ``--effort`` (one of
            :data:`EFFORT_LEVELS`).
        betas: ``--betas`` (API key users only).
        output_format: ``{"type": "json_schema", "schema": {...}}``: structured output
            (``--json-schema``); the result message carries ``structured_output``.
        setting_sources: which settings files load (``--setting-sources``: ``user``,
            ``project``, ``local``); ``None`` leaves the CLI's default.
        settings: ``--settings`` (path or JSON string); sandbox: sandbox settings merged
            into it (``{"enabled": True, ...}``).
        plugins: ``[{"type": "local", "path": ...}]``, one ``--plugin-dir`` each.
        skills: ``"all"`` or a list of skill names: each is allowed (``Skill(name)`` in
            ``--allowedTools``), the list is sent in ``initialize``, and setting_sources
            defaults to ``["user", "project"]`` so the CLI finds them.
        forward_subagent_text: sub-agents' text and thinking arrive as messages with
            ``parent_tool_use_id`` (sent in ``initialize``).
        enable_file_checkpointing: keep file checkpoints for ``rewind_files``
            (``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING``).
        verbatim_prompts: every prompt :meth:`Session.send` writes is marked
            ``client_composed``: the CLI delivers it as written, without ``@path`` file
            expansion or slash commands (for text the user did not type).
        agents: sub-agent definitions by name (``{"description": ..., "prompt": ...,
            "tools": [...], "model": ...}``), sent in ``initialize``.
        add_dirs: one ``--add-dir`` each.
        extra_args: flags this class does not know: a list appended verbatim, or a mapping
            ``{"flag": "value" | None}`` as ``claude-agent-sdk`` takes it (a value starting
            with ``-`` is sent as ``--flag=value``).

    Process:
        cli_path: the executable; when ``None`` it is discovered (see ``find_cli``).
        cwd: working directory of the CLI (default: ours).
        env: added to the inherited environment (``CLAUDECODE`` is always removed, so a
            session started from inside Claude Code does not think it is nested).
        inherit_env: start from ``os.environ`` (default) or from an empty environment.
        user: run the CLI as this user (needs the privilege to switch users).
        stderr: called with each line the CLI writes on stderr (in the transport's task; it
            must not block). The last lines are kept for errors either way.

    Client limits:
        initialize: send the ``initialize`` control request on open (default ``True``).
        spawn_timeout: seconds the CLI may stay silent after our first write before the
            watchdog ends it with :class:`~claudecode.errors.CLIStartError`.
        control_timeout: seconds to wait for the answer to a control request, writing it
            included; also bounds writing our answers to the CLI's requests.
        close_grace: seconds to let the CLI exit after stdin is closed, before SIGTERM.
        kill_after: seconds between SIGTERM and SIGKILL.
        max_line_bytes: the longest stdout line accepted (longer ones are skipped and
            reported as ``MalformedLine(reason="too_long")``).
        permission_timeout: when set, a permission request nobody answered within this many
            seconds is denied with ``interrupt=True`` — whether it waits in the message
            stream or in a ``can_use_tool`` callback that has not returned; the session's
            ``on_permission_timeout`` hook hears of it just before.
        message_buffer: how many batches of messages may wait for the consumer before the
            session stops reading the CLI's stdout (back-pressure).
        stderr_tail_lines: how many stderr lines errors carry.
    """

    cli_path: str | os.PathLike[str] | None = None
    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    inherit_env: bool = True
    user: str | None = None
    stderr: Callable[[str], None] | None = None

    model: str | None = None
    fallback_model: str | None = None
    permission_mode: str | None = None
    permission_prompt_tool_name: str | None = None
    include_partial_messages: bool = True
    include_hook_events: bool = False
    replay_user_messages: bool = False
    continue_conversation: bool = False
    resume: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    fork_session: bool = False
    session_id: str | None = None
    forward_subagent_text: bool = False
    enable_file_checkpointing: bool = False
    verbatim_prompts: bool = False
    mcp_config: str | os.PathLike[str] | Mapping[str, Any] | None = None
    strict_mcp_config: bool = False
    tools: Sequence[str] | ToolsPreset | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    system_prompt: SystemPrompt | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    task_budget: int | None = None
    max_thinking_tokens: int | None = None
    thinking: ThinkingConfig | None = None
    effort: str | None = None
    betas: Sequence[str] = ()
    output_format: Mapping[str, Any] | None = None
    setting_sources: Sequence[str] | None = None
    settings: str | None = None
    sandbox: Mapping[str, Any] | None = None
    plugins: Sequence[SdkPluginConfig | Mapping[str, Any]] = ()
    skills: Sequence[str] | Literal["all"] | None = None
    agents: Mapping[str, Mapping[str, Any]] | None = None
    add_dirs: Sequence[str | os.PathLike[str]] = ()
    extra_args: Sequence[str] | Mapping[str, str | None] = ()

    initialize: bool = True
    spawn_timeout: float = 30.0
    control_timeout: float = 60.0
    close_grace: float = 5.0
    kill_after: float = 5.0
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    permission_timeout: float | None = None
    message_buffer: int = 256
    stderr_tail_lines: int = 50

    def __post_init__(self) -> None:
        validate_options(self)

    def prompt_tool(self, *, has_callback: bool) -> str | None:
        """The ``--permission-prompt-tool`` value, given whether a callback answers."""
        if self.permission_prompt_tool_name is not None:
            if has_callback and self.permission_prompt_tool_name != "stdio":
                raise UsageError(
                    "can_use_tool answers over stdio; it cannot be combined with "
                    f"permission_prompt_tool_name={self.permission_prompt_tool_name!r}"
                )
            return self.permission_prompt_tool_name
        return "stdio" if has_callback else None

    def to_argv(
        self,
        executable: str,
        *,
        sdk_mcp_servers: Sequence[str] = (),
        permission_callback: bool = False,
    ) -> list[str]:
        """Build the CLI's argument list, ``executable`` first.

        ``sdk_mcp_servers`` names in-process servers to declare in ``--mcp-config`` as
        ``{"type": "sdk", "name": ...}``; ``permission_callback`` says a ``can_use_tool``
        callback will answer permission prompts (see ``permission_prompt_tool_name``).
        Values that could start with ``-`` are passed as ``--flag=value``, so they can
        never be read as another flag.
        """
        return build_argv(
            self,
            executable,
            sdk_mcp_servers=sdk_mcp_servers,
            permission_callback=permission_callback,
        )

    def initialize_fields(self) -> dict[str, Any]:
        """What these options add to the ``initialize`` request (agents, skills, ...)."""
        fields: dict[str, Any] = {}
        if self.agents:
            fields["agents"] = {name: dict(agent) for name, agent in self.agents.items()}
        if self.skills is not None and self.skills != "all":
            fields["skills"] = list(self.skills)
        if self.forward_subagent_text:
            fields["forward_subagent_text"] = True
        system = self.system_prompt
        if isinstance(system, Mapping) and system.get("type") == "preset":
            exclude = system.get("exclude_dynamic_sections")
            if isinstance(exclude, bool):
                fields["exclude_dynamic_sections"] = exclude
        if isinstance(system, Mapping) and system.get("type") in ("preset", "custom"):
            snapshot = system.get("snapshot")
            if isinstance(snapshot, bool):
                fields["system_prompt_snapshot"] = snapshot
        return fields

    def effective_allowed_tools(self) -> list[str]:
        """allowed_tools plus the ``Skill`` rules that ``skills`` implies."""
        allowed = list(self.allowed_tools)
        if self.skills == "all":
            extra = ["Skill"]
        else:
            extra = [f"Skill({name})" for name in self.skills or ()]
        allowed += [rule for rule in extra if rule not in allowed]
        return allowed

    def effective_setting_sources(self) -> list[str] | None:
        """setting_sources, defaulting to user + project when skills are asked for."""
        if self.setting_sources is not None:
            return list(self.setting_sources)
        return ["user", "project"] if self.skills is not None else None

    def build_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The child's environment: inherited (or empty) + ``env`` + ``extra``, less CLAUDECODE."""
        env = dict(os.environ) if self.inherit_env else {}
        env.update(self.env)
        if extra:
            for key, value in extra.items():
                env.setdefault(key, value)
        env.pop("CLAUDECODE", None)
        if self.enable_file_checkpointing:
            env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
        return env
