"""Nothing a callback returns can crash a session.

A permission callback, a hook or a tool of an in-process MCP server that returns something
JSON cannot encode, returns something that is not an answer, raises, or never returns gets
the CLI an error answer (deny with a reason / hook error / tool error) plus a log line, and
the session goes on. The fake CLI sends the request and reports the answer it got back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from claudecode.callbacks import HookMatcher
from claudecode.mcp import SdkMcpServer
from claudecode.messages import InboundControlRequest, ResultMessage
from claudecode.session import Session
from tests.claudecode._scripted_cli import result_line, scripted_options
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio

FAULTS = ["path", "object", "type", "raises", "hangs", "not_a_response"]
_SHORT = 0.5  # the bound under test; a callback that "hangs" sleeps far longer


async def _bad(fault: str, good: Any) -> Any:
    """What a faulty callback returns (``good`` wraps a value into a real answer)."""
    if fault == "raises":
        raise RuntimeError("callback broke")
    if fault == "hangs":
        await anyio.sleep(3600)
    if fault == "not_a_response":
        return 42
    # (A set is no fault: msgspec writes it as a JSON array.)
    value = {"path": Path("/tmp/x"), "object": object(), "type": int}[fault]
    return good(value)


def _plan(request: dict[str, Any]) -> dict[str, Any]:
    """The CLI asks ``request``, then reports our answer in a result; a second prompt works."""
    return {
        "user": [
            [{"type": "control_request", "request_id": "cli-req", "request": request}],
            [result_line(result="still alive")],
        ],
        "control_response": ['{"type":"result","subtype":"success","result":"{echo}"}'],
    }


async def _answer_and_second_turn(session: Session) -> tuple[dict[str, Any], ResultMessage]:
    await session.send("first")
    first = [m async for m in session.receive_response()]
    assert isinstance(first[-1], ResultMessage) and first[-1].result is not None
    await session.send("second")
    second = [m async for m in session.receive_response()]
    assert isinstance(second[-1], ResultMessage)
    return json.loads(first[-1].result)["response"], second[-1]


@pytest.mark.parametrize("fault", FAULTS)
async def test_permission_callback_fault_denies(tmp_path: Path, fault: str) -> None:
    async def can_use_tool(req: InboundControlRequest) -> Any:
        return await _bad(fault, lambda v: req.allow(updated_input={"command": "ls", "x": v}))

    request = {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}}
    opts = scripted_options(tmp_path, _plan(request), permission_timeout=_SHORT)
    with capture_logs() as logs, anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=can_use_tool) as session:
            answer, second = await _answer_and_second_turn(session)
    assert answer["subtype"] == "success" and answer["request_id"] == "cli-req"
    assert answer["response"]["behavior"] == "deny"
    assert answer["response"]["message"].startswith("permission callback ")
    # A failure is denied with its reason for the model; only silence stops the turn.
    assert answer["response"]["interrupt"] is (fault == "hangs")
    assert second.result == "still alive"
    assert any(e["event"] == "can_use_tool.failed" for e in logs)


@pytest.mark.parametrize("fault", FAULTS)
async def test_hook_callback_fault_is_a_hook_error(tmp_path: Path, fault: str) -> None:
    async def hook(req: InboundControlRequest) -> Any:
        return await _bad(fault, lambda v: {"systemMessage": v})

    request = {"subtype": "hook_callback", "callback_id": "hook_0", "input": {}}
    opts = scripted_options(tmp_path, _plan(request))
    hooks = {"PreToolUse": [HookMatcher("Bash", [hook], timeout=_SHORT)]}
    with capture_logs() as logs, anyio.fail_after(HANG_GUARD):
        async with Session(opts, hooks=hooks) as session:
            answer, second = await _answer_and_second_turn(session)
    assert answer["subtype"] == "error" and answer["request_id"] == "cli-req"
    assert answer["error"].startswith("hook callback ")
    assert second.result == "still alive"
    assert any(e["event"] == "hook_callback.failed" for e in logs)


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "not_a_response"])
async def test_mcp_tool_fault_is_a_tool_error(tmp_path: Path, fault: str) -> None:
    server = SdkMcpServer("fe", tool_timeout=_SHORT)

    @server.tool("t", "a faulty tool")
    async def faulty(args: dict[str, Any]) -> Any:
        return await _bad(fault, lambda v: {"content": [{"type": "text", "text": v}]})

    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}
    request = {"subtype": "mcp_message", "server_name": "fe", "message": call}
    opts = scripted_options(tmp_path, _plan(request))
    with capture_logs() as logs, anyio.fail_after(HANG_GUARD):
        async with Session(opts, mcp_servers=[server]) as session:
            answer, second = await _answer_and_second_turn(session)
    assert answer["subtype"] == "success" and answer["request_id"] == "cli-req"
    reply = answer["response"]["mcp_response"]
    assert reply["id"] == 7 and reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["type"] == "text"
    assert second.result == "still alive"
    assert any(e["event"] == "mcp.tool_failed" for e in logs)


async def test_hook_without_a_timeout_is_bounded_by_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook whose matcher sets no timeout is still bounded (DEFAULT_HOOK_TIMEOUT)."""
    from claudecode import _session_inbound

    monkeypatch.setattr(_session_inbound, "DEFAULT_HOOK_TIMEOUT", _SHORT)

    async def hook(req: InboundControlRequest) -> Any:
        await anyio.sleep(3600)

    request = {"subtype": "hook_callback", "callback_id": "hook_0", "input": {}}
    opts = scripted_options(tmp_path, _plan(request))
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, hooks={"Stop": [HookMatcher(None, [hook])]}) as session:
            answer, _ = await _answer_and_second_turn(session)
    assert answer["subtype"] == "error" and "did not answer" in answer["error"]
