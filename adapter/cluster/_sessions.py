"""A worker's view of its sessions: spec -> config, session -> registry snapshot."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from claudecode import UsageError

from .._local_watch import ui_state
from ..backend import SessionInfo, SessionSpec, check_spec
from ..config import SessionConfig
from ..policies import PermissionPolicy
from ..session import AgentSession

__all__ = ("config_for", "info_of")

_POLICIES = ("autonomous", "supervised", "plan")


def config_for(defaults: SessionConfig, spec: SessionSpec) -> SessionConfig:
    """The worker's defaults with what a :class:`SessionSpec` sets.

    Raises:
        UsageError: an unknown policy name, or a spec :func:`~adapter.backend.check_spec` refuses.
    """
    check_spec(spec)
    changes: dict[str, Any] = {}
    for name in ("cwd", "model", "permission_mode", "resume", "resume_session_at"):
        value = getattr(spec, name)
        if value is not None:
            changes[name] = value
    if spec.cli_session_id is not None:
        changes["cli_session_id"] = spec.cli_session_id
    if spec.effort is not None:
        changes["client_options"] = {**defaults.client_options, "effort": spec.effort}
    if spec.fork:
        changes["fork_session"] = True
    if spec.add_dirs:
        changes["client_options"] = {**defaults.client_options, "add_dirs": tuple(spec.add_dirs)}
    if spec.policy is not None:
        if spec.policy not in _POLICIES:
            raise UsageError(f"unknown permission policy {spec.policy!r}; use one of {_POLICIES}")
        changes["policy"] = PermissionPolicy(spec.policy)  # type: ignore[arg-type]
    if spec.mcp_servers:
        servers: dict[str, Any] = {}
        base = defaults.mcp_config
        if isinstance(base, Mapping):
            servers.update(base.get("mcpServers", {}))
        servers.update(spec.mcp_servers)
        changes["mcp_config"] = {"mcpServers": servers}
    return dataclasses.replace(defaults, **changes)


def info_of(
    session: AgentSession,
    *,
    owner: str,
    created_at: float,
    seq_offset: int = 0,
    spec: SessionSpec | None = None,
) -> SessionInfo:
    """The registry snapshot of a live session (times as Unix seconds)."""
    now_wall, now_mono = time.time(), time.monotonic()
    config = session.config
    return SessionInfo(
        id=session.id,
        status=session.status,
        state=ui_state(session),
        status_reason=session.status_reason,
        cwd=str(config.cwd) if config.cwd is not None else (spec.cwd if spec else None),
        model=config.model,
        permission_mode=config.permission_mode or config.policy.cli_permission_mode,
        # Known from the CLI's first message; until then, the id it was told to use.
        cli_session_id=session.cli_session_id
        or (None if config.fork_session else config.resume)
        or config.cli_session_id,
        created_at=created_at,
        last_activity=now_wall - (now_mono - session.last_activity),
        pending_permissions=tuple(session.pending_permissions),
        last_seq=session.last_seq + seq_offset,
        owner=owner,
        origin=spec.origin if spec else None,
    )
