"""Real CLI through the public client API: an in-process SDK MCP server (scenario 11)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claudecode import messages as m
from claudecode.control import OutboundControlResponse
from claudecode.mcp import SdkMcpServer
from tests.support.timeouts import HANG_GUARD

from ._assertions import (
    answered_tool_ids,
    api_tool_results,
    assert_every_line_typed,
    open_recorded,
    result_text,
    tool_results,
)
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


def _echo_server(calls: list[dict[str, Any]]) -> SdkMcpServer:
    server = SdkMcpServer("fe")

    @server.tool(
        "echo",
        "Echo text back",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    async def echo(args: dict[str, Any]) -> str:
        calls.append(args)
        return f"echo: {args['text']}"

    return server


async def test_sdk_mcp_tool_call_reaches_the_model(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(tool_turn("mcp__fe__echo", {"text": "ping"}), text_turn("the tool said pong"))
    calls: list[dict[str, Any]] = []
    asked: list[m.CanUseToolRequest] = []

    async def allow(req: m.InboundControlRequest) -> OutboundControlResponse:
        assert isinstance(req.request, m.CanUseToolRequest)
        asked.append(req.request)
        return req.allow()

    session, stdout = open_recorded(
        cli_options(), can_use_tool=allow, mcp_servers=[_echo_server(calls)]
    )
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("echo ping")
            seen = [message async for message in session.receive_response()]
            status = await session.mcp_status()
    lines = assert_every_line_typed(stdout, seen)

    [init] = [x for x in seen if isinstance(x, m.SystemInit)]
    assert [("fe", "connected", "sdk")] == [(s.name, s.status, s.source) for s in init.mcp_servers]
    assert "mcp__fe__echo" in init.tools
    assert ["fe"] == [s["name"] for s in status.mcp_servers]

    tunnel = [
        x.request.message
        for x in lines
        if isinstance(x, m.InboundControlRequest) and isinstance(x.request, m.McpMessageRequest)
    ]
    methods = [message.get("method") for message in tunnel]
    assert {"initialize", "tools/list", "tools/call"} <= set(methods)
    assert methods.index("initialize") < methods.index("tools/list") < methods.index("tools/call")
    [call] = [msg for msg in tunnel if msg.get("method") == "tools/call"]
    assert "echo" == call["params"]["name"]
    assert [{"text": "ping"}] == calls

    [tool_use_id] = answered_tool_ids(fake_api.main_requests()[0])
    assert call["params"]["_meta"]["claudecode/toolUseId"] == tool_use_id
    [permission] = asked
    assert "mcp__fe__echo" == permission.tool_name
    assert permission.mcp_server is not None and "fe" == permission.mcp_server["name"]
    [(_, block)] = tool_results(seen)
    assert not block.is_error and "echo: ping" in result_text(block)
    [_, second] = fake_api.main_requests()
    [api_result] = api_tool_results(second.body)
    assert tool_use_id == api_result["tool_use_id"]
    assert "echo: ping" in result_text(api_result)
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert (False, "the tool said pong") == (result.is_error, result.result)


async def test_shorthand_schema_and_an_invalid_call(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A tool declared with the SDK shorthand {"a": float, "b": float}: the CLI lists it; a
    call with bad arguments is a tool error the model reads (the handler does not run), and
    the session goes on to a valid call."""
    server = SdkMcpServer("calc")
    calls: list[dict[str, Any]] = []

    @server.tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> str:
        calls.append(args)
        return str(args["a"] + args["b"])

    fake_api.add_main(
        tool_turn("mcp__calc__add", {"a": "one", "b": 2}),
        tool_turn("mcp__calc__add", {"a": 1.5, "b": 2}),
        text_turn("3.5"),
    )

    async def allow(req: m.InboundControlRequest) -> OutboundControlResponse:
        return req.allow()

    session, stdout = open_recorded(cli_options(), can_use_tool=allow, mcp_servers=[server])
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await session.send("add")
            seen = [message async for message in session.receive_response()]
    assert_every_line_typed(stdout, seen)
    [init] = [x for x in seen if isinstance(x, m.SystemInit)]
    assert "mcp__calc__add" in init.tools
    [(_, bad), (_, good)] = tool_results(seen)
    assert bad.is_error and "Input validation error" in result_text(bad)
    assert not good.is_error and "3.5" in result_text(good)
    assert [{"a": 1.5, "b": 2}] == calls
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "3.5" == result.result
