"""Secrets stay off the CLI's command line and out of the logs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from claudecode._private_args import PrivateArgFiles, redact_argv
from claudecode.mcp import SdkMcpServer
from claudecode.options import ClaudeCodeOptions
from claudecode.session import Session
from claudecode.testing import fake_cli_command, script
from tests.support.timeouts import HANG_GUARD

TOKEN = "sekret-token-4711"
MCP = {"mcpServers": {"remote": {"type": "http", "url": "https://x", "headers": {"A": TOKEN}}}}


def _value_of(argv: list[str], flag: str) -> str:
    for i, arg in enumerate(argv):
        if arg == flag:
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.partition("=")[2]
    raise AssertionError(f"{flag} not in {argv}")


def _while_running(
    pid: int | None, record: Path, with_sdk_server: bool
) -> tuple[bytes, list[str], list[Path]]:
    """The CLI's command line and recorded argv; the private files, checked."""
    assert pid is not None
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    argv = json.loads(record.read_text().splitlines()[0])["argv"]
    files = [Path(_value_of(argv, "--mcp-config")), Path(_value_of(argv, "--settings"))]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.stat().st_uid == os.getuid()
        assert TOKEN in path.read_text()
    config = json.loads(files[0].read_text())
    assert config["mcpServers"]["remote"]["headers"]["A"] == TOKEN
    if with_sdk_server:
        assert config["mcpServers"]["fe"] == {"type": "sdk", "name": "fe"}
    return cmdline, argv, files


@pytest.mark.anyio
@pytest.mark.parametrize("with_sdk_server", [False, True])
async def test_mcp_config_and_settings_go_through_private_files(
    tmp_path: Path, with_sdk_server: bool
) -> None:
    record = tmp_path / "record.jsonl"
    cli = fake_cli_command(script(record_path=str(record)), tmp_path / "fake")
    opts = ClaudeCodeOptions(
        cli_path=cli,
        cwd=tmp_path,
        mcp_config=MCP,
        settings=json.dumps({"env": {"SERVICE_TOKEN": TOKEN}}),
    )
    servers = [SdkMcpServer("fe")] if with_sdk_server else []
    with capture_logs() as logs, anyio.fail_after(HANG_GUARD):
        async with Session(opts, mcp_servers=servers) as session:
            cmdline, argv, files = _while_running(session.pid, record, with_sdk_server)
    assert TOKEN.encode() not in cmdline
    assert not any(TOKEN in arg for arg in argv)
    assert not any(path.exists() for path in files)  # removed at close
    assert logs and not any(TOKEN in repr(event) for event in logs)


def test_externalize_handles_both_spellings_and_leaves_paths_alone(tmp_path: Path) -> None:
    files = PrivateArgFiles()
    argv = ["claude", "--mcp-config", '{"a": 1}', '--settings={"b": 2}', "--model", "m"]
    out = files.externalize(argv)
    assert out[0:2] == ["claude", "--mcp-config"] and Path(out[2]).read_text() == '{"a": 1}'
    assert Path(out[3].partition("=")[2]).read_text() == '{"b": 2}'
    assert out[4:] == ["--model", "m"]
    assert files.externalize(["c", "--mcp-config", "/etc/x.json"]) == [
        "c",
        "--mcp-config",
        "/etc/x.json",
    ]
    files.remove()
    assert not Path(out[2]).exists()


def test_redact_argv_hides_inline_json() -> None:
    argv = ["claude", "--mcp-config", json.dumps(MCP), f"--agents={json.dumps(MCP)}", "-p"]
    shown = redact_argv(argv)
    assert TOKEN not in repr(shown)
    assert shown[0] == "claude" and shown[-1] == "-p"
    assert shown[2].startswith("<json: ") and shown[3].startswith("--agents=<json: ")
