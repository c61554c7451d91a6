"""Codex, Gemini CLI and GitHub Copilot CLI from their pinned npm packages in terminals.

``scripts/test-deps.d/30-agent-clis.sh`` installs them into tests/agent-clis/node_modules.
Offline they cannot sign in; what is tested is the bridge's part: discovery finds them, each
starts on a pty and draws its first screen (read from the server-side screen), the state
says it waits for the person, and stop reaps it and whatever it spawned.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapter.terminals import AgentUnavailableError, TerminalManager
from benchmarks import procfs
from tests.support.terminals import wait_for_text
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.pty, pytest.mark.node, pytest.mark.slow]

BIN = Path(__file__).resolve().parents[1] / "agent-clis" / "node_modules" / ".bin"

FIRST_SCREENS = {
    "codex": "Welcome to Codex",
    "gemini": "Do you trust the files in this folder?",
    "copilot": "Do you trust the files in this folder?",
}


@pytest.fixture
def agent_bin() -> Path:
    if not (BIN / "codex").exists():
        message = f"agent CLIs are not installed in {BIN}: run scripts/install-test-deps"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return BIN


def agent_env(tmp_path: Path, agent_bin: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    refused = "http://127.0.0.1:9"  # nothing listens: every network attempt fails fast
    return {
        "HOME": str(home),
        "PATH": f"{agent_bin}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HTTPS_PROXY": refused,
        "HTTP_PROXY": refused,
    }


@pytest.mark.parametrize("agent", sorted(FIRST_SCREENS))
async def test_npm_agent_starts_shows_its_first_screen_and_is_reaped(
    agent: str, agent_bin: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with TerminalManager(env=agent_env(tmp_path, agent_bin)) as terminals:
        status = terminals.agent_status(agent)
        assert status.available and status.path == str(agent_bin / agent)
        info = await terminals.start(agent, agent, cwd=str(work), cols=100, rows=30)
        await wait_for_text(terminals, agent, FIRST_SCREENS[agent])
        await eventually(lambda: terminals.get(agent).state == "waiting", what="waiting")
        spawned = procfs.children(info.pid)
        final = await terminals.stop(agent)
        assert ("stopped", False) == (final.exit_reason, final.active)
        assert not procfs.exists(info.pid)
        await eventually(
            lambda: not any(procfs.exists(pid) for pid in spawned), what="its children to end"
        )


async def test_cursor_agent_is_unavailable_with_its_install_hint(
    agent_bin: Path, tmp_path: Path
) -> None:
    async with TerminalManager(env=agent_env(tmp_path, agent_bin)) as terminals:
        status = terminals.agent_status("cursor-agent")
        assert (False, None) == (status.available, status.path)
        assert "cursor.com/install" in status.install_hint
        with pytest.raises(AgentUnavailableError, match=r"cursor\.com/install"):
            await terminals.start("c", "cursor-agent", cwd=str(tmp_path))
