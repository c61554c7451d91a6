"""Real CLI through the public client API: PreToolUse hooks set at initialize (scenario 6)."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import pytest

from claudecode import messages as m
from claudecode.callbacks import HookMatcher
from claudecode.control import OutboundControlResponse
from tests.support.timeouts import HANG_GUARD

from ._assertions import (
    answered_tool_ids,
    assert_every_line_typed,
    open_recorded,
    result_text,
    tool_results,
)
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

Decision = Literal["allow", "deny", "ask"]


class Calls:
    """Records the hook callbacks and permission requests of one session."""

    def __init__(self, decision: Decision | None) -> None:
        self.decision = decision
        self.hooks: list[m.HookCallbackRequest] = []
        self.permissions: list[m.CanUseToolRequest] = []

    async def pre_bash(self, req: m.InboundControlRequest) -> OutboundControlResponse | None:
        assert isinstance(req.request, m.HookCallbackRequest)
        self.hooks.append(req.request)
        if self.decision is None:
            return None
        return req.pre_tool_use(self.decision, f"host hook says {self.decision}")

    async def can_use_tool(self, req: m.InboundControlRequest) -> OutboundControlResponse:
        assert isinstance(req.request, m.CanUseToolRequest)
        self.permissions.append(req.request)
        return req.allow()


async def _run(
    cli_options: Any, fake_api: FakeAnthropicAPI, calls: Calls, command: str
) -> tuple[list[Any], m.ResultMessage, str]:
    fake_api.add_main(
        tool_turn("Bash", {"command": command, "description": "Run it"}), text_turn("finished")
    )
    session, stdout = open_recorded(
        cli_options(),
        can_use_tool=calls.can_use_tool,
        hooks={"PreToolUse": [HookMatcher("Bash", [calls.pre_bash])]},
    )
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            assert session.initialize_result is not None
            await session.send("run the command")
            async for message in session.receive_response():
                seen.append(message)
    assert_every_line_typed(stdout, seen)
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert "finished" == result.result
    [tool_use_id] = answered_tool_ids(fake_api.main_requests()[0])
    [hook] = calls.hooks
    assert "PreToolUse" == hook.input["hook_event_name"]
    assert "Bash" == hook.input["tool_name"]
    assert command == hook.input["tool_input"]["command"]
    assert tool_use_id == hook.tool_use_id == hook.input["tool_use_id"]
    return seen, result, tool_use_id


async def test_hook_allow_runs_the_tool_without_asking(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    calls = Calls("allow")
    seen, result, _ = await _run(cli_options, fake_api, calls, "touch hook_allowed.txt")
    assert [] == calls.permissions
    assert (cli_env.cwd / "hook_allowed.txt").is_file()
    [(line, block)] = tool_results(seen)
    assert not block.is_error
    assert line.tool_result_meta and line.tool_result_meta[0].permission_decision
    assert "hook" == line.tool_result_meta[0].permission_decision.source
    assert not result.is_error and [] == result.permission_denials


async def test_hook_deny_blocks_the_tool(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    calls = Calls("deny")
    seen, result, tool_use_id = await _run(cli_options, fake_api, calls, "touch hook_denied.txt")
    assert [] == calls.permissions
    assert not (cli_env.cwd / "hook_denied.txt").exists()
    [(_, block)] = tool_results(seen)
    assert block.is_error is True
    assert "host hook says deny" in result_text(block)
    [denial] = result.permission_denials
    assert ("Bash", tool_use_id) == (denial.tool_name, denial.tool_use_id)


async def test_hook_ask_hands_over_to_can_use_tool(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    calls = Calls("ask")
    seen, result, tool_use_id = await _run(cli_options, fake_api, calls, "touch hook_asked.txt")
    [asked] = calls.permissions
    assert tool_use_id == asked.tool_use_id
    assert "hook" == asked.decision_reason_type
    assert "PreToolUse" == asked.decision_reason_hook_event
    assert asked.decision_reason and "host hook says ask" in asked.decision_reason
    assert (cli_env.cwd / "hook_asked.txt").is_file()
    [(_, block)] = tool_results(seen)
    assert not block.is_error
    assert not result.is_error


async def test_hook_fires_for_an_auto_allowed_command(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A read-only command needs no permission, but the hook still fires (answer: go on)."""
    calls = Calls(None)
    seen, result, _ = await _run(cli_options, fake_api, calls, "echo hello")
    assert [] == calls.permissions
    [(line, block)] = tool_results(seen)
    assert not block.is_error
    assert "hello" in result_text(block)
    assert "hello" in line.tool_use_result_value()["stdout"]
    assert not result.is_error


async def test_post_tool_use_hook_sees_the_tool_response(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(
        tool_turn("Bash", {"command": "echo from-bash", "description": "Echo"}), text_turn("ok")
    )
    inputs: list[dict[str, Any]] = []

    async def post(req: m.InboundControlRequest) -> None:
        assert isinstance(req.request, m.HookCallbackRequest)
        inputs.append(req.request.input)

    session, stdout = open_recorded(
        cli_options(), hooks={"PostToolUse": [HookMatcher("Bash", [post])]}
    )
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("echo something")
            seen = [message async for message in session.receive_response()]
    assert_every_line_typed(stdout, seen)
    [hook_input] = inputs
    assert "PostToolUse" == hook_input["hook_event_name"]
    assert "from-bash" in hook_input["tool_response"]["stdout"]
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "ok" == result.result


async def test_failing_hook_callback_does_not_break_the_session(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """A hook callback that raises is answered with an error; the turn still completes."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch after_failed_hook.txt", "description": "x"}),
        text_turn("ok"),
    )

    async def broken(req: m.InboundControlRequest) -> None:
        raise RuntimeError("hook exploded")

    calls = Calls(None)
    session, stdout = open_recorded(
        cli_options(),
        can_use_tool=calls.can_use_tool,
        hooks={"PreToolUse": [HookMatcher("Bash", [broken])]},
    )
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            seen = [message async for message in session.receive_response()]
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "ok" == result.result
    assert 2 == len(fake_api.main_requests())
    assert ["Bash"] == [r.tool_name for r in calls.permissions], "treated as no answer"
    assert (cli_env.cwd / "after_failed_hook.txt").is_file()
    # The CLI reports the failure as {"type":"system","subtype":"informational","level":
    # "warning","tag":"hook_callback_failed","content":...}: it must decode to a typed class.
    assert_every_line_typed(stdout, seen)
