"""Permission policies: who decides whether a tool may run.

========== =====================================================================
autonomous No prompts: every ``can_use_tool`` is allowed as asked; the agent's questions
           (``AskUserQuestion``) are declined with a reason the model reads (nobody is there
           to answer), published as a ``question_request`` and its ``permission_resolved``.
supervised Every tool except the read-only ones asks a person: a PreToolUse hook answers
           ``ask`` for them (so even calls the CLI would allow by itself are shown), and the
           CLI's ``can_use_tool`` over stdio becomes a ``permission_request`` event.
           Read-only tools (Read, Glob, Grep, NotebookRead, Task/Agent, TodoWrite, ...) are
           allowed by the hook without asking. Tools the session's ``allowed_tools`` rules
           name (``Bash``, ``Bash(git diff:*)``) are left to the CLI: what a rule matches
           runs, the rest asks through ``can_use_tool``.
plan       The CLI runs in ``plan`` mode (read-only); only leaving plan mode (ExitPlanMode)
           and the agent's questions ask. Anything else the CLI asks about is allowed.
custom     A callback sees each request and decides, or returns ``None`` to ask a person. For
           a question (tool ``AskUserQuestion``) ``deny`` declines it and ``allow`` with
           ``updated_input={"answers": {question: [labels]}}`` answers it; an ``allow``
           without answers leaves it to a person.
========== =====================================================================

No Stop hook is registered on purpose: an approved Stop hook ends the turn without a
``result``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .events import PermissionRequest

__all__ = (
    "READ_ONLY_TOOLS",
    "PermissionDecision",
    "PermissionPolicy",
    "PolicyCallback",
    "PolicyName",
    "hook_decision",
    "policy_decision",
)

PolicyName: TypeAlias = Literal["autonomous", "supervised", "plan", "custom"]

#: Tools that only read (or only plan) and never ask under the supervised policy.
READ_ONLY_TOOLS: frozenset[str] = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "NotebookRead",
        "Task",
        "Agent",
        "TodoWrite",
        "TodoRead",
        "TaskList",
        "TaskGet",
        "ToolSearch",
        "ListAgents",
        "BashOutput",
    }
)


@dataclass(frozen=True)
class PermissionDecision:
    """The answer to a permission request.

    ``behavior``: ``allow``, ``allow_always`` (allow and add the CLI's suggested rules, so it
    stops asking) or ``deny``. ``message`` explains a denial to the model; ``interrupt`` also
    stops the turn; ``updated_input`` replaces the tool's input on allow.
    """

    behavior: Literal["allow", "allow_always", "deny"]
    message: str = ""
    interrupt: bool = False
    updated_input: dict[str, Any] | None = None


#: Decides a request, or returns ``None`` to let a person decide (``custom`` policy).
PolicyCallback: TypeAlias = Callable[[PermissionRequest], Awaitable[PermissionDecision | None]]


@dataclass(frozen=True)
class PermissionPolicy:
    """A policy by name, with the callback for ``custom``.

    ``read_only_tools`` are the tools the ``supervised`` policy lets run without asking
    (default :data:`READ_ONLY_TOOLS`); a UI with its own idea of "safe" can narrow or widen it.
    """

    name: PolicyName = "supervised"
    callback: PolicyCallback | None = None
    read_only_tools: frozenset[str] = READ_ONLY_TOOLS

    def __post_init__(self) -> None:
        if self.name == "custom" and self.callback is None:
            raise ValueError("the custom permission policy needs a callback")

    @property
    def cli_permission_mode(self) -> str | None:
        """The ``--permission-mode`` this policy needs (``None``: leave the CLI's default)."""
        return "plan" if self.name == "plan" else None

    @property
    def hook_matchers(self) -> list[str | None]:
        """PreToolUse matchers to register (``None`` matches every tool)."""
        if self.name == "supervised":
            return [None]
        if self.name == "plan":
            return ["ExitPlanMode"]
        return []


def hook_decision(policy: PermissionPolicy, tool_name: str) -> Literal["allow", "ask"] | None:
    """What the policy's PreToolUse hook answers for ``tool_name`` (``None``: no opinion)."""
    if policy.name == "supervised":
        return "allow" if tool_name in policy.read_only_tools else "ask"
    if policy.name == "plan":
        return "ask" if tool_name == "ExitPlanMode" else None
    return None


async def policy_decision(
    policy: PermissionPolicy, request: PermissionRequest
) -> PermissionDecision | None:
    """Decide a ``can_use_tool`` request by policy; ``None`` means a person must answer."""
    if policy.name == "autonomous":
        return PermissionDecision("allow")
    if policy.name == "plan":
        return None if request.tool_name == "ExitPlanMode" else PermissionDecision("allow")
    if policy.name == "custom":
        assert policy.callback is not None
        return await policy.callback(request)
    return None
