"""Real CLI through the public client API: interrupts (scenarios 7 and 8)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.control import OutboundControlResponse
from tests.support.timeouts import HANG_GUARD

from ._assertions import (
    assert_every_line_typed,
    open_recorded,
    result_text,
    text_deltas,
    tool_results,
)
from .fake_api import FakeAnthropicAPI
from .script import Text, Turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

LONG_ANSWER = "This answer streams slowly so that the test can interrupt it. " * 4


def _slow_text() -> Turn:
    # ~64 deltas x 0.05 s: over 3 s of streaming, interrupted after the first delta.
    return Turn(blocks=[Text(LONG_ANSWER)], chunk=4, delay=0.05)


async def test_interrupt_mid_stream_then_next_prompt_works(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(_slow_text(), text_turn("second answer"))
    session, stdout = open_recorded(cli_options())
    first: list[Any] = []
    second: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("tell me a long story")
            async for message in session.receive_response():
                first.append(message)
                if len(text_deltas(first)) == 1:
                    await session.interrupt()
            await session.send("now something short")
            async for message in session.receive_response():
                second.append(message)
    assert_every_line_typed(stdout, [*first, *second])

    streamed = "".join(text_deltas(first))
    assert streamed and len(streamed) < len(LONG_ANSWER)
    aborted = [x for x in first if isinstance(x, m.AssistantMessage) and x.aborted]
    assert aborted, "the partial assistant message carries aborted=True"
    interrupted = first[-1]
    assert isinstance(interrupted, m.ResultMessage)
    assert "error_during_execution" == interrupted.subtype and interrupted.is_error
    assert "aborted_streaming" == interrupted.terminal_reason

    result = second[-1]
    assert isinstance(result, m.ResultMessage)
    assert ("success", False, "second answer") == (
        result.subtype,
        result.is_error,
        result.result,
    )
    assert interrupted.session_id == result.session_id == session.session_id
    [_, again] = fake_api.main_requests()
    texts = fake_api.user_texts(again)
    assert any("[Request interrupted by user]" in t for t in texts), texts
    assert "now something short" == texts[-1]
    assert session.exit_code == 0


#: How a turn interrupted while a permission request (or its callback) is open may end.
_ABORTED_WHILE_ASKING = ("aborted_tools", "aborted_streaming")


async def test_interrupt_while_a_permission_request_is_open(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """No callback: interrupt while the request waits; the CLI cancels it; a late answer is
    dropped harmlessly and the next turn works."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch never.txt", "description": "Create"}),
        text_turn("next turn fine"),
    )
    session, stdout = open_recorded(cli_options(permission_prompt_tool_name="stdio"))
    first: list[Any] = []
    second: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            pending: m.InboundControlRequest | None = None
            async for message in session.receive_response():
                first.append(message)
                if isinstance(message, m.InboundControlRequest):
                    pending = message
                    await session.interrupt()
            assert pending is not None
            await session.respond(pending.allow())  # late: silently dropped
            await session.send("and now?")
            async for message in session.receive_response():
                second.append(message)
    assert_every_line_typed(stdout, [*first, *second])

    assert pending is not None and isinstance(pending.request, m.CanUseToolRequest)
    [cancel] = [x for x in first if isinstance(x, m.ControlCancelRequest)]
    assert pending.request_id == cancel.request_id
    assert not (cli_env.cwd / "never.txt").exists()
    [(_, block)] = tool_results(first)
    assert block.is_error and "doesn't want to proceed" in result_text(block)
    interrupted = first[-1]
    assert isinstance(interrupted, m.ResultMessage)
    assert "error_during_execution" == interrupted.subtype and interrupted.is_error
    # The CLI asks for permission as soon as the tool_use block is complete, while the API's
    # stream may still be open (message_delta / message_stop not read yet): an interrupt that
    # lands in that window ends the turn as aborted_streaming, later as aborted_tools. On a
    # loaded machine both happen; the request was cancelled and nothing ran either way.
    assert interrupted.terminal_reason in _ABORTED_WHILE_ASKING
    result = second[-1]
    assert isinstance(result, m.ResultMessage)
    assert (False, "next turn fine") == (result.is_error, result.result)
    assert session.exit_code == 0


async def test_interrupt_cancels_a_waiting_permission_callback(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """With a callback that never answers: control_cancel_request cancels the callback."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch never.txt", "description": "Create"}),
        text_turn("next turn fine"),
    )
    entered = anyio.Event()
    state: dict[str, Any] = {"cancelled": False, "request": None}

    async def never_answers(req: m.InboundControlRequest) -> OutboundControlResponse:
        state["request"] = req
        entered.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            state["cancelled"] = True
            raise
        raise AssertionError("unreachable")

    session, stdout = open_recorded(cli_options(), can_use_tool=never_answers)
    first: list[Any] = []
    second: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            async with anyio.create_task_group() as tg:

                async def interrupt_when_asked() -> None:
                    await entered.wait()
                    await session.interrupt()

                tg.start_soon(interrupt_when_asked)
                async for message in session.receive_response():
                    first.append(message)
            await session.send("and now?")
            async for message in session.receive_response():
                second.append(message)
    assert_every_line_typed(stdout, [*first, *second])

    req = state["request"]
    assert isinstance(req, m.InboundControlRequest)
    [cancel] = [x for x in first if isinstance(x, m.ControlCancelRequest)]
    assert req.request_id == cancel.request_id
    assert state["cancelled"], "the callback's task was cancelled"
    assert not (cli_env.cwd / "never.txt").exists()
    interrupted = first[-1]
    assert isinstance(interrupted, m.ResultMessage)
    assert interrupted.terminal_reason in _ABORTED_WHILE_ASKING  # see the test above
    result = second[-1]
    assert isinstance(result, m.ResultMessage) and "next turn fine" == result.result
