"""Real CLI through the public client API: closing a session and the CLI's exit."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.errors import SessionClosedError
from tests.support.timeouts import HANG_GUARD

from ._assertions import assert_every_line_typed, open_recorded
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def test_close_inside_the_block_then_drain_the_rest(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """close() documents that what the CLI writes while exiting still reaches messages()."""
    fake_api.add_main(text_turn("bye"))
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("hello")
            seen = [message async for message in session.receive_response()]
            await session.close()
            rest = [message async for message in session.messages()]
            with pytest.raises(SessionClosedError):
                await session.send("too late")
    assert_every_line_typed(stdout, [*seen, *rest])
    assert session.closed and 0 == session.exit_code


async def test_leaving_the_block_with_an_open_permission_request_denies_it(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Leaving ``async with`` while a permission request waits: denied, nothing runs, exit."""
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
    assert_every_line_typed(stdout, seen)
    assert isinstance(seen[-1], m.InboundControlRequest)
    assert not (cli_env.cwd / "never.txt").exists()
    assert session.closed and session.exit_code is not None
