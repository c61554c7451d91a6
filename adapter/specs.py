"""What a :class:`~adapter.backend.SessionSpec` changes in the defaults it is applied to.

One function for every backend (the in-process one and a cluster's workers), so a spec means
the same wherever its session runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from claudecode import UsageError

from ._local_watch import mcp_servers
from .backend import SessionSpec, check_spec
from .config import SessionConfig
from .policies import PermissionPolicy, PolicyName

__all__ = ("SPEC_POLICIES", "config_for")

#: The built-in policies a spec may name.
SPEC_POLICIES = frozenset({"autonomous", "supervised", "plan"})


def config_for(defaults: SessionConfig, spec: SessionSpec) -> SessionConfig:
    """The :class:`SessionConfig` a session created from ``spec`` runs with: ``defaults``
    with what the spec sets.

    Raises:
        UsageError: ``spec.policy`` names no built-in policy, or
            :func:`~adapter.backend.check_spec` refuses the spec.
    """
    check_spec(spec)
    changes: dict[str, Any] = {}
    for field in (
        "cwd",
        "model",
        "permission_mode",
        "cli_session_id",
        "system_prompt",
        "append_system_prompt",
    ):
        value = getattr(spec, field)
        if value is not None:
            changes[field] = value
    if spec.resume is not None:
        changes["resume"] = spec.resume
        changes["resume_session_at"] = spec.resume_session_at
        changes["fork_session"] = spec.fork
    elif spec.fork:
        changes["fork_session"] = True
    for field in ("allowed_tools", "disallowed_tools"):
        rules: list[str] = getattr(spec, field)
        if rules:
            # The spec's rules come on top of the backend's: a server-wide rule stays.
            kept = tuple(getattr(defaults, field))
            changes[field] = (*kept, *(rule for rule in rules if rule not in kept))
    if spec.policy is not None:
        if spec.policy not in SPEC_POLICIES:
            names = ", ".join(sorted(SPEC_POLICIES))
            raise UsageError(f"unknown policy {spec.policy!r} (one of: {names})")
        name: PolicyName = spec.policy  # type: ignore[assignment]
        changes["policy"] = PermissionPolicy(name, read_only_tools=defaults.policy.read_only_tools)
    client_options = dict(defaults.client_options)
    if spec.effort is not None:
        client_options["effort"] = spec.effort
    if spec.add_dirs:
        client_options["add_dirs"] = tuple(spec.add_dirs)
    if client_options != defaults.client_options:
        changes["client_options"] = client_options
    if spec.mcp_servers:
        servers = mcp_servers(defaults.mcp_config)
        servers.update(spec.mcp_servers)
        changes["mcp_config"] = {"mcpServers": servers}
    return dataclasses.replace(defaults, **changes)
