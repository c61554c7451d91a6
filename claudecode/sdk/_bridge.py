"""The SDK-shaped callbacks, adapted to the client's control-plane callbacks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import callbacks
from .._log import get_logger
from ..control import OutboundControlResponse
from ..mcp import SdkMcpServer
from ..messages import CanUseToolRequest, HookCallbackRequest, InboundControlRequest
from ..options import ClaudeCodeOptions
from .permissions import (
    CanUseTool,
    HookCallback,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)

__all__ = ("SessionArgs", "wrap_can_use_tool", "wrap_hooks")

_log = get_logger("claudecode.sdk")


@dataclass
class SessionArgs:
    """What :class:`claudecode.Session` takes, built from ``ClaudeAgentOptions``."""

    options: ClaudeCodeOptions
    can_use_tool: callbacks.CanUseTool | None = None
    hooks: dict[str, list[callbacks.HookMatcher]] = field(default_factory=dict)
    mcp_servers: list[SdkMcpServer] = field(default_factory=list)


def wrap_can_use_tool(user: CanUseTool | None) -> callbacks.CanUseTool | None:
    """``can_use_tool(name, input, context)`` as a client callback."""
    if user is None:
        return None

    async def answer(req: InboundControlRequest) -> OutboundControlResponse:
        request = req.request
        assert isinstance(request, CanUseToolRequest)
        context = ToolPermissionContext(
            suggestions=[
                PermissionUpdate.from_dict(dict(s))
                for s in request.permission_suggestions or []
                if isinstance(s, Mapping)
            ],
            tool_use_id=request.tool_use_id,
            agent_id=request.agent_id,
            blocked_path=request.blocked_path,
            decision_reason=request.decision_reason,
            title=getattr(request, "title", None),
            display_name=request.display_name,
            description=request.description,
        )
        result = await user(request.tool_name, dict(request.input), context)
        if isinstance(result, PermissionResultAllow):
            updates = _wire_updates(result.updated_permissions)
            return req.allow(updated_input=result.updated_input, updated_permissions=updates)
        if isinstance(result, PermissionResultDeny):
            return req.deny(result.message, interrupt=result.interrupt)
        raise TypeError(
            "can_use_tool must return PermissionResultAllow or PermissionResultDeny, "
            f"not {type(result).__name__}"
        )

    return answer


def _wire_updates(updates: list[PermissionUpdate] | None) -> list[Any] | None:
    if updates is None:
        return None
    try:
        return [update.to_dict() for update in updates]
    except ValueError as exc:
        # All or nothing: a dropped update may be a restriction the others came with.
        _log.warning("sdk.permission_updates_dropped", error=str(exc))
        return None


def wrap_hooks(
    hooks: Mapping[Any, list[HookMatcher]] | None,
) -> dict[str, list[callbacks.HookMatcher]]:
    """``{"PreToolUse": [HookMatcher(matcher=, hooks=[...])]}`` as client hook matchers."""
    wrapped: dict[str, list[callbacks.HookMatcher]] = {}
    for event, matchers in (hooks or {}).items():
        wrapped[event] = [
            callbacks.HookMatcher(
                m.matcher, [_wrap_hook(h) for h in m.hooks], m.timeout, m.on_failure
            )
            for m in matchers
        ]
    return wrapped


def _wrap_hook(user: HookCallback) -> callbacks.HookCallback:
    async def answer(req: InboundControlRequest) -> Mapping[str, Any]:
        request = req.request
        assert isinstance(request, HookCallbackRequest)
        output = await user(dict(request.input), request.tool_use_id, {"signal": None})
        return _hook_output_for_cli(output or {})

    return answer


def _hook_output_for_cli(output: Mapping[str, Any]) -> dict[str, Any]:
    """``async_`` / ``continue_`` (Python keywords) as the CLI spells them."""
    renamed = {"async_": "async", "continue_": "continue"}
    return {renamed.get(key, key): value for key, value in output.items()}
