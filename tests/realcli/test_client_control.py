"""Real CLI through the public client API: our control requests (scenario 10)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.control import OutboundControlResponse, RawControl
from claudecode.errors import ControlRequestError
from claudecode.session import Session
from tests.support.timeouts import HANG_GUARD

from ._assertions import assert_every_line_typed, open_recorded, run_turn, tool_results
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def test_set_effort_changes_the_effort_of_the_next_requests(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """The CLI applies apply_flag_settings {effortLevel} from the next model request on,
    over an --effort given at start; None returns to the model's default (medium here),
    dropping the --effort too; settings that are not an object get the CLI's error."""
    fake_api.add_main(*(text_turn(f"turn {n}") for n in range(4)))
    session, stdout = open_recorded(cli_options(effort="high"))
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen += await run_turn(session, "one")
            await session.set_effort("low")
            seen += await run_turn(session, "two")
            await session.set_effort("max")
            seen += await run_turn(session, "three")
            await session.set_effort(None)
            seen += await run_turn(session, "four")
            with pytest.raises(ControlRequestError, match="`settings` to be an object, got null"):
                await session.request(RawControl("apply_flag_settings", {"settings": None}))
    assert_every_line_typed(stdout, seen)
    efforts = [r.body["output_config"]["effort"] for r in fake_api.main_requests()]
    assert ["high", "low", "max", "medium"] == efforts


async def test_set_model_applies_to_the_next_turn(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(text_turn("on the default model"), text_turn("on haiku"))
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            first = await run_turn(session, "hello")
            answer = await session.set_model("claude-haiku-4-5")
            second = await run_turn(session, "hello again")
    assert_every_line_typed(stdout, [*first, *second])

    assert "claude-haiku-4-5" == answer.model
    before, after = fake_api.main_requests()
    assert "claude-haiku-4-5" != before.body["model"]
    assert "claude-haiku-4-5" == after.body["model"]
    [init] = [x for x in second if isinstance(x, m.SystemInit)]
    assert "claude-haiku-4-5" == init.model
    result = second[-1]
    assert isinstance(result, m.ResultMessage) and "on haiku" == result.result
    assert "claude-haiku-4-5" in result.model_usage
    probes = fake_api.side_requests()
    assert all(p.body["model"] == "claude-haiku-4-5" for p in probes)


async def test_set_permission_mode_valid_and_invalid(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """acceptEdits lets the next Write run unasked; an invalid mode is a typed error."""
    path = cli_env.cwd / "accepted.txt"
    fake_api.add_main(
        tool_turn("Write", {"file_path": str(path), "content": "no questions asked\n"}),
        text_turn("written"),
    )
    asked: list[m.InboundControlRequest] = []

    async def deny_and_record(req: m.InboundControlRequest) -> OutboundControlResponse:
        asked.append(req)
        return req.deny("acceptEdits should not ask")

    session, stdout = open_recorded(cli_options(), can_use_tool=deny_and_record)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            assert session.initialize_result is not None
            assert "default" == session.initialize_result.current_permission_mode
            answer = await session.set_permission_mode("acceptEdits")
            with pytest.raises(ControlRequestError) as caught:
                await session.set_permission_mode("nonsense")
            seen = await run_turn(session, "write the file")
    assert_every_line_typed(stdout, seen)

    assert "acceptEdits" == answer.mode
    error = caught.value
    assert "invalid_mode" == error.error_code
    assert "set_permission_mode" == error.subtype
    assert "acceptEdits" in error.error_message
    statuses = [x for x in seen if isinstance(x, m.SystemStatus) and x.permission_mode]
    assert ["acceptEdits"] == [s.permission_mode for s in statuses]
    [init] = [x for x in seen if isinstance(x, m.SystemInit)]
    assert "acceptEdits" == init.permission_mode
    assert [] == asked
    assert "no questions asked\n" == path.read_text()
    [(line, block)] = tool_results(seen)
    assert not block.is_error
    assert line.tool_result_meta and line.tool_result_meta[0].permission_decision
    assert "mode" == line.tool_result_meta[0].permission_decision.reason_type
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "written" == result.result


async def test_mcp_status_thinking_budget_and_unknown_subtype(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(text_turn("still fine"))
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            status = await session.mcp_status()
            await session.set_max_thinking_tokens(2048)  # success with no body
            with pytest.raises(ControlRequestError) as caught:
                await session.request(RawControl("definitely_unknown_subtype", {"x": 1}))
            seen = await run_turn(session, "are you still there?")
    assert_every_line_typed(stdout, seen)

    assert [] == status.mcp_servers
    error = caught.value
    assert "unsupported_request" == error.error_code
    assert "definitely_unknown_subtype" == error.subtype
    assert "definitely_unknown_subtype" in error.error_message
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "still fine" == result.result
    assert 1 == len(fake_api.main_requests())


async def test_interrupt_when_idle_and_back_to_the_default_model(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """An interrupt with no turn running is acknowledged; ``set_model(None)`` resets."""
    fake_api.add_main(text_turn("one"), text_turn("two"))
    session, stdout = open_recorded(cli_options(model="claude-haiku-4-5"))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.interrupt()
            first = await run_turn(session, "first")
            await session.set_model(None)
            second = await run_turn(session, "second")
    assert_every_line_typed(stdout, [*first, *second])
    before, after = fake_api.main_requests()
    assert "claude-haiku-4-5" == before.body["model"]
    assert "claude-haiku-4-5" != after.body["model"]
    assert [False, False] == [t[-1].is_error for t in (first, second)]


async def test_context_usage_is_typed(cli_options: Any, fake_api: FakeAnthropicAPI) -> None:
    """get_context_usage returns the CLI's breakdown as a ContextUsageResult."""
    fake_api.add_main(text_turn("hi"))
    with anyio.fail_after(HANG_GUARD):
        async with Session(cli_options()) as session:
            await run_turn(session, "hello")
            usage = await session.get_context_usage()
    assert usage.total_tokens is not None and usage.total_tokens > 0
    assert usage.max_tokens is not None and usage.max_tokens >= usage.total_tokens
    assert usage.categories
    assert fake_api.requests("count_tokens")
