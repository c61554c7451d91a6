"""Control requests are not turns: the session's status and its end after each of them.

Against the fake CLI subprocess, which answers ``set_model`` with the CLI's
``<local-command-stdout>`` echo as 2.1.332 does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.config import SessionConfig
from adapter.events import Complete, ErrorEvent
from adapter.policies import PermissionPolicy
from adapter.session import AgentSession
from claudecode.testing import script, text_turn
from tests.support.configs import fake_session_config
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import until_complete

pytestmark = pytest.mark.anyio

Control = Callable[[AgentSession], Awaitable[Any]]

CONTROLS: dict[str, Control] = {
    "set_model": lambda s: s.set_model("claude-haiku-4-5"),
    "set_model_default": lambda s: s.set_model(None),
    "set_permission_mode": lambda s: s.set_permission_mode("acceptEdits"),
    "interrupt_idle": lambda s: s.interrupt(),
}


def config(tmp_path: Path, *turns: Any) -> SessionConfig:
    return fake_session_config(tmp_path, script(*turns), policy=PermissionPolicy("supervised"))


@pytest.mark.parametrize("control", sorted(CONTROLS))
async def test_a_control_request_before_any_turn_leaves_the_session_connected(
    tmp_path: Path, control: str
) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path)) as session:
            with session.subscribe(after_seq=0) as events:
                await CONTROLS[control](session)
                assert session.status == "connected"
        # The session ended: everything it published is in the history.
        async for _ in events:
            pass
    assert (session.status, session.status_reason) == ("terminated", None)
    assert [] == [e for e in session.history() if isinstance(e, ErrorEvent)]


@pytest.mark.parametrize("control", sorted(CONTROLS))
async def test_a_control_request_between_turns_leaves_the_session_idle(
    tmp_path: Path, control: str
) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path, text_turn("one"), text_turn("two"))) as session:
            with session.subscribe() as events:
                await session.prompt("first")
                await until_complete(events)
                assert session.status == "idle"
                await CONTROLS[control](session)
                assert session.status == "idle"
                await session.prompt("second")
                [*_, complete] = await until_complete(events)
                assert isinstance(complete, Complete) and complete.error is None
                assert session.status == "idle"
    assert (session.status, session.status_reason) == ("terminated", None)
    assert [] == [e for e in session.history() if isinstance(e, ErrorEvent)]
