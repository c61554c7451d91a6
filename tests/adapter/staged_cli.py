"""A fake CLI that writes scripted lines in stages, each waiting for a gate file.

The fake CLI (:mod:`claudecode.testing`) runs a handler that, at the first user message,
starts writing the stages in a thread: each stage waits until its gate file exists, so a test
decides when the CLI "does" something and can look at the session in between (no timing).
Later user messages get no answer of their own (they are queued behind the script). A stage
line ``"__exit__"`` makes the fake CLI exit with status 0 there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapter.config import SessionConfig
from adapter.policies import PermissionPolicy
from claudecode.testing import fake_cli_command, script

Stage = tuple[str | None, list[Any]]

_HANDLER = """
import json, os, sys, threading, time

STAGES = json.loads({stages!r})
_started = []


def _write(lines):
    for line in lines:
        if line == "__exit__":  # exit cleanly (status 0), whatever the turn
            sys.stdout.buffer.flush()
            os._exit(0)
        sys.stdout.buffer.write(json.dumps(line).encode() + b"\\n")
    sys.stdout.buffer.flush()


def _run():
    for gate, lines in STAGES:
        while gate and not os.path.exists(gate):
            time.sleep(0.01)
        _write(lines)


def handle(msg):
    if msg.get("type") != "user":
        return None
    if not _started:
        _started.append(True)
        threading.Thread(target=_run, daemon=True).start()
    return []
"""


def init_line() -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "session_id": "S", "model": "m", "tools": []}


def text_line(mid: str, text: str, parent: str | None = None) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"id": mid, "role": "assistant", "model": "m", "content": [
            {"type": "text", "text": text}
        ]},
        "parent_tool_use_id": parent,
        "session_id": "S",
    }  # fmt: skip


def result_line(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": False, "result": text, **extra}


def task_line(subtype: str, **extra: Any) -> dict[str, Any]:
    return {"type": "system", "subtype": subtype, "task_id": "t1", "tool_use_id": "toolu_a",
            "session_id": "S", **extra}  # fmt: skip


class Gates:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> str:
        return str(self.root / f"gate-{name}")

    def open(self, name: str) -> None:
        Path(self.path(name)).touch()


def staged_cli(tmp_path: Path, stages: list[Stage]) -> str:
    """The path of a fake CLI that plays ``stages``."""
    handler = tmp_path / "staged_handler.py"
    handler.write_text(_HANDLER.format(stages=json.dumps(stages)))
    return fake_cli_command(script(handler=f"{handler}:handle"), tmp_path / "fake")


def staged_config(tmp_path: Path, stages: list[Stage], **kwargs: Any) -> SessionConfig:
    """A :class:`SessionConfig` running :func:`staged_cli` in ``tmp_path / "work"``."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    kwargs.setdefault("policy", PermissionPolicy("autonomous"))
    return SessionConfig(cli_path=staged_cli(tmp_path, stages), cwd=work, **kwargs)


def background_stages(gates: Gates) -> list[Stage]:
    """A turn that launches a background task; at gate ``done`` the task reports and the CLI
    starts a turn by itself, which ends at gate ``result``."""
    return [
        (None, [
            init_line(),
            text_line("m1", "launched"),
            task_line("task_started", is_backgrounded=True, description="count"),
            result_line("launched"),
        ]),
        (gates.path("done"), [
            task_line("task_notification", status="completed", summary="0 files"),
            init_line(),
            text_line("m2", "the agent found 0 files"),
        ]),
        (gates.path("result"), [
            result_line("the agent found 0 files", origin={"kind": "task-notification"}),
        ]),
    ]  # fmt: skip
