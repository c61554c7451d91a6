"""The real Claude Code CLI's interactive TUI in a terminal session, against the fake API.

Offline, the CLI's first-run onboarding cannot be passed: its first screen checks that it can
reach api.anthropic.com (through the refusing proxy here it shows "Unable to connect to
Anthropic services ... ERR_PROXY_TUNNEL" and exits). The tests therefore seed ``~/.claude.json``
as a finished onboarding would leave it (``hasCompletedOnboarding``, a theme, the API key
approved) — and one test pins down that first-run screen so a change of it is noticed. The
folder-trust dialog is *not* seeded: the bridge must answer it from the rendered screen.
"""

from __future__ import annotations

import dataclasses
import json

import anyio
import pytest

from adapter.terminals import AGENTS, TerminalManager
from benchmarks import procfs
from tests.support.terminals import wait_for_text
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.anyio, pytest.mark.realcli, pytest.mark.pty]


def seed_finished_onboarding(env: CLIEnv) -> None:
    """What the CLI's onboarding writes once it is through (it cannot get there offline)."""
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": ["sk-test"[-20:]], "rejected": []},
    }
    (env.home / ".claude.json").write_text(json.dumps(config))


def claude_terminals(cli_command: str, cli_env: CLIEnv, **options: object) -> TerminalManager:
    agent = dataclasses.replace(AGENTS["claude"], command=cli_command)
    return TerminalManager(agents={"claude": agent}, env=cli_env(), **options)  # type: ignore[arg-type]


async def test_claude_tui_trust_prompt_question_answer_and_stop(
    cli_command: str, fake_api: FakeAnthropicAPI, cli_env: CLIEnv
) -> None:
    seed_finished_onboarding(cli_env)
    fake_api.add_main(text_turn("The answer is forty-two."))
    async with claude_terminals(cli_command, cli_env) as terminals:
        info = await terminals.start("c", "claude", cwd=str(cli_env.cwd), cols=100, rows=30)
        assert info.command == cli_command
        # The trust dialog is answered from the screen, then the input box appears.
        await eventually(lambda: terminals.get("c").trust_accepted, what="trust accepted")
        await wait_for_text(terminals, "c", "shift+tab to cycle")
        config = json.loads((cli_env.home / ".claude.json").read_text())
        projects = config.get("projects", {})
        assert projects[str(cli_env.cwd)]["hasTrustDialogAccepted"] is True
        await terminals.send_input("c", "What is the answer?")
        await wait_for_text(terminals, "c", "What is the answer?")
        await terminals.send_input("c", "\r")
        screen = await wait_for_text(terminals, "c", "The answer is forty-two.")
        assert "Yes, I trust this folder" not in screen
        (request,) = fake_api.main_requests()
        assert "What is the answer?" == fake_api.last_user_text(request)
        await eventually(lambda: terminals.get("c").state == "idle", what="idle after the turn")
        final = await terminals.stop("c")
        assert ("stopped", False) == (final.exit_reason, final.active)
        assert not procfs.exists(info.pid)


async def test_claude_trust_prompt_is_left_alone_when_not_allowed(
    cli_command: str, fake_api: FakeAnthropicAPI, cli_env: CLIEnv
) -> None:
    seed_finished_onboarding(cli_env)
    async with claude_terminals(cli_command, cli_env, accept_trust=False) as terminals:
        await terminals.start("c", "claude", cwd=str(cli_env.cwd), cols=100, rows=30)
        await wait_for_text(terminals, "c", "Yes, I trust this folder")
        await eventually(lambda: terminals.get("c").state == "waiting", what="waiting")
        # Nobody answers: the dialog stays (checked again after the CLI had time to settle).
        await anyio.sleep(1.0)
        assert "Yes, I trust this folder" in terminals.screen_text("c")
        assert not terminals.get("c").trust_accepted
        final = await terminals.stop("c")
        assert "stopped" == final.exit_reason


async def test_first_run_onboarding_needs_the_network(
    cli_command: str, fake_api: FakeAnthropicAPI, cli_env: CLIEnv
) -> None:
    """Pins the onboarding step that cannot be passed offline (see the module docstring)."""
    async with claude_terminals(cli_command, cli_env) as terminals:
        await terminals.start("c", "claude", cwd=str(cli_env.cwd), cols=100, rows=30)
        with anyio.fail_after(HANG_GUARD):
            final = await terminals.wait("c")
        screen = terminals.screen_text("c")
        assert "Unable to connect to Anthropic services" in screen
        assert "exited" == final.exit_reason
        assert [] == fake_api.main_requests()
