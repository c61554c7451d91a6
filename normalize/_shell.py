"""Bash, BashOutput/TaskOutput and KillShell/TaskStop → ``shell_exec``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import as_bool, as_int, as_map, as_str, first_str, require_str
from ._result import ToolResult
from .payloads import ShellExec, ShellOutput

__all__ = ("shell_result", "use_bash", "use_shell_kill", "use_shell_output")

_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code (-?\d+)[ \t]*(?:\n|$)")
_NO_OUTPUT = "(Bash completed with no output)"


def use_bash(name: str, data: Mapping[str, Any]) -> ShellExec:
    """``Bash {command, description, timeout, run_in_background}``."""
    return ShellExec(
        tool=name,
        command=require_str(data.get("command")),
        work_dir=first_str(data, "cwd", "work_dir", "workdir"),
        description=as_str(data.get("description")),
        timeout=as_int(data.get("timeout")),
        background=as_bool(data.get("run_in_background")),
    )


def use_shell_output(name: str, data: Mapping[str, Any]) -> ShellExec:
    """``BashOutput {bash_id, filter}`` / ``TaskOutput {task_id, block, timeout}``."""
    return ShellExec(
        tool=name,
        operation="read_output",
        shell_id=first_str(data, "bash_id", "shell_id", "task_id"),
        timeout=as_int(data.get("timeout")),
    )


def use_shell_kill(name: str, data: Mapping[str, Any]) -> ShellExec:
    """``KillShell {shell_id}`` / ``TaskStop {task_id}``."""
    return ShellExec(
        tool=name, operation="kill", shell_id=first_str(data, "shell_id", "task_id", "bash_id")
    )


def _split_exit_code(text: str) -> tuple[int | None, str]:
    match = _EXIT_CODE.match(text)
    if match is None:
        return None, text
    return as_int(match.group(1)), text[match.end() :]


def shell_result(payload: ShellExec, result: ToolResult) -> ShellExec:
    """Fill ``output``: exit code from ``is_error`` and ``Exit code N``, streams from the data.

    A failed call whose text does not start with ``Exit code N`` (a permission denial, a
    hook veto) sets ``error`` instead of an exit code.
    """
    data = result.structured
    task = as_map(data.get("task"))  # TaskOutput nests the shell under "task"
    fields: Mapping[str, Any] = task or data
    stdout = first_str(fields, "stdout", "output")
    stderr = as_str(fields.get("stderr"))
    interrupted = as_bool(fields.get("interrupted"))
    status = first_str(fields, "status")
    exit_code = as_int(fields.get("exitCode", fields.get("exit_code")))
    shell_id = first_str(fields, "backgroundTaskId", "shellId", "shell_id", "task_id")
    error: str | None = None
    text = result.text
    if result.is_error:
        code, rest = _split_exit_code(text)
        if code is None and isinstance(result.data, str):
            code, rest = _split_exit_code(result.data)
        if code is None:
            error = result.error
        else:
            exit_code = code
            if stdout is None and stderr is None:
                stdout = rest.strip("\n")
    else:
        if stdout is None and stderr is None and payload.operation != "kill":
            stdout = "" if text == _NO_OUTPUT else text
        background_run = payload.background and shell_id is not None
        if exit_code is None and payload.operation == "run" and not (interrupted or background_run):
            exit_code = 0
    stdout, cut_out = result.cut(stdout)
    stderr, cut_err = result.cut(stderr)
    if payload.operation == "kill" and stdout is None and text:
        stdout, cut_out = result.cut(text)
    output = ShellOutput(
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        interrupted=interrupted,
        status=status,
        truncated=cut_out or cut_err,
    )
    if error is not None and exit_code is None and not (stdout or stderr):
        return msgspec.structs.replace(payload, error=error)
    return msgspec.structs.replace(
        payload, output=output, error=error, shell_id=payload.shell_id or shell_id
    )
