"""The one place where the CLI's flags are spelled: :class:`ClaudeCodeOptions` as argv.

:func:`build_argv` turns options into the argument list (never a shell string); values that
could start with ``-`` are passed as ``--flag=value`` so they can never be read as another
flag. The values some flags accept are here too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from .options import ClaudeCodeOptions

__all__ = ("BASE_FLAGS", "EFFORT_LEVELS", "PERMISSION_MODES", "SETTING_SOURCES", "build_argv")

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


def build_argv(
    opts: ClaudeCodeOptions,
    executable: str,
    *,
    sdk_mcp_servers: Sequence[str] = (),
    permission_callback: bool = False,
) -> list[str]:
    """The CLI's argument list for ``opts``, ``executable`` first (see
    :meth:`ClaudeCodeOptions.to_argv <claudecode.options.ClaudeCodeOptions.to_argv>`)."""
    argv = [executable, *BASE_FLAGS]
    prompt_tool = opts.prompt_tool(has_callback=permission_callback)
    if prompt_tool is not None:
        argv += ["--permission-prompt-tool", prompt_tool]
    for flag, on in (
        ("--include-partial-messages", opts.include_partial_messages),
        ("--include-hook-events", opts.include_hook_events),
        ("--replay-user-messages", opts.replay_user_messages),
        ("--continue", opts.continue_conversation),
        ("--fork-session", opts.fork_session),
        ("--strict-mcp-config", opts.strict_mcp_config),
    ):
        if on:
            argv.append(flag)
    for flag, value in (
        ("--resume", opts.resume),
        ("--resume-session-at", opts.resume_session_at),
        ("--resume-drops-turn", opts.resume_drops_turn),
        ("--session-id", opts.session_id),
    ):
        if value is not None:
            argv.append(f"{flag}={value}")
    append: object = opts.append_system_prompt
    system = opts.system_prompt
    if isinstance(system, str):
        argv += ["--system-prompt", system]
    elif system is not None and system["type"] == "file":
        argv += ["--system-prompt-file", os.fspath(system["path"])]
    elif system is not None and system["type"] == "custom":
        argv += ["--system-prompt", system["prompt"]]
    elif system is not None:
        append = system.get("append", append)
    pairs: list[tuple[str, object | None]] = [
        ("--model", opts.model),
        ("--fallback-model", opts.fallback_model),
        ("--permission-mode", opts.permission_mode),
        ("--append-system-prompt", append),
        ("--max-turns", opts.max_turns),
        ("--max-budget-usd", opts.max_budget_usd),
        ("--task-budget", opts.task_budget),
        ("--effort", opts.effort),
        ("--settings", _settings_arg(opts)),
    ]
    pairs += _thinking_args(opts)
    for flag, arg in pairs:
        if arg is not None:
            argv += [flag, str(arg)]
    if opts.tools is not None:
        tools = opts.tools
        argv += ["--tools", "default" if isinstance(tools, Mapping) else ",".join(tools)]
    if opts.betas:
        argv += ["--betas", ",".join(opts.betas)]
    if opts.output_format is not None:
        argv += ["--json-schema", json.dumps(opts.output_format["schema"])]
    mcp = _mcp_config_arg(opts, sdk_mcp_servers)
    if mcp is not None:
        argv += ["--mcp-config", mcp]
    allowed = opts.effective_allowed_tools()
    if allowed:
        argv += ["--allowedTools", ",".join(allowed)]
    if opts.disallowed_tools:
        argv += ["--disallowedTools", ",".join(opts.disallowed_tools)]
    sources = opts.effective_setting_sources()
    if sources is not None:
        argv.append(f"--setting-sources={','.join(sources)}")
    for plugin in opts.plugins:
        argv += ["--plugin-dir", os.fspath(plugin["path"])]
    for directory in opts.add_dirs:
        argv += ["--add-dir", os.fspath(directory)]
    argv += _extra_args(opts)
    return argv


def _thinking_args(opts: ClaudeCodeOptions) -> list[tuple[str, object | None]]:
    thinking: Mapping[str, Any] | None = opts.thinking
    if thinking is None:
        return [("--max-thinking-tokens", opts.max_thinking_tokens)]
    kind = thinking["type"]
    args: list[tuple[str, object | None]] = []
    if kind == "enabled":
        args.append(("--max-thinking-tokens", thinking["budget_tokens"]))
    else:
        args.append(("--thinking", kind))
    if kind != "disabled" and "display" in thinking:
        args.append(("--thinking-display", thinking["display"]))
    return args


def _settings_arg(opts: ClaudeCodeOptions) -> str | None:
    if opts.sandbox is None:
        return opts.settings
    merged: dict[str, Any] = {}
    if opts.settings is not None:
        text = opts.settings.strip()
        if not (text.startswith("{") and text.endswith("}")):
            # A file path, read as the CLI would: relative to its working directory.
            path = Path(os.fspath(opts.cwd or "")) / text
            try:
                text = path.read_text(encoding="utf-8-sig")
            except OSError as exc:
                raise UsageError(f"cannot read settings {path}: {exc}") from exc
        try:
            merged = dict(json.loads(text))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"settings is not a JSON object: {exc}") from exc
    merged["sandbox"] = dict(opts.sandbox)
    return json.dumps(merged)


def _extra_args(opts: ClaudeCodeOptions) -> list[str]:
    extra = opts.extra_args
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


def _mcp_config_arg(opts: ClaudeCodeOptions, sdk_servers: Sequence[str]) -> str | None:
    config = opts.mcp_config
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
