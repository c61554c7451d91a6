"""AgentSession status through every turn the CLI runs, against the fake CLI subprocess.

The fake CLI runs a handler that writes scripted lines in stages, each stage waiting for a
gate file the test creates, so the test decides when the CLI "does" something and can look at
the session's status in between (no timing involved).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.events import Complete, MessageChunk
from adapter.manager import SessionManager
from adapter.session import AgentSession
from tests.adapter.staged_cli import (
    Gates,
    background_stages,
    init_line,
    result_line,
    staged_config,
    text_line,
)
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import until

pytestmark = pytest.mark.anyio


async def test_a_turn_the_cli_starts_by_itself_makes_the_session_active(tmp_path: Path) -> None:
    gates = Gates(tmp_path)
    cfg = staged_config(tmp_path, background_stages(gates))
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("use a background agent")
                await until(events, lambda e: isinstance(e, Complete))
                # The prompt's turn is over; the background task is not.
                assert "idle" == session.status
                assert ("t1",) == session.background_tasks and session.background_work
                gates.open("done")
                await until(events, lambda e: isinstance(e, MessageChunk) and "found" in e.text)
                assert "active" == session.status  # the self-started turn is running
                assert () == session.background_tasks
                gates.open("result")
                [*_, complete] = await until(events, lambda e: isinstance(e, Complete))
                assert (
                    isinstance(complete, Complete) and "the agent found 0 files" == complete.result
                )
                assert "idle" == session.status and not session.background_work


async def test_a_queued_prompt_keeps_the_session_active_until_its_ownresult_line(
    tmp_path: Path,
) -> None:
    """The second prompt goes out while the first turn runs; the fake CLI (which reports no
    command_lifecycle, like older CLIs) runs it after the first result."""
    gates = Gates(tmp_path)
    stages: list[tuple[str | None, list[dict[str, Any]]]] = [
        (None, [init_line(), text_line("m1", "one")]),
        (gates.path("first"), [result_line("one")]),
        (gates.path("second"), [init_line(), text_line("m2", "two"), result_line("two")]),
    ]
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(staged_config(tmp_path, stages)) as session:
            with session.subscribe() as events:
                await session.prompt("first")
                await until(events, lambda e: isinstance(e, MessageChunk))
                await session.prompt("second, while the first runs")
                gates.open("first")
                [*_, first] = await until(events, lambda e: isinstance(e, Complete))
                assert isinstance(first, Complete) and "one" == first.result
                assert "active" == session.status  # the queued prompt has not run yet
                gates.open("second")
                [*_, second] = await until(events, lambda e: isinstance(e, Complete))
                assert isinstance(second, Complete) and "two" == second.result
                assert "idle" == session.status


async def test_the_idle_reaper_never_closes_a_session_with_background_work(
    tmp_path: Path,
) -> None:
    """A background task outlives the idle timeout many times over: the session stays; once
    the task reported and its turn ended, the session is reaped."""
    gates = Gates(tmp_path)
    cfg = staged_config(tmp_path, background_stages(gates))
    with anyio.fail_after(HANG_GUARD):
        async with SessionManager(cfg, idle_timeout=0.05) as manager:
            session = await manager.create()
            with session.subscribe() as events:
                await session.prompt("use a background agent")
                await until(events, lambda e: isinstance(e, Complete))
                # Many reaper periods pass while the background task runs.
                for _ in range(20):
                    await anyio.sleep(0.05)
                    assert session in manager.sessions(), "reaped while the task was running"
                gates.open("done")
                await until(events, lambda e: isinstance(e, MessageChunk) and "found" in e.text)
                for _ in range(20):
                    await anyio.sleep(0.05)
                    assert session in manager.sessions(), "reaped during a self-started turn"
                gates.open("result")
                await until(events, lambda e: isinstance(e, Complete))
            await session.wait_closed()  # idle now: reaped
            assert [] == manager.sessions()
