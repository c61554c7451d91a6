"""How a SessionConfig becomes the CLI's argv."""

from __future__ import annotations

import uuid

from adapter.config import SessionConfig, cli_options


def test_cli_session_id_becomes_session_id_flag() -> None:
    """``cli_session_id`` names the new CLI session (``--session-id``)."""
    sid = str(uuid.uuid4())
    config = SessionConfig(
        cli_session_id=sid, client_options={"extra_args": ("--strict-mcp-config",)}
    )
    argv = cli_options(config).to_argv("claude")
    assert f"--session-id={sid}" in argv or sid == argv[argv.index("--session-id") + 1]
    assert "--strict-mcp-config" in argv


def test_no_session_id_flag_by_default() -> None:
    argv = cli_options(SessionConfig()).to_argv("claude")
    assert "--session-id" not in argv
