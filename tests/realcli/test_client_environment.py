"""Real CLI: how 2.1.332 treats update_environment_variables (recorded behaviour)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import InboundControlRequest, ResultMessage
from claudecode import control as ctl
from claudecode.session import Session
from tests.support.timeouts import HANG_GUARD

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def test_update_environment_variables_is_accepted_but_not_seen_by_bash(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: CLIEnv
) -> None:
    """The CLI accepts the message and the session goes on, but 2.1.332 does not put the
    variable into the Bash tool's environment. If a new version does, this test says so."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "echo $BRIDGE_VAR > env.txt", "description": "x"}),
        text_turn("ok"),
    )

    async def allow(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        return req.allow()

    with anyio.fail_after(HANG_GUARD):
        async with Session(cli_options(), can_use_tool=allow) as session:
            await session.send_message(
                ctl.UpdateEnvironmentVariables(variables={"BRIDGE_VAR": "from-the-host"})
            )
            await session.send("write the variable")
            seen = [m async for m in session.receive_response()]
    result = seen[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert "" == (cli_env.cwd / "env.txt").read_text().strip()
