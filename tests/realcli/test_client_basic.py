"""Real CLI through the public client API: the plain text turn (scenario 1)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.content import TextBlock
from claudecode.session import Session
from claudecode.stream_events import ContentBlockDelta, TextDelta
from tests.support.timeouts import HANG_GUARD

from .fake_api import FakeAnthropicAPI
from .script import Text, Thinking, Turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def test_plain_text_turn_streams_deltas_then_result(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """Deltas stream token by token, the assistant message follows, the result has usage."""
    answer = "Hello from the fake API! How can I help?"
    fake_api.add_main(Turn(blocks=[Thinking("The user says hi."), Text(answer)], chunk=8))
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with Session(cli_options()) as session:
            assert session.initialize_result is not None
            await session.send("say hi")
            async for message in session.receive_response():
                seen.append(message)
    kinds = {type(x) for x in seen}
    assert m.UnknownMessage not in kinds and m.MalformedLine not in kinds, seen
    deltas = [
        x.event.delta.text
        for x in seen
        if isinstance(x, m.StreamEvent)
        and isinstance(x.event, ContentBlockDelta)
        and isinstance(x.event.delta, TextDelta)
    ]
    assert answer == "".join(deltas)
    assert len(deltas) > 1
    texts = [
        block.text
        for x in seen
        if isinstance(x, m.AssistantMessage)
        for block in x.message.content
        if isinstance(block, TextBlock)
    ]
    assert [answer] == texts
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert "success" == result.subtype and not result.is_error
    assert answer == result.result
    assert result.usage is not None and result.usage.output_tokens
    assert result.total_cost_usd is not None and result.total_cost_usd > 0
    assert session.exit_code == 0
