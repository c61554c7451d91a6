"""Callback types for the inbound control plane: permission checks and hooks.

A callback receives the CLI's :class:`~claudecode.messages.InboundControlRequest` and answers
with the reply helpers on it, so the request id and the answer's shape are always right::

    async def can_use_tool(req):
        if req.request.tool_name == "Bash":
            return req.deny("no shell here")
        return req.allow()

    async def pre_bash(req):
        return req.pre_tool_use("ask", "a person should look at this")
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .control import OutboundControlResponse
from .messages import InboundControlRequest

__all__ = ("CanUseTool", "HookCallback", "HookEvent", "HookMatcher", "PermissionTimeoutHook")

#: Answers a ``can_use_tool`` request: ``req.allow(...)`` or ``req.deny(...)``.
CanUseTool: TypeAlias = Callable[[InboundControlRequest], Awaitable[OutboundControlResponse]]

#: Answers a ``hook_callback`` request: a response built with the request's helpers, a plain
#: hook-output mapping (sent as the success body), or ``None`` (an empty output: go on).
HookCallback: TypeAlias = Callable[
    [InboundControlRequest], Awaitable[OutboundControlResponse | Mapping[str, Any] | None]
]

#: Hears of a permission request that ``permission_timeout`` answered (denied) because
#: nobody did in time; called just before the denial is written (see ``Session``).
PermissionTimeoutHook: TypeAlias = Callable[[InboundControlRequest], None]

#: Hook event names the CLI accepts at ``initialize`` (``PreToolUse``, ``PostToolUse``, ...).
HookEvent: TypeAlias = str


@dataclass(frozen=True)
class HookMatcher:
    """Callbacks for one hook event, limited to tools whose name matches ``matcher``.

    ``matcher`` is the CLI's pattern (a tool name, ``"Bash|Write"``, or ``None`` for all);
    ``timeout`` is the seconds the CLI waits for an answer; the session also stops waiting
    for the callbacks then (60 s when ``None``) and answers with a hook error instead.
    ``on_failure`` is what the CLI does when a callback fails: ``"block"`` the tool call or
    ``"continue"`` without the hook (``None``: the CLI's default); a session whose CLI cannot
    honour ``"block"`` fails to open instead of silently running unguarded.
    """

    matcher: str | None
    callbacks: Sequence[HookCallback]
    timeout: float | None = None
    on_failure: Literal["continue", "block"] | None = None
