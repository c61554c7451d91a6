"""Real CLI through the public client API: multi-turn, ``--resume``, ``--resume-session-at``
(scenario 9)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from claudecode import messages as m

from ._assertions import assert_every_line_typed, assistant_texts, open_recorded
from .fake_api import FakeAnthropicAPI, RecordedRequest
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


def _history(request: RecordedRequest) -> str:
    """The request's conversation (user and assistant messages) as one searchable string."""
    assert isinstance(request.body, dict)
    return json.dumps([x for x in request.body["messages"] if x.get("role") != "system"])


async def _turn(session: Any, prompt: str) -> list[Any]:
    await session.send(prompt)
    return [message async for message in session.receive_response()]


async def test_several_turns_in_one_process(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(text_turn("answer one"), text_turn("answer two"), text_turn("answer three"))
    session, stdout = open_recorded(cli_options())
    turns: list[list[Any]] = []
    with anyio.fail_after(60):
        async with session:
            for prompt in ("prompt one", "prompt two", "prompt three"):
                turns.append(await _turn(session, prompt))
    assert_every_line_typed(stdout, [x for turn in turns for x in turn])

    results = [turn[-1] for turn in turns]
    assert all(isinstance(r, m.ResultMessage) and not r.is_error for r in results)
    assert ["answer one", "answer two", "answer three"] == [r.result for r in results]
    inits = [x for turn in turns for x in turn if isinstance(x, m.SystemInit)]
    assert 3 == len(inits), "system/init comes once per turn"
    assert {session.session_id} == {r.session_id for r in results} | {i.session_id for i in inits}
    requests = fake_api.main_requests()
    assert 3 == len(requests)
    third = _history(requests[2])
    for text in ("prompt one", "answer one", "prompt two", "answer two", "prompt three"):
        assert text in third
    assert "answer three" not in third


async def test_resume_carries_history_and_resume_session_at_branches(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(
        text_turn("first answer"), text_turn("second answer"), text_turn("third answer")
    )
    seen: list[Any] = []
    with anyio.fail_after(90):
        session, stdout = open_recorded(cli_options())
        async with session:
            first = await _turn(session, "first prompt")
        assert_every_line_typed(stdout, first)
        seen += first
        sid = session.session_id
        assert sid is not None
        [assistant] = [x for x in first if isinstance(x, m.AssistantMessage)]
        assert ["first answer"] == assistant_texts([assistant]) and assistant.uuid

        session, stdout = open_recorded(cli_options(resume=sid))
        async with session:
            second = await _turn(session, "second prompt")
        assert_every_line_typed(stdout, second)
        assert sid == session.session_id
        result = second[-1]
        assert isinstance(result, m.ResultMessage) and "second answer" == result.result

        session, stdout = open_recorded(
            cli_options(resume=sid, resume_session_at=assistant.uuid)
        )
        async with session:
            third = await _turn(session, "third prompt")
        assert_every_line_typed(stdout, third)
        result = third[-1]
        assert isinstance(result, m.ResultMessage) and "third answer" == result.result

    one, two, three = (_history(r) for r in fake_api.main_requests())
    assert "second prompt" not in one
    for text in ("first prompt", "first answer", "second prompt"):
        assert text in two
    for text in ("first prompt", "first answer", "third prompt"):
        assert text in three
    assert "second prompt" not in three and "second answer" not in three
