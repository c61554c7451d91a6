"""What valid :class:`~claudecode.options.ClaudeCodeOptions` are, checked at construction.

Each field's type and shape, and how fields go together (a preset's ``append`` or
``append_system_prompt``, not both); the first fault is a :class:`UsageError` naming the
field. The per-value checks are in :mod:`claudecode._option_check`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _option_check as check
from ._cli_args import EFFORT_LEVELS, PERMISSION_MODES, SETTING_SOURCES
from .errors import UsageError

if TYPE_CHECKING:
    from .options import ClaudeCodeOptions

__all__ = ("validate_options",)

_SYSTEM_PROMPT_KINDS = ("preset", "file", "custom")
_THINKING_KINDS = ("adaptive", "enabled", "disabled")


def validate_options(opts: ClaudeCodeOptions) -> None:
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
