"""``@tool(..., annotations=...)``: what ``tools/list`` says about each tool, the drop-in
against the official SDK's in-process server (its bridge answers the same JSON-RPC)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

official = pytest.importorskip("claude_agent_sdk")
bridge = importlib.import_module("claude_agent_sdk._internal.sdk_mcp_bridge")
import claudecode.sdk as ours  # noqa: E402

pytestmark = pytest.mark.anyio

HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
SNAKE = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
    "maxResultSizeChars": "max_result_size_chars",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _official_listing(tools: list[Any]) -> Any:
    server = official.create_sdk_mcp_server("x", tools=tools)["instance"]
    served = bridge.SdkMcpBridge("x", server)
    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        await served.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        return (await served.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))["result"]
    finally:
        await served.aclose()


async def _our_listing(tools: list[Any]) -> Any:
    server = ours.create_sdk_mcp_server("x", tools=tools)["instance"]
    return (await server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))["result"]


def _tools(module: Any, hints: list[dict[str, Any]]) -> list[Any]:
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    made = []
    for index, given_hints in enumerate(hints):
        annotations = None if given_hints is None else module.ToolAnnotations(**given_hints)
        made.append(module.tool(f"t{index}", "d", {"a": str}, annotations=annotations)(handler))
    return made


_hint_values = st.fixed_dictionaries(
    {},
    optional={
        **{name: st.booleans() for name in HINTS[1:]},
        "title": st.text(max_size=8),
        "maxResultSizeChars": st.integers(1, 10**7),
    },
)


@st.composite
def _spelled(draw: st.DrawFn) -> dict[str, Any] | None:
    values = draw(st.one_of(st.none(), _hint_values))
    if values is None:
        return None
    # Each hint in either spelling, as both libraries take.
    return {(SNAKE[k] if k in SNAKE and draw(st.booleans()) else k): v for k, v in values.items()}


@settings(max_examples=40, deadline=None)
@given(st.lists(_spelled(), max_size=3))
async def test_tools_list_matches_the_sdk(hints: list[dict[str, Any] | None]) -> None:
    """annotations as given (None dropped), maxResultSizeChars in _meta, either spelling."""
    theirs = await _official_listing(_tools(official, hints))
    mine = await _our_listing(_tools(ours, hints))
    assert theirs == mine


async def test_max_result_size_travels_in_meta() -> None:
    [listed] = (
        await _our_listing(_tools(ours, [{"read_only_hint": True, "maxResultSizeChars": 500_000}]))
    )["tools"]
    assert {"readOnlyHint": True} == listed["annotations"]
    assert {"anthropic/maxResultSizeChars": 500_000} == listed["_meta"]
    annotations = ours.ToolAnnotations(readOnlyHint=True)
    assert annotations.read_only_hint is True and annotations.readOnlyHint is True
