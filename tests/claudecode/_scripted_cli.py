"""A fake CLI whose every byte a test controls: a handler for ``claudecode.testing``'s fake.

:func:`scripted_options` writes a handler module that answers the host by a plan:

* ``initialize``: the payload of the success answer to ``initialize`` (default: a minimal one);
* ``user``: the lines written for each prompt, in turn (a list of lists);
* ``control_response``: the lines written when the host answers one of the CLI's requests;
  ``"{echo}"`` inside a raw line is replaced by the host's answer, JSON-encoded as a string;
* ``control_request``: the lines written for any other control request of the host
  (``"{request_id}"`` is replaced by its id); ``None`` keeps the fake's default answer;
* ``exit_after_user``: exit with this code right after the Nth prompt's lines (1-based).
* ``spawn_before_exit``: an argv started just before that exit, left running; it inherits
  stdout and stderr unless ``spawn_quiet`` (then /dev/null); its pid goes to ``spawn_pid_file``.

Lines are dicts (written as JSON) or raw strings (written byte for byte).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claudecode.options import ClaudeCodeOptions
from claudecode.testing import fake_cli_command, script

_HANDLER = """
import json, os, sys

PLAN = json.loads({plan!r})
STATE = {{"users": 0}}


def _fill(line, **values):
    if isinstance(line, str):
        for key, value in values.items():
            line = line.replace("{{" + key + "}}", value)
    return line


def handle(msg):
    kind = msg.get("type")
    if kind == "control_request":
        request = msg.get("request") or {{}}
        rid = msg.get("request_id")
        if request.get("subtype") == "initialize":
            payload = PLAN.get("initialize") or {{"commands": [], "models": [], "pid": os.getpid()}}
            return [{{"type": "control_response", "response": {{"subtype": "success",
                     "request_id": rid, "response": payload}}}}]
        lines = PLAN.get("control_request")
        if lines is None:
            return None
        return [_fill(line, request_id=rid) for line in lines]
    if kind == "control_response":
        echo = json.dumps(json.dumps(msg))
        return [_fill(line, echo=echo[1:-1]) for line in PLAN.get("control_response", [])]
    if kind == "user":
        STATE["users"] += 1
        turns = PLAN.get("user", [])
        lines = turns[STATE["users"] - 1] if STATE["users"] <= len(turns) else []
        if PLAN.get("exit_after_user") == STATE["users"]:
            for line in lines:
                sys.stdout.write((line if isinstance(line, str) else json.dumps(line)) + "\\n")
            sys.stdout.flush()
            if PLAN.get("spawn_before_exit"):
                import subprocess
                quiet = subprocess.DEVNULL if PLAN.get("spawn_quiet") else None
                child = subprocess.Popen(PLAN["spawn_before_exit"], stdout=quiet, stderr=quiet)
                with open(PLAN["spawn_pid_file"], "w") as out:
                    out.write(str(child.pid))
            os._exit(PLAN.get("exit_code", 0))
        return lines
    return []
"""


def scripted_options(tmp_path: Path, plan: dict[str, Any], **kwargs: Any) -> ClaudeCodeOptions:
    """Options that run the fake CLI with a handler following ``plan``."""
    handler = tmp_path / "scripted_handler.py"
    handler.write_text(_HANDLER.format(plan=json.dumps(plan)))
    body = script(handler=f"{handler}:handle", **kwargs.pop("script_options", {}))
    cli = fake_cli_command(body, tmp_path / "fake")
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    kwargs.setdefault("control_timeout", 20.0)
    return ClaudeCodeOptions(cli_path=cli, cwd=workdir, **kwargs)


def result_line(**fields: Any) -> dict[str, Any]:
    """A ``result`` line; ``fields`` replace or (as None via ``drop``) remove the defaults."""
    line: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "done",
        "num_turns": 1,
        "total_cost_usd": 0.25,
        "session_id": "s1",
    }
    for key in fields.pop("drop", ()):
        line.pop(key, None)
    line.update(fields)
    return line
