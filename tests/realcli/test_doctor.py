"""``claudecode-bridge doctor`` against the real CLI, and without one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .cli import CLIEnv

pytestmark = pytest.mark.realcli


def doctor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapter", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_doctor_finds_a_usable_cli(cli_command: str, cli_env: CLIEnv) -> None:
    """Path, version and a completed initialize over stream-json: exit 0."""
    done = doctor("--cli", cli_command, env=cli_env())
    assert 0 == done.returncode, done.stdout + done.stderr
    assert cli_command in done.stdout
    assert "2.1." in done.stdout and "(Claude Code)" in done.stdout
    assert "usable" in done.stdout and "NOT" not in done.stdout


def test_doctor_without_a_cli_says_why(tmp_path: Path) -> None:
    """No CLI anywhere: exit 1 naming the places searched."""
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "NPM_CONFIG_PREFIX": str(tmp_path)}
    done = doctor(env=env)
    assert 1 == done.returncode
    assert "NOT usable" in done.stdout
    assert "claude on PATH" in done.stdout


def test_doctor_with_a_broken_cli(tmp_path: Path) -> None:
    """An executable that does not speak stream-json: exit 1 with the reason."""
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo '9.9.9 (Claude Code)'; fi\n")
    fake.chmod(0o755)
    done = doctor("--cli", str(fake), "--timeout", "5", env={"PATH": "/usr/bin:/bin"})
    assert 1 == done.returncode
    assert "9.9.9" in done.stdout
    assert "did not complete initialize" in done.stdout
