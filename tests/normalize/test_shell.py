"""Bash, BashOutput/TaskOutput and KillShell/TaskStop."""

from __future__ import annotations

from typing import Any

import pytest

from normalize import (
    ShellExec,
    ShellOutput,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)


def _shell(payload: object) -> ShellExec:
    assert isinstance(payload, ShellExec)
    return payload


def _bash(**extra: Any) -> ShellExec:
    return _shell(normalize_tool_use("Bash", {"command": "pytest -q", **extra}))


def test_bash_input_fields() -> None:
    """Command, description, timeout and background flag are read from the input."""
    payload = _bash(description="Run tests", timeout=120000, run_in_background=True)
    assert (payload.command, payload.description, payload.timeout, payload.background) == (
        "pytest -q",
        "Run tests",
        120000,
        True,
    )
    assert payload.operation == "run"
    assert title_for(payload) == "Run `pytest -q` in background"
    assert action_type_for(payload) == "command"


@pytest.mark.parametrize(
    ("content", "tool_use_result", "exit_code", "stdout"),
    [
        ("Exit code 2\nE   assert 0", "Error: Exit code 2\nE   assert 0", 2, "E   assert 0"),
        ("Exit code 1", None, 1, ""),
        ("boom", "Error: Exit code 127\nsh: nope: not found", 127, "sh: nope: not found"),
    ],
)  # fmt: skip
def test_failed_command_exit_code(
    content: str, tool_use_result: Any, exit_code: int, stdout: str
) -> None:
    """``is_error`` with ``Exit code N`` gives that exit code and the output, no ``error``."""
    after = _shell(
        normalize_tool_result(
            _bash(), content=content, is_error=True, tool_use_result=tool_use_result
        )
    )
    assert after.error is None
    assert after.output == ShellOutput(exit_code=exit_code, stdout=stdout)


def test_failed_command_with_structured_streams() -> None:
    """When the CLI sends stdout/stderr, they win over the text; the code comes from it."""
    after = _shell(
        normalize_tool_result(
            _bash(),
            content="Exit code 1\nout\nerr",
            is_error=True,
            tool_use_result={"stdout": "out", "stderr": "err", "interrupted": False},
        )
    )
    assert after.output == ShellOutput(exit_code=1, stdout="out", stderr="err")


def test_interrupted_command_has_no_exit_code() -> None:
    """An interrupted command keeps its partial output and has no exit code."""
    after = _shell(
        normalize_tool_result(
            _bash(),
            content="partial",
            tool_use_result={"stdout": "partial", "stderr": "", "interrupted": True},
        )
    )
    assert after.output == ShellOutput(stdout="partial", stderr="", interrupted=True)


def test_no_output_placeholder_is_empty_stdout() -> None:
    """The CLI's ``(Bash completed with no output)`` text means empty stdout."""
    after = _shell(normalize_tool_result(_bash(), content="(Bash completed with no output)"))
    assert after.output == ShellOutput(exit_code=0, stdout="")


def test_background_run_returns_the_shell_id() -> None:
    """A background launch has no exit code yet, and remembers the shell id."""
    after = _shell(
        normalize_tool_result(
            _bash(run_in_background=True),
            content="Command running in background with ID: bash_1",
            tool_use_result={
                "stdout": "",
                "stderr": "",
                "interrupted": False,
                "backgroundTaskId": "bash_1",
            },
        )
    )
    assert after.shell_id == "bash_1"
    assert after.output is not None
    assert after.output.exit_code is None


def test_long_output_is_truncated() -> None:
    """stdout over the cap is cut and flagged."""
    after = _shell(
        normalize_tool_result(
            _bash(), content="x" * 100, tool_use_result={"stdout": "x" * 100, "stderr": "y"},
            max_output_bytes=10,
        )
    )  # fmt: skip
    assert after.output is not None
    assert (after.output.stdout, after.output.stderr, after.output.truncated) == (
        "x" * 10,
        "y",
        True,
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [("BashOutput", {"bash_id": "bash_1"}), ("TaskOutput", {"task_id": "bash_1", "block": True})],
)
def test_read_background_output(name: str, data: dict[str, Any]) -> None:
    """BashOutput (and its successor TaskOutput) read a background shell's output."""
    payload = _shell(normalize_tool_use(name, data))
    assert (payload.operation, payload.shell_id, payload.command) == ("read_output", "bash_1", "")
    assert title_for(payload) == "Read output of bash_1"
    result = {"shellId": "bash_1", "status": "completed", "exitCode": 0, "stdout": "done\n"}
    if name == "TaskOutput":
        task = {"task_id": "bash_1", "status": "completed", "exitCode": 0, "output": "done\n"}
        result = {"retrieval_status": "success", "task": task}
    after = _shell(normalize_tool_result(payload, content="done", tool_use_result=result))
    assert after.output is not None
    assert (after.output.status, after.output.exit_code, after.output.stdout) == (
        "completed",
        0,
        "done\n",
    )


@pytest.mark.parametrize(
    ("name", "data"), [("KillShell", {"shell_id": "bash_1"}), ("TaskStop", {"task_id": "bash_1"})]
)
def test_kill_background_shell(name: str, data: dict[str, Any]) -> None:
    """KillShell (and TaskStop) stop a background shell; the message becomes stdout."""
    payload = _shell(normalize_tool_use(name, data))
    assert (payload.operation, payload.shell_id) == ("kill", "bash_1")
    assert title_for(payload) == "Stop bash_1"
    after = _shell(
        normalize_tool_result(
            payload,
            content="Successfully killed shell: bash_1",
            tool_use_result={"message": "Successfully killed shell: bash_1", "shell_id": "bash_1"},
        )
    )
    assert after.output is not None
    assert after.output.stdout == "Successfully killed shell: bash_1"
    assert after.output.exit_code is None


def test_long_command_title_is_shortened() -> None:
    """Titles show the first line of a command, cut to about 60 characters."""
    payload = _shell(normalize_tool_use("Bash", {"command": "echo " + "a" * 100 + "\nls"}))
    title = title_for(payload)
    assert title.startswith("Run `echo aaa")
    assert title.endswith("…`")
    assert len(title) < 70
