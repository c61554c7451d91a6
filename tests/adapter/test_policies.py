"""Permission policies: what the PreToolUse hook and can_use_tool answer."""

from __future__ import annotations

import pytest

from adapter.events import PermissionRequest
from adapter.policies import (
    READ_ONLY_TOOLS,
    PermissionDecision,
    PermissionPolicy,
    hook_decision,
    policy_decision,
)
from normalize import Generic

pytestmark = pytest.mark.anyio


def request(tool: str) -> PermissionRequest:
    return PermissionRequest(
        pending_id="p", tool_name=tool, input={}, normalized=Generic(name=tool), title=tool
    )


def test_supervised_asks_for_everything_but_read_only_tools() -> None:
    """Read, Grep, Agent... run; Bash, Write, Edit, MCP tools ask."""
    policy = PermissionPolicy("supervised")
    assert {"allow"} == {hook_decision(policy, t) for t in READ_ONLY_TOOLS}
    for tool in ("Bash", "Write", "Edit", "mcp__fe__echo", "WebFetch"):
        assert "ask" == hook_decision(policy, tool)


def test_read_only_set_can_be_changed() -> None:
    """A UI can decide that Glob asks and WebFetch does not."""
    policy = PermissionPolicy("supervised", read_only_tools=frozenset({"Read", "WebFetch"}))
    assert "ask" == hook_decision(policy, "Glob")
    assert "allow" == hook_decision(policy, "WebFetch")


def test_plan_only_asks_to_leave_plan_mode() -> None:
    """plan: the hook asks for ExitPlanMode only; can_use_tool allows anything else."""
    policy = PermissionPolicy("plan")
    assert "plan" == policy.cli_permission_mode
    assert "ask" == hook_decision(policy, "ExitPlanMode")
    assert hook_decision(policy, "Bash") is None


async def test_policy_decisions() -> None:
    """autonomous allows; plan defers ExitPlanMode to a person; supervised always asks."""
    assert PermissionDecision("allow") == await policy_decision(
        PermissionPolicy("autonomous"), request("Bash")
    )
    assert await policy_decision(PermissionPolicy("plan"), request("ExitPlanMode")) is None
    assert PermissionDecision("allow") == await policy_decision(
        PermissionPolicy("plan"), request("Write")
    )
    assert await policy_decision(PermissionPolicy("supervised"), request("Bash")) is None


async def test_custom_policy_needs_and_uses_its_callback() -> None:
    """custom without a callback is a mistake; with one, its answer is the decision."""
    with pytest.raises(ValueError, match="callback"):
        PermissionPolicy("custom")

    async def deny_writes(req: PermissionRequest) -> PermissionDecision | None:
        return PermissionDecision("deny", "no writes") if req.tool_name == "Write" else None

    policy = PermissionPolicy("custom", deny_writes)
    assert (
        "deny"
        == (await policy_decision(policy, request("Write")) or PermissionDecision("allow")).behavior
    )
    assert await policy_decision(policy, request("Read")) is None
