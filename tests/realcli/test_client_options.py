"""Real CLI: the options shared with claude-agent-sdk reach the CLI and do what they say.

Each test checks an effect a user can observe — what the CLI sends to the (fake) Messages
API, what the result message says, which files exist — not only the argv we built.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from claudecode import messages as m
from tests.support.timeouts import HANG_GUARD

from ._assertions import assert_every_line_typed, open_recorded, run_turn
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

_SESSION_ID = "3f1e9c3a-8d5b-4c2e-9f1a-2b3c4d5e6f70"


def _system_text(body: Any) -> str:
    system = body.get("system") or []
    if isinstance(system, str):
        return system
    return "\n".join(block.get("text", "") for block in system)


async def test_nobody_answering_prompts_gets_denials_not_a_hang(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """No callback, no opt-in, nobody reading control requests: the CLI is not asked to
    prompt over stdio, denies the tool by its permission mode, and the turn ends."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch unasked.txt", "description": "Create"}),
        text_turn("could not"),
    )
    session, stdout = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            assert "--permission-prompt-tool" not in session.transport.argv  # type: ignore[attr-defined]
            seen = await run_turn(session, "create a file")
    assert_every_line_typed(stdout, seen)
    assert not any(isinstance(x, m.InboundControlRequest) for x in seen)
    assert not (cli_env.cwd / "unasked.txt").exists()
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert "could not" == result.result
    assert ["Bash"] == [d.tool_name for d in result.permission_denials]


async def test_sdk_options_reach_the_api(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """tools, thinking, effort, betas, a preset system prompt with append, session_id,
    agents, budget, task budget, fallback model, sandbox, strict MCP, hook events, sub-agent
    text forwarding, file checkpointing and a stderr callback are all accepted by the pinned
    CLI and show up where they should."""
    fake_api.add_main(text_turn("done"))
    lines: list[str] = []
    options = cli_options(
        tools=["Read", "Bash"],
        thinking={"type": "adaptive"},
        effort="high",
        betas=["context-1m-2025-08-07"],
        system_prompt={"type": "preset", "preset": "claude_code", "append": "APPENDED-TEXT"},
        session_id=_SESSION_ID,
        agents={"reviewer": {"description": "Reviews code", "prompt": "You review."}},
        max_budget_usd=5.0,
        fallback_model="claude-sonnet-4-5",
        sandbox={"enabled": False},
        strict_mcp_config=True,
        include_hook_events=True,
        stderr=lines.append,
        extra_args={"debug-to-stderr": None},
        task_budget=100000,
        forward_subagent_text=True,
        enable_file_checkpointing=True,
    )
    session, stdout = open_recorded(options)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            assert session.initialize_result is not None
            agents = [agent.name for agent in session.initialize_result.agents]
            seen = await run_turn(session, "hi")
    assert_every_line_typed(stdout, seen)
    assert "reviewer" in agents
    [init] = [x for x in seen if isinstance(x, m.SystemInit)]
    assert _SESSION_ID == init.session_id
    result = seen[-1]
    assert isinstance(result, m.ResultMessage) and "done" == result.result
    [request] = fake_api.main_requests()
    body = request.body
    assert {"Read", "Bash"} <= {tool["name"] for tool in body["tools"]}
    assert not {"Write", "Edit"} & {tool["name"] for tool in body["tools"]}
    assert "adaptive" == body["thinking"]["type"]
    assert 100000 == body["output_config"]["task_budget"]["total"]
    assert "high" == body["output_config"]["effort"]
    assert "context-1m-2025-08-07" in request.headers["anthropic-beta"]
    system = _system_text(body)
    assert system.rstrip().endswith("APPENDED-TEXT")
    assert "Claude" in system and len(system) > 1000, "Claude Code's own prompt is kept"
    assert lines, "the stderr callback saw the CLI's debug output"


async def test_a_string_system_prompt_replaces_claude_codes(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """system_prompt as a string is the whole prompt the model gets."""
    fake_api.add_main(text_turn("ok"))
    session, _ = open_recorded(cli_options(system_prompt="You are a terse test double."))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await run_turn(session, "hi")
    system = _system_text(fake_api.main_requests()[0].body)
    assert "You are a terse test double." in system
    assert len(system) < 1000


async def test_setting_sources_decide_whether_project_settings_load(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """A project settings file applies with setting_sources=["project"], not with []."""
    settings = cli_env.cwd / ".claude"
    settings.mkdir()
    (settings / "settings.json").write_text(json.dumps({"model": "claude-project-model"}))
    models = []
    for sources in (["project"], []):
        fake_api.add_main(text_turn("ok"))
        session, _ = open_recorded(cli_options(setting_sources=sources))
        with anyio.fail_after(HANG_GUARD):
            async with session:
                await run_turn(session, "hi")
        models.append(fake_api.main_requests()[-1].body["model"])
    assert "claude-project-model" == models[0]
    assert "claude-project-model" != models[1]


async def test_max_budget_usd_ends_the_turn(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """Once the budget is spent the turn ends with error_max_budget_usd."""
    fake_api.add_main(
        tool_turn("Read", {"file_path": str(cli_env.cwd / "missing.txt")}),
        text_turn("never reached"),
    )
    session, _ = open_recorded(cli_options(max_budget_usd=0.000001))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "read it")
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert ("error_max_budget_usd", True) == (result.subtype, result.is_error)
    assert 1 == len(fake_api.main_requests())


async def test_output_format_gives_structured_output(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """A JSON schema output format: the model answers through the CLI's StructuredOutput
    tool and the result carries the parsed object."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake_api.add_main(tool_turn("StructuredOutput", {"n": 3}), text_turn("done"))
    options = cli_options(output_format={"type": "json_schema", "schema": schema})
    session, _ = open_recorded(options)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            seen = await run_turn(session, "count")
    result = seen[-1]
    assert isinstance(result, m.ResultMessage)
    assert {"n": 3} == result.structured_output
    tools = {tool["name"] for tool in fake_api.main_requests()[0].body["tools"]}
    assert "StructuredOutput" in tools


async def test_continue_conversation_picks_up_the_last_session(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """continue_conversation resumes the most recent session in the working directory."""
    fake_api.add_main(text_turn("noted"), text_turn("you said PINEAPPLE"))
    session, _ = open_recorded(cli_options())
    with anyio.fail_after(HANG_GUARD):
        async with session:
            first = await run_turn(session, "remember PINEAPPLE")
    session, _ = open_recorded(cli_options(continue_conversation=True))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            second = await run_turn(session, "what did I say?")
    assert first[-1].session_id == second[-1].session_id
    history = json.dumps(fake_api.main_requests()[-1].body["messages"])
    assert "PINEAPPLE" in history


async def test_a_local_plugin_is_loaded(
    cli_options: Any, fake_api: FakeAnthropicAPI, tmp_path: Any
) -> None:
    """plugins=[{"type": "local", "path": ...}]: the CLI loads it (its command is listed)."""
    plugin = tmp_path / "demo-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": "demo-plugin", "version": "1.0.0", "description": "A demo"}
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "hello.md").write_text("---\ndescription: Say hello\n---\nHello.\n")
    fake_api.add_main(text_turn("ok"))
    session, _ = open_recorded(cli_options(plugins=[{"type": "local", "path": str(plugin)}]))
    with anyio.fail_after(HANG_GUARD):
        async with session:
            assert session.initialize_result is not None
            commands = [c.name for c in session.initialize_result.commands]
            seen = await run_turn(session, "hi")
    assert "demo-plugin:hello" in commands
    [init] = [x for x in seen if isinstance(x, m.SystemInit)]
    assert "demo-plugin" in [p["name"] for p in init.plugins or []]
