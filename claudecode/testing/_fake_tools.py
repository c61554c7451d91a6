"""Simulated tools for the fake CLI: Bash, Write, Edit and Read really act on the disk.

Each simulation returns a :class:`ToolOutcome` holding the ``tool_result`` content the model
would see and the structured ``tool_use_result`` the CLI prints next to it, with the shapes
the real CLI uses (``file_tools.jsonl``, ``bash_hook_allow.jsonl``). Any other tool name
answers with the scripted ``result`` (default ``"ok"``).
"""

from __future__ import annotations

import difflib
import os
import subprocess
from dataclasses import dataclass
from typing import Any

__all__ = ("EDIT_TOOLS", "READ_ONLY_TOOLS", "ToolOutcome", "run_tool")

#: Tools that ``acceptEdits`` mode lets through without asking.
EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit", "MultiEdit"})
#: Tools the fake never asks permission for unless the script says so.
READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "TodoWrite", "ToolSearch"})

_STATE_NOTE = " (file state is current in your context \u2014 no need to Read it back)"


@dataclass
class ToolOutcome:
    """What running a tool produced."""

    content: str
    is_error: bool
    tool_use_result: Any


def run_tool(name: str, tool_input: dict[str, Any], cwd: str, block: dict[str, Any]) -> ToolOutcome:
    """Run the simulated tool ``name`` with ``tool_input`` in ``cwd``.

    A scripted ``result`` on the block wins over the simulation (with ``is_error`` and
    ``tool_use_result`` taken from the block when present). Failures of the simulation
    itself (missing file, bad input) come back as ``is_error`` results, never exceptions.
    """
    if "result" in block:
        content = str(block["result"])
        is_error = bool(block.get("is_error", False))
        return ToolOutcome(content, is_error, block.get("tool_use_result", content))
    try:
        if name == "Bash":
            return _bash(tool_input, cwd, block)
        if name == "Write":
            return _write(tool_input, cwd)
        if name == "Edit":
            return _edit(tool_input, cwd)
        if name == "Read":
            return _read(tool_input, cwd)
        if name == "AskUserQuestion":
            return _ask(tool_input)
    except (OSError, KeyError, TypeError, ValueError, subprocess.SubprocessError) as exc:
        return ToolOutcome(f"Error: {exc}", True, f"Error: {exc}")
    return ToolOutcome("ok", False, "ok")


def _ask(tool_input: dict[str, Any]) -> ToolOutcome:
    """AskUserQuestion reads the answers the host put in its input (the permission answer's
    ``updatedInput``), as the real CLI (2.1.332) does; without any the user is said to have
    answered nothing."""
    answers = tool_input.get("answers")
    answers = answers if isinstance(answers, dict) else {}
    said = ", ".join(f'"{question}"="{answer}"' for question, answer in answers.items())
    content = (
        f"Your questions have been answered: {said}. You can now continue with these answers "
        "in mind."
    )
    structured = {"questions": tool_input.get("questions", []), "answers": answers}
    return ToolOutcome(content, False, structured)


def _path(tool_input: dict[str, Any], cwd: str) -> str:
    return os.path.join(cwd, str(tool_input["file_path"]))


def _bash(tool_input: dict[str, Any], cwd: str, block: dict[str, Any]) -> ToolOutcome:
    timeout_ms = tool_input.get("timeout") or block.get("timeout_ms") or 120_000
    proc = subprocess.run(
        ["/bin/sh", "-c", str(tool_input["command"])],
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=float(timeout_ms) / 1000,
        check=False,
    )
    stdout = proc.stdout.decode("utf-8", "replace").rstrip("\n")
    stderr = proc.stderr.decode("utf-8", "replace").rstrip("\n")
    structured = {
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": not stdout and not stderr,
    }
    output = "\n".join(part for part in (stdout, stderr) if part)
    if proc.returncode != 0:
        text = f"Exit code {proc.returncode}" + (f"\n{output}" if output else "")
        return ToolOutcome(text, True, f"Error: {text}")
    return ToolOutcome(output or "(Bash completed with no output)", False, structured)


def _write(tool_input: dict[str, Any], cwd: str) -> ToolOutcome:
    path = _path(tool_input, cwd)
    content = str(tool_input["content"])
    original: str | None = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            original = f.read()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)
    if original is None:
        text = f"File created successfully at: {path}{_STATE_NOTE}"
        patch: list[dict[str, Any]] = []
    else:
        text = f"The file {path} has been updated successfully.{_STATE_NOTE}"
        patch = _structured_patch(original, content)
    structured = {
        "type": "create" if original is None else "update",
        "filePath": path,
        "content": content,
        "structuredPatch": patch,
        "originalFile": original,
        "userModified": False,
    }
    return ToolOutcome(text, False, structured)


def _edit(tool_input: dict[str, Any], cwd: str) -> ToolOutcome:
    path = _path(tool_input, cwd)
    old, new = str(tool_input["old_string"]), str(tool_input["new_string"])
    replace_all = bool(tool_input.get("replace_all", False))
    with open(path, encoding="utf-8") as f:
        original = f.read()
    if old not in original:
        text = f"String to replace not found in file.\nString: {old}"
        return ToolOutcome(text, True, f"Error: {text}")
    updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(updated)
    structured = {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": original,
        "structuredPatch": _structured_patch(original, updated),
        "userModified": False,
        "replaceAll": replace_all,
    }
    text = f"The file {path} has been updated successfully.{_STATE_NOTE}"
    return ToolOutcome(text, False, structured)


def _read(tool_input: dict[str, Any], cwd: str) -> ToolOutcome:
    path = _path(tool_input, cwd)
    with open(path, encoding="utf-8") as f:
        content = f.read()
    lines = content.split("\n")
    numbered = "\n".join(f"{i}\t{line}" for i, line in enumerate(lines, start=1))
    structured = {
        "type": "text",
        "file": {
            "filePath": path,
            "content": content,
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        },
    }
    return ToolOutcome(numbered, False, structured)


def _structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    """Hunks in the CLI's ``structuredPatch`` shape, built from a unified diff."""
    hunks: list[dict[str, Any]] = []
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=3)
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            old_part, new_part = line.split()[1:3]
            old_start, old_lines = _range(old_part[1:])
            new_start, new_lines = _range(new_part[1:])
            hunks.append(
                {
                    "oldStart": old_start,
                    "oldLines": old_lines,
                    "newStart": new_start,
                    "newLines": new_lines,
                    "lines": [],
                }
            )
        elif hunks:
            hunks[-1]["lines"].append(line)
    return hunks


def _range(spec: str) -> tuple[int, int]:
    start, _, count = spec.partition(",")
    return int(start), int(count) if count else 1
