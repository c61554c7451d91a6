"""The adapter's view of every turn the real CLI runs: a background sub-agent whose report
starts a turn by itself, and a prompt queued behind a running turn (real CLI, fake API).

The session's status transitions are recorded as they happen (every change goes through
``AgentSession._set_status``), so the assertions do not depend on when the test looks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import pytest

from adapter.events import Event, MessageChunk, TaskEvent, ToolCall, ToolUpdate
from adapter.session import AgentSession
from tests.support.configs import real_cli_config
from tests.support.timeouts import NODE_GUARD
from tests.support.waits import until_complete

from .cli import CLIEnv
from .fake_api import AGENT_ID_HEADER, FakeAnthropicAPI
from .script import Text, Turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

REPORT = "Sub-agent here: there are 0 files."


def _record_statuses(session: AgentSession, at: list[int] | None = None) -> list[str]:
    """Every status the session takes from now on; ``at`` gets the newest event's seq at
    each change."""
    statuses = [session.status]
    original = session._set_status

    def spy(status: Any, reason: str | None = None) -> None:
        original(status, reason)
        if session.status != statuses[-1]:
            statuses.append(session.status)
            if at is not None:
                at.append(session.last_seq)

    session._set_status = spy  # type: ignore[method-assign]
    return statuses


def _script_background_agent(fake_api: FakeAnthropicAPI) -> None:
    fake_api.add_main(
        tool_turn(
            "Agent",
            {
                "description": "Count files",
                "prompt": "Count the files in the cwd and report.",
                "subagent_type": "general-purpose",
            },
        ),
        text_turn("Launched a sub-agent."),
        # The self-started turn streams slowly: it is surely seen while it runs.
        text_turn("The sub-agent reported back: 0 files.", chunk=3, delay=0.02),
    )
    # The report streams slowly so the launching turn surely ends first.
    fake_api.add_subagent(
        tool_turn("Bash", {"command": "ls -1 | wc -l", "description": "Count files"}),
        Turn(blocks=[Text(REPORT)], chunk=4, delay=0.05),
    )


async def test_a_background_agents_report_is_a_turn_of_its_own(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    _script_background_agent(fake_api)
    seen: list[Event] = []
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            statuses = _record_statuses(session)
            with session.subscribe() as events:
                await session.prompt("use a subagent to count files")
                first = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
                tasks_after_first = session.background_tasks
                second = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
            assert "idle" == session.status and not session.background_work
            transitions = list(statuses)
    assert (first.result, second.result) == (
        "Launched a sub-agent.",
        "The sub-agent reported back: 0 files.",
    )
    assert not first.is_error and not second.is_error
    # Active for the prompt's turn, idle while only the sub-agent worked, active again for
    # the turn the CLI started by itself, idle at the end.
    assert ["connected", "active", "idle", "active", "idle"] == transitions
    [started] = [e for e in seen if isinstance(e, TaskEvent) and e.phase == "started"]
    assert started.background and started.task_id
    # When the first turn ended the sub-agent was still running (its report is slow)...
    first_at = seen.index(first)
    notified_at = next(
        i for i, e in enumerate(seen) if isinstance(e, TaskEvent) and e.phase == "notification"
    )
    assert notified_at > first_at or tasks_after_first == (started.task_id,)
    # ...and the self-started turn's text was delivered in full, before its Complete.
    texts = "".join(
        e.text
        for e in seen[first_at : seen.index(second)]
        if isinstance(e, MessageChunk) and e.parent_tool_call_id is None
    )
    assert "The sub-agent reported back: 0 files." in texts
    # The sub-agent's Bash call ended with its own result, not synthetically.
    agent_call = next(e for e in seen if isinstance(e, ToolCall) and e.tool_name == "Agent")
    sub = [e for e in seen if isinstance(e, ToolUpdate) and e.parent_tool_call_id]
    assert sub and all(u.parent_tool_call_id == agent_call.tool_call_id for u in sub)
    assert not any(u.synthetic for u in sub)
    # The sub-agent's API calls were its own.
    assert fake_api.subagent_requests()
    assert all(AGENT_ID_HEADER in r.headers for r in fake_api.subagent_requests())


async def test_a_prompt_queued_behind_a_running_turn_keeps_the_session_active(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(
        text_turn("slow words " * 60, chunk=3, delay=0.02),
        text_turn("The queued answer."),
    )
    seen: list[Event] = []
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            changed_at: list[int] = []
            statuses = _record_statuses(session, changed_at)
            with session.subscribe() as events:
                await session.prompt("talk slowly")
                async for event in events:
                    seen.append(event)
                    if isinstance(event, MessageChunk):  # the first turn is streaming
                        break
                await session.prompt("and then this")
                first = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
                second = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
            assert "idle" == session.status
            transitions = list(statuses)
    assert "and then this" in fake_api.last_user_text(fake_api.main_requests()[1])
    assert first.result is not None and first.result.startswith("slow words")
    assert "The queued answer." == second.result
    # Never idle between the two turns: the second prompt was outstanding.
    assert ["connected", "active", "idle"] == transitions
    assert changed_at[-1] >= second.seq > first.seq


def test_run_prints_the_turn_a_background_agent_starts(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """``claudecode-bridge run --json`` does not stop at the first result while the
    sub-agent works: the report's turn is printed too, and run exits 0."""
    _script_background_agent(fake_api)
    argv = [sys.executable, "-m", "adapter", "run", "--json", "--approve", "all"]
    argv += ["--cli", cli_command, "--cwd", str(cli_env.cwd), "use a subagent to count files"]
    done = subprocess.run(
        argv, capture_output=True, env=cli_env(), timeout=120, check=False, start_new_session=True
    )
    assert 0 == done.returncode, done.stderr.decode()
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    completes = [e for e in events if e["type"] == "complete"]
    assert ["Launched a sub-agent.", "The sub-agent reported back: 0 files."] == [
        c["result"] for c in completes
    ]
    notes = [e for e in events if e["type"] == "task" and e["phase"] == "notification"]
    assert notes and REPORT in (notes[0].get("summary") or "")
    assert 3 == len(fake_api.main_requests())


async def test_an_interrupt_leaves_the_queued_prompt_to_run(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """Interrupting the running turn cancels it, not the prompt queued behind it (the CLI
    says so: still_queued, then command_lifecycle cancelled / started): the session stays
    active until the queued prompt's own result."""
    fake_api.add_main(text_turn("slow words " * 200, chunk=2, delay=0.02), text_turn("B answer"))
    seen: list[Event] = []
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            changed_at: list[int] = []
            statuses = _record_statuses(session, changed_at)
            with session.subscribe() as events:
                await session.prompt("talk slowly")
                async for event in events:
                    seen.append(event)
                    if isinstance(event, MessageChunk):
                        break
                await session.prompt("B")
                await session.interrupt()
                first = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
                second = (await until_complete(events, into=seen, guard=NODE_GUARD))[-1]
            assert "idle" == session.status
            transitions = list(statuses)
    assert first.is_error and first.error is not None and "interrupted" == first.error.kind
    assert (False, "B answer") == (second.is_error, second.result)
    assert ["connected", "active", "idle"] == transitions
    assert changed_at[-1] >= second.seq
