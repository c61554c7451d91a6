"""Session options and the one place where CLI flags are spelled.

:class:`ClaudeCodeOptions` holds everything a session needs: what to put on the CLI's
command line, how to run the process, and the client's own limits and timeouts.
:meth:`ClaudeCodeOptions.to_argv` turns it into the argument list (never a shell string).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from . import _option_check as check
from ._framing import DEFAULT_MAX_LINE_BYTES
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

#: Flags every session needs: stream-json both ways. Permission prompts over stdio
#: (``--permission-prompt-tool stdio``) are added only when someone will answer them.
BASE_FLAGS: tuple[str, ...] = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
)

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
SETTING_SOURCES = ("user", "project", "local")


class SystemPromptPreset(TypedDict):
    """Claude Code's own system prompt, optionally with text appended."""

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    #: Move per-machine sections (cwd, git status...) out of the system prompt.
    exclude_dynamic_sections: NotRequired[bool]


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
            stream or in a ``can_use_tool`` callback that has not returned.
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
        _validate(self)

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
        argv = [executable, *BASE_FLAGS]
        prompt_tool = self.prompt_tool(has_callback=permission_callback)
        if prompt_tool is not None:
            argv += ["--permission-prompt-tool", prompt_tool]
        for flag, on in (
            ("--include-partial-messages", self.include_partial_messages),
            ("--include-hook-events", self.include_hook_events),
            ("--replay-user-messages", self.replay_user_messages),
            ("--continue", self.continue_conversation),
            ("--fork-session", self.fork_session),
            ("--strict-mcp-config", self.strict_mcp_config),
        ):
            if on:
                argv.append(flag)
        for flag, value in (
            ("--resume", self.resume),
            ("--resume-session-at", self.resume_session_at),
            ("--resume-drops-turn", self.resume_drops_turn),
            ("--session-id", self.session_id),
        ):
            if value is not None:
                argv.append(f"{flag}={value}")
        append: object = self.append_system_prompt
        system = self.system_prompt
        if isinstance(system, str):
            argv += ["--system-prompt", system]
        elif system is not None and system["type"] == "file":
            argv += ["--system-prompt-file", os.fspath(system["path"])]
        elif system is not None and system["type"] == "custom":
            argv += ["--system-prompt", system["prompt"]]
        elif system is not None:
            append = system.get("append", append)
        pairs: list[tuple[str, object | None]] = [
            ("--model", self.model),
            ("--fallback-model", self.fallback_model),
            ("--permission-mode", self.permission_mode),
            ("--append-system-prompt", append),
            ("--max-turns", self.max_turns),
            ("--max-budget-usd", self.max_budget_usd),
            ("--task-budget", self.task_budget),
            ("--effort", self.effort),
            ("--settings", self._settings_arg()),
        ]
        pairs += self._thinking_args()
        for flag, arg in pairs:
            if arg is not None:
                argv += [flag, str(arg)]
        if self.tools is not None:
            tools = self.tools
            argv += ["--tools", "default" if isinstance(tools, Mapping) else ",".join(tools)]
        if self.betas:
            argv += ["--betas", ",".join(self.betas)]
        if self.output_format is not None:
            argv += ["--json-schema", json.dumps(self.output_format["schema"])]
        mcp = self._mcp_config_arg(sdk_mcp_servers)
        if mcp is not None:
            argv += ["--mcp-config", mcp]
        allowed = self.effective_allowed_tools()
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if self.disallowed_tools:
            argv += ["--disallowedTools", ",".join(self.disallowed_tools)]
        sources = self.effective_setting_sources()
        if sources is not None:
            argv.append(f"--setting-sources={','.join(sources)}")
        for plugin in self.plugins:
            argv += ["--plugin-dir", os.fspath(plugin["path"])]
        for directory in self.add_dirs:
            argv += ["--add-dir", os.fspath(directory)]
        argv += self._extra_args()
        return argv

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

    def _thinking_args(self) -> list[tuple[str, object | None]]:
        thinking: Mapping[str, Any] | None = self.thinking
        if thinking is None:
            return [("--max-thinking-tokens", self.max_thinking_tokens)]
        kind = thinking["type"]
        args: list[tuple[str, object | None]] = []
        if kind == "enabled":
            args.append(("--max-thinking-tokens", thinking["budget_tokens"]))
        else:
            args.append(("--thinking", kind))
        if kind != "disabled" and "display" in thinking:
            args.append(("--thinking-display", thinking["display"]))
        return args

    def _settings_arg(self) -> str | None:
        if self.sandbox is None:
            return self.settings
        merged: dict[str, Any] = {}
        if self.settings is not None:
            text = self.settings.strip()
            if not (text.startswith("{") and text.endswith("}")):
                # A file path, read as the CLI would: relative to its working directory.
                path = Path(os.fspath(self.cwd or "")) / text
                try:
                    text = path.read_text(encoding="utf-8-sig")
                except OSError as exc:
                    raise UsageError(f"cannot read settings {path}: {exc}") from exc
            try:
                merged = dict(json.loads(text))
            except (ValueError, TypeError) as exc:
                raise UsageError(f"settings is not a JSON object: {exc}") from exc
        merged["sandbox"] = dict(self.sandbox)
        return json.dumps(merged)

    def _extra_args(self) -> list[str]:
        extra = self.extra_args
        if not isinstance(extra, Mapping):
            return list(extra)
        out: list[str] = []
        for flag, value in extra.items():
            if value is None:
                out.append(f"--{flag}")
            elif value.startswith("-"):
                out.append(f"--{flag}={value}")  # so the value is never read as a flag
            else:
                out += [f"--{flag}", value]
        return out

    def _mcp_config_arg(self, sdk_servers: Sequence[str]) -> str | None:
        config = self.mcp_config
        if not sdk_servers:
            if config is None or isinstance(config, str):
                return config
            if isinstance(config, Mapping):
                return json.dumps(dict(config))
            return os.fspath(config)
        merged: dict[str, Any] = {}
        if isinstance(config, Mapping):
            merged = dict(config.get("mcpServers", config))
        elif config is not None:
            text = os.fspath(config)
            if text.lstrip().startswith("{"):
                merged = dict(json.loads(text).get("mcpServers", {}))
            else:
                with open(text, encoding="utf-8") as fh:
                    merged = dict(json.load(fh).get("mcpServers", {}))
        for name in sdk_servers:
            merged[name] = {"type": "sdk", "name": name}
        return json.dumps({"mcpServers": merged})

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


_SYSTEM_PROMPT_KINDS = ("preset", "file", "custom")
_THINKING_KINDS = ("adaptive", "enabled", "disabled")


def _validate(opts: ClaudeCodeOptions) -> None:
    """Check every field's type and shape; raise :class:`UsageError` naming the field."""
    for name in ("cli_path", "cwd"):
        check.check_path(name, getattr(opts, name))
    for name in (
        "user",
        "model",
        "fallback_model",
        "permission_prompt_tool_name",
        "resume",
        "resume_session_at",
        "resume_drops_turn",
        "session_id",
        "append_system_prompt",
        "settings",
    ):
        check.check_str(name, getattr(opts, name))
    for name in (
        "inherit_env",
        "include_partial_messages",
        "include_hook_events",
        "replay_user_messages",
        "continue_conversation",
        "fork_session",
        "forward_subagent_text",
        "enable_file_checkpointing",
        "verbatim_prompts",
        "strict_mcp_config",
        "initialize",
    ):
        check.check_bool(name, getattr(opts, name))
    check.check_callable("stderr", opts.stderr)
    env = check.check_mapping("env", opts.env)
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise UsageError(f"env must map strings to strings, not {key!r}: {value!r:.80}")
    check.check_choice("permission_mode", opts.permission_mode, PERMISSION_MODES)
    check.check_choice("effort", opts.effort, EFFORT_LEVELS)
    for name in ("max_turns", "max_thinking_tokens", "task_budget"):
        check.check_number(name, getattr(opts, name), integer=True, minimum=0)
    check.check_number("max_budget_usd", opts.max_budget_usd, minimum=0)
    for name in ("spawn_timeout", "control_timeout", "close_grace", "kill_after"):
        check.check_number(name, getattr(opts, name), minimum=0, optional=False)
    check.check_number("permission_timeout", opts.permission_timeout, minimum=0)
    for name in ("max_line_bytes", "message_buffer", "stderr_tail_lines"):
        check.check_number(name, getattr(opts, name), integer=True, minimum=1, optional=False)
    for name in ("allowed_tools", "disallowed_tools", "betas"):
        check.check_str_list(name, getattr(opts, name))
    for directory in _as_list("add_dirs", opts.add_dirs):
        check.check_path("each item of add_dirs", directory, optional=False)
    if opts.mcp_config is not None and not isinstance(opts.mcp_config, Mapping):
        check.check_path("mcp_config", opts.mcp_config)
    _validate_system_prompt(opts)
    _validate_tools_and_skills(opts)
    _validate_thinking(opts.thinking)
    if opts.output_format is not None:
        fmt = check.check_mapping("output_format", opts.output_format, required={"type": str})
        if fmt["type"] != "json_schema":
            raise UsageError(f"output_format type must be 'json_schema', not {fmt['type']!r}")
        check.check_mapping("output_format", fmt, required={"schema": Mapping})
    if opts.setting_sources is not None:
        check.check_str_list("setting_sources", opts.setting_sources)
        for source in opts.setting_sources:
            check.check_choice("each setting source", source, SETTING_SOURCES)
    if opts.sandbox is not None:
        check.check_mapping("sandbox", opts.sandbox)
    for plugin in _as_list("plugins", opts.plugins):
        check.check_mapping("each plugin", plugin, required={"type": str, "path": (str, Path)})
        if plugin["type"] != "local":
            raise UsageError(f"plugin type must be 'local', not {plugin['type']!r}")
    if opts.agents is not None:
        for name, agent in check.check_mapping("agents", opts.agents).items():
            check.check_str("each agent name", name, optional=False)
            check.check_mapping(
                f"agents[{name!r}]", agent, required={"description": str, "prompt": str}
            )
    extra = opts.extra_args
    if isinstance(extra, Mapping):
        for flag, value in extra.items():
            check.check_str("each extra_args flag", flag, optional=False)
            check.check_str(f"extra_args[{flag!r}]", value)
    else:
        check.check_str_list("extra_args", extra)


def _as_list(name: str, value: object) -> Sequence[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise UsageError(f"{name} must be a list, not {type(value).__name__}")
    return value


def _validate_system_prompt(opts: ClaudeCodeOptions) -> None:
    system = opts.system_prompt
    if system is None or isinstance(system, str):
        return
    check.check_mapping("system_prompt", system, required={"type": str})
    kind = system["type"]
    check.check_choice("system_prompt type", kind, _SYSTEM_PROMPT_KINDS)
    if kind == "preset":
        if system.get("preset", "claude_code") != "claude_code":
            raise UsageError(f"system_prompt preset must be 'claude_code': {system!r:.80}")
        if "append" in system:
            check.check_str("system_prompt append", system["append"], optional=False)
            if opts.append_system_prompt is not None:
                raise UsageError("give append_system_prompt or a preset's append, not both")
    elif kind == "file":
        check.check_mapping("system_prompt", system, required={"path": (str, Path)})
    else:
        check.check_mapping("system_prompt", system, required={"prompt": str})


def _validate_tools_and_skills(opts: ClaudeCodeOptions) -> None:
    tools = opts.tools
    if isinstance(tools, Mapping):
        if tools.get("type") != "preset" or tools.get("preset") != "claude_code":
            raise UsageError(
                f'tools must be a list or {{"type": "preset", "preset": "claude_code"}}: '
                f"{tools!r:.80}"
            )
    elif tools is not None:
        check.check_str_list("tools", tools)
    skills = opts.skills
    if skills is None or skills == "all":
        return
    if isinstance(skills, str):
        raise UsageError(f'skills must be "all" or a list of names; did you mean [{skills!r}]?')
    check.check_str_list("skills", skills)
    for name in skills:
        if not name.strip() or name != name.strip() or any(c in name for c in "(),"):
            raise UsageError(f"invalid skill name {name!r}")


def _validate_thinking(thinking: object) -> None:
    if thinking is None:
        return
    config = check.check_mapping("thinking", thinking, required={"type": str})
    check.check_choice("thinking type", config["type"], _THINKING_KINDS)
    if config["type"] == "enabled":
        check.check_mapping("thinking", config, required={"budget_tokens": int})
    if "display" in config:
        check.check_str("thinking display", config["display"], optional=False)
