"""What an adapter session runs with."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from claudecode import ClaudeCodeOptions, SdkMcpServer

from .policies import PermissionPolicy

__all__ = ("SessionConfig", "cli_options")


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """Settings of one :class:`~adapter.session.AgentSession`; every field has a default.

    CLI: ``cwd``, ``model``, ``permission_mode`` (overrides the policy's mode),
    ``mcp_servers`` (in-process servers), ``mcp_config``, ``system_prompt``,
    ``append_system_prompt``, ``allowed_tools``, ``disallowed_tools``, ``resume`` (a CLI
    session id), ``resume_session_at`` (a message uuid), ``fork_session``,
    ``cli_session_id`` (the id a new CLI session takes: a UUID, ``--session-id``),
    ``cli_path``, ``env``, and ``client_options`` (any other
    :class:`claudecode.ClaudeCodeOptions` field, e.g. timeouts or ``extra_args``).

    Adapter: ``policy`` (see :mod:`adapter.policies`), ``permission_timeout`` (seconds a
    permission request may stay undecided, by a person or a ``custom`` policy callback, before
    it is denied; default 5 minutes; ``None``: forever; the client enforces it, as
    :class:`claudecode.ClaudeCodeOptions`' own ``permission_timeout``, unless
    ``client_options`` sets that),
    ``plan_exit_grace`` (seconds to wait for a ``result`` after ExitPlanMode was approved
    before completing the turn synthetically), ``history_size`` and ``subscriber_buffer``
    (events kept for late subscribers / allowed to wait per subscriber before it is dropped;
    the buffer is capped at half the history, so a dropped subscriber that resubscribes
    promptly with ``after_seq`` loses nothing), ``debug_dir``
    (write protocol messages and events as JSONL there), ``tracer_provider`` and
    ``capture_content`` (OpenTelemetry; content capture is off by default).
    """

    cwd: str | os.PathLike[str] | None = None
    model: str | None = None
    permission_mode: str | None = None
    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    mcp_servers: Sequence[SdkMcpServer] = ()
    mcp_config: str | Mapping[str, Any] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    resume: str | None = None
    resume_session_at: str | None = None
    fork_session: bool = False
    cli_session_id: str | None = None
    cli_path: str | os.PathLike[str] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    client_options: Mapping[str, Any] = field(default_factory=dict)

    permission_timeout: float | None = 300.0
    plan_exit_grace: float = 2.0
    history_size: int = 10_000
    subscriber_buffer: int = 5_000
    debug_dir: str | os.PathLike[str] | None = None
    tracer_provider: Any = None
    capture_content: bool | None = None


def cli_options(cfg: SessionConfig) -> ClaudeCodeOptions:
    """The client options a session of ``cfg`` starts its CLI with."""
    extra: dict[str, Any] = dict(cfg.client_options)
    # The client keeps the open permission requests and their time limit (the session
    # hears of each timeout through on_permission_timeout): one clock, not two.
    extra.setdefault("permission_timeout", cfg.permission_timeout)
    if cfg.cli_session_id is not None:
        extra.setdefault("session_id", cfg.cli_session_id)
    # Every permission request becomes an event (or a policy answer): answered by the session.
    extra.setdefault("permission_prompt_tool_name", "stdio")
    return ClaudeCodeOptions(
        cli_path=cfg.cli_path,
        cwd=cfg.cwd,
        env=dict(cfg.env),
        model=cfg.model,
        permission_mode=cfg.permission_mode or cfg.policy.cli_permission_mode,
        mcp_config=cfg.mcp_config,
        system_prompt=cfg.system_prompt,
        append_system_prompt=cfg.append_system_prompt,
        allowed_tools=tuple(cfg.allowed_tools),
        disallowed_tools=tuple(cfg.disallowed_tools),
        resume=cfg.resume,
        resume_session_at=cfg.resume_session_at,
        fork_session=cfg.fork_session,
        **extra,
    )
