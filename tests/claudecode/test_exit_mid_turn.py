"""A CLI that exits with code 0 in the middle of a turn is an error, not a success."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from claudecode import CLIExitedError
from claudecode.messages import AssistantMessage, ResultMessage
from claudecode.session import Session
from tests.claudecode._scripted_cli import result_line, scripted_options
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio

_TEXT = {
    "type": "assistant",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "half"}]},
}


async def test_exit_0_after_the_prompt_before_the_result_raises(tmp_path: Path) -> None:
    plan = {"user": [[_TEXT]], "exit_after_user": 1, "exit_code": 0}
    got = []
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            await session.send("go")

            async def read_turn() -> None:
                async for message in session.receive_response():
                    got.append(message)

            with pytest.raises(CLIExitedError) as info:
                await read_turn()
    assert info.value.exit_code == 0
    assert "middle of a turn" in str(info.value)
    assert [type(m) for m in got] == [AssistantMessage]  # what came before is delivered


async def test_exit_0_after_the_result_ends_quietly(tmp_path: Path) -> None:
    plan = {"user": [[_TEXT, result_line()]], "exit_after_user": 1, "exit_code": 0}
    with anyio.fail_after(HANG_GUARD):
        async with Session(scripted_options(tmp_path, plan)) as session:
            await session.send("go")
            turn = [m async for m in session.receive_response()]
            assert [m async for m in session.messages()] == []
            assert not session.turn_open
    assert isinstance(turn[-1], ResultMessage)
    assert session.exit_code == 0
