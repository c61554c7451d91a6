"""ClaudeCodeOptions.to_argv: the one place CLI flags are spelled."""

from __future__ import annotations

import json

import pytest

from claudecode.errors import UsageError
from claudecode.options import BASE_FLAGS, ClaudeCodeOptions


def test_defaults_give_the_base_flags_and_partial_messages() -> None:
    """A default session speaks stream-json and asks nobody over stdio (no callback)."""
    argv = ClaudeCodeOptions().to_argv("claude")
    assert ["claude", *BASE_FLAGS, "--include-partial-messages"] == argv
    assert "--verbose" in argv
    assert "--permission-prompt-tool" not in argv


@pytest.mark.parametrize(
    ("tool_name", "callback", "expected"),
    [
        (None, False, None),
        (None, True, "stdio"),
        ("stdio", False, "stdio"),
        ("stdio", True, "stdio"),
        ("mcp__perm__ask", False, "mcp__perm__ask"),
    ],
)
def test_permission_prompts_go_over_stdio_only_when_someone_answers(
    tool_name: str | None, callback: bool, expected: str | None
) -> None:
    """--permission-prompt-tool: stdio with a callback or an explicit opt-in, else absent."""
    argv = ClaudeCodeOptions(permission_prompt_tool_name=tool_name).to_argv(
        "claude", permission_callback=callback
    )
    got = argv[argv.index("--permission-prompt-tool") + 1] if expected else None
    assert expected == got
    assert (expected is None) == ("--permission-prompt-tool" not in argv)


def test_callback_with_another_prompt_tool_is_a_usage_error() -> None:
    """A can_use_tool callback answers over stdio; naming an MCP prompt tool too conflicts."""
    with pytest.raises(UsageError, match="can_use_tool"):
        ClaudeCodeOptions(permission_prompt_tool_name="mcp__x__y").to_argv(
            "claude", permission_callback=True
        )


def test_every_option_maps_to_its_flag() -> None:
    """Each option lands on the command line as the flag the CLI knows."""
    opts = ClaudeCodeOptions(
        model="claude-haiku-4-5",
        permission_mode="acceptEdits",
        include_partial_messages=False,
        replay_user_messages=True,
        resume="sid",
        resume_session_at="uuid-1",
        fork_session=True,
        allowed_tools=["Read", "Bash(git:*)"],
        disallowed_tools=["WebFetch"],
        system_prompt="sys",
        append_system_prompt="more",
        max_turns=3,
        max_thinking_tokens=2048,
        add_dirs=["/a", "/b"],
        settings='{"x":1}',
        extra_args=["--strict-mcp-config"],
    )
    argv = opts.to_argv("claude")
    assert "--include-partial-messages" not in argv
    pairs = {argv[i]: argv[i + 1] for i in range(len(argv) - 1)}
    assert pairs["--model"] == "claude-haiku-4-5"
    assert pairs["--permission-mode"] == "acceptEdits"
    assert "--resume=sid" in argv
    assert "--resume-session-at=uuid-1" in argv
    assert pairs["--allowedTools"] == "Read,Bash(git:*)"
    assert pairs["--disallowedTools"] == "WebFetch"
    assert pairs["--system-prompt"] == "sys"
    assert pairs["--append-system-prompt"] == "more"
    assert pairs["--max-turns"] == "3"
    assert pairs["--max-thinking-tokens"] == "2048"
    assert pairs["--settings"] == '{"x":1}'
    assert ["--add-dir", "/a", "--add-dir", "/b"] == [
        x for i, x in enumerate(argv) if x == "--add-dir" or argv[i - 1] == "--add-dir"
    ]
    assert "--fork-session" in argv
    assert "--replay-user-messages" in argv
    assert argv[-1] == "--strict-mcp-config"


def test_sdk_servers_are_merged_into_the_mcp_config() -> None:
    """In-process servers are declared as type sdk next to the user's own servers."""
    opts = ClaudeCodeOptions(mcp_config={"mcpServers": {"web": {"command": "srv"}}})
    argv = opts.to_argv("claude", sdk_mcp_servers=["fe"])
    config = json.loads(argv[argv.index("--mcp-config") + 1])
    assert {"web": {"command": "srv"}, "fe": {"type": "sdk", "name": "fe"}} == config["mcpServers"]


def test_mcp_config_path_is_passed_through(tmp_path: pytest.TempPathFactory) -> None:
    """A config file path goes to the CLI unchanged when no SDK server is added."""
    argv = ClaudeCodeOptions(mcp_config="/etc/mcp.json").to_argv("claude")
    assert argv[argv.index("--mcp-config") + 1] == "/etc/mcp.json"


def test_env_drops_claudecode_and_keeps_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """CLAUDECODE never reaches the child; explicit env wins over injected extras."""
    monkeypatch.setenv("CLAUDECODE", "1")
    env = ClaudeCodeOptions(env={"TRACEPARENT": "mine"}).build_env({"TRACEPARENT": "auto"})
    assert "CLAUDECODE" not in env
    assert env["TRACEPARENT"] == "mine"
    assert ClaudeCodeOptions(inherit_env=False).build_env() == {}


def _pairs(argv: list[str]) -> dict[str, str]:
    return {argv[i]: argv[i + 1] for i in range(len(argv) - 1)}


def test_sdk_parity_options_map_to_the_flags_claude_agent_sdk_sends() -> None:
    """The fields shared with claude-agent-sdk produce the same flags it builds."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    opts = ClaudeCodeOptions(
        fallback_model="claude-sonnet-4-5",
        continue_conversation=True,
        session_id="-not-a-flag",
        strict_mcp_config=True,
        include_hook_events=True,
        tools=["Read", "Grep"],
        max_budget_usd=0.25,
        thinking={"type": "adaptive", "display": "summarized"},
        effort="high",
        betas=["context-1m-2025-08-07"],
        output_format={"type": "json_schema", "schema": schema},
        setting_sources=["project"],
        plugins=[{"type": "local", "path": "/plugins/a"}],
        extra_args={"debug-to-stderr": None, "name": "-x"},
    )
    argv = opts.to_argv("claude")
    pairs = _pairs(argv)
    assert "claude-sonnet-4-5" == pairs["--fallback-model"]
    assert "Read,Grep" == pairs["--tools"]
    assert "0.25" == pairs["--max-budget-usd"]
    assert ("adaptive", "summarized") == (pairs["--thinking"], pairs["--thinking-display"])
    assert "high" == pairs["--effort"]
    assert "context-1m-2025-08-07" == pairs["--betas"]
    assert schema == json.loads(pairs["--json-schema"])
    assert "/plugins/a" == pairs["--plugin-dir"]
    for flag in (
        "--continue",
        "--strict-mcp-config",
        "--include-hook-events",
        "--session-id=-not-a-flag",
        "--setting-sources=project",
        "--debug-to-stderr",
        "--name=-x",
    ):
        assert flag in argv


@pytest.mark.parametrize(
    ("thinking", "expected"),
    [
        ({"type": "enabled", "budget_tokens": 4000}, ["--max-thinking-tokens", "4000"]),
        ({"type": "disabled"}, ["--thinking", "disabled"]),
    ],
)
def test_thinking_takes_precedence_over_max_thinking_tokens(
    thinking: dict[str, object], expected: list[str]
) -> None:
    """thinking wins over the older max_thinking_tokens, as in the official SDK."""
    argv = ClaudeCodeOptions(thinking=thinking, max_thinking_tokens=99).to_argv("claude")
    i = argv.index(expected[0])
    assert expected == argv[i : i + 2]
    assert "99" not in argv


def test_system_prompt_forms() -> None:
    """A string replaces the prompt; a preset dict appends (never its repr); file and custom."""
    preset = {"type": "preset", "preset": "claude_code", "append": "Be brief."}
    argv = ClaudeCodeOptions(system_prompt=preset).to_argv("claude")
    assert "--system-prompt" not in argv
    assert "Be brief." == _pairs(argv)["--append-system-prompt"]
    assert not any("{" in arg for arg in argv)
    bare = ClaudeCodeOptions(system_prompt={"type": "preset", "preset": "claude_code"})
    assert not {"--system-prompt", "--append-system-prompt"} & set(bare.to_argv("claude"))
    text = ClaudeCodeOptions(system_prompt="You are terse.").to_argv("claude")
    assert "You are terse." == _pairs(text)["--system-prompt"]
    custom = {"type": "custom", "prompt": "Custom."}
    assert (
        "Custom." == _pairs(ClaudeCodeOptions(system_prompt=custom).to_argv("c"))["--system-prompt"]
    )
    file = ClaudeCodeOptions(system_prompt={"type": "file", "path": "/p.md"}).to_argv("c")
    assert "/p.md" == _pairs(file)["--system-prompt-file"]
    exclude = {"type": "preset", "preset": "claude_code", "exclude_dynamic_sections": True}
    assert {"exclude_dynamic_sections": True} == ClaudeCodeOptions(
        system_prompt=exclude
    ).initialize_fields()


def test_tools_preset_and_empty_list() -> None:
    """tools: the preset is the CLI's default set; an empty list means no built-in tools."""
    preset = ClaudeCodeOptions(tools={"type": "preset", "preset": "claude_code"})
    assert "default" == _pairs(preset.to_argv("claude"))["--tools"]
    argv = ClaudeCodeOptions(tools=[]).to_argv("claude")
    assert "" == argv[argv.index("--tools") + 1]


def test_skills_allow_rules_sources_and_initialize() -> None:
    """skills: Skill(name) rules, user+project sources by default, the list in initialize."""
    opts = ClaudeCodeOptions(skills=["pdf", "xlsx"], allowed_tools=["Read"])
    argv = opts.to_argv("claude")
    assert "Read,Skill(pdf),Skill(xlsx)" == _pairs(argv)["--allowedTools"]
    assert "--setting-sources=user,project" in argv
    assert {"skills": ["pdf", "xlsx"]} == opts.initialize_fields()
    every = ClaudeCodeOptions(skills="all", setting_sources=[])
    argv = every.to_argv("claude")
    assert "Skill" == _pairs(argv)["--allowedTools"]
    assert "--setting-sources=" in argv
    assert {} == every.initialize_fields()


def test_agents_go_to_initialize_not_argv() -> None:
    """Agent definitions are sent in initialize, as the official SDK does."""
    agents = {"reviewer": {"description": "Reviews", "prompt": "Review.", "tools": ["Read"]}}
    opts = ClaudeCodeOptions(agents=agents)
    assert "--agents" not in opts.to_argv("claude")
    assert {"agents": agents} == opts.initialize_fields()


def test_sandbox_is_merged_into_settings(tmp_path: pytest.TempPathFactory) -> None:
    """sandbox joins --settings: a JSON string, a file relative to cwd, or alone."""
    sandbox = {"enabled": True}
    alone = ClaudeCodeOptions(sandbox=sandbox).to_argv("claude")
    assert {"sandbox": sandbox} == json.loads(_pairs(alone)["--settings"])
    inline = ClaudeCodeOptions(sandbox=sandbox, settings='{"model": "x"}').to_argv("claude")
    assert {"model": "x", "sandbox": sandbox} == json.loads(_pairs(inline)["--settings"])
    path = tmp_path / "s.json"  # type: ignore[operator]
    path.write_text('{"env": {"A": "1"}}')
    from_file = ClaudeCodeOptions(sandbox=sandbox, settings="s.json", cwd=tmp_path)
    merged = json.loads(_pairs(from_file.to_argv("claude"))["--settings"])
    assert {"env": {"A": "1"}, "sandbox": sandbox} == merged
    with pytest.raises(UsageError):
        ClaudeCodeOptions(sandbox=sandbox, settings="missing.json", cwd=tmp_path).to_argv("c")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": 3},
        {"permission_mode": "yolo"},
        {"effort": "extreme"},
        {"max_turns": "3"},
        {"max_turns": True},
        {"max_budget_usd": -1},
        {"allowed_tools": "Read"},
        {"betas": [1]},
        {"tools": {"type": "preset", "preset": "other"}},
        {"tools": "Read"},
        {"system_prompt": {"type": "preset", "preset": "claude_code", "append": 3}},
        {"system_prompt": {"type": "weird"}},
        {"system_prompt": 42},
        {
            "system_prompt": {"type": "preset", "preset": "claude_code", "append": "a"},
            "append_system_prompt": "b",
        },
        {"thinking": {"type": "enabled"}},
        {"thinking": {"type": "maybe"}},
        {"output_format": {"type": "json_schema"}},
        {"output_format": {"type": "text", "schema": {}}},
        {"output_format": "json"},
        {"setting_sources": ["user", "team"]},
        {"setting_sources": "user"},
        {"plugins": [{"type": "remote", "path": "/x"}]},
        {"plugins": [{"type": "local"}]},
        {"skills": "pdf"},
        {"skills": ["a,b"]},
        {"agents": {"x": {"description": "d"}}},
        {"agents": ["x"]},
        {"sandbox": True},
        {"env": {"A": 1}},
        {"stderr": "stderr.log"},
        {"user": 0},
        {"continue_conversation": "yes"},
        {"extra_args": "--x"},
        {"extra_args": {"flag": 1}},
        {"cwd": 3},
        {"add_dirs": "/a"},
        {"control_timeout": None},
        {"max_line_bytes": 0},
    ],
)
def test_a_wrong_type_is_a_usage_error_at_construction(kwargs: dict[str, object]) -> None:
    """Every field is checked when the options are built, not later by the CLI."""
    with pytest.raises(UsageError):
        ClaudeCodeOptions(**kwargs)  # type: ignore[arg-type]


def test_budget_checkpoints_and_subagent_text() -> None:
    """task_budget and resume_drops_turn are flags, forward_subagent_text goes to
    initialize, enable_file_checkpointing sets the CLI's environment switch."""
    opts = ClaudeCodeOptions(
        task_budget=5000,
        resume_drops_turn="-u-2",
        forward_subagent_text=True,
        enable_file_checkpointing=True,
        inherit_env=False,
    )
    argv = opts.to_argv("claude")
    assert "5000" == _pairs(argv)["--task-budget"]
    assert "--resume-drops-turn=-u-2" in argv
    assert {"forward_subagent_text": True} == opts.initialize_fields()
    assert {"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"} == opts.build_env()


def test_verbatim_prompts_mark_user_messages() -> None:
    """client_composed is written only when asked for."""
    import msgspec

    from claudecode import control as ctl

    plain = msgspec.json.decode(msgspec.json.encode(ctl.user_message("hi")))
    marked = msgspec.json.decode(msgspec.json.encode(ctl.user_message("hi", client_composed=True)))
    assert "client_composed" not in plain
    assert marked["client_composed"] is True
