"""In-process MCP servers: shorthand input schemas, argument validation, result shapes."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claudecode.mcp import SdkMcpServer
from claudecode.mcp_schema import input_schema
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


class Point(TypedDict):
    x: float
    y: Annotated[float, "the y coordinate"]
    label: NotRequired[str]


class Pair(TypedDict):
    first: int
    second: Annotated[str, "the second"]


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _adder() -> SdkMcpServer:
    server = SdkMcpServer("calc")

    @server.tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    @server.tool("norm", "Length of a point", Point)
    def norm(args: dict[str, Any]) -> str:
        return f"{(args['x'] ** 2 + args['y'] ** 2) ** 0.5:g}"

    @server.tool("fail", "Reports an error the SDK way", {"type": "object", "properties": {}})
    async def fail(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "nope"}], "is_error": True}

    return server


def test_shorthand_schemas_match_the_official_sdk() -> None:
    """{"a": float} and TypedDicts become the JSON Schema claude-agent-sdk sends."""
    from claude_agent_sdk import create_sdk_mcp_server, tool

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    for shorthand in (
        {"a": float, "b": int, "tags": list[str], "on": bool, "maybe": str | None},
        Pair,
        {"type": "object", "properties": {"q": {"type": "string"}}},
    ):
        theirs = create_sdk_mcp_server("s", tools=[tool("t", "d", shorthand)(handler)])
        sdk_server = theirs["instance"]
        assert sdk_server is not None
        ours = input_schema(shorthand)  # type: ignore[arg-type]
        expected = _sdk_schema(shorthand)
        assert expected == ours


def _sdk_schema(shorthand: Any) -> dict[str, Any]:
    from claude_agent_sdk import SdkMcpTool
    from claude_agent_sdk import _build_input_schema as build

    async def handler(args: Any) -> dict[str, Any]:
        return {}

    schema: dict[str, Any] = build(SdkMcpTool("t", "d", shorthand, handler))
    return schema


async def test_tools_list_carries_the_converted_schemas() -> None:
    """tools/list advertises JSON Schemas, never Python types."""
    reply = await _adder().handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    tools = {t["name"]: t["inputSchema"] for t in reply["result"]["tools"]}
    assert {"a": {"type": "number"}, "b": {"type": "number"}} == tools["add"]["properties"]
    assert ["a", "b"] == tools["add"]["required"]
    # NotRequired is honoured even in a module with `from __future__ import annotations`
    # (claude-agent-sdk marks such keys required there on Python 3.11).
    assert ["x", "y"] == tools["norm"]["required"]
    assert "the y coordinate" == tools["norm"]["properties"]["y"]["description"]


async def test_valid_calls_run_and_invalid_ones_are_tool_errors() -> None:
    """Arguments are validated: a bad call is an isError result; the handler never runs."""
    server = _adder()
    ok = (await server.handle(_call("add", {"a": 1.5, "b": 2})))["result"]
    assert {"content": [{"type": "text", "text": "3.5"}]} == ok
    bad = (await server.handle(_call("add", {"a": "one"})))["result"]
    assert bad["isError"] is True
    assert bad["content"][0]["text"].startswith("Input validation error:")
    optional = (await server.handle(_call("norm", {"x": 3, "y": 4})))["result"]
    assert "5" == optional["content"][0]["text"]
    flagged = (await server.handle(_call("fail", {})))["result"]
    assert flagged["isError"] is True and "is_error" not in flagged


@settings(max_examples=60, deadline=None)
@given(
    arguments=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=8,
    )
)
def test_any_arguments_give_a_result_never_an_exception(arguments: Any) -> None:
    """Whatever the CLI sends as arguments, the answer is a JSON-RPC result."""
    import anyio

    reply = anyio.run(_adder().handle, _call("add", arguments))
    assert "result" in reply
    assert isinstance(reply["result"]["content"], list)


def test_the_mcp_package_is_imported_only_by_programs_that_use_it() -> None:
    """``import claudecode.sdk`` and the ``claudecode-bridge`` commands leave ``mcp`` (and
    its hundreds of pydantic models, ~0.4 s) unloaded; an ``mcp`` server instance is still
    recognised once the program has made one."""
    check = (
        "import sys, claudecode.sdk, adapter.commands.main, adapter.commands.worker\n"
        "assert 'mcp' not in sys.modules and 'pydantic' not in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith(('mcp', 'pydantic')))\n"
        "from claudecode.sdk._mcp_bridge import is_mcp_server\n"
        "assert not is_mcp_server(object())\n"
        "from mcp.server.lowlevel import Server\n"
        "assert is_mcp_server(Server('x'))\n"
    )
    pytest.importorskip("mcp.server.lowlevel")
    subprocess.run([sys.executable, "-c", check], check=True, timeout=HANG_GUARD)
