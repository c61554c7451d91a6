"""Run the official ACP TypeScript client (``tests/acp_agent/client/drive.mjs``) against an
agent command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .acp_schema import check_wire

#: The npm package of the official ACP client the driver runs (tests/acp_agent/client).
CLIENT_DIR = Path(__file__).resolve().parents[1] / "acp_agent" / "client"
INSTALL_HINT = "run scripts/install-test-deps (npm ci in tests/acp_agent/client)"


def node_client() -> tuple[str, Path]:
    """``(node, drive.mjs)``; skips (fails under CI) when the client is not installed."""
    node = shutil.which("node")
    installed = (CLIENT_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
    if node is None or not installed:
        reason = "node is missing" if node is None else f"the ACP client is missing: {INSTALL_HINT}"
        strict = os.environ.get("CI") or os.environ.get("CLAUDECODE_BRIDGE_REQUIRE_CLI")
        if strict and strict.strip().lower() not in ("0", "false", "no"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    assert node is not None
    return node, CLIENT_DIR / "drive.mjs"


def drive(
    agent: list[str], steps: list[dict[str, Any]], work: Path, *, env: dict[str, str], cwd: Path
) -> dict[str, Any]:
    """Run ``steps`` through the real client against ``agent``; every message on the wire
    (both directions) is checked against the ACP schema. Returns the client's report."""
    return finish(start(agent, steps, work, env=env, cwd=cwd), work)


def start(
    agent: list[str], steps: list[dict[str, Any]], work: Path, *, env: dict[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """Start the client on ``steps`` (see :func:`drive`); the wire is logged as it goes to
    ``work/wire.agent.ndjson`` and ``work/wire.client.ndjson``."""
    node, script = node_client()
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "script.json"
    wire = work / "wire"
    spec.write_text(
        json.dumps({"agent": agent, "env": env, "cwd": str(cwd), "wire": str(wire), "steps": steps})
    )
    return subprocess.Popen(
        [node, str(script), str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=CLIENT_DIR,
    )


def finish(proc: subprocess.Popen[bytes], work: Path) -> dict[str, Any]:
    """Wait for the client :func:`start` started; its report, the wire checked."""
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert 0 == proc.returncode, err.decode()[-4000:]
    report: dict[str, Any] = json.loads(out)
    agent_lines = (work / "wire.agent.ndjson").read_bytes().splitlines()
    client_lines = (work / "wire.client.ndjson").read_bytes().splitlines()
    problems = check_wire(agent_lines, client_lines)
    assert [] == problems, problems[:5]
    report["wire_agent"] = [json.loads(line) for line in agent_lines if line.strip()]
    return report


def updates_of(report: dict[str, Any], session: str, kind: str) -> list[dict[str, Any]]:
    """The session's updates of one ``sessionUpdate`` kind."""
    return [u for u in report["updates"].get(session, []) if u["sessionUpdate"] == kind]


def text_of(report: dict[str, Any], session: str, kind: str = "agent_message_chunk") -> str:
    """The text of a session's message (or thought) chunks, joined."""
    return "".join(u["content"]["text"] for u in updates_of(report, session, kind))
