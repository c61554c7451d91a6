"""The built-in demo: the whole pipeline against a scripted stand-in for the CLI.

The stand-in is :mod:`claudecode.testing`'s fake CLI, a real subprocess speaking
stream-json, scripted to think, talk, run a command that needs approval, ask the user a
question (and name the chosen option next), edit a file (with its diff) and keep a todo list
— so ``claudecode-bridge run --demo`` shows everything working on a machine with no Claude
Code CLI and no credentials.

Its sessions are stored as the real CLI stores them (transcripts under a config directory,
``CLAUDE_CONFIG_DIR``), in a home the demo owns (:class:`DemoHome`): a temporary one removed
at exit, or ``--demo-home DIR`` kept for the next run, so history and resume can be tried
too.
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

__all__ = ("DEMO_FILE", "DEMO_OPTIONS", "DEMO_QUESTION", "DemoHome", "demo_cli", "demo_script")

#: The file the demo writes and then edits in its working directory.
DEMO_FILE = "greeting.py"
#: The question the demo asks (AskUserQuestion), and its options (single choice).
DEMO_QUESTION = "Which greeting style should I use?"
DEMO_OPTIONS = ("Formal", "Casual")
_ASK = {
    "questions": [
        {
            "question": DEMO_QUESTION,
            "header": "Style",
            "options": [
                {"label": "Formal", "description": "A polite greeting: Good day, world."},
                {"label": "Casual", "description": "A relaxed greeting: Hey, world!"},
            ],
            "multiSelect": False,
        }
    ]
}

_ORIGINAL = 'def greet(name):\n    return "Hello " + name\n\n\nprint(greet("world"))\n'
_TODOS = [
    {"content": "Look at the project", "status": "completed", "activeForm": "Looking"},
    {"content": "Write greeting.py", "status": "completed", "activeForm": "Writing"},
    {"content": "Use an f-string", "status": "in_progress", "activeForm": "Editing"},
]


def demo_script() -> dict[str, Any]:
    """The scripted turn: reasoning, text, Bash (asks), a question (AskUserQuestion) whose
    answer the next sentence names, TodoWrite, Write, Edit (diff)."""
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
                text_block("One question before I write anything."),
                tool_use_block("AskUserQuestion", _ASK, permission=True),
            ],
            [
                text_block(
                    "No greeting style was chosen, so I'll keep it plain. Now I'll plan the work.",
                    by_answer=(
                        DEMO_QUESTION,
                        {
                            "Formal": "You chose Formal: I'll keep the greeting polite. "
                            "Now I'll plan the work.",
                            "Casual": "You chose Casual: I'll keep the greeting relaxed. "
                            "Now I'll plan the work.",
                        },
                    ),
                ),
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


def demo_cli(
    directory: str | os.PathLike[str], *, config_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Write the stand-in CLI (script and wrapper) into ``directory``; return its path.

    With ``config_dir`` it stores its sessions' transcripts there, as the real CLI does in
    its config directory."""
    body = demo_script()
    if config_dir is not None:
        body["transcripts"] = os.fspath(config_dir)
    return fake_cli_command(body, directory, name="claude-demo")


class DemoHome:
    """Where a demo keeps its sessions and works: ``config`` (its ``CLAUDE_CONFIG_DIR``) and
    ``work`` (the default working directory) under ``keep`` (created, kept) or under a
    scratch directory the caller removes at exit."""

    def __init__(self, scratch: str | os.PathLike[str], keep: str | None = None) -> None:
        self.root = Path(keep).expanduser().resolve() if keep else Path(scratch) / "home"
        self.config = self.root / "config"
        self.work = self.root / "work"
        for path in (self.root, self.config, self.work):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.cli = demo_cli(scratch, config_dir=self.config)

    @property
    def env(self) -> dict[str, str]:
        """The sessions' environment: the CLI (and history) read the config from here."""
        return {"CLAUDE_CONFIG_DIR": str(self.config)}
