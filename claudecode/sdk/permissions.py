"""Permission callbacks and hooks in ``claude-agent-sdk``'s shapes.

``can_use_tool(tool_name, input, context)`` returns :class:`PermissionResultAllow` or
:class:`PermissionResultDeny`; a hook is ``hook(input_data, tool_use_id, context)``
returning the hook's JSON output as a dict (``continue_`` / ``async_`` for the Python
keywords). ``_bridge`` turns both into the client's callbacks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypedDict

from ._types_hooks import HookEvent

__all__ = (
    "CanUseTool",
    "HookCallback",
    "HookContext",
    "HookEvent",
    "HookMatcher",
    "PermissionBehavior",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PermissionUpdateDestination",
    "ToolPermissionContext",
)

PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"
]
PermissionBehavior: TypeAlias = Literal["allow", "deny", "ask"]
PermissionUpdateDestination: TypeAlias = Literal[
    "userSettings", "projectSettings", "localSettings", "session"
]

_RULE_UPDATES = ("addRules", "replaceRules", "removeRules")
_DIRECTORY_UPDATES = ("addDirectories", "removeDirectories")


@dataclass
class PermissionRuleValue:
    """One permission rule: a tool and, optionally, what it matches (``"npm test"``)."""

    tool_name: str
    rule_content: str | None = None


@dataclass
class PermissionUpdate:
    """A change to the permission rules, mode or directories."""

    type: Literal[
        "addRules",
        "replaceRules",
        "removeRules",
        "setMode",
        "addDirectories",
        "removeDirectories",
    ]
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def to_dict(self) -> dict[str, Any]:
        """The control-protocol form; ``ValueError`` when a field its type needs is missing."""
        result: dict[str, Any] = {"type": self.type, "destination": self.destination or "session"}
        if self.type in _RULE_UPDATES:
            if self.rules is None or self.behavior is None:
                raise ValueError(f"PermissionUpdate(type={self.type!r}) needs rules and behavior")
            rules: list[dict[str, Any]] = []
            for rule in self.rules:
                wire: dict[str, Any] = {"toolName": rule.tool_name}
                if rule.rule_content is not None:
                    wire["ruleContent"] = rule.rule_content
                rules.append(wire)
            result["rules"] = rules
            result["behavior"] = self.behavior
        elif self.type == "setMode":
            if self.mode is None:
                raise ValueError("PermissionUpdate(type='setMode') needs a mode")
            result["mode"] = self.mode
        elif self.type in _DIRECTORY_UPDATES:
            if self.directories is None:
                raise ValueError(f"PermissionUpdate(type={self.type!r}) needs directories")
            result["directories"] = self.directories
        else:
            raise ValueError(f"unknown PermissionUpdate type {self.type!r}")
        return result

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PermissionUpdate:
        """The inverse of :meth:`to_dict` (the CLI's permission suggestions)."""
        rules = None
        if data.get("rules") is not None:
            rules = [
                PermissionRuleValue(tool_name=r["toolName"], rule_content=r.get("ruleContent"))
                for r in data["rules"]
            ]
        return cls(
            type=data["type"],
            rules=rules,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=data.get("directories"),
            destination=data.get("destination"),
        )


@dataclass
class ToolPermissionContext:
    """What the CLI says about a permission request besides the tool and its input."""

    signal: Any | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None


@dataclass
class PermissionResultAllow:
    """Allow the call, optionally with a rewritten input and permission updates."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Deny the call; ``message`` goes to the model, ``interrupt`` also ends the turn."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult: TypeAlias = PermissionResultAllow | PermissionResultDeny

#: ``async def can_use_tool(tool_name, input, context) -> PermissionResult``.
CanUseTool: TypeAlias = Callable[
    [str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]
]


class HookContext(TypedDict):
    """The third argument of a hook callback."""

    signal: Any | None


#: ``async def hook(input_data, tool_use_id, context) -> dict`` (the hook's JSON output).
HookCallback: TypeAlias = Callable[
    [dict[str, Any], str | None, HookContext], Awaitable[dict[str, Any]]
]


@dataclass
class HookMatcher:
    """Hook callbacks for the tools whose name matches ``matcher`` (``None``: all)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None
    on_failure: Literal["continue", "block"] | None = None
