"""Real CLI through the public client API: Messages API errors (scenario 12)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from tests.support.timeouts import HANG_GUARD

from ._assertions import assert_every_line_typed, assistant_texts, open_recorded, run_turn
from .fake_api import FakeAnthropicAPI
from .script import Rule, StreamError, Text, Turn, error_turn, text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def test_sticky_500_ends_the_turn_with_the_api_error(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A 500 on every retry: ``is_error`` result with the API's text; the session goes on."""
    rule = Rule("break it", error_turn(500, "fake server error"))
    fake_api.add_rule(rule)
    fake_api.add_main(text_turn("recovered"))
    session, stdout = open_recorded(cli_options(env_overrides={"CLAUDE_CODE_MAX_RETRIES": "1"}))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            failed = await run_turn(session, "break it")
            rule.times = rule.hits  # the failed text is merged into the next prompt
            after = await run_turn(session, "try again")
    assert_every_line_typed(stdout, [*failed, *after])

    assert rule.hits >= 2, "the CLI retried the 500"
    retries = [x for x in failed if isinstance(x, m.SystemApiRetry)]
    assert retries and all(r.error_status == 500 for r in retries)
    synthetic = [x for x in failed if isinstance(x, m.AssistantMessage) and x.is_api_error_message]
    assert synthetic and "fake server error" in "".join(assistant_texts(synthetic))
    result = failed[-1]
    assert isinstance(result, m.ResultMessage)
    assert result.is_error is True
    assert result.result is not None and "fake server error" in result.result
    assert 500 == result.api_error_status
    assert "api_error" == result.terminal_reason
    recovered = after[-1]
    assert isinstance(recovered, m.ResultMessage)
    assert (False, "recovered") == (recovered.is_error, recovered.result)


async def test_529_twice_then_success_is_retried(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_rule(Rule("overload me", error_turn(529, "fake overloaded"), times=2))
    fake_api.add_main(text_turn("made it"))
    session, stdout = open_recorded(cli_options(env_overrides={"CLAUDE_CODE_MAX_RETRIES": "3"}))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "overload me")
    assert_every_line_typed(stdout, seen)

    retries = [x for x in seen if isinstance(x, m.SystemApiRetry)]
    assert [1, 2] == [r.attempt for r in retries]
    assert all((529, "overloaded") == (r.error_status, r.error) for r in retries)
    assert all(r.retry_delay_ms and r.retry_delay_ms > 0 for r in retries)
    assert [529, 529, 200] == [r.status for r in fake_api.main_requests()]
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert ("success", False, "made it") == (result.subtype, result.is_error, result.result)


async def test_mid_stream_error_is_resumed_by_the_cli(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """An SSE ``error`` event after one block: the CLI asks again by itself and succeeds."""
    fake_api.add_main(
        Turn(blocks=[Text("partial block"), Text("never sent")], stream_error=StreamError(1)),
        text_turn("complete answer"),
    )
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "go")
    assert_every_line_typed(stdout, seen)

    stops = [x for x in seen if isinstance(x, m.StreamEvent) and x.abandoned_blocks is not None]
    assert stops, "message_stop after the broken stream lists the abandoned blocks"
    assert any(isinstance(x, m.UserMessage) and x.is_synthetic for x in seen)
    assert 2 == len(fake_api.main_requests())
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert (False, "complete answer") == (result.is_error, result.result)
