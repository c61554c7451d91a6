"""The built-in demo: the whole pipeline against a scripted stand-in for the CLI.

The stand-in is :mod:`claudecode.testing`'s fake CLI, a real subprocess speaking
stream-json, scripted to think, talk, run a command that needs approval, edit a file (with
its diff) and keep a todo list — so ``claudecode-bridge run --demo`` shows everything
working on a machine with no Claude Code CLI and no credentials.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from claudecode.testing import (
    fake_cli_command,
    script,
    text_block,
    thinking_block,
    tool_use_block,
    turn,
)

__all__ = ("DEMO_FILE", "demo_cli", "demo_script")

#: The file the demo writes and then edits in its working directory.
DEMO_FILE = "greeting.py"

_ORIGINAL = 'def greet(name):\n    return "Hello " + name\n\n\nprint(greet("world"))\n'
_TODOS = [
    {"content": "Look at the project", "status": "completed", "activeForm": "Looking"},
    {"content": "Write greeting.py", "status": "completed", "activeForm": "Writing"},
    {"content": "Use an f-string", "status": "in_progress", "activeForm": "Editing"},
]


def demo_script() -> dict[str, Any]:
    """The scripted turn: reasoning, text, Bash (asks), Write, Edit (diff), TodoWrite."""
    body: dict[str, Any] = script(
        turn(
            [
                thinking_block(
                    "The user wants a tour. I'll look around, write a small file, improve "
                    "it, and track the steps in a todo list."
                ),
                text_block("Let me look at the working directory first."),
                tool_use_block(
                    "Bash",
                    {"command": "ls -la", "description": "List the working directory"},
                    permission=True,
                ),
            ],
            [
                text_block("I'll plan the work."),
                tool_use_block(
                    "TodoWrite",
                    {"todos": _TODOS},
                    permission=False,
                    result="Todos have been modified successfully.",
                    tool_use_result={"oldTodos": [], "newTodos": _TODOS},
                ),
            ],
            [
                tool_use_block(
                    "Write", {"file_path": DEMO_FILE, "content": _ORIGINAL}, permission=True
                )
            ],
            [
                text_block("Now an f-string reads better."),
                tool_use_block(
                    "Edit",
                    {
                        "file_path": DEMO_FILE,
                        "old_string": '    return "Hello " + name',
                        "new_string": '    return f"Hello, {name}!"',
                    },
                    permission=True,
                ),
            ],
            [
                text_block(
                    f"Done: {DEMO_FILE} now greets with an f-string. This was the built-in "
                    "demo; install the Claude Code CLI and drop --demo to talk to the real "
                    "model."
                )
            ],
            delay=0.004,
            chunk=6,
        )
    )
    return body


def demo_cli(directory: str | os.PathLike[str]) -> Path:
    """Write the stand-in CLI (script and wrapper) into ``directory``; return its path."""
    return fake_cli_command(demo_script(), directory, name="claude-demo")
