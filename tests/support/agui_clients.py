"""Run drive.mjs (the real @ag-ui/client 1.0.0 and 0.0.59 and @copilotkit/core) on a plan."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adapter.server.agui import verify_events

#: The npm package of the AG-UI / CopilotKit clients (package.json, drive.mjs).
HERE = Path(__file__).resolve().parents[1] / "agui_clients"


def require_clients() -> str:
    """The node executable; skips (or fails under CI) when the clients are not installed."""
    node = shutil.which("node")
    installed = (HERE / "node_modules" / "@copilotkit" / "core" / "package.json").exists()
    if node is None or not installed:
        import os

        reason = "node and the AG-UI clients are needed: run scripts/install-test-deps"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return node


def drive(
    base: str,
    steps: list[dict[str, Any]],
    work: Path,
    timeout: float = 300,
    *,
    token: str | None = None,
) -> dict[str, Any]:
    """Run the steps against ``base`` (as the user of ``token``, if given); returns what the
    clients saw (see drive.mjs)."""
    node = require_clients()
    work.mkdir(parents=True, exist_ok=True)
    plan = work / "plan.json"
    plan.write_text(json.dumps({"base": base, "steps": steps, "token": token}))
    done = subprocess.run(
        [node, str(HERE / "drive.mjs"), str(plan)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=HERE,
        check=False,
    )
    (work / "drive.stderr").write_text(done.stderr)
    (work / "result.json").write_text(done.stdout)  # what the clients saw, for debugging
    assert 0 == done.returncode, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def text_of(step: dict[str, Any]) -> str:
    """Every text delta the client received in a step."""
    return "".join(e["delta"] for e in step["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


def runs_of(step: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The step's events cut into runs."""
    runs: list[list[dict[str, Any]]] = []
    for event in step["events"]:
        if event["type"] == "RUN_STARTED":
            runs.append([])
        if runs:
            runs[-1].append(event)
    return runs


def checked_runs(step: dict[str, Any], *, errors_ok: bool = False) -> list[list[dict[str, Any]]]:
    """The step's runs, each valid for AG-UI's ``verifyEvents`` (tool calls of earlier runs
    known to later ones), after checking the client reported no error (``errors_ok``: a step
    that is meant to fail)."""
    if not errors_ok:
        assert [] == step.get("errors"), step.get("errors")
        assert [] == step.get("runErrors", []), step.get("runErrors")
    runs = runs_of(step)
    known: list[str] = []
    for events in runs:
        assert [] == verify_events(events, known_tool_calls=known), events
        known += [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    return runs
