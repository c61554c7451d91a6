"""Real CLI: programs written against claude-agent-sdk's API, run on the official SDK and on
claudecode.sdk, with the same observable effects (files, denials, results, what the model
received).

Each program gets the module to run on (``sdk``). The CLI runs in its private network
namespace against the fake Messages API, as in the other real-CLI tests.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import anyio
import pytest

from tests.support.timeouts import NODE_GUARD

from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

MODULES = ("claude_agent_sdk", "claudecode.sdk")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=MODULES)
def sdk(request: pytest.FixtureRequest) -> ModuleType:
    """The module a program runs on."""
    return importlib.import_module(request.param)


@pytest.fixture
def options(sdk: ModuleType, cli_command: str, cli_env: Any) -> Any:
    """``options(**kwargs)``: ClaudeAgentOptions for the real CLI of this test."""

    def build(**kwargs: Any) -> Any:
        kwargs.setdefault("env", cli_env(CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK="1"))
        return sdk.ClaudeAgentOptions(cli_path=cli_command, cwd=str(cli_env.cwd), **kwargs)

    return build


async def _collect(messages: AsyncIterator[Any]) -> list[Any]:
    with anyio.fail_after(NODE_GUARD):
        return [message async for message in messages]


def _result(sdk: ModuleType, messages: list[Any]) -> Any:
    results = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    assert results, "the run ended with a result"
    return results[-1]


def _tool_results(sdk: ModuleType, messages: list[Any]) -> list[Any]:
    return [
        block
        for message in messages
        if isinstance(message, sdk.UserMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, sdk.ToolResultBlock)
    ]


def _bash(command: str) -> dict[str, str]:
    return {"command": command, "description": "Run it"}


async def test_one_shot_query(sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI) -> None:
    """query(prompt=str) yields the assistant text and a successful result."""
    fake_api.add_main(text_turn("four"))
    messages = await _collect(sdk.query(prompt="2 + 2?", options=options()))
    texts = [
        block.text
        for m in messages
        if isinstance(m, sdk.AssistantMessage)
        for block in m.content
        if isinstance(block, sdk.TextBlock)
    ]
    assert ["four"] == texts
    result = _result(sdk, messages)
    assert ("success", False, "four") == (result.subtype, result.is_error, result.result)
    assert result.total_cost_usd and result.total_cost_usd > 0


async def test_can_use_tool_input_rewrite(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """can_use_tool rewrites the Bash command: the rewritten one runs."""
    fake_api.add_main(tool_turn("Bash", _bash("touch original.txt")), text_turn("done"))
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return sdk.PermissionResultAllow(updated_input=_bash("touch rewritten.txt"))

    async with sdk.ClaudeSDKClient(options(can_use_tool=can_use_tool)) as client:
        await client.query("create a file")
        messages = await _collect(client.receive_response())
    assert ["Bash"] == asked
    assert (cli_env.cwd / "rewritten.txt").is_file()
    assert not (cli_env.cwd / "original.txt").exists()
    assert "done" == _result(sdk, messages).result


async def test_no_callback_denies_without_hanging(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """No can_use_tool: the CLI denies by its permission mode and the run ends."""
    fake_api.add_main(tool_turn("Bash", _bash("touch unasked.txt")), text_turn("could not"))
    messages = await _collect(sdk.query(prompt="create a file", options=options()))
    assert not (cli_env.cwd / "unasked.txt").exists()
    result = _result(sdk, messages)
    assert ["Bash"] == [d["tool_name"] for d in result.permission_denials]


async def test_blocking_hook(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """A PreToolUse hook denies Bash: nothing runs, the model reads the reason."""
    fake_api.add_main(tool_turn("Bash", _bash("touch hooked.txt")), text_turn("blocked"))

    async def deny(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "HOOK-SAYS-NO",
            }
        }

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[deny])]}
    messages = await _collect(sdk.query(prompt="go", options=options(hooks=hooks)))
    assert not (cli_env.cwd / "hooked.txt").exists()
    [block] = _tool_results(sdk, messages)
    assert block.is_error and "HOOK-SAYS-NO" in json.dumps(block.content)
    assert "blocked" == _result(sdk, messages).result


async def test_in_process_mcp_tool(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """create_sdk_mcp_server with the shorthand schema: a bad call is a tool error, a good
    call's result reaches the model."""
    calls: list[dict[str, Any]] = []

    @sdk.tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    server = sdk.create_sdk_mcp_server("calc", tools=[add])
    fake_api.add_main(
        tool_turn("mcp__calc__add", {"a": "one", "b": 2}),
        tool_turn("mcp__calc__add", {"a": 1.5, "b": 2}),
        text_turn("3.5"),
    )
    run = options(mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])
    messages = await _collect(sdk.query(prompt="add", options=run))
    bad, good = _tool_results(sdk, messages)
    assert bad.is_error
    assert not good.is_error and "sum=3.5" in json.dumps(good.content)
    assert [{"a": 1.5, "b": 2}] == calls
    last_request = fake_api.main_requests()[-1].body
    assert "sum=3.5" in json.dumps(last_request["messages"])


async def test_interrupt(sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI) -> None:
    """interrupt() mid-stream ends the turn; the next prompt works."""
    fake_api.add_main(text_turn("word " * 400, delay=0.02, chunk=8), text_turn("after"))
    async with sdk.ClaudeSDKClient(options(include_partial_messages=True)) as client:
        await client.query("talk")
        first: list[Any] = []
        with anyio.fail_after(NODE_GUARD):
            async for message in client.receive_response():
                first.append(message)
                if isinstance(message, sdk.StreamEvent) and len(first) == 10:
                    await client.interrupt()
        await client.query("again")
        second = await _collect(client.receive_response())
    assert _result(sdk, first).subtype == "error_during_execution"
    assert "after" == _result(sdk, second).result


async def test_resume_fork_and_continue(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """resume keeps the session id and history, fork_session gets a new id with the same
    history, continue_conversation picks up the latest session."""
    fake_api.add_main(
        text_turn("noted"), text_turn("resumed"), text_turn("forked"), text_turn("continued")
    )
    first = _result(sdk, await _collect(sdk.query(prompt="remember KIWI", options=options())))
    sid = first.session_id
    resumed = await _collect(sdk.query(prompt="and?", options=options(resume=sid)))
    forked = await _collect(
        sdk.query(prompt="fork", options=options(resume=sid, fork_session=True))
    )
    continued = await _collect(
        sdk.query(prompt="go on", options=options(continue_conversation=True))
    )
    assert sid == _result(sdk, resumed).session_id
    assert sid != _result(sdk, forked).session_id
    assert _result(sdk, continued).session_id in (sid, _result(sdk, forked).session_id)
    for request in fake_api.main_requests()[1:]:
        assert "KIWI" in json.dumps(request.body["messages"])


async def test_structured_output(sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI) -> None:
    """output_format with a JSON schema: the result carries the structured output."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake_api.add_main(tool_turn("StructuredOutput", {"n": 3}), text_turn("done"))
    run = options(output_format={"type": "json_schema", "schema": schema})
    result = _result(sdk, await _collect(sdk.query(prompt="count", options=run)))
    assert {"n": 3} == result.structured_output


async def test_budget(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """max_budget_usd: the run stops with error_max_budget_usd once it is spent; the CLI
    exits non-zero and query() raises ResultError after yielding the result."""
    fake_api.add_main(
        tool_turn("Read", {"file_path": str(cli_env.cwd / "missing.txt")}), text_turn("never")
    )
    run = options(max_budget_usd=0.000001)
    messages: list[Any] = []

    async def run_it() -> None:
        async for message in sdk.query(prompt="read", options=run):
            messages.append(message)

    with anyio.fail_after(NODE_GUARD), pytest.raises(sdk.ResultError) as info:
        await run_it()
    result = _result(sdk, messages)
    assert ("error_max_budget_usd", True) == (result.subtype, result.is_error)
    assert "error_max_budget_usd" == info.value.subtype
    assert "Reached maximum budget" in str(info.value)
    assert 1 == len(fake_api.main_requests())


async def test_agents_and_setting_sources(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """agents are known to the CLI (initialize); setting_sources decides whether the
    project's settings (here: its model) apply; a preset system prompt keeps Claude Code's
    prompt and appends."""
    settings = cli_env.cwd / ".claude"
    settings.mkdir()
    (settings / "settings.json").write_text(json.dumps({"model": "claude-project-model"}))
    fake_api.add_main(text_turn("ok"), text_turn("ok"))
    agents = {"reviewer": sdk.AgentDefinition(description="Reviews code", prompt="Review.")}
    preset = {"type": "preset", "preset": "claude_code", "append": "APPENDED-TEXT"}
    models = []
    for sources in (["project"], []):
        run = options(agents=agents, setting_sources=sources, system_prompt=preset)
        async with sdk.ClaudeSDKClient(run) as client:
            info = await client.get_server_info()
            await client.query("hi")
            await _collect(client.receive_response())
        assert info is not None
        assert "reviewer" in [agent["name"] for agent in info["agents"]]
        body = fake_api.main_requests()[-1].body
        models.append(body["model"])
        system = "\n".join(block.get("text", "") for block in body["system"])
        assert system.rstrip().endswith("APPENDED-TEXT") and len(system) > 1000
    assert "claude-project-model" == models[0]
    assert "claude-project-model" != models[1]


@pytest.mark.parametrize("on_failure", ["block", "continue"])
async def test_hook_on_failure(
    sdk: ModuleType,
    options: Any,
    fake_api: FakeAnthropicAPI,
    cli_env: Any,
    on_failure: str,
) -> None:
    """A PreToolUse hook that raises: on_failure="block" stops the Read, "continue" lets it
    run without the hook."""
    (cli_env.cwd / "note.txt").write_text("NOTE-CONTENT\n")
    fake_api.add_main(
        tool_turn("Read", {"file_path": str(cli_env.cwd / "note.txt")}), text_turn("ok")
    )

    async def broken(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        raise RuntimeError("hook crashed")

    matcher = sdk.HookMatcher(matcher="Read", hooks=[broken], on_failure=on_failure)
    run = options(hooks={"PreToolUse": [matcher]})
    messages = await _collect(sdk.query(prompt="read the note", options=run))
    [block] = _tool_results(sdk, messages)
    if on_failure == "block":
        assert block.is_error and "NOTE-CONTENT" not in json.dumps(block.content)
    else:
        assert not block.is_error and "NOTE-CONTENT" in json.dumps(block.content)


@pytest.mark.parametrize("verbatim", [False, True])
async def test_verbatim_prompts(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI, cli_env: Any, verbatim: bool
) -> None:
    """verbatim_prompts: an ``@file`` mention in the prompt is not expanded into the file's
    content (without it, the CLI reads the file into the request)."""
    (cli_env.cwd / "note.txt").write_text("NOTE-SECRET\n")
    fake_api.add_main(text_turn("ok"))
    run = options(verbatim_prompts=verbatim)
    await _collect(sdk.query(prompt="summarize @note.txt please", options=run))
    sent = json.dumps(fake_api.main_requests()[0].body["messages"])
    assert "@note.txt" in sent
    assert ("NOTE-SECRET" in sent) is not verbatim


async def test_return_from_inside_the_loop_then_ask_again(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """The commonest program: return the session id from inside ``async for``, twice."""
    fake_api.add_main(text_turn("one"), text_turn("two"))

    async def ask(prompt: str) -> str:
        async for message in sdk.query(prompt=prompt, options=options()):
            if isinstance(message, sdk.ResultMessage):
                session_id: str = message.session_id
                return session_id
        raise AssertionError("no result")

    with anyio.fail_after(90):
        first, second = await ask("first"), await ask("second")
    assert first and second and first != second


def _mcp_package_server(calls: list[dict[str, Any]]) -> Any:
    """A server built with the mcp package itself (2.x low-level API), as programs do."""
    mcp_server = pytest.importorskip("mcp.server")
    mcp_types = pytest.importorskip("mcp.types")
    if not hasattr(mcp_types, "jsonrpc_message_adapter"):
        pytest.skip("written against mcp 2.x")

    async def list_tools(ctx: Any, params: Any) -> Any:
        schema = {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        }
        tool = mcp_types.Tool(name="mul", description="Multiply", input_schema=schema)
        return mcp_types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> Any:
        calls.append(dict(params.arguments or {}))
        product = params.arguments["a"] * params.arguments["b"]
        text = mcp_types.TextContent(type="text", text=f"product={product}")
        return mcp_types.CallToolResult(content=[text])

    return mcp_server.Server("calc", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_mcp_package_server_instance(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """mcp_servers may hold an mcp.server.Server instance: its tool runs, its result
    reaches the model."""
    calls: list[dict[str, Any]] = []
    server = {"type": "sdk", "name": "calc", "instance": _mcp_package_server(calls)}
    fake_api.add_main(tool_turn("mcp__calc__mul", {"a": 6, "b": 7}), text_turn("42"))
    run = options(mcp_servers={"calc": server}, allowed_tools=["mcp__calc__mul"])
    messages = await _collect(sdk.query(prompt="multiply", options=run))
    [result] = _tool_results(sdk, messages)
    assert not result.is_error and "product=42" in json.dumps(result.content)
    assert [{"a": 6, "b": 7}] == calls
    assert "42" == _result(sdk, messages).result


async def test_origin_comes_back_on_the_result(
    sdk: ModuleType, options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A user message stamped with an origin: the CLI hands it back on the turn's result."""
    fake_api.add_main(text_turn("stamped"))

    async def prompt() -> AsyncIterator[dict[str, Any]]:
        yield {
            "type": "user",
            "message": {"role": "user", "content": "hi"},
            "parent_tool_use_id": None,
            "origin": {"kind": "human"},
        }

    async with sdk.ClaudeSDKClient(options()) as client:
        await client.query(prompt())
        messages = await _collect(client.receive_response())
    assert {"kind": "human"} == _result(sdk, messages).origin
