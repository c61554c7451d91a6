"""The agent's questions (AskUserQuestion) through AgentSession, against the real CLI: the
question event, an answer, a decline and the autonomous policy's refusal, each checked in the
tool result the model receives (fake Messages API)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from adapter.events import (
    Complete,
    Event,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
)
from adapter.questions import AUTONOMOUS_DECLINE, InvalidAnswerError
from adapter.session import AgentSession, UnknownPermissionError
from tests.support.configs import real_cli_config

from ._assertions import api_tool_results, result_text
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

STYLE = "Which greeting style should I use?"
TOPPINGS = "Which toppings?"
ASK = {
    "questions": [
        {
            "question": STYLE,
            "header": "Style",
            "options": [
                {"label": "Formal", "description": "Good day to you."},
                {"label": "Casual", "description": "Hey there!"},
            ],
            "multiSelect": False,
        },
        {
            "question": TOPPINGS,
            "header": "Toppings",
            "options": [
                {"label": "Cheese", "description": "c"},
                {"label": "Olives, black", "description": "o"},
            ],
            "multiSelect": True,
        },
    ]
}


async def _turn(session: AgentSession, answer: Any) -> list[Event]:
    """Prompt, hand each question to ``answer`` and collect the turn's events."""
    seen: list[Event] = []
    events = session.subscribe()
    try:
        await session.prompt("greet me")
        async for event in events:
            seen.append(event)
            if isinstance(event, QuestionRequest):
                await answer(session, event)
            if isinstance(event, Complete):
                return seen
    finally:
        events.close()
    raise AssertionError(f"the stream ended first: {seen[-5:]!r}")


def _model_read(fake_api: FakeAnthropicAPI) -> str:
    [_, second] = fake_api.main_requests()
    [result] = api_tool_results(second.body)
    return result_text(result)


async def test_an_answered_question_reaches_the_model(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(tool_turn("AskUserQuestion", ASK), text_turn("Casual it is."))

    async def answer(session: AgentSession, event: QuestionRequest) -> None:
        with pytest.raises(InvalidAnswerError):  # one answer to a single-choice question
            await session.answer_question(event.pending_id, {STYLE: ["Formal", "Casual"]})
        with pytest.raises(InvalidAnswerError):
            await session.answer_question(event.pending_id, {"Not asked?": ["x"]})
        assert [event.pending_id] == session.pending_questions
        await session.answer_question(
            event.pending_id, {STYLE: ["Casual"], TOPPINGS: ["Cheese", "Olives, black"]}
        )
        with pytest.raises(UnknownPermissionError):
            await session.answer_question(event.pending_id, {STYLE: ["Casual"]})

    config = real_cli_config(cli_command, cli_env, client={"close_grace": 10.0})
    with anyio.fail_after(90):
        async with AgentSession(config) as session:
            seen = await _turn(session, answer)

    assert not any(isinstance(e, PermissionRequest) for e in seen)
    [question] = [e for e in seen if isinstance(e, QuestionRequest)]
    assert [STYLE, TOPPINGS] == [q.question for q in question.questions]
    assert ["Formal", "Casual"] == [o.label for o in question.questions[0].options]
    assert "Hey there!" == question.questions[0].options[1].description
    assert (False, True) == (question.questions[0].multi_select, question.questions[1].multi_select)
    assert question.tool_call_id
    [resolved] = [e for e in seen if isinstance(e, PermissionResolved)]
    assert ("answered", "user") == (resolved.decision, resolved.by)
    assert {STYLE: ["Casual"], TOPPINGS: ["Cheese", "Olives, black"]} == resolved.answers
    read = _model_read(fake_api)
    # The label holding ", " is quoted (JSON) so that the tool splits it back as one item.
    assert f'"{TOPPINGS}"="Cheese, "Olives, black""' in read, read


async def test_a_declined_question_tells_the_model_why(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(tool_turn("AskUserQuestion", ASK), text_turn("I'll pick myself."))

    async def decline(session: AgentSession, event: QuestionRequest) -> None:
        await session.decline_question(event.pending_id, "pick any")

    config = real_cli_config(cli_command, cli_env, client={"close_grace": 10.0})
    with anyio.fail_after(90):
        async with AgentSession(config) as session:
            seen = await _turn(session, decline)
    [resolved] = [e for e in seen if isinstance(e, PermissionResolved)]
    assert ("declined", "user", "pick any") == (resolved.decision, resolved.by, resolved.message)
    assert "declined to answer the questions: pick any" in _model_read(fake_api)
    assert not seen[-1].is_error  # type: ignore[attr-defined]


async def test_the_autonomous_policy_declines_with_a_reason(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(tool_turn("AskUserQuestion", ASK), text_turn("Deciding myself."))

    async def never(session: AgentSession, event: QuestionRequest) -> None:
        assert event.pending_id not in session.pending_permissions

    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(90):
        async with AgentSession(config) as session:
            seen = await _turn(session, never)
    [question] = [e for e in seen if isinstance(e, QuestionRequest)]
    [resolved] = [e for e in seen if isinstance(e, PermissionResolved)]
    assert (question.pending_id, "declined", "policy") == (
        resolved.pending_id,
        resolved.decision,
        resolved.by,
    )
    assert AUTONOMOUS_DECLINE in _model_read(fake_api)
