"""The fake CLI's script: the JSON file named by :data:`SCRIPT_ENV_VAR`, read and checked
before the fake starts (unknown keys and malformed turns are refused with a
:class:`ScriptError`), and the optional ``handler`` it names.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = (
    "load_handler",
    "load_script",
    "SCRIPT_ENV_VAR",
    "ScriptError",
)

Json = dict[str, Any]

#: Environment variable naming the JSON script file the fake CLI follows.
SCRIPT_ENV_VAR = "CLAUDECODE_FAKE_CLI_SCRIPT"

_TOP_KEYS = frozenset(
    {
        "turns",
        "exhausted",
        "replay",
        "proc",
        "replay_speed",
        "stderr_lines",
        "exit_code",
        "crash_after_lines",
        "crash_after_type",
        "crash_exit_code",
        "garbage_lines",
        "hang",
        "hang_before_init",
        "big_line_bytes",
        "ignore_sigterm",
        "record_path",
        "transcripts",
        "model",
        "version",
        "session_id",
        "include_partial_messages",
        "handler",
    }
)


class ScriptError(Exception):
    """Raised when the script file is missing, not JSON, or has unknown keys."""


def load_handler(spec: Any) -> Any:
    """``"module:function"`` or ``"/path/file.py:function"`` -> the function (or ``None``)."""
    if not spec:
        return None
    import importlib
    import importlib.util

    target, _, name = str(spec).rpartition(":")
    if target.endswith(".py"):
        loaded = importlib.util.spec_from_file_location("_fake_cli_handler", target)
        if loaded is None or loaded.loader is None:
            raise SystemExit(f"fake CLI: cannot load handler file {target}")
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    return getattr(module, name)


def load_script(path: str | None) -> Json:
    """Read and check the script named by :data:`SCRIPT_ENV_VAR` (empty when unset)."""
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            script = json.load(f)
    except (OSError, ValueError) as exc:
        raise ScriptError(f"cannot read script {path}: {exc}") from exc
    if not isinstance(script, dict):
        raise ScriptError("the script must be a JSON object")
    unknown = sorted(set(script) - _TOP_KEYS)
    if unknown:
        raise ScriptError(f"unknown script keys: {', '.join(unknown)}")
    from ._fake_turns import normalize_turn

    turns = script.get("turns") or []
    extra = [script["exhausted"]] if "exhausted" in script else []
    if not isinstance(turns, list):
        raise ScriptError("turns must be a list")
    for number, turn in enumerate([*turns, *extra]):
        try:
            normalize_turn(turn)
        except (ValueError, AttributeError, TypeError) as exc:
            raise ScriptError(f"turn {number}: {exc}") from exc
    return script
