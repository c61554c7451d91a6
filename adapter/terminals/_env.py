"""The environment a terminal program starts with."""

from __future__ import annotations

from ._agents import Agent

__all__ = ("TERMINAL_ENV", "build_env")

#: Set for every terminal program.
TERMINAL_ENV = {"TERM": "xterm-256color", "FORCE_COLOR": "1", "COLORTERM": "truecolor"}


def build_env(base: dict[str, str], agent: Agent, extra: dict[str, str] | None) -> dict[str, str]:
    """The child's environment: ``base``, the agent's changes, the caller's, then the
    terminal's own variables (which always win)."""
    env = dict(base)
    for key, value in agent.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if extra:
        env.update(extra)
    env.update(TERMINAL_ENV)
    return env
