"""``claudecode-bridge run --json`` end to end: the real CLI, the fake Messages API."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Rule, Text, ToolUse, Turn, error_turn, text_turn, tool_turn

pytestmark = pytest.mark.realcli


def start_run(
    cli_command: str, cli_env: CLIEnv, prompt: str, *args: str, **env: str | None
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "adapter", "run", "--json", "--cli", cli_command]
    argv += ["--cwd", str(cli_env.cwd), *args, prompt]
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(**env),
        start_new_session=True,  # no controlling terminal: the prompter reads stdin
    )


def events_of(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def run(
    cli_command: str,
    cli_env: CLIEnv,
    prompt: str,
    *args: str,
    stdin: bytes = b"",
    **env: str | None,
) -> tuple[int, list[dict[str, Any]], str]:
    proc = start_run(cli_command, cli_env, prompt, *args, **env)
    out, err = proc.communicate(stdin, timeout=90)
    return proc.returncode, events_of(out), err.decode()


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_run_json_text_turn(cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI) -> None:
    """Text streams as message_chunk events; one complete; exit 0; seqs are gap-free."""
    fake_api.add_main(text_turn("The answer is 42.", chunk=4))
    code, events, err = run(cli_command, cli_env, "what is the answer?")
    assert 0 == code, err
    assert "The answer is 42." == "".join(e["text"] for e in of_type(events, "message_chunk"))
    assert 1 == len(of_type(events, "complete"))
    assert list(range(1, len(events) + 1)) == [e["seq"] for e in events]
    [status] = of_type(events, "session_status")
    assert status["cli_version"].startswith("2.")


def test_run_approval_allowed_at_the_prompt(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """--approve ask: the answer 'y' lets the command run."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch approved.txt", "description": "make a file"}),
        text_turn("Made it."),
    )
    code, events, err = run(cli_command, cli_env, "make a file", "--approve", "ask", stdin=b"y\n")
    assert 0 == code, err
    [request] = of_type(events, "permission_request")
    assert "Bash" == request["tool_name"]
    assert "command" == request["action_type"]
    assert (cli_env.cwd / "approved.txt").exists()
    [update] = of_type(events, "tool_update")
    assert "complete" == update["status"]
    assert "Allow" in err


def test_run_approval_denied(cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI) -> None:
    """--approve none: the command does not run and the denial is reported."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch denied.txt", "description": "make a file"}),
        text_turn("I was not allowed."),
    )
    code, events, err = run(cli_command, cli_env, "make a file", "--approve", "none")
    assert 0 == code, err
    assert not (cli_env.cwd / "denied.txt").exists()
    [update] = of_type(events, "tool_update")
    assert "error" == update["status"]
    [complete] = of_type(events, "complete")
    assert ["Bash"] == [d.get("tool_name") for d in complete["permission_denials"]]


def test_run_file_edit_carries_its_diff(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """Write then Edit: the Edit's tool_update has a modify_file payload with a real diff."""
    path = str(cli_env.cwd / "notes.txt")
    fake_api.add_main(
        Turn(blocks=[ToolUse("Write", {"file_path": path, "content": "alpha\nbeta\n"})]),
        Turn(
            blocks=[
                ToolUse("Edit", {"file_path": path, "old_string": "beta", "new_string": "gamma"})
            ]
        ),
        Turn(blocks=[Text("Edited.")]),
    )
    code, events, err = run(cli_command, cli_env, "edit notes", "--approve", "all")
    assert 0 == code, err
    assert "alpha\ngamma\n" == (cli_env.cwd / "notes.txt").read_text()
    updates = [e for e in of_type(events, "tool_update") if e["tool_name"] == "Edit"]
    [edit] = updates
    payload = edit["normalized"]
    assert "modify_file" == payload["kind"]
    diff = payload["mutations"][0]["diff"]
    assert "-beta" in diff and "+gamma" in diff and "@@" in diff


def test_run_interrupted_by_sigint(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """Ctrl-C interrupts the turn: it completes in error and the exit status is 1."""
    fake_api.add_main(text_turn("slow words " * 200, chunk=2, delay=0.02))
    proc = start_run(cli_command, cli_env, "talk slowly")
    assert proc.stdout is not None
    first = proc.stdout.readline()
    deadline = time.monotonic() + 30
    while b"message_chunk" not in first and time.monotonic() < deadline:
        first += proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    events = events_of(first + out)
    assert 1 == proc.returncode, err
    [complete] = of_type(events, "complete")
    assert complete["is_error"]
    assert "interrupted" in [e["kind"] for e in of_type(events, "error")]


def test_run_api_error(cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI) -> None:
    """A sticky HTTP 500 ends the turn in error with the status; exit 1."""
    fake_api.add_rule(Rule("break please", error_turn(500, "fake internal error")))
    code, events, err = run(cli_command, cli_env, "break please", CLAUDE_CODE_MAX_RETRIES="1")
    assert 1 == code, err
    [complete] = of_type(events, "complete")
    assert complete["is_error"]
    errors = of_type(events, "error")
    assert errors and "api_error" == errors[-1]["kind"]
    assert 500 == errors[-1].get("status")


def test_run_without_a_cli_points_at_demo(tmp_path: Path) -> None:
    """No CLI anywhere: exit 1 with install advice and --demo."""
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "NPM_CONFIG_PREFIX": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "run", "hello"],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert 1 == done.returncode
    assert b"--demo" in done.stderr
    assert b"npm install" in done.stderr
