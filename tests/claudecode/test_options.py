"""ClaudeCodeOptions.to_argv: the one place CLI flags are spelled."""

from __future__ import annotations

import json

import pytest

from claudecode.options import BASE_FLAGS, ClaudeCodeOptions


def test_defaults_give_the_base_flags_and_partial_messages() -> None:
    """A default session always speaks stream-json with stdio permission prompts."""
    argv = ClaudeCodeOptions().to_argv("claude")
    assert ["claude", *BASE_FLAGS, "--include-partial-messages"] == argv
    assert "--verbose" in argv
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"


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
    assert pairs["--resume"] == "sid"
    assert pairs["--resume-session-at"] == "uuid-1"
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
