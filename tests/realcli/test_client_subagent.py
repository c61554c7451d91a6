"""Real CLI through the public client API: a sub-agent via the ``Agent`` tool (scenario 13).

In 2.1.332 ``Agent`` runs in the background by default: the main turn ends right after the
launch, and when the sub-agent finishes the CLI starts a second turn by itself (a second
``system/init`` ... ``result`` with ``origin.kind == "task-notification"``).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from claudecode import messages as m
from tests.support.timeouts import HANG_GUARD

from ._assertions import (
    answered_tool_ids,
    api_tool_results,
    assert_every_line_typed,
    open_recorded,
    result_text,
    tool_results,
    tool_uses,
)
from .fake_api import FakeAnthropicAPI
from .script import Text, Turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

REPORT = "Sub-agent here: there are 0 files."


def _agent(**extra: Any) -> Turn:
    return tool_turn(
        "Agent",
        {
            "description": "Count files",
            "prompt": "Count the files in the cwd and report.",
            "subagent_type": "general-purpose",
            **extra,
        },
    )


def _script_subagent(fake_api: FakeAnthropicAPI, *, delay: float = 0.0) -> None:
    fake_api.add_subagent(
        tool_turn("Bash", {"command": "ls -1 | wc -l", "description": "Count files"}),
        Turn(blocks=[Text(REPORT)], chunk=4, delay=delay),
    )


def _check_subagent_lines(seen: list[Any], agent_id: str) -> None:
    """The sub-agent's own lines carry ``parent_tool_use_id``; its Bash call ran."""
    [bash] = tool_uses(seen, parent=agent_id)
    assert ("Bash", "ls -1 | wc -l") == (bash.name, bash.input["command"])
    sub_results = tool_results(seen, parent=agent_id)
    assert [bash.id] == [block.tool_use_id for _, block in sub_results]
    assert all(not block.is_error for _, block in sub_results)
    sub_lines = [
        x
        for x in seen
        if isinstance(x, (m.AssistantMessage, m.UserMessage)) and x.parent_tool_use_id == agent_id
    ]
    assert sub_lines and all(x.agent_id for x in sub_lines)
    [started] = [x for x in seen if isinstance(x, m.SystemTaskStarted)]
    assert agent_id == started.tool_use_id and "Count files" == started.description
    [done] = [x for x in seen if isinstance(x, m.SystemTaskNotification)]
    assert (agent_id, "completed", started.task_id) == (done.tool_use_id, done.status, done.task_id)
    assert done.summary and REPORT in done.summary


async def test_foreground_subagent(cli_options: Any, fake_api: FakeAnthropicAPI) -> None:
    """``run_in_background: false``: one turn, the hand-back is the Agent's tool result."""
    fake_api.add_main(_agent(run_in_background=False), text_turn("the sub-agent counted 0"))
    _script_subagent(fake_api)
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("use a subagent to count files")
            seen = [message async for message in session.receive_response()]
    assert_every_line_typed(stdout, seen)

    [agent_id] = answered_tool_ids(fake_api.main_requests()[0])
    _check_subagent_lines(seen, agent_id)
    [started] = [x for x in seen if isinstance(x, m.SystemTaskStarted)]
    assert started.is_backgrounded is False
    [(_, handback)] = tool_results(seen)
    assert agent_id == handback.tool_use_id and REPORT in result_text(handback)
    assert 2 == len(fake_api.subagent_requests())
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert (False, "the sub-agent counted 0") == (result.is_error, result.result)


async def test_background_subagent_starts_a_second_turn(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(
        _agent(),
        text_turn("launched a sub-agent"),
        text_turn("the sub-agent reported back"),
    )
    # The report streams slowly so the main turn surely ends before the sub-agent does.
    _script_subagent(fake_api, delay=0.05)
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("use a subagent to count files")
            first = [message async for message in session.receive_response()]
            second = [message async for message in session.receive_response()]
    seen = [*first, *second]
    assert_every_line_typed(stdout, seen)

    [agent_id] = answered_tool_ids(fake_api.main_requests()[0])
    _check_subagent_lines(seen, agent_id)
    [started] = [x for x in seen if isinstance(x, m.SystemTaskStarted)]
    assert started.is_backgrounded is True
    [(_, launch)] = tool_results(first)
    assert agent_id == launch.tool_use_id and "Async agent launched" in result_text(launch)

    one, two = first[-1], second[-1]
    assert isinstance(one, m.ResultMessage) and isinstance(two, m.ResultMessage)
    assert (False, "launched a sub-agent") == (one.is_error, one.result)
    assert (False, "the sub-agent reported back") == (two.is_error, two.result)
    assert two.origin is not None and "task-notification" == two.origin.get("kind")
    assert one.session_id == two.session_id == session.session_id
    assert [x for x in second if isinstance(x, m.SystemInit)], "the self-started turn has init"

    requests = fake_api.main_requests()
    assert 3 == len(requests)
    [launched] = api_tool_results(requests[1].body)
    assert agent_id == launched["tool_use_id"]
    assert REPORT in json.dumps(requests[2].body["messages"])


async def test_stop_task_stops_a_background_subagent(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(_agent(), text_turn("launched"), text_turn("noted the stop"))
    fake_api.add_subagent(Turn(blocks=[Text("a very slow sub-agent " * 20)], chunk=2, delay=0.05))
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("use a subagent")
            first = [message async for message in session.receive_response()]
            [started] = [x for x in first if isinstance(x, m.SystemTaskStarted)]
            assert started.task_id
            await session.stop_task(started.task_id)
            rest: list[Any] = []
            async for message in session.messages():
                rest.append(message)
                if isinstance(message, m.SystemTaskNotification):
                    break
    assert_every_line_typed(stdout, [*first, *rest])
    [done] = [x for x in rest if isinstance(x, m.SystemTaskNotification)]
    assert (started.task_id, "stopped") == (done.task_id, done.status)
