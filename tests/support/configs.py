"""Config builders: a session on a fake CLI in a fresh work directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapter.session import SessionConfig
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
