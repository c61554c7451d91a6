"""Config builders: a session on a fake CLI in a fresh work directory, or on the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapter import SessionConfig
from adapter.policies import PermissionPolicy, PolicyName
from claudecode.testing import fake_cli_command


def work_dir(tmp_path: Path) -> Path:
    """``tmp_path / "work"``, created: the directory the session's CLI runs in."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def fake_session_config(
    tmp_path: Path, body: Any, *, fake: str = "fake", **kwargs: Any
) -> SessionConfig:
    """A :class:`SessionConfig` running the fake CLI scripted by ``body`` (written under
    ``tmp_path / fake``) in ``tmp_path / "work"``; ``kwargs`` go to the config."""
    cli = fake_cli_command(body, tmp_path / fake)
    return SessionConfig(cli_path=cli, cwd=work_dir(tmp_path), **kwargs)


def real_cli_config(
    cli_command: str,
    cli_env: Any,
    *,
    policy: PolicyName = "supervised",
    client: dict[str, Any] | None = None,
    **kwargs: Any,
) -> SessionConfig:
    """A :class:`SessionConfig` for the real pinned CLI (``cli_command``) against the fake
    Messages API (``cli_env``, the real-CLI tests' fixture: its directory and environment),
    with the generous start-up and control timeouts a loaded machine needs; ``client`` adds
    client options, ``kwargs`` go to the config."""
    return SessionConfig(
        cli_path=cli_command,
        cwd=cli_env.cwd,
        env=cli_env(),
        policy=PermissionPolicy(policy),
        client_options={
            "inherit_env": False,
            "control_timeout": 60.0,
            "spawn_timeout": 60.0,
            **(client or {}),
        },
        **kwargs,
    )
