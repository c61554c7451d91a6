"""The fake CLI, driven as a real subprocess with plain JSON lines (not through the client)."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import claudecode.testing as testing
from claudecode.testing import (
    fake_cli_command,
    replay_script,
    script,
    text_turn,
    tool_turn,
    tool_use_block,
    turn,
)
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import wait_until

Json = dict[str, Any]

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
BASE_ARGV = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
    "--include-partial-messages",
]


class Driver:
    """A host speaking stream-json to one fake CLI process over real pipes."""

    def __init__(self, command: Path, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [str(command), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, msg: Json) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def user(self, text: str) -> None:
        self.send(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "default",
            }
        )

    def control(self, request_id: str, subtype: str, **fields: Any) -> None:
        request = {"subtype": subtype, **fields}
        self.send({"type": "control_request", "request_id": request_id, "request": request})

    def answer(self, request_id: str, body: Json) -> None:
        response = {"subtype": "success", "request_id": request_id, "response": body}
        self.send({"type": "control_response", "response": response})

    def raw(self, timeout: float = HANG_GUARD) -> bytes | None:
        """The next stdout line (``None`` at EOF)."""
        return self._lines.get(timeout=timeout)

    def recv(self, timeout: float = HANG_GUARD) -> Json:
        line = self.raw(timeout)
        assert line is not None, f"stdout closed; stderr: {self.stderr()!r}"
        msg: Json = json.loads(line)
        return msg

    def until(self, pred: Callable[[Json], bool], timeout: float = HANG_GUARD) -> list[Json]:
        """Messages up to and including the first one matching ``pred``."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(max(0.01, deadline - time.monotonic()))
            seen.append(msg)
            if pred(msg):
                return seen

    def initialize(self, **fields: Any) -> Json:
        self.control("req_init", "initialize", **fields)
        return self.until(is_response("req_init"))[-1]

    def close(self, timeout: float = HANG_GUARD) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout)

    def stderr(self) -> bytes:
        if self.proc.poll() is None:
            return b""
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


def is_type(kind: str, subtype: str | None = None) -> Callable[[Json], bool]:
    def pred(msg: Json) -> bool:
        if msg.get("type") != kind:
            return False
        if subtype is None:
            return True
        request = msg.get("request") or {}
        return subtype in (msg.get("subtype"), request.get("subtype"))

    return pred


def is_response(request_id: str) -> Callable[[Json], bool]:
    def pred(msg: Json) -> bool:
        return msg.get("type") == "control_response" and (
            msg["response"].get("request_id") == request_id
        )

    return pred


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Callable[..., Driver]]:
    """Start fake CLIs from a script; every one is killed and reaped at teardown."""
    drivers: list[Driver] = []
    work = tmp_path / "cwd"
    work.mkdir()

    def start(body: Json, argv: list[str] | None = None, name: str = "claude") -> Driver:
        command = fake_cli_command(body, tmp_path / "bin", name=name)
        driver = Driver(command, BASE_ARGV if argv is None else argv, work)
        drivers.append(driver)
        return driver

    yield start
    for driver in drivers:
        if driver.proc.poll() is None:
            driver.proc.kill()
        driver.proc.wait(HANG_GUARD)
        for pipe in (driver.proc.stdin, driver.proc.stdout, driver.proc.stderr):
            if pipe is not None:
                pipe.close()


def transcript_lines(name: str) -> list[Json]:
    with open(TRANSCRIPTS / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ----------------------------------------------------------------------------- startup


def test_initialize_is_answered_like_the_real_cli(fake: Callable[..., Driver]) -> None:
    """initialize gets a success with commands, models, pid, version and permission mode."""
    cli = fake(script())
    reply = cli.initialize()
    response = reply["response"]
    assert response["subtype"] == "success"
    body = response["response"]
    assert body["commands"]
    assert body["models"]
    assert body["pid"] == cli.proc.pid  # the wrapper execs python: same process
    assert body["claude_code_version"] == "fake"
    assert body["current_permission_mode"] == "default"
    assert response["pending_permission_requests"] == []
    assert cli.close() == 0


def test_wrapper_bakes_in_the_script(tmp_path: Path) -> None:
    """fake_cli_command writes the script and a /bin/sh wrapper that runs the module."""
    command = fake_cli_command(script(), tmp_path)
    text = command.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert testing.SCRIPT_ENV_VAR in text
    assert f"-m {testing.FAKE_CLI_MODULE}" in text
    assert json.loads((tmp_path / "claude.script.json").read_text()) == {"turns": []}


def test_version_flag_and_missing_verbose(tmp_path: Path) -> None:
    """--version prints the fake version; stream-json under -p without --verbose exits 1."""
    command = str(fake_cli_command(script(version="9.9.9"), tmp_path))
    out = subprocess.run(
        [command, "--version"], capture_output=True, timeout=HANG_GUARD, check=False
    )
    assert (out.returncode, out.stdout) == (0, b"9.9.9 (Claude Code)\n")
    argv = [command, "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    out = subprocess.run(argv, capture_output=True, timeout=HANG_GUARD, check=False)
    assert out.returncode == 1
    assert b"requires --verbose" in out.stderr


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"turnz": []}, b"turnz"),
        ({"turns": [{"blocks": [{"type": "image"}]}]}, b"turn 0"),
        ({"turns": ["ok", {"blocks": [], "sleep": 1}]}, b"sleep"),
    ],
)
def test_a_bad_script_is_an_error(tmp_path: Path, body: Json, needle: bytes) -> None:
    """A typo or malformed turn in the script fails loudly (exit 2) instead of being ignored."""
    command = str(fake_cli_command(body, tmp_path))
    out = subprocess.run(
        [command, *BASE_ARGV], capture_output=True, timeout=HANG_GUARD, check=False
    )
    assert out.returncode == 2
    assert needle in out.stderr


# ----------------------------------------------------------------------------- turns


def test_text_turn_streams_and_ends_with_a_result(fake: Callable[..., Driver]) -> None:
    """A user message yields init, status, stream events, assistant lines and a result."""
    cli = fake(script(text_turn("Hello from the fake CLI!", thinking="Greet them.")))
    cli.initialize()
    cli.user("say hi")
    msgs = cli.until(is_type("result"))
    assert msgs[0]["subtype"] == "init"
    assert msgs[1]["status"] == "requesting"
    events = [m["event"] for m in msgs if m["type"] == "stream_event"]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    text = "".join(
        e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text_delta"
    )
    assert text == "Hello from the fake CLI!"
    assert any(e.get("delta", {}).get("type") == "thinking_delta" for e in events)
    assert any(e.get("delta", {}).get("type") == "signature_delta" for e in events)
    blocks = [m["message"]["content"][0] for m in msgs if m["type"] == "assistant"]
    assert [b["type"] for b in blocks] == ["thinking", "text"]
    result = msgs[-1]
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "Hello from the fake CLI!"
    assert result["session_id"] == msgs[0]["session_id"]
    usage = result["modelUsage"]["claude-opus-5-5"]
    assert usage["contextWindow"] > 0
    assert result["total_cost_usd"] > 0
    assert cli.close() == 0


def test_shapes_use_only_keys_the_real_cli_writes(fake: Callable[..., Driver]) -> None:
    """Every top-level key the fake writes appears on the same kind of line in a transcript."""
    real: dict[tuple[str, str | None], set[str]] = {}
    for path in TRANSCRIPTS.glob("*.jsonl"):
        for entry in transcript_lines(path.name):
            if entry.get("dir") == "from_cli":
                msg = entry["msg"]
                real.setdefault((msg["type"], msg.get("subtype")), set()).update(msg)
    body = script(
        text_turn("hi", thinking="hm"),
        tool_turn("Bash", {"command": "true", "description": "noop"}, permission=True),
    )
    cli = fake(body)
    cli.initialize()
    cli.user("one")
    seen = cli.until(is_type("result"))
    cli.user("two")
    for msg in cli.until(is_type("control_request", "can_use_tool")):
        seen.append(msg)
        if msg["type"] == "control_request":
            cli.answer(msg["request_id"], {"behavior": "deny", "message": "no"})
    seen += cli.until(is_type("result"))
    checked = 0
    for msg in seen:
        kind = (msg["type"], msg.get("subtype"))
        if kind in real:
            assert set(msg) <= real[kind], (kind, set(msg) - real[kind])
            checked += 1
    assert checked == len(seen)


def test_bash_allowed_really_runs(fake: Callable[..., Driver], tmp_path: Path) -> None:
    """can_use_tool carries the tool input; an allow runs the command in the cwd."""
    cmd = {"command": "touch made_by_bash.txt && echo made", "description": "Create a file"}
    cli = fake(script(tool_turn("Bash", cmd, permission=True, after="Created.")))
    cli.initialize()
    cli.user("make a file")
    msgs = cli.until(is_type("control_request", "can_use_tool"))
    tool_use = next(
        m
        for m in msgs
        if m["type"] == "assistant" and m["message"]["content"][0]["type"] == "tool_use"
    )
    request = msgs[-1]["request"]
    assert request["tool_use_id"] == tool_use["message"]["content"][0]["id"]
    assert request["input"] == cmd
    assert request["tool_name"] == "Bash"
    assert request["permission_suggestions"]
    assert "blocked_path" in request
    cli.answer(msgs[-1]["request_id"], {"behavior": "allow", "updatedInput": cmd})
    msgs = cli.until(is_type("result"))
    tool_result = next(m for m in msgs if m["type"] == "user")
    block = tool_result["message"]["content"][0]
    assert block["tool_use_id"] == request["tool_use_id"]
    assert (block["content"], block["is_error"]) == ("made", False)
    assert tool_result["tool_use_result"]["stdout"] == "made"
    assert (tmp_path / "cwd" / "made_by_bash.txt").exists()
    assert msgs[-1]["result"] == "Created."
    assert msgs[-1]["permission_denials"] == []
    assert msgs[-1]["num_turns"] == 2


def test_allow_with_modified_input_runs_the_new_input(
    fake: Callable[..., Driver], tmp_path: Path
) -> None:
    """updatedInput replaces the model's input."""
    cli = fake(script(tool_turn("Bash", {"command": "touch original.txt"}, permission=True)))
    cli.user("go")
    request_id = cli.until(is_type("control_request", "can_use_tool"))[-1]["request_id"]
    cli.answer(request_id, {"behavior": "allow", "updatedInput": {"command": "touch modified.txt"}})
    cli.until(is_type("result"))
    assert (tmp_path / "cwd" / "modified.txt").exists()
    assert not (tmp_path / "cwd" / "original.txt").exists()


def test_deny_writes_an_error_result_and_a_denial(
    fake: Callable[..., Driver], tmp_path: Path
) -> None:
    """A deny becomes an is_error tool_result with the message, listed in permission_denials."""
    cmd = {"command": "touch nope.txt", "description": "Create"}
    cli = fake(script(tool_turn("Bash", cmd, permission=True, after="OK, I will not.")))
    cli.initialize()
    cli.user("do it")
    request = cli.until(is_type("control_request", "can_use_tool"))[-1]
    cli.answer(
        request["request_id"], {"behavior": "deny", "message": "host says no", "interrupt": False}
    )
    msgs = cli.until(is_type("result"))
    block = next(m for m in msgs if m["type"] == "user")["message"]["content"][0]
    assert (block["content"], block["is_error"]) == ("host says no", True)
    tool_use_id = request["request"]["tool_use_id"]
    assert msgs[-1]["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": tool_use_id, "tool_input": cmd}
    ]
    assert msgs[-1]["subtype"] == "success"
    assert not (tmp_path / "cwd" / "nope.txt").exists()


def test_hooks_fire_before_the_permission_check(
    fake: Callable[..., Driver], tmp_path: Path
) -> None:
    """PreToolUse hooks are asked first; allow skips can_use_tool, deny blocks the tool."""
    body = script(
        tool_turn("Bash", {"command": "touch allowed.txt"}, permission=True),
        tool_turn("Bash", {"command": "touch denied.txt"}, permission=True),
    )
    cli = fake(body)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_pre"]}]}
    assert cli.initialize(hooks=hooks)["response"]["response"]["hooks_applied"] is True
    for decision in ("allow", "deny"):
        cli.user(decision)
        hook = cli.until(is_type("control_request"))[-1]
        assert hook["request"]["subtype"] == "hook_callback"
        assert hook["request"]["callback_id"] == "hook_pre"
        assert hook["request"]["input"]["hook_event_name"] == "PreToolUse"
        output = {"hookEventName": "PreToolUse", "permissionDecision": decision,
                  "permissionDecisionReason": f"hook says {decision}"}  # fmt: skip
        cli.answer(hook["request_id"], {"continue": True, "hookSpecificOutput": output})
        msgs = cli.until(is_type("result"))
        assert not any(m["type"] == "control_request" for m in msgs)
    assert (tmp_path / "cwd" / "allowed.txt").exists()
    assert not (tmp_path / "cwd" / "denied.txt").exists()
    block = next(m for m in msgs if m["type"] == "user")["message"]["content"][0]
    assert block["content"] == "PreToolUse:Bash hook error: hook says deny"
    assert len(msgs[-1]["permission_denials"]) == 1


def test_file_tools_write_edit_and_read(fake: Callable[..., Driver], tmp_path: Path) -> None:
    """In acceptEdits mode Write and Edit run unasked and really change the file."""
    body = script(
        turn(
            [tool_use_block("Write", {"file_path": "hello.txt", "content": "hello world\n"})],
            [tool_use_block("Edit", {"file_path": "hello.txt", "old_string": "world",
                                     "new_string": "there"})],
            [tool_use_block("Read", {"file_path": "hello.txt"})],
            ["Done."],
        )
    )  # fmt: skip
    cli = fake(body, argv=[*BASE_ARGV, "--permission-mode", "acceptEdits"])
    cli.user("files")
    msgs = cli.until(is_type("result"))
    assert not any(m["type"] == "control_request" for m in msgs)
    results = [m["tool_use_result"] for m in msgs if m["type"] == "user"]
    assert results[0]["type"] == "create"
    assert results[1]["structuredPatch"][0]["lines"] == ["-hello world", "+hello there"]
    assert results[2]["file"]["content"] == "hello there\n"
    assert (tmp_path / "cwd" / "hello.txt").read_text() == "hello there\n"


def test_interrupt_while_streaming(fake: Callable[..., Driver]) -> None:
    """interrupt is acknowledged and ends the turn as aborted_streaming; the next turn works."""
    slow = text_turn("word " * 200, delay=0.02, chunk=5)
    cli = fake(script(slow, text_turn("Second turn.")))
    cli.initialize()
    cli.user("write a long text")
    cli.until(lambda m: m.get("event", {}).get("type") == "content_block_delta")
    cli.control("req_int", "interrupt")
    msgs = cli.until(is_type("result"))
    ack = next(m for m in msgs if is_response("req_int")(m))
    assert ack["response"]["response"] == {"still_queued": []}
    partial = next(m for m in msgs if m["type"] == "assistant")
    assert partial["aborted"] is True
    assert partial["message"]["content"][0]["text"].startswith("word")
    texts = [m["message"]["content"][0].get("text") for m in msgs if m["type"] == "user"]
    assert "[Request interrupted by user]" in texts
    assert msgs[-1]["subtype"] == "error_during_execution"
    assert msgs[-1]["terminal_reason"] == "aborted_streaming"
    assert msgs[-1]["is_error"]
    cli.user("continue please")
    assert cli.until(is_type("result"))[-1]["result"] == "Second turn."
    assert cli.close() == 0


def test_interrupt_during_permission_prompt_cancels_it(fake: Callable[..., Driver]) -> None:
    """An open can_use_tool gets a control_cancel_request; the turn ends aborted_tools."""
    cli = fake(script(tool_turn("Bash", {"command": "touch x"}, permission=True)))
    cli.user("go")
    request_id = cli.until(is_type("control_request", "can_use_tool"))[-1]["request_id"]
    cli.control("req_int", "interrupt")
    msgs = cli.until(is_type("result"))
    cancel = next(m for m in msgs if m["type"] == "control_cancel_request")
    assert cancel["request_id"] == request_id
    assert msgs[-1]["terminal_reason"] == "aborted_tools"
    cli.answer(request_id, {"behavior": "allow", "updatedInput": {}})  # late: ignored
    cli.user("again")
    assert cli.until(is_type("result"))[-1]["subtype"] == "success"


def test_control_requests(fake: Callable[..., Driver]) -> None:
    """set_model, set_permission_mode (valid and not), mcp_status and an unknown subtype."""
    cli = fake(script(text_turn("hi")))
    cli.initialize()
    cli.control("r2", "set_model", model="claude-haiku-4-5")
    assert cli.until(is_response("r2"))[-1]["response"]["response"] == {"model": "claude-haiku-4-5"}
    cli.control("r3", "set_permission_mode", mode="acceptEdits")
    assert cli.until(is_response("r3"))[-1]["response"]["response"] == {"mode": "acceptEdits"}
    cli.control("r4", "set_permission_mode", mode="nonsense")
    error = cli.until(is_response("r4"))[-1]["response"]
    assert error["subtype"] == "error"
    assert error["error_code"] == "invalid_mode"
    assert error["error"] == (
        "Cannot set permission mode: must be one of acceptEdits, auto, bypassPermissions, "
        "default, dontAsk, plan"
    )
    cli.control("r5", "mcp_status")
    assert cli.until(is_response("r5"))[-1]["response"]["response"] == {"mcpServers": []}
    cli.control("r6", "definitely_unknown_subtype")
    error = cli.until(is_response("r6"))[-1]["response"]
    assert error["error"] == "Unsupported control request subtype: definitely_unknown_subtype"
    assert error["error_code"] == "unsupported_request"
    cli.user("next")
    msgs = cli.until(is_type("result"))
    assert msgs[0] == {
        **msgs[0],
        "subtype": "status",
        "status": None,
        "permissionMode": "acceptEdits",
    }
    init = next(m for m in msgs if m.get("subtype") == "init")
    assert (init["model"], init["permissionMode"]) == ("claude-haiku-4-5", "acceptEdits")


def test_works_without_initialize_and_echoes_when_out_of_turns(
    fake: Callable[..., Driver],
) -> None:
    """initialize is optional; with no scripted turn left the fake echoes the prompt."""
    cli = fake(script())
    cli.user("ping")
    assert cli.until(is_type("result"))[-1]["result"] == "Echo: ping"


def test_api_error_turn_sets_the_exit_code(fake: Callable[..., Driver]) -> None:
    """A scripted API error ends the turn with is_error and makes the exit code 1."""
    cli = fake(script({"messages": [{"error": {"status": 400, "message": "fake bad request"}}]}))
    cli.user("fail")
    msgs = cli.until(is_type("result"))
    assert msgs[-2]["is_api_error_message"] is True
    assert (msgs[-1]["is_error"], msgs[-1]["terminal_reason"]) == (True, "api_error")
    assert msgs[-1]["result"] == "API Error: 400 fake bad request"
    assert cli.close() == 1


def test_record_path_keeps_argv_and_stdin(fake: Callable[..., Driver], tmp_path: Path) -> None:
    """record_path logs the argv, cwd and environment, then every line received."""
    record = tmp_path / "record.jsonl"
    cli = fake(script(record_path=str(record)), argv=[*BASE_ARGV, "--model", "claude-x"])
    cli.user("hello")
    cli.until(is_type("result"))
    assert cli.close() == 0
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0]["argv"][-2:] == ["--model", "claude-x"]
    assert lines[0]["env"][testing.SCRIPT_ENV_VAR].endswith(".script.json")
    assert lines[1]["received"]["message"]["content"] == "hello"


# ----------------------------------------------------------------------------- replay


@pytest.mark.parametrize(
    "name",
    [
        "basic.jsonl",
        "bash_deny.jsonl",
        "bash_hook_allow.jsonl",
        "control_misc.jsonl",
        "interrupt.jsonl",
        "mcp_sdk.jsonl",
        "set_model_and_mode.jsonl",
    ],
)
def test_replay_gives_the_recorded_messages(fake: Callable[..., Driver], name: str) -> None:
    """Replaying a transcript reproduces its from_cli lines; our request ids are honoured."""
    cli = fake(replay_script(TRANSCRIPTS / name))
    entries = [e for e in transcript_lines(name) if e.get("dir") in ("from_cli", "to_cli")]
    host_ids: dict[str, str] = {}
    for entry in entries:
        msg = entry["msg"]
        if entry["dir"] == "to_cli":
            if msg["type"] == "control_request":  # use ids of our own, not the recorded ones
                host_ids[msg["request_id"]] = "host-" + msg["request_id"]
                msg = {**msg, "request_id": host_ids[msg["request_id"]]}
            cli.send(msg)
            continue
        expected = msg
        if msg["type"] == "control_response" and msg["response"]["request_id"] in host_ids:
            response = {**msg["response"], "request_id": host_ids[msg["response"]["request_id"]]}
            expected = {**msg, "response": response}
        assert cli.recv() == expected
    assert cli.close() == 0


def test_replay_picks_a_process_and_its_exit_code(fake: Callable[..., Driver]) -> None:
    """In a multi-process transcript ``proc`` selects one; its recorded exit code is used."""
    cli = fake(replay_script(TRANSCRIPTS / "exit_code.jsonl", proc="a"))
    entries = [
        e for e in transcript_lines("exit_code.jsonl")
        if e.get("dir") in ("from_cli", "to_cli") and e.get("proc") == "a"
    ]  # fmt: skip
    for entry in entries:
        if entry["dir"] == "to_cli":
            cli.send(entry["msg"])
        else:
            assert cli.recv() == entry["msg"]
    assert cli.close() == 1


# ----------------------------------------------------------------------------- faults


def test_crash_while_a_permission_request_is_pending(fake: Callable[..., Driver]) -> None:
    """crash_after_type kills the process right after that line, with the given code."""
    body = script(
        tool_turn("Bash", {"command": "true"}, permission=True),
        crash_after_type="can_use_tool",
        crash_exit_code=3,
    )
    cli = fake(body)
    cli.user("go")
    cli.until(is_type("control_request", "can_use_tool"))
    assert cli.raw() is None
    assert cli.proc.wait(HANG_GUARD) == 3


def test_crash_after_lines(fake: Callable[..., Driver]) -> None:
    """crash_after_lines N: exactly N stdout lines in all (initialize's answer included)."""
    cli = fake(script(text_turn("a fairly long answer"), crash_after_lines=4, crash_exit_code=9))
    cli.initialize()
    cli.user("go")
    lines = [cli.raw() for _ in range(3)]
    assert all(lines)
    assert cli.raw() is None
    assert cli.proc.wait(HANG_GUARD) == 9


def test_garbage_lines_appear_verbatim(fake: Callable[..., Driver]) -> None:
    """garbage_lines are written as-is before the turn; the stream continues after them."""
    garbage = ["this is not json", '{"type": "assistant", "truncat']
    cli = fake(script(text_turn("fine"), garbage_lines=garbage))
    cli.user("go")
    assert [cli.raw(), cli.raw()] == [(g + "\n").encode() for g in garbage]
    assert cli.until(is_type("result"))[-1]["result"] == "fine"


def test_big_line_is_one_line(fake: Callable[..., Driver]) -> None:
    """big_line_bytes emits a user tool_result whose content has exactly that many bytes."""
    size = 8 * 1024 * 1024 + 3
    cli = fake(script(text_turn("after"), big_line_bytes=size))
    cli.user("go")
    msgs = cli.until(is_type("user"))
    content = msgs[-1]["message"]["content"][0]["content"]
    assert len(content) == size
    assert set(content) == {"x"}
    assert cli.until(is_type("result"))[-1]["result"] == "after"


def test_stderr_lines_and_exit_code_on_eof(fake: Callable[..., Driver]) -> None:
    """stderr_lines go to stderr at start; exit_code is used when stdin closes."""
    cli = fake(script(stderr_lines=["warming up", "ready"], exit_code=7))
    assert cli.close() == 7
    assert cli.stderr() == b"warming up\nready\n"


def test_hang_writes_nothing_and_ignores_eof(fake: Callable[..., Driver]) -> None:
    """hang: no output and no exit, even after stdin closes, until killed."""
    cli = fake(script(hang=True))
    cli.user("hello?")
    assert cli.proc.stdin is not None
    cli.proc.stdin.close()
    with pytest.raises(queue.Empty):
        cli.raw(timeout=0.3)
    assert cli.proc.poll() is None
    cli.proc.terminate()
    assert cli.proc.wait(HANG_GUARD) == -signal.SIGTERM


def test_hang_before_init_and_ignore_sigterm(fake: Callable[..., Driver]) -> None:
    """hang_before_init never answers initialize; ignore_sigterm leaves only SIGKILL."""
    cli = fake(script(hang_before_init=True, ignore_sigterm=True))
    cli.control("req_init", "initialize")
    with pytest.raises(queue.Empty):
        cli.raw(timeout=0.3)
    # On a busy machine the fake may still be starting: wait until SIGTERM is ignored.

    def ignores_sigterm() -> bool:
        status = Path(f"/proc/{cli.proc.pid}/status").read_text()
        ignored = int(
            next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16
        )
        return bool(ignored & (1 << (signal.SIGTERM - 1)))

    wait_until(ignores_sigterm, poll=0.01, what="SIGTERM ignored")
    cli.proc.terminate()
    with pytest.raises(subprocess.TimeoutExpired):
        cli.proc.wait(0.3)
    cli.proc.kill()
    assert cli.proc.wait(HANG_GUARD) == -signal.SIGKILL


def test_public_names() -> None:
    """__all__ is a sorted tuple naming exactly what the package exports."""
    assert isinstance(testing.__all__, tuple)
    assert list(testing.__all__) == sorted(testing.__all__)
    for name in testing.__all__:
        assert getattr(testing, name) is not None


def test_the_fake_is_an_independent_peer() -> None:
    """No module of claudecode.testing imports anyio or the client's own modules."""
    import ast

    package = Path(testing.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                assert not name.startswith(("anyio", "claudecode", "msgspec")), (path.name, name)
