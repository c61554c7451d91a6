"""Session options and the one place where CLI flags are spelled.

:class:`ClaudeCodeOptions` holds everything a session needs: what to put on the CLI's
command line, how to run the process, and the client's own limits and timeouts.
:meth:`ClaudeCodeOptions.to_argv` turns it into the argument list (never a shell string).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._framing import DEFAULT_MAX_LINE_BYTES

__all__ = ("BASE_FLAGS", "ClaudeCodeOptions")

#: Flags every session needs: stream-json both ways and permission prompts over stdio.
BASE_FLAGS: tuple[str, ...] = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
)


@dataclass(frozen=True, kw_only=True)
class ClaudeCodeOptions:
    """What to run and how. Every field has a working default.

    CLI flags:
        model: ``--model``.
        permission_mode: ``--permission-mode`` (``default``, ``acceptEdits``, ``plan``,
            ``bypassPermissions``, ``dontAsk``, ``auto``).
        include_partial_messages: ``--include-partial-messages`` (token-level
            ``stream_event`` lines); on by default.
        replay_user_messages: ``--replay-user-messages``.
        resume: ``--resume <session id>``; resume_session_at: ``--resume-session-at <uuid>``;
            fork_session: ``--fork-session``.
        mcp_config: ``--mcp-config``: a path, a JSON string, or a mapping (encoded as JSON).
            In-process SDK servers passed to the session are merged into it.
        allowed_tools / disallowed_tools: ``--allowedTools`` / ``--disallowedTools``.
        system_prompt / append_system_prompt: ``--system-prompt`` / ``--append-system-prompt``.
        max_turns: ``--max-turns``; max_thinking_tokens: ``--max-thinking-tokens``.
        add_dirs: one ``--add-dir`` each; settings: ``--settings`` (path or JSON string).
        extra_args: appended verbatim, for flags this class does not know.

    Process:
        cli_path: the executable; when ``None`` it is discovered (see ``find_cli``).
        cwd: working directory of the CLI (default: ours).
        env: added to the inherited environment (``CLAUDECODE`` is always removed, so a
            session started from inside Claude Code does not think it is nested).
        inherit_env: start from ``os.environ`` (default) or from an empty environment.

    Client limits:
        initialize: send the ``initialize`` control request on open (default ``True``).
        spawn_timeout: seconds the CLI may stay silent after our first write before the
            watchdog ends it with :class:`~claudecode.errors.CLIStartError`.
        control_timeout: seconds to wait for the answer to a control request.
        close_grace: seconds to let the CLI exit after stdin is closed, before SIGTERM.
        kill_after: seconds between SIGTERM and SIGKILL.
        max_line_bytes: the longest stdout line accepted (longer ones are skipped and
            reported as ``MalformedLine(reason="too_long")``).
        permission_timeout: when set, a permission request nobody answered within this many
            seconds is denied with ``interrupt=True``.
        message_buffer: how many batches of messages may wait for the consumer before the
            session stops reading the CLI's stdout (back-pressure).
        stderr_tail_lines: how many stderr lines errors carry.
    """

    cli_path: str | os.PathLike[str] | None = None
    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    inherit_env: bool = True

    model: str | None = None
    permission_mode: str | None = None
    include_partial_messages: bool = True
    replay_user_messages: bool = False
    resume: str | None = None
    resume_session_at: str | None = None
    fork_session: bool = False
    mcp_config: str | os.PathLike[str] | Mapping[str, Any] | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_thinking_tokens: int | None = None
    add_dirs: Sequence[str | os.PathLike[str]] = ()
    settings: str | None = None
    extra_args: Sequence[str] = ()

    initialize: bool = True
    spawn_timeout: float = 30.0
    control_timeout: float = 60.0
    close_grace: float = 5.0
    kill_after: float = 5.0
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    permission_timeout: float | None = None
    message_buffer: int = 256
    stderr_tail_lines: int = 50

    def to_argv(
        self, executable: str, *, sdk_mcp_servers: Sequence[str] = ()
    ) -> list[str]:
        """Build the CLI's argument list, ``executable`` first.

        ``sdk_mcp_servers`` names in-process servers to declare in ``--mcp-config`` as
        ``{"type": "sdk", "name": ...}``.
        """
        argv = [executable, *BASE_FLAGS]
        if self.include_partial_messages:
            argv.append("--include-partial-messages")
        if self.replay_user_messages:
            argv.append("--replay-user-messages")
        pairs: list[tuple[str, object | None]] = [
            ("--model", self.model),
            ("--permission-mode", self.permission_mode),
            ("--resume", self.resume),
            ("--resume-session-at", self.resume_session_at),
            ("--system-prompt", self.system_prompt),
            ("--append-system-prompt", self.append_system_prompt),
            ("--max-turns", self.max_turns),
            ("--max-thinking-tokens", self.max_thinking_tokens),
            ("--settings", self.settings),
        ]
        for flag, value in pairs:
            if value is not None:
                argv += [flag, str(value)]
        if self.fork_session:
            argv.append("--fork-session")
        mcp = self._mcp_config_arg(sdk_mcp_servers)
        if mcp is not None:
            argv += ["--mcp-config", mcp]
        if self.allowed_tools:
            argv += ["--allowedTools", ",".join(self.allowed_tools)]
        if self.disallowed_tools:
            argv += ["--disallowedTools", ",".join(self.disallowed_tools)]
        for directory in self.add_dirs:
            argv += ["--add-dir", os.fspath(directory)]
        argv += list(self.extra_args)
        return argv

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
        return env
