"""Builders for fake-CLI scripts, and the launcher that turns a script into an executable.

Scripts are plain JSON-able dicts (the format is documented in :mod:`claudecode.testing`);
these helpers only save typing and spell the keys right.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._fake_script import SCRIPT_ENV_VAR

__all__ = (
    "FAKE_CLI_MODULE",
    "fake_cli_argv",
    "fake_cli_command",
    "replay_script",
    "script",
    "text_block",
    "text_turn",
    "thinking_block",
    "tool_turn",
    "tool_use_block",
    "turn",
)

#: The module to run with ``python -m`` to start the fake CLI.
FAKE_CLI_MODULE = "claudecode.testing"

Block = dict[str, Any]
Turn = dict[str, Any]
Script = dict[str, Any]


def text_block(text: str, *, by_answer: tuple[str, Mapping[str, str]] | None = None) -> Block:
    """A ``text`` content block.

    ``by_answer=(question, {answer: text})``: the text for the answer the host gave to that
    AskUserQuestion question earlier in the session (``text`` when none fits), so a script
    can name the user's choice.
    """
    block: Block = {"type": "text", "text": text}
    if by_answer is not None:
        block["by_answer"] = {"question": by_answer[0], "texts": dict(by_answer[1])}
    return block


def thinking_block(thinking: str) -> Block:
    """A ``thinking`` content block (streamed as thinking_delta plus one signature_delta)."""
    return {"type": "thinking", "thinking": thinking}


def tool_use_block(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    id: str | None = None,
    permission: bool | None = None,
    result: str | None = None,
    is_error: bool | None = None,
    tool_use_result: Any = None,
    blocked_path: str | None = None,
    result_bytes: int | None = None,
) -> Block:
    """A ``tool_use`` content block.

    Args:
        name: The tool name. ``Bash``, ``Write``, ``Edit`` and ``Read`` really run (in the
            fake's working directory); other tools answer ``result`` (default ``"ok"``).
        tool_input: The tool's input object.
        id: The ``toolu_…`` id; random when omitted.
        permission: Whether the fake asks the host with ``can_use_tool`` first. When omitted:
            no for read-only tools and in ``bypassPermissions`` mode, no for edit tools in
            ``acceptEdits`` mode, yes otherwise.
        result: A canned tool_result content instead of running the tool.
        is_error: With ``result``: mark the tool_result as an error.
        tool_use_result: With ``result``: the structured ``tool_use_result`` to print.
        blocked_path: ``blocked_path`` of the permission request (Bash defaults to the cwd).
        result_bytes: Emit a tool_result whose content is this many bytes (not running the
            tool); the line is written in 1 MiB slices.
    """
    block: Block = {"type": "tool_use", "name": name, "input": dict(tool_input)}
    optional = {
        "id": id,
        "permission": permission,
        "result": result,
        "is_error": is_error,
        "tool_use_result": tool_use_result,
        "blocked_path": blocked_path,
        "result_bytes": result_bytes,
    }
    block.update({k: v for k, v in optional.items() if v is not None})
    return block


def turn(
    *messages: Sequence[Block | str], delay: float = 0.0, chunk: int = 16, **options: Any
) -> Turn:
    """A turn made of ``messages`` (one list of blocks per simulated API call).

    Args:
        messages: Each a list of blocks (a bare string is a text block).
        delay: Seconds to wait before each delta (makes interrupts possible).
        chunk: Characters per delta.
        options: Other turn keys: ``garbage_lines``, ``hang``, ``big_line_bytes``, ``usage``.
    """
    return {
        "messages": [{"blocks": list(blocks)} for blocks in messages],
        "delay": delay,
        "chunk": chunk,
        **options,
    }


def text_turn(
    text: str, *, thinking: str | None = None, delay: float = 0.0, chunk: int = 16
) -> Turn:
    """A one-message turn answering ``text`` (after a thinking block if given)."""
    blocks: list[Block | str] = [thinking_block(thinking)] if thinking is not None else []
    blocks.append(text_block(text))
    return turn(blocks, delay=delay, chunk=chunk)


def tool_turn(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    before: str | None = "Let me do that.",
    after: str = "Done.",
    delay: float = 0.0,
    **block_options: Any,
) -> Turn:
    """A turn that calls one tool, then answers ``after``: two simulated API calls.

    ``block_options`` go to :func:`tool_use_block` (``permission``, ``result``, …).
    """
    first: list[Block | str] = [text_block(before)] if before else []
    first.append(tool_use_block(name, tool_input, **block_options))
    return turn(first, [text_block(after)], delay=delay)


def script(*turns: Turn | str, **options: Any) -> Script:
    """A turns-mode script: the Nth user message gets the Nth turn.

    ``options`` are the top-level keys (``stderr_lines``, ``exit_code``,
    ``crash_after_lines``, ``garbage_lines``, ``hang``, …; see :mod:`claudecode.testing`).
    """
    return {"turns": list(turns), **options}


def replay_script(
    transcript: str | os.PathLike[str],
    *,
    proc: str | None = None,
    speed: float = 0.0,
    **options: Any,
) -> Script:
    """A replay-mode script that plays the CLI's side of a recorded transcript file."""
    body: Script = {
        "replay": os.fspath(Path(transcript).resolve()),
        "replay_speed": speed,
        **options,
    }
    if proc is not None:
        body["proc"] = proc
    return body


def fake_cli_argv() -> list[str]:
    """The argv prefix that starts the fake CLI with this interpreter."""
    return [sys.executable, "-m", FAKE_CLI_MODULE]


def fake_cli_command(
    script: Mapping[str, Any] | str | os.PathLike[str],
    tmp_dir: str | os.PathLike[str],
    *,
    name: str = "claude",
) -> Path:
    """Write ``script`` and an executable wrapper into ``tmp_dir``; return the wrapper's path.

    The wrapper is a small ``/bin/sh`` script that bakes in the script path
    (``CLAUDECODE_FAKE_CLI_SCRIPT``) and ``exec``\\ s ``python -m claudecode.testing "$@"``,
    so a client can launch it as ``cli_path`` with the real CLI's argv.

    Args:
        script: A script dict (written as ``<name>.script.json``) or the path of an
            existing script file.
        tmp_dir: A directory to write into (e.g. pytest's ``tmp_path``).
        name: File name of the wrapper; use different names for several fakes in one dir.
    """
    directory = Path(tmp_dir)
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(script, Mapping):
        script_path = directory / f"{name}.script.json"
        script_path.write_text(json.dumps(script), encoding="utf-8")
    else:
        script_path = Path(script).resolve()
    package_root = Path(__file__).resolve().parents[2]
    wrapper = directory / name
    wrapper.write_text(
        "#!/bin/sh\n"
        f"{SCRIPT_ENV_VAR}={shlex.quote(str(script_path))}\n"
        f"PYTHONPATH={shlex.quote(str(package_root))}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        f"export {SCRIPT_ENV_VAR} PYTHONPATH\n"
        f'exec {shlex.quote(sys.executable)} -m {FAKE_CLI_MODULE} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return wrapper
