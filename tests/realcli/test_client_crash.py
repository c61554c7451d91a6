"""Real CLI through the public client API: the CLI is SIGKILLed mid-turn (scenario 14).

Whatever is waiting at that moment — the message stream, one of our control requests, a
permission callback — must end with :class:`CLIExitedError` carrying the exit status
(``-9``), and nothing may hang.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.control import OutboundControlResponse
from claudecode.errors import CLIExitedError
from tests.support.timeouts import HANG_GUARD

from ._assertions import assert_every_line_typed, open_recorded, text_deltas
from .fake_api import FakeAnthropicAPI
from .script import Text, Turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

KILLED = -signal.SIGKILL


def _kill(session: Any) -> None:
    assert session.pid is not None
    os.kill(session.pid, signal.SIGKILL)


async def _drain(session: Any, seen: list[Any], kill_on_first_delta: bool = False) -> None:
    """Collect every message into ``seen``; optionally SIGKILL the CLI at the first delta."""
    async for message in session.messages():
        seen.append(message)
        if kill_on_first_delta and len(text_deltas(seen)) == 1:
            _kill(session)


async def test_kill_while_the_turn_streams(cli_options: Any, fake_api: FakeAnthropicAPI) -> None:
    fake_api.add_main(Turn(blocks=[Text("a slowly streamed answer " * 8)], chunk=4, delay=0.05))
    session, stdout = open_recorded(cli_options())
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("talk slowly")
            with pytest.raises(CLIExitedError) as caught:
                await _drain(session, seen, kill_on_first_delta=True)
            with pytest.raises(CLIExitedError) as after:
                await session.send("are you there?")
    assert_every_line_typed(stdout, seen, allow_partial_tail=True)
    assert KILLED == caught.value.exit_code == after.value.exit_code == session.exit_code
    assert not any(isinstance(x, m.ResultMessage) for x in seen)
    assert session.closed


async def test_kill_while_our_control_request_is_pending(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """``get_context_usage`` takes the CLI a second (token counting); kill it meanwhile."""
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session, anyio.create_task_group() as tg:

            async def kill_once_counting() -> None:
                await anyio.to_thread.run_sync(
                    lambda: fake_api.wait_for_requests("count_tokens", 1, timeout=20)
                )
                _kill(session)

            tg.start_soon(kill_once_counting)
            with pytest.raises(CLIExitedError) as caught:
                await session.get_context_usage()
    assert_every_line_typed(stdout, allow_partial_tail=True)
    assert KILLED == caught.value.exit_code == session.exit_code


async def test_kill_while_a_permission_callback_waits(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    fake_api.add_main(tool_turn("Bash", {"command": "touch never.txt", "description": "x"}))
    asked = anyio.Event()
    state = {"cancelled": False}

    async def waits_forever(req: m.InboundControlRequest) -> OutboundControlResponse:
        asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            state["cancelled"] = True
            raise
        raise AssertionError("unreachable")

    session, stdout = open_recorded(cli_options(), can_use_tool=waits_forever)
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            async with anyio.create_task_group() as tg:

                async def kill_when_asked() -> None:
                    await asked.wait()
                    _kill(session)

                tg.start_soon(kill_when_asked)
                with pytest.raises(CLIExitedError) as caught:
                    await _drain(session, seen)
            with pytest.raises(CLIExitedError):
                await session.interrupt()
    assert_every_line_typed(stdout, seen, allow_partial_tail=True)
    assert KILLED == caught.value.exit_code == session.exit_code
    assert state["cancelled"], "the waiting callback was cancelled when the session closed"
    assert not (cli_env.cwd / "never.txt").exists()


async def test_kill_while_an_interrupt_is_unanswered(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """The CLI is stopped (SIGSTOP) so the interrupt cannot be answered, then killed."""
    fake_api.add_main(Turn(blocks=[Text("a slowly streamed answer " * 8)], chunk=4, delay=0.05))
    session, stdout = open_recorded(cli_options())
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session, anyio.create_task_group() as tg:
            await session.send("talk slowly")
            async for message in session.messages():
                seen.append(message)
                if text_deltas(seen):
                    break
            assert session.pid is not None
            os.kill(session.pid, signal.SIGSTOP)
            interrupted = anyio.Event()

            async def interrupt() -> None:
                with pytest.raises(CLIExitedError) as caught:
                    await session.interrupt()
                assert KILLED == caught.value.exit_code
                interrupted.set()

            tg.start_soon(interrupt)
            await anyio.sleep(0.3)  # the interrupt is written and waits for its answer
            assert not interrupted.is_set()
            _kill(session)
            with pytest.raises(CLIExitedError):
                await _drain(session, seen)
            await interrupted.wait()
    assert_every_line_typed(stdout, seen, allow_partial_tail=True)
    assert KILLED == session.exit_code


async def test_answering_a_permission_request_after_the_kill_raises(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """No callback: the request is in the stream; the CLI dies; ``respond`` raises."""
    fake_api.add_main(tool_turn("Bash", {"command": "touch never.txt", "description": "x"}))
    session, stdout = open_recorded(cli_options(permission_prompt_tool_name="stdio"))
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            async for message in session.messages():
                seen.append(message)
                if isinstance(message, m.InboundControlRequest):
                    break
            request = seen[-1]
            assert isinstance(request, m.InboundControlRequest)
            _kill(session)
            with pytest.raises(CLIExitedError):
                await _drain(session, seen)
            with pytest.raises(CLIExitedError) as caught:
                await session.respond(request.allow())
    assert_every_line_typed(stdout, seen, allow_partial_tail=True)
    assert KILLED == caught.value.exit_code == session.exit_code
