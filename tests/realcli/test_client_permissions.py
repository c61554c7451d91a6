"""Real CLI through the public client API: permission prompts and file tools (scenarios 2-5)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.control import OutboundControlResponse
from tests.support.timeouts import HANG_GUARD

from ._assertions import (
    answered_tool_ids,
    api_tool_results,
    assert_every_line_typed,
    open_recorded,
    result_text,
    run_turn,
    tool_results,
)
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


def _bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "Run a command"}


class Recorder:
    """A ``can_use_tool`` callback that records each request and answers with ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.requests: list[m.CanUseToolRequest] = []
        self._answer = answer

    async def __call__(self, req: m.InboundControlRequest) -> OutboundControlResponse:
        assert isinstance(req.request, m.CanUseToolRequest)
        self.requests.append(req.request)
        response: OutboundControlResponse = self._answer(req)
        return response


async def test_bash_allowed_by_callback_really_runs(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """can_use_tool -> allow (original input): the file appears, the model gets the result."""
    fake_api.add_main(tool_turn("Bash", _bash("touch made_by_bash.txt")), text_turn("created it"))
    callback = Recorder(lambda req: req.allow())
    session, stdout = open_recorded(cli_options(), can_use_tool=callback)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "create a file")
    assert_every_line_typed(stdout, seen)

    [asked] = callback.requests
    assert "Bash" == asked.tool_name
    assert "touch made_by_bash.txt" == asked.input["command"]
    assert (cli_env.cwd / "made_by_bash.txt").is_file()
    tool_use_id = answered_tool_ids(fake_api.main_requests()[0])[0]
    assert tool_use_id == asked.tool_use_id
    [(line, block)] = tool_results(seen)
    assert tool_use_id == block.tool_use_id and not block.is_error
    assert line.tool_result_meta and line.tool_result_meta[0].permission_decision
    assert "accept" == line.tool_result_meta[0].permission_decision.decision
    [_, second] = fake_api.main_requests()
    [api_result] = api_tool_results(second.body)
    assert tool_use_id == api_result["tool_use_id"] and not api_result.get("is_error")
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert ("success", False, "created it") == (result.subtype, result.is_error, result.result)
    assert [] == result.permission_denials
    assert session.exit_code == 0


async def test_permission_request_without_callback_is_answered_with_respond(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Opted in, no callback: the request arrives in the stream;
    ``session.respond(req.allow())``."""
    fake_api.add_main(tool_turn("Bash", _bash("touch via_respond.txt")), text_turn("done"))
    session, stdout = open_recorded(cli_options(permission_prompt_tool_name="stdio"))
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            async for message in session.receive_response():
                seen.append(message)
                if isinstance(message, m.InboundControlRequest):
                    await session.respond(message.allow())
    assert_every_line_typed(stdout, seen)
    [req] = [x for x in seen if isinstance(x, m.InboundControlRequest)]
    assert isinstance(req.request, m.CanUseToolRequest)
    assert "touch via_respond.txt" == req.request.input["command"]
    assert (cli_env.cwd / "via_respond.txt").is_file()
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and not result.is_error
    assert "done" == result.result


async def test_bash_denied_by_callback_is_reported(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """deny: nothing runs, the tool result carries the message, the result lists the denial."""
    fake_api.add_main(tool_turn("Bash", _bash("touch denied.txt")), text_turn("ok, not doing it"))
    callback = Recorder(lambda req: req.deny("host says no"))
    session, stdout = open_recorded(cli_options(), can_use_tool=callback)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "create a file")
    assert_every_line_typed(stdout, seen)

    assert 1 == len(callback.requests)
    assert not (cli_env.cwd / "denied.txt").exists()
    tool_use_id = answered_tool_ids(fake_api.main_requests()[0])[0]
    [(line, block)] = tool_results(seen)
    assert tool_use_id == block.tool_use_id
    assert block.is_error is True
    assert line.tool_result_meta and line.tool_result_meta[0].permission_decision
    assert "reject" == line.tool_result_meta[0].permission_decision.decision
    assert "host says no" in result_text(block)
    [_, second] = fake_api.main_requests()
    [api_result] = api_tool_results(second.body)
    assert api_result.get("is_error") is True and "host says no" in result_text(api_result)
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert "ok, not doing it" == result.result
    [denial] = result.permission_denials
    assert ("Bash", tool_use_id) == (denial.tool_name, denial.tool_use_id)
    assert "touch denied.txt" == denial.tool_input["command"]


async def test_allow_with_modified_input_runs_the_modified_command(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """allow(updated_input=...): the modified command runs, the original does not."""
    fake_api.add_main(tool_turn("Bash", _bash("touch original.txt")), text_turn("done"))
    callback = Recorder(lambda req: req.allow(updated_input=_bash("touch modified.txt")))
    session, stdout = open_recorded(cli_options(), can_use_tool=callback)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "create a file")
    assert_every_line_typed(stdout, seen)
    assert (cli_env.cwd / "modified.txt").is_file()
    assert not (cli_env.cwd / "original.txt").exists()
    [(_, block)] = tool_results(seen)
    assert not block.is_error
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and not result.is_error


async def test_write_read_edit_of_a_file(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Write (asks), Read (auto-allowed in cwd), Edit (asks): the file ends as scripted."""
    path = str(cli_env.cwd / "hello.txt")
    fake_api.add_main(
        tool_turn("Write", {"file_path": path, "content": "hello world\n"}),
        tool_turn("Read", {"file_path": path}),
        tool_turn("Edit", {"file_path": path, "old_string": "world", "new_string": "there"}),
        text_turn("edited"),
    )
    callback = Recorder(lambda req: req.allow())
    session, stdout = open_recorded(cli_options(), can_use_tool=callback)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "write, read and edit hello.txt")
    assert_every_line_typed(stdout, seen)

    assert "hello there\n" == (cli_env.cwd / "hello.txt").read_text()
    assert ["Write", "Edit"] == [r.tool_name for r in callback.requests]
    results = tool_results(seen)
    assert 3 == len(results)
    assert not any(block.is_error for _, block in results)
    write, read, edit = (line.tool_use_result_value() for line, _ in results)
    assert path == write["filePath"] and "create" == write["type"]
    assert "hello world" in read["file"]["content"]
    assert ("world", "there") == (edit["oldString"], edit["newString"])
    assert 4 == len(fake_api.main_requests())
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert ("success", "edited") == (result.subtype, result.result)


async def test_unanswered_permission_request_times_out_as_a_denial(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """``permission_timeout``: nobody answers, the session denies with ``interrupt=True``."""
    fake_api.add_main(tool_turn("Bash", _bash("touch too_slow.txt")), text_turn("unused"))
    options = cli_options(permission_timeout=0.5, permission_prompt_tool_name="stdio")
    session, stdout = open_recorded(options)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "create a file")
    assert_every_line_typed(stdout, seen)
    assert [x for x in seen if isinstance(x, m.InboundControlRequest)]
    assert not (cli_env.cwd / "too_slow.txt").exists()
    [(_, block)] = tool_results(seen)
    assert block.is_error
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert 1 == len(fake_api.main_requests()), "interrupt=True ends the turn"
    assert ["Bash"] == [d.tool_name for d in result.permission_denials]


async def test_allow_with_updated_permissions_stops_further_prompts(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Allow the Write with its ``setMode acceptEdits`` suggestion: the Edit is not asked."""
    path = str(cli_env.cwd / "notes.txt")
    fake_api.add_main(
        tool_turn("Write", {"file_path": path, "content": "one\n"}),
        tool_turn("Edit", {"file_path": path, "old_string": "one", "new_string": "two"}),
        text_turn("done"),
    )

    def allow_with_suggestions(req: m.InboundControlRequest) -> OutboundControlResponse:
        assert isinstance(req.request, m.CanUseToolRequest)
        suggestions = req.request.permission_suggestions or []
        return req.allow(updated_permissions=suggestions)

    callback = Recorder(allow_with_suggestions)
    session, stdout = open_recorded(cli_options(), can_use_tool=callback)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "write then edit")
    assert_every_line_typed(stdout, seen)
    [asked] = callback.requests
    assert "Write" == asked.tool_name
    assert asked.permission_suggestions and any(
        s.get("mode") == "acceptEdits" for s in asked.permission_suggestions
    )
    assert "two\n" == (cli_env.cwd / "notes.txt").read_text()
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "done" == result.result


async def test_failing_permission_callback_denies(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """A ``can_use_tool`` callback that raises becomes a denial; the turn completes."""
    fake_api.add_main(tool_turn("Bash", _bash("touch not_after_crash.txt")), text_turn("ok"))

    async def broken(req: m.InboundControlRequest) -> OutboundControlResponse:
        raise RuntimeError("callback exploded")

    session, stdout = open_recorded(cli_options(), can_use_tool=broken)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("create a file")
            seen = [message async for message in session.receive_response()]
    assert_every_line_typed(stdout, seen)
    assert not (cli_env.cwd / "not_after_crash.txt").exists()
    [(_, block)] = tool_results(seen)
    assert block.is_error and "callback exploded" in result_text(block)
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "ok" == result.result
    assert ["Bash"] == [d.tool_name for d in result.permission_denials]
