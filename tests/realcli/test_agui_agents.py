"""Named agents (``serve --agents``) behind the real clients — headless @copilotkit/core and
@ag-ui/client 1.0.0 — with the real Claude Code CLI behind them talking to the fake
Messages API: each agent's CLI got its own flags, which the model's requests show (the
system prompt, the model, the tools offered) and its tools' effects too (the working
directory, a rule that lets Bash run without asking)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter.server import ServerSettings, create_app, parse_agents
from adapter.server.agui import APPROVAL_TOOL
from tests.support.agui_clients import drive, runs_of, text_of
from tests.support.configs import real_cli_config
from tests.support.servers import running

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.node, pytest.mark.server, pytest.mark.slow]

ALPHA_PROMPT = "You are ALPHA-7, a terse builder of files."
BETA_APPEND = "Sign every answer BETA-9."


def system_text(body: Any) -> str:
    system = body.get("system") or []
    if isinstance(system, str):
        return system
    return "\n".join(block.get("text", "") for block in system)


def bridge(cli_command: str, cli_env: CLIEnv, state: Path, agents: Any) -> Any:
    defaults = real_cli_config(cli_command, cli_env, client={"close_grace": 10.0})
    settings = ServerSettings(
        session_defaults=defaults, state_dir=state, keepalive_seconds=5, agents=agents
    )
    return create_app(settings=settings)


def test_two_agents_run_with_their_own_prompts_cwd_model_and_rules(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """CopilotKit's core lists both agents and runs alpha: alpha's CLI has its system
    prompt (Claude Code's replaced), its model, and ``Bash(touch:*)`` allowed, so its
    ``touch`` runs in alpha's directory with no approval asked while its ``mkdir`` is asked
    (and approved by the page). @ag-ui/client runs beta over the runtime's
    REST path: Claude Code's prompt is kept with beta's text appended, it names beta's
    working directory, and ``Bash`` (disallowed) is not among the tools offered."""
    alpha_dir, beta_dir = cli_env.cwd / "alpha", cli_env.cwd / "beta"
    alpha_dir.mkdir()
    beta_dir.mkdir()
    agents = parse_agents(
        f"""
        [agents.alpha]
        description = "Builds files"
        cwd = "{alpha_dir}"
        model = "claude-alpha-test"
        system_prompt = "{ALPHA_PROMPT}"
        allowed_tools = ["Bash(touch:*)"]

        [agents.beta]
        description = "Talks"
        cwd = "{beta_dir}"
        append_system_prompt = "{BETA_APPEND}"
        disallowed_tools = ["Bash"]
        """
    )
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch made-by-alpha.txt", "description": "Make a file"}),
        tool_turn("Bash", {"command": "mkdir alpha-dir", "description": "Make a directory"}),
        text_turn("ALPHA made it."),
        text_turn("Hello. BETA-9"),
    )
    steps = [
        {
            "op": "copilotkit",
            "transport": "auto",
            "path": "/copilotkit",
            "agent": "alpha",
            "threadId": "with-alpha",
            "text": "alpha: make a file",
            "approve": "allow",
        },
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/copilotkit/agent/beta/run",
            "threadId": "with-beta",
            "text": "beta: say hello",
        },
    ]
    with running(bridge(cli_command, cli_env, tmp_path / "state", agents)) as base:
        result = drive(base, steps, tmp_path / "drive")
    assert [] == result["warnings"]
    alpha, beta = result["steps"]

    assert ["alpha", "beta"] == alpha["agents"]
    assert [] == alpha["errors"] and [] == alpha["coreErrors"]
    assert "ALPHA made it." in text_of(alpha)
    assert (alpha_dir / "made-by-alpha.txt").exists()
    assert not (cli_env.cwd / "made-by-alpha.txt").exists()
    assert (alpha_dir / "alpha-dir").is_dir()
    assert "mkdir alpha-dir" == alpha["approvalArgs"]["input"]["command"]
    asked = [e for e in alpha["events"] if e.get("toolCallName") == APPROVAL_TOOL]
    assert 1 == len(asked), "the touch the rule allows was not asked"

    assert [] == beta["errors"] and [] == beta.get("runErrors", [])
    assert 1 == len(runs_of(beta)) and "Hello. BETA-9" == text_of(beta)

    *alpha_requests, beta_request = fake_api.main_requests()
    first = alpha_requests[0]
    assert 3 == len(alpha_requests)
    for request in alpha_requests:
        body = request.body
        assert "claude-alpha-test" == body["model"]
        system = system_text(body)
        assert ALPHA_PROMPT in system and len(system) < 1000, "Claude Code's prompt replaced"
    assert "alpha: make a file" in fake_api.last_user_text(first)
    body = beta_request.body
    assert "beta: say hello" in fake_api.last_user_text(beta_request)
    system = system_text(body)
    assert system.rstrip().endswith(BETA_APPEND)
    assert len(system) > 1000
    assert str(beta_dir) in json.dumps(body), "the CLI tells the model its working directory"
    assert ALPHA_PROMPT not in system
    assert "Bash" not in {tool["name"] for tool in body["tools"]}
    assert "Bash" in {tool["name"] for tool in first.body["tools"]}
