"""Real CLI through the public client API: multi-turn, ``--resume``, ``--resume-session-at``
(scenario 9)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.content import TextBlock
from tests.support.timeouts import HANG_GUARD, NODE_GUARD

from ._assertions import (
    assert_every_line_typed,
    assistant_texts,
    open_recorded,
    run_turn,
    text_deltas,
)
from .fake_api import FakeAnthropicAPI, RecordedRequest
from .script import Text, Turn, text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


def _history(request: RecordedRequest) -> str:
    """The request's conversation (user and assistant messages) as one searchable string."""
    assert isinstance(request.body, dict)
    return json.dumps([x for x in request.body["messages"] if x.get("role") != "system"])


async def test_several_turns_in_one_process(cli_options: Any, fake_api: FakeAnthropicAPI) -> None:
    fake_api.add_main(text_turn("answer one"), text_turn("answer two"), text_turn("answer three"))
    session, stdout = open_recorded(cli_options())
    turns: list[list[Any]] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            for prompt in ("prompt one", "prompt two", "prompt three"):
                turns.append(await run_turn(session, prompt))
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
    with anyio.fail_after(NODE_GUARD):
        session, stdout = open_recorded(cli_options())
        async with session:
            first = await run_turn(session, "first prompt")
        assert_every_line_typed(stdout, first)
        seen += first
        sid = session.session_id
        assert sid is not None
        [assistant] = [x for x in first if isinstance(x, m.AssistantMessage)]
        assert ["first answer"] == assistant_texts([assistant]) and assistant.uuid

        session, stdout = open_recorded(cli_options(resume=sid))
        async with session:
            second = await run_turn(session, "second prompt")
        assert_every_line_typed(stdout, second)
        assert sid == session.session_id
        result = second[-1]
        assert isinstance(result, m.ResultMessage) and "second answer" == result.result

        session, stdout = open_recorded(cli_options(resume=sid, resume_session_at=assistant.uuid))
        async with session:
            third = await run_turn(session, "third prompt")
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


async def test_prompt_sent_mid_turn_is_queued_and_replayed(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A prompt with a ``uuid`` sent while a turn streams runs after it (command_lifecycle)."""
    fake_api.add_main(
        Turn(blocks=[Text("streaming the first answer slowly")], chunk=4, delay=0.03),
        text_turn("answer to the queued prompt"),
    )
    queued_uuid = str(uuid.uuid4())
    session, stdout = open_recorded(cli_options(replay_user_messages=True))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("first prompt")
            first: list[Any] = []
            async for message in session.receive_response():
                first.append(message)
                if len(text_deltas(first)) == 1:
                    await session.send("queued prompt", uuid=queued_uuid)
            second = [message async for message in session.receive_response()]
            rest: list[Any] = []  # "completed" comes after the queued turn's result
            async for message in session.messages():
                rest.append(message)
                if isinstance(message, m.CommandLifecycle) and message.state == "completed":
                    break
    assert_every_line_typed(stdout, [*first, *second, *rest])

    one, two = first[-1], second[-1]
    assert isinstance(one, m.ResultMessage) and isinstance(two, m.ResultMessage)
    assert "streaming the first answer slowly" == one.result
    assert "answer to the queued prompt" == two.result
    states = [
        x.state
        for x in [*first, *second, *rest]
        if isinstance(x, m.CommandLifecycle) and x.command_uuid == queued_uuid
    ]
    assert ["queued", "started", "completed"] == states
    replays = [x for x in [*first, *second] if isinstance(x, m.UserMessage) and x.is_replay]
    assert {"first prompt", "queued prompt"} <= {t for x in replays for t in _texts(x)}
    assert "queued prompt" == fake_api.last_user_text(fake_api.main_requests()[1])


def _texts(message: m.UserMessage) -> list[str]:
    content = message.message.content
    if isinstance(content, str):
        return [content]
    return [b.text for b in content if isinstance(b, TextBlock)]
