"""Debug JSONL files hold prompts and tool output: they are private to the user."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from adapter.config import SessionConfig
from adapter.events import Complete
from adapter.policies import PermissionPolicy
from adapter.session import AgentSession
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """Files would come out world-readable if the code relied on the umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def _one_turn(tmp_path: Path, debug_dir: Path, session_id: str) -> None:
    cli = fake_cli_command(script(text_turn("secret answer")), tmp_path / "fake")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    cfg = SessionConfig(
        cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"), debug_dir=debug_dir
    )
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg, session_id=session_id) as session:
            with session.subscribe() as events:
                await session.prompt("a secret prompt")
                async for event in events:
                    if isinstance(event, Complete):
                        break


async def test_debug_files_are_0600_in_a_0700_directory(
    tmp_path: Path, permissive_umask: None
) -> None:
    debug_dir = tmp_path / "debug" / "runs"
    await _one_turn(tmp_path, debug_dir, "s1")
    assert 0o700 == _mode(debug_dir)
    files = sorted(debug_dir.iterdir())
    assert ["s1.events.jsonl", "s1.protocol.jsonl"] == [f.name for f in files]
    assert all(0o600 == _mode(f) for f in files), [oct(_mode(f)) for f in files]
    assert b"a secret prompt" in (debug_dir / "s1.protocol.jsonl").read_bytes()


async def test_an_existing_debug_file_is_made_private(
    tmp_path: Path, permissive_umask: None
) -> None:
    debug_dir = tmp_path / "debug"
    debug_dir.mkdir()
    old = debug_dir / "s2.events.jsonl"
    old.write_bytes(b'{"old": true}\n')
    old.chmod(0o644)
    await _one_turn(tmp_path, debug_dir, "s2")
    assert 0o600 == _mode(old)
    assert old.read_bytes().startswith(b'{"old": true}\n')  # appended to, not replaced
