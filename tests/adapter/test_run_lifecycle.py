"""``claudecode-bridge run`` against the fake CLI: background tasks, clean exits mid-turn,
and hostile tool output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from claudecode.testing import fake_cli_command, script, tool_use_block, turn
from tests.adapter.staged_cli import Gates, background_stages, init_line, staged_cli, text_line


def start(cli: str, cwd: Path, *args: str) -> subprocess.Popen[bytes]:
    cwd.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "adapter", "run", "--cli", cli, "--cwd", str(cwd), *args]
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def events_of(out: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def read_until_complete(proc: subprocess.Popen[bytes]) -> bytes:
    assert proc.stdout is not None
    seen = b""
    while b'"type":"complete"' not in seen:
        line = proc.stdout.readline()
        assert line, f"run ended early: {seen!r}"
        seen += line
    return seen


def test_run_waits_for_a_background_task_and_prints_the_turn_it_starts(tmp_path: Path) -> None:
    gates = Gates(tmp_path)
    cli = staged_cli(tmp_path, background_stages(gates))
    proc = start(cli, tmp_path / "work", "--json", "--approve", "all", "use a background agent")
    try:
        first = read_until_complete(proc)
        assert proc.poll() is None, "run must keep listening while the task runs"
        gates.open("done")
        gates.open("result")
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    events = events_of(first + rest)
    assert 0 == proc.returncode, err.decode()
    completes = [e for e in events if e["type"] == "complete"]
    assert ["launched", "the agent found 0 files"] == [c["result"] for c in completes]
    texts = "".join(e["text"] for e in events if e["type"] == "message_chunk")
    assert "the agent found 0 files" in texts
    assert b"waiting for background tasks" in err


def test_run_renders_the_self_started_turn_for_a_person(tmp_path: Path) -> None:
    gates = Gates(tmp_path)
    gates.open("done")
    gates.open("result")
    cli = staged_cli(tmp_path, background_stages(gates))
    proc = start(cli, tmp_path / "work", "--approve", "all", "use a background agent")
    out, err = proc.communicate(timeout=60)
    assert 0 == proc.returncode, err.decode()
    assert "the agent found 0 files" in out.decode()
    assert 2 == out.decode().count("done ·")


def test_run_stops_waiting_after_the_background_timeout(tmp_path: Path) -> None:
    """The task never reports: after --background-timeout run says so and exits 1, with the
    answer it had printed."""
    cli = staged_cli(tmp_path, background_stages(Gates(tmp_path)))
    proc = start(cli, tmp_path / "work", "--json", "--background-timeout", "0.5", "go")
    out, err = proc.communicate(timeout=60)
    assert 1 == proc.returncode, err.decode()
    assert ["launched"] == [e["result"] for e in events_of(out) if e["type"] == "complete"]
    assert b"1 background task(s) of the CLI still running after 0.5s" in err


def test_run_with_background_timeout_zero_does_not_wait(tmp_path: Path) -> None:
    cli = staged_cli(tmp_path, background_stages(Gates(tmp_path)))
    proc = start(cli, tmp_path / "work", "--json", "--background-timeout", "0", "go")
    out, err = proc.communicate(timeout=60)
    assert 0 == proc.returncode, err.decode()
    assert b"still running" in err
    assert ["launched"] == [e["result"] for e in events_of(out) if e["type"] == "complete"]


def test_ctrl_c_while_waiting_for_a_background_task_quits(tmp_path: Path) -> None:
    cli = staged_cli(tmp_path, background_stages(Gates(tmp_path)))
    proc = start(cli, tmp_path / "work", "--json", "go")
    try:
        read_until_complete(proc)
        assert proc.stderr is not None
        proc.stderr.readline()  # the "waiting for background tasks" note: it is listening
        os.kill(proc.pid, signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert 130 == proc.returncode


def test_a_cli_that_exits_0_in_the_middle_of_a_turn_fails_the_run(tmp_path: Path) -> None:
    cli = staged_cli(tmp_path, [(None, [init_line(), text_line("m1", "half an ans"), "__exit__"])])
    proc = start(cli, tmp_path / "work", "--json", "go")
    out, err = proc.communicate(timeout=60)
    assert 1 == proc.returncode, err.decode()
    [complete] = [e for e in events_of(out) if e["type"] == "complete"]
    assert complete["is_error"] and "cli_exited" == complete["error"]["kind"]
    assert "middle of a turn" in complete["error"]["message"]


HOSTILE_SHELL = r"printf 'before\033]0;pwned\007\033[2Jafter\n'"


def _hostile_cli(tmp_path: Path) -> str:
    body = script(
        turn(
            [tool_use_block("Bash", {"command": HOSTILE_SHELL, "description": "title \x1b[5m"})],
            ["model says \x1b[2J\x9b31m\u202ereversed"],
        )
    )
    return fake_cli_command(body, tmp_path / "fake")


def test_run_escapes_control_characters_from_tools_and_the_model(tmp_path: Path) -> None:
    proc = start(_hostile_cli(tmp_path), tmp_path / "work", "--approve", "all", "go")
    out, err = proc.communicate(timeout=60)
    assert 0 == proc.returncode, err.decode()
    text = out.decode()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "\u202e" not in text
    assert "before\\x1b]0;pwned\\x07\\x1b[2Jafter" in text  # shown, harmless
    assert "model says \\x1b[2J" in text


def test_run_json_escapes_control_characters(tmp_path: Path) -> None:
    proc = start(_hostile_cli(tmp_path), tmp_path / "work", "--json", "--approve", "all", "go")
    out, err = proc.communicate(timeout=60)
    assert 0 == proc.returncode, err.decode()
    for raw in (b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode()):
        assert raw not in out
    texts = "".join(e["text"] for e in events_of(out) if e["type"] == "message_chunk")
    assert "\x9b31m\u202ereversed" in texts  # the JSON value itself is unchanged
