"""permission_timeout bounds a custom policy too: one that never decides is denied (README)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from adapter.config import SessionConfig
from adapter.events import Complete, Event, PermissionCancelled, PermissionRequest
from adapter.policies import PermissionDecision, PermissionPolicy
from adapter.session import AgentSession
from claudecode.testing import script, tool_turn
from tests.support.configs import fake_session_config
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, policy: PermissionPolicy, timeout: float) -> SessionConfig:
    body = script(tool_turn("Bash", {"command": "touch hung.txt"}, permission=True))
    return fake_session_config(tmp_path, body, policy=policy, permission_timeout=timeout)


async def _turn(session: AgentSession) -> list[Event]:
    seen: list[Event] = []
    with session.subscribe() as events:
        await session.prompt("go")
        async for event in events:
            seen.append(event)
            if isinstance(event, Complete):
                break
    return seen


async def test_a_policy_that_never_returns_is_denied_after_the_timeout(tmp_path: Path) -> None:
    asked: list[str] = []

    async def never(request: PermissionRequest) -> PermissionDecision | None:
        asked.append(request.tool_name)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    cfg = _config(tmp_path, PermissionPolicy("custom", never), timeout=0.3)
    with capture_logs() as logs, anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            seen = await _turn(session)
            assert [] == session.pending_permissions
    assert ["Bash"] == asked
    assert not (Path(str(cfg.cwd)) / "hung.txt").exists()
    complete = seen[-1]
    assert isinstance(complete, Complete)
    assert ["Bash"] == [d.get("tool_name") for d in complete.permission_denials]
    [log] = [entry for entry in logs if entry["event"] == "adapter.policy_timeout"]
    assert ("Bash", "warning") == (log["tool"], log["log_level"])


async def test_a_slow_policy_that_defers_shares_the_timeout_with_the_person(
    tmp_path: Path,
) -> None:
    """The policy takes part of the time and defers to a person, who never answers: the
    request still ends (timeout) and the tool is denied."""

    async def defer(request: PermissionRequest) -> PermissionDecision | None:
        await anyio.sleep(0.1)
        return None

    cfg = _config(tmp_path, PermissionPolicy("custom", defer), timeout=0.5)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            seen = await _turn(session)
    [request] = [e for e in seen if isinstance(e, PermissionRequest)]
    [cancelled] = [e for e in seen if isinstance(e, PermissionCancelled)]
    assert (request.pending_id, "timeout") == (cancelled.pending_id, cancelled.reason)
    assert not (Path(str(cfg.cwd)) / "hung.txt").exists()
