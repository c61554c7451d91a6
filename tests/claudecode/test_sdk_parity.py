"""claudecode.sdk against claude-agent-sdk: the same programs, the same fake CLI, the same
effects (files, denials, results, flags and ``initialize`` sent).

Every program here is written against the official SDK's API and receives the module to
run on (``sdk``): ``claude_agent_sdk`` or ``claudecode.sdk``. The official SDK is a test
dependency.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from benchmarks import procfs
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio

MODULES = ("claude_agent_sdk", "claudecode.sdk")


@pytest.fixture
def anyio_backend() -> str:
    # The official SDK is exercised on asyncio; the drop-in also runs on trio below.
    return "asyncio"


@pytest.fixture(params=MODULES)
def sdk(request: pytest.FixtureRequest) -> ModuleType:
    """The module a program runs on."""
    return importlib.import_module(request.param)


class Fake:
    """A fake CLI for one run: its path, working directory and what it recorded."""

    def __init__(self, tmp_path: Path, body: dict[str, Any], name: str = "run") -> None:
        self.record = tmp_path / f"{name}.jsonl"
        self.cwd = tmp_path / f"{name}-work"
        self.cwd.mkdir()
        self.cli = fake_cli_command({**body, "record_path": str(self.record)}, tmp_path / name)

    def options(self, sdk: ModuleType, **kwargs: Any) -> Any:
        kwargs.setdefault("env", {"CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"})
        return sdk.ClaudeAgentOptions(cli_path=str(self.cli), cwd=str(self.cwd), **kwargs)

    def header(self) -> dict[str, Any]:
        with self.record.open() as fh:
            first: dict[str, Any] = json.loads(fh.readline())
        return first

    def received(self) -> list[dict[str, Any]]:
        with self.record.open() as fh:
            lines = [json.loads(line) for line in fh]
        return [line["received"] for line in lines if "received" in line]

    def initialize(self) -> dict[str, Any]:
        [body] = [
            msg["request"]
            for msg in self.received()
            if msg.get("type") == "control_request"
            and msg["request"].get("subtype") == "initialize"
        ]
        # The official SDK writes "hooks": null where we leave the key out: the same request.
        return {k: v for k, v in body.items() if k != "request_id" and v is not None}


async def _collect(messages: AsyncIterator[Any]) -> list[Any]:
    with anyio.fail_after(HANG_GUARD):
        return [message async for message in messages]


def _texts(sdk: ModuleType, messages: list[Any]) -> list[str]:
    return [
        block.text
        for message in messages
        if isinstance(message, sdk.AssistantMessage)
        for block in message.content
        if isinstance(block, sdk.TextBlock)
    ]


async def test_one_shot_query(sdk: ModuleType, tmp_path: Path) -> None:
    """query(prompt=str): assistant text, then one ResultMessage with the SDK's fields."""
    fake = Fake(tmp_path, script(text_turn("Hello from the fake")))
    messages = await _collect(sdk.query(prompt="hi", options=fake.options(sdk)))
    assert ["Hello from the fake"] == _texts(sdk, messages)
    result = messages[-1]
    assert isinstance(result, sdk.ResultMessage)
    assert ("success", False, "Hello from the fake") == (
        result.subtype,
        result.is_error,
        result.result,
    )
    assert result.session_id and result.total_cost_usd is not None
    assert isinstance(result.usage, dict) and result.num_turns >= 1
    init = [m for m in messages if isinstance(m, sdk.SystemMessage) and m.subtype == "init"]
    assert init and init[0].data["session_id"] == result.session_id
    assert "user" == fake.received()[-1]["type"]


async def test_multi_turn_client(sdk: ModuleType, tmp_path: Path) -> None:
    """ClaudeSDKClient: two prompts in one session, one response each."""
    fake = Fake(tmp_path, script(text_turn("first answer"), text_turn("second answer")))
    async with sdk.ClaudeSDKClient(fake.options(sdk)) as client:
        await client.query("one")
        first = await _collect(client.receive_response())
        await client.query("two")
        second = await _collect(client.receive_response())
        info = await client.get_server_info()
    assert ["first answer"] == _texts(sdk, first)
    assert ["second answer"] == _texts(sdk, second)
    assert first[-1].session_id == second[-1].session_id
    assert info is not None and "commands" in info
    prompts = [m["message"]["content"] for m in fake.received() if m.get("type") == "user"]
    assert ["one", "two"] == prompts


async def test_can_use_tool_rewrites_the_input(sdk: ModuleType, tmp_path: Path) -> None:
    """can_use_tool allows with updated_input: the rewritten command runs, not the original."""
    body = script(tool_turn("Bash", {"command": "touch original.txt"}, permission=True))
    fake = Fake(tmp_path, body)
    asked: list[tuple[str, dict[str, Any], Any]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input, context))
        return sdk.PermissionResultAllow(updated_input={"command": "touch rewritten.txt"})

    options = fake.options(sdk, can_use_tool=can_use_tool)
    async with sdk.ClaudeSDKClient(options) as client:
        await client.query("make a file")
        messages = await _collect(client.receive_response())
    [(name, tool_input, context)] = asked
    assert ("Bash", {"command": "touch original.txt"}) == (name, tool_input)
    assert isinstance(context, sdk.ToolPermissionContext) and context.tool_use_id
    assert (fake.cwd / "rewritten.txt").exists()
    assert not (fake.cwd / "original.txt").exists()
    assert not messages[-1].is_error
    argv = fake.header()["argv"]
    assert "stdio" == argv[argv.index("--permission-prompt-tool") + 1]


async def test_can_use_tool_denial(sdk: ModuleType, tmp_path: Path) -> None:
    """PermissionResultDeny: nothing runs and the result lists the denial."""
    body = script(tool_turn("Bash", {"command": "touch denied.txt"}, permission=True))
    fake = Fake(tmp_path, body)

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return sdk.PermissionResultDeny(message="not here")

    options = fake.options(sdk, can_use_tool=can_use_tool)
    async with sdk.ClaudeSDKClient(options) as client:
        await client.query("make a file")
        messages = await _collect(client.receive_response())
    assert not (fake.cwd / "denied.txt").exists()
    results = [
        block
        for message in messages
        if isinstance(message, sdk.UserMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, sdk.ToolResultBlock)
    ]
    assert [True] == [block.is_error for block in results]
    assert ["Bash"] == [d["tool_name"] for d in messages[-1].permission_denials]


async def test_no_callback_is_denied_by_the_cli_not_a_hang(sdk: ModuleType, tmp_path: Path) -> None:
    """Without can_use_tool nobody is asked: the CLI denies, the query ends."""
    body = script(tool_turn("Bash", {"command": "touch unasked.txt"}, permission=True))
    fake = Fake(tmp_path, body)
    messages = await _collect(sdk.query(prompt="go", options=fake.options(sdk)))
    assert not (fake.cwd / "unasked.txt").exists()
    assert ["Bash"] == [d["tool_name"] for d in messages[-1].permission_denials]
    assert "--permission-prompt-tool" not in fake.header()["argv"]


async def test_blocking_pre_tool_use_hook(sdk: ModuleType, tmp_path: Path) -> None:
    """A PreToolUse hook that denies: the tool never runs; the hook saw its input."""
    fake = Fake(tmp_path, script(tool_turn("Bash", {"command": "touch hooked.txt"})))
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def block_bash(input_data: dict[str, Any], tool_use_id: str | None, context: Any):
        seen.append((input_data, tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no shell today",
            }
        }

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[block_bash])]}
    messages = await _collect(sdk.query(prompt="go", options=fake.options(sdk, hooks=hooks)))
    assert not (fake.cwd / "hooked.txt").exists()
    [(input_data, tool_use_id)] = seen
    assert "Bash" == input_data["tool_name"] and tool_use_id
    assert ["Bash"] == [d["tool_name"] for d in messages[-1].permission_denials]
    hook_config = fake.initialize()["hooks"]["PreToolUse"]
    assert [("Bash", 1)] == [(m["matcher"], len(m["hookCallbackIds"])) for m in hook_config]


async def test_interrupt(sdk: ModuleType, tmp_path: Path) -> None:
    """interrupt() during a slow turn ends it with error_during_execution; the next works."""
    slow = text_turn("x" * 400, delay=0.05, chunk=4)
    fake = Fake(tmp_path, script(slow, text_turn("after")))
    async with sdk.ClaudeSDKClient(fake.options(sdk, include_partial_messages=True)) as client:
        await client.query("long")
        first: list[Any] = []
        with anyio.fail_after(HANG_GUARD):
            async for message in client.receive_response():
                first.append(message)
                if isinstance(message, sdk.StreamEvent) and len(first) == 8:
                    assert isinstance(message.event, dict) and "type" in message.event
                    await client.interrupt()
        await client.query("again")
        second = await _collect(client.receive_response())
    assert "error_during_execution" == first[-1].subtype
    assert ["after"] == _texts(sdk, second)


async def test_streamed_input_query(sdk: ModuleType, tmp_path: Path) -> None:
    """query() with an async iterable of user dicts: every prompt answered, in order."""
    fake = Fake(tmp_path, script(text_turn("a1"), text_turn("a2")))

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        for text in ("q1", "q2"):
            yield {"type": "user", "message": {"role": "user", "content": text}}

    messages = await _collect(sdk.query(prompt=prompts(), options=fake.options(sdk)))
    assert ["a1", "a2"] == _texts(sdk, messages)
    assert 2 == sum(isinstance(m, sdk.ResultMessage) for m in messages)


def _flag_options(sdk: ModuleType) -> dict[str, Any]:
    """Options that become flags or initialize fields, for comparing what is sent."""
    return {
        "model": "claude-sonnet-4-5",
        "fallback_model": "claude-haiku-4-5",
        "permission_mode": "acceptEdits",
        "max_turns": 3,
        "max_budget_usd": 0.5,
        "allowed_tools": ["Read"],
        "disallowed_tools": ["WebFetch"],
        "tools": ["Read", "Bash"],
        "system_prompt": {"type": "preset", "preset": "claude_code", "append": "Be brief."},
        "setting_sources": ["project"],
        "betas": ["context-1m-2025-08-07"],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "effort": "high",
        "output_format": {
            "type": "json_schema",
            "schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
        "agents": {
            "reviewer": sdk.AgentDefinition(
                description="Reviews code", prompt="You review.", tools=["Read"]
            )
        },
        "skills": ["pdf"],
        "sandbox": {"enabled": True},
        "plugins": [{"type": "local", "path": "/plugins/demo"}],
        "strict_mcp_config": True,
        "include_hook_events": True,
        "add_dirs": ["/extra"],
        "extra_args": {"debug-to-stderr": None},
        "task_budget": {"total": 50000},
        "forward_subagent_text": True,
        "enable_file_checkpointing": True,
        "client_app": "parity-test/1.0",
    }


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"resume": "3f1e9c3a-8d5b-4c2e-9f1a-2b3c4d5e6f70", "fork_session": True},
        {"continue_conversation": True, "session_id": "0a1b2c3d-0000-4000-8000-000000000001"},
        {
            "resume": "3f1e9c3a-8d5b-4c2e-9f1a-2b3c4d5e6f70",
            "resume_session_at": "u-1",
            "resume_drops_turn": "u-2",
        },
    ],
    ids=["options", "resume-fork", "continue-session-id", "resume-at"],
)
async def test_same_flags_and_initialize_as_the_official_sdk(
    tmp_path: Path, extra: dict[str, Any]
) -> None:
    """The same options give the same argv (order aside; we also pass -p) and the same
    initialize request (agents, skills, hooks) from both libraries."""
    seen: dict[str, tuple[list[str], dict[str, Any]]] = {}
    checkpointing: list[str | None] = []
    apps: list[str | None] = []
    for name in MODULES:
        sdk = importlib.import_module(name)
        fake = Fake(tmp_path, script(text_turn("ok")), name=name.replace(".", "_"))
        options = fake.options(sdk, **_flag_options(sdk), **extra)
        await _collect(sdk.query(prompt="hi", options=options))
        header = fake.header()
        # the fake's arguments, without its own name; inline JSON we pass through a private
        # file (the official SDK puts it on the command line) compared by its content
        argv = [header["arg_files"].get(arg, arg) for arg in header["argv"]]
        checkpointing.append(header["env"].get("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"))
        apps.append(header["env"].get("CLAUDE_AGENT_SDK_CLIENT_APP"))
        seen[name] = (argv, fake.initialize())
    (theirs, their_init), (ours, our_init) = seen["claude_agent_sdk"], seen["claudecode.sdk"]
    assert sorted(theirs) == sorted(x for x in ours if x != "-p")
    assert their_init == our_init
    assert ["true", "true"] == checkpointing
    assert ["parity-test/1.0", "parity-test/1.0"] == apps
    assert "Be brief." in ours and not any("'preset'" in x for x in ours)


async def test_drop_in_runs_on_trio(tmp_path: Path) -> None:
    """The drop-in is backend-neutral: the one-shot program on trio."""
    import claudecode.sdk as sdk

    fake = Fake(tmp_path, script(text_turn("on trio")))

    async def main() -> list[Any]:
        return [m async for m in sdk.query(prompt="hi", options=fake.options(sdk))]

    messages = await anyio.to_thread.run_sync(lambda: anyio.run(main, backend="trio"))
    assert ["on trio"] == _texts(sdk, messages)


def test_wrong_option_type_is_a_usage_error_at_construction() -> None:
    """ClaudeAgentOptions checks its fields when built."""
    from claudecode import UsageError
    from claudecode.sdk import ClaudeAgentOptions

    with pytest.raises(UsageError):
        ClaudeAgentOptions(max_turns="3")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        ClaudeAgentOptions(system_prompt={"type": "preset", "preset": "other"})
    with pytest.raises(UsageError):
        ClaudeAgentOptions(can_use_tool=print, permission_prompt_tool_name="mcp__x__y")  # type: ignore[arg-type]


async def test_error_result_raises_result_error(sdk: ModuleType, tmp_path: Path) -> None:
    """A run that ends on an API error: the error result is yielded, then ResultError (the
    CLI exits non-zero) with the result's fields."""
    failing = {"messages": [{"blocks": [], "error": {"status": 400, "message": "bad input"}}]}
    fake = Fake(tmp_path, script(failing))
    messages: list[Any] = []

    async def run_it() -> None:
        async for message in sdk.query(prompt="hi", options=fake.options(sdk)):
            messages.append(message)

    with anyio.fail_after(HANG_GUARD), pytest.raises(sdk.ResultError) as info:
        await run_it()
    result = messages[-1]
    assert isinstance(result, sdk.ResultMessage) and result.is_error
    assert isinstance(info.value, sdk.ProcessError) and 1 == info.value.exit_code
    assert result.session_id == info.value.session_id


def _reaped(pid: int) -> bool:
    return not procfs.exists(pid)


async def test_closing_query_early_ends_the_cli(tmp_path: Path) -> None:
    """Leaving query() after the first message (closing it) ends the run without error,
    and the CLI is gone (reaped) once the generator is closed. (The official SDK leaves
    its process to the event loop's cleanup, so this is checked on the drop-in only.)"""
    import contextlib

    import claudecode.sdk as sdk

    fake = Fake(tmp_path, script(text_turn("long answer " * 50, delay=0.01, chunk=4)))
    first = None
    with anyio.fail_after(HANG_GUARD):
        async with contextlib.aclosing(
            sdk.query(prompt="hi", options=fake.options(sdk, include_partial_messages=True))
        ) as messages:
            async for message in messages:
                first = message
                break
    assert first is not None
    assert _reaped(fake.header()["pid"])


async def test_blocking_hook_needs_a_cli_that_honours_it(sdk: ModuleType, tmp_path: Path) -> None:
    """on_failure="block" with a CLI that does not report support for it (the fake): the
    connection fails instead of running the hook unguarded."""
    fake = Fake(tmp_path, script(text_turn("never")))

    async def hook(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        return {}

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[hook], on_failure="block")]}
    with anyio.fail_after(HANG_GUARD), pytest.raises(sdk.CLIConnectionError, match="on_failure"):
        await _collect(sdk.query(prompt="hi", options=fake.options(sdk, hooks=hooks)))


async def test_client_connect_with_a_prompt_stream(sdk: ModuleType, tmp_path: Path) -> None:
    """connect(prompt=async iterable) sends the prompts; each gets its response."""
    fake = Fake(tmp_path, script(text_turn("r1"), text_turn("r2")))

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        for text in ("p1", "p2"):
            yield {"type": "user", "message": {"role": "user", "content": text}}

    client = sdk.ClaudeSDKClient(fake.options(sdk))
    await client.connect(prompts())
    try:
        first = await _collect(client.receive_response())
        second = await _collect(client.receive_response())
    finally:
        await client.disconnect()
    assert ["r1"] == _texts(sdk, first)
    assert ["r2"] == _texts(sdk, second)


async def test_client_control_methods(sdk: ModuleType, tmp_path: Path) -> None:
    """set_permission_mode, set_model and get_mcp_status reach the CLI; a turn follows."""
    fake = Fake(tmp_path, script(text_turn("ok")))
    async with sdk.ClaudeSDKClient(fake.options(sdk)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.set_model("claude-haiku-4-5")
        status = await client.get_mcp_status()
        await client.query("hi")
        messages = await _collect(client.receive_response())
    assert "mcpServers" in status
    assert "ok" == messages[-1].result
    bodies = [m["request"] for m in fake.received() if m.get("type") == "control_request"]
    subtypes = [body["subtype"] for body in bodies]
    assert ["initialize", "set_permission_mode", "set_model", "mcp_status"] == subtypes
    assert "acceptEdits" == bodies[1]["mode"] and "claude-haiku-4-5" == bodies[2]["model"]
