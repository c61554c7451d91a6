"""find_cli: explicit path, CLAUDE_CODE_CLI, PATH, then the usual places."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claudecode import CLINotFoundError
from claudecode._discovery import find_cli


def make_exe(path: Path) -> Path:
    path.write_text("#!/bin/sh\necho 1.0\n")
    path.chmod(0o755)
    return path


def test_explicit_path_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit executable is used as given."""
    exe = make_exe(tmp_path / "my-claude")
    monkeypatch.setenv("CLAUDE_CODE_CLI", "/nonexistent")
    assert str(exe) == find_cli(exe)


def test_explicit_path_that_is_missing_fails(tmp_path: Path) -> None:
    """A wrong explicit path is an error naming that path, not a silent fallback."""
    with pytest.raises(CLINotFoundError) as info:
        find_cli(tmp_path / "nope")
    assert str(tmp_path / "nope") in str(info.value)


def test_env_then_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CLAUDE_CODE_CLI comes before PATH; PATH before the usual places."""
    env_exe = make_exe(tmp_path / "env-claude")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    path_exe = make_exe(bindir / "claude")
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("CLAUDE_CODE_CLI", str(env_exe))
    assert str(env_exe) == find_cli()
    monkeypatch.delenv("CLAUDE_CODE_CLI")
    assert str(path_exe) == find_cli()


def test_nothing_found_names_every_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error lists each searched place and says how to install the CLI."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NPM_CONFIG_PREFIX", str(tmp_path / "npm"))
    monkeypatch.delenv("CLAUDE_CODE_CLI", raising=False)
    if os.path.exists("/usr/local/bin/claude") or os.path.exists("/usr/bin/claude"):
        pytest.skip("a system-wide claude is installed on this machine")
    with pytest.raises(CLINotFoundError) as info:
        find_cli()
    message = str(info.value)
    for place in ("claude on PATH", ".claude/local/claude", "/usr/local/bin/claude", "npm install"):
        assert place in message
    assert len(info.value.searched) >= 6
