"""Session against the fake CLI: a real subprocess speaking stream-json."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks import procfs
from claudecode import (
    CLIExitedError,
    CLINotFoundError,
    CLIStartError,
    ControlRequestError,
    SessionClosedError,
    UsageError,
)
from claudecode import control as ctl
from claudecode.callbacks import HookMatcher
from claudecode.messages import (
    AssistantMessage,
    ControlCancelRequest,
    InboundControlRequest,
    MalformedLine,
    ResultMessage,
    StreamEvent,
    UserMessage,
)
from claudecode.options import ClaudeCodeOptions
from claudecode.session import Session
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


def options(tmp_path: Path, body: Any, **kwargs: Any) -> ClaudeCodeOptions:
    cli = fake_cli_command(body, tmp_path / "fake")
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    kwargs.setdefault("control_timeout", 10.0)
    return ClaudeCodeOptions(cli_path=cli, cwd=workdir, **kwargs)


def reaped(pid: int | None) -> bool:
    """True when no process (not even a zombie) has this pid any more."""
    assert pid is not None
    return not procfs.exists(pid)


async def turn_messages(session: Session) -> list[Any]:
    return [m async for m in session.receive_response()]


async def test_prompt_streams_deltas_assistant_and_result(tmp_path: Path) -> None:
    """A text turn: stream events, one assistant line per block, then the result."""
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script(text_turn("Hello there!")))) as session:
            assert session.initialize_result is not None
            assert "fake" == session.initialize_result.claude_code_version
            await session.send("hi")
            got = await turn_messages(session)
    kinds = [type(m) for m in got]
    assert StreamEvent in kinds
    assert AssistantMessage in kinds
    assert ResultMessage is kinds[-1]
    result = got[-1]
    assert "Hello there!" == result.result
    assert session.session_id == result.session_id
    assert 0 == session.exit_code
    assert reaped(session.pid)


async def test_can_use_tool_allow_runs_the_command(tmp_path: Path) -> None:
    """allow() keeps the original input; the command really runs."""
    seen: list[str] = []

    async def approve(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        seen.append(req.request.tool_name)  # type: ignore[union-attr]
        return req.allow()

    body = script(tool_turn("Bash", {"command": "touch made.txt"}, permission=True))
    opts = options(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=approve) as session:
            await session.send("make a file")
            got = await turn_messages(session)
    assert ["Bash"] == seen
    assert (Path(str(opts.cwd)) / "made.txt").exists()
    assert not got[-1].permission_denials


async def test_can_use_tool_modified_input_runs_instead(tmp_path: Path) -> None:
    """allow(updated_input=...) runs the modified command, not the original."""

    async def rewrite(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        return req.allow(updated_input={"command": "touch modified.txt"})

    body = script(tool_turn("Bash", {"command": "touch original.txt"}, permission=True))
    opts = options(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=rewrite) as session:
            await session.send("go")
            await turn_messages(session)
    workdir = Path(str(opts.cwd))
    assert (workdir / "modified.txt").exists()
    assert not (workdir / "original.txt").exists()


async def test_nobody_answering_permission_prompts_cannot_hang(tmp_path: Path) -> None:
    """No callback and no opt-in: the CLI is not asked to prompt over stdio, so a tool that
    needs approval is denied by the CLI and the turn ends, though nobody reads requests."""
    body = script(tool_turn("Bash", {"command": "touch nope.txt"}, permission=True), "next")
    opts = options(tmp_path, body)
    seen: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            assert "--permission-prompt-tool" not in session.transport.argv  # type: ignore[attr-defined]
            await session.send("go")
            seen += [message async for message in session.receive_response()]
    assert not any(isinstance(message, InboundControlRequest) for message in seen)
    last = seen[-1]
    assert isinstance(last, ResultMessage)
    assert ["Bash"] == [d.tool_name for d in last.permission_denials or []]
    assert not (Path(str(opts.cwd)) / "nope.txt").exists()


async def test_a_callback_turns_on_stdio_prompts(tmp_path: Path) -> None:
    """With can_use_tool the CLI prompts over stdio; a non-stdio prompt tool with a callback
    is a UsageError before anything starts."""
    body = script(tool_turn("Bash", {"command": "touch yes.txt"}, permission=True))
    opts = options(tmp_path, body)
    asked: list[str] = []

    async def approve(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        asked.append(req.request.tool_name)  # type: ignore[union-attr]
        return req.allow()

    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=approve) as session:
            argv = session.transport.argv  # type: ignore[attr-defined]
            assert "stdio" == argv[argv.index("--permission-prompt-tool") + 1]
            await session.send("go")
            [m async for m in session.receive_response()]
    assert ["Bash"] == asked
    assert (Path(str(opts.cwd)) / "yes.txt").exists()
    with pytest.raises(UsageError):
        Session(replace(opts, permission_prompt_tool_name="mcp__p__ask"), can_use_tool=approve)


async def test_user_option_runs_the_cli_as_that_user(tmp_path: Path) -> None:
    """options.user reaches the process spawn (here: our own user, which needs no privilege)."""
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script(text_turn("hi")), user=me)) as session:
            await session.send("go")
            messages = [m async for m in session.receive_response()]
            assert session.pid is not None
            assert os.getuid() == os.stat(f"/proc/{session.pid}").st_uid
    assert isinstance(messages[-1], ResultMessage)


async def test_stderr_callback_gets_each_line(tmp_path: Path) -> None:
    """options.stderr is called with every stderr line; the error tail keeps them too."""
    lines: list[str] = []
    body = script(text_turn("fine"), stderr_lines=["warming up", "ready"])
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body, stderr=lines.append)) as session:
            await session.send("go")
            [m async for m in session.receive_response()]
    assert ["warming up", "ready"] == lines


async def test_permission_request_without_callback_is_a_message(tmp_path: Path) -> None:
    """Opted into stdio prompts with no callback: the request is delivered; respond()
    answers it; deny is reported."""
    body = script(tool_turn("Bash", {"command": "touch nope.txt"}, permission=True))
    opts = options(tmp_path, body, permission_prompt_tool_name="stdio")
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            await session.send("go")
            async for message in session.receive_response():
                if isinstance(message, InboundControlRequest):
                    await session.respond(message.deny("host says no"))
                last = message
    assert isinstance(last, ResultMessage)
    assert ["Bash"] == [d.tool_name for d in last.permission_denials or []]
    assert not (Path(str(opts.cwd)) / "nope.txt").exists()


async def test_callback_failure_denies(tmp_path: Path) -> None:
    """A can_use_tool callback that raises denies the tool instead of hanging the CLI."""

    async def broken(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        raise RuntimeError("boom")

    body = script(tool_turn("Bash", {"command": "touch x.txt"}, permission=True))
    opts = options(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=broken) as session:
            await session.send("go")
            got = await turn_messages(session)
    assert got[-1].permission_denials
    assert not (Path(str(opts.cwd)) / "x.txt").exists()


async def test_pre_tool_use_hook_decides(tmp_path: Path) -> None:
    """A PreToolUse hook registered at initialize is called and its deny is honoured."""
    calls: list[str] = []

    async def hook(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        calls.append(req.request.callback_id)  # type: ignore[union-attr]
        return req.pre_tool_use("deny", "hook says no")

    body = script(tool_turn("Bash", {"command": "touch hooked.txt"}, permission=True))
    opts = options(tmp_path, body)
    hooks = {"PreToolUse": [HookMatcher("Bash", [hook])]}
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, hooks=hooks) as session:
            await session.send("go")
            got = await turn_messages(session)
    assert ["hook_0"] == calls
    assert not (Path(str(opts.cwd)) / "hooked.txt").exists()
    results = [m for m in got if isinstance(m, UserMessage)]
    assert results


async def test_interrupt_while_permission_open_cancels_the_callback(tmp_path: Path) -> None:
    """interrupt() makes the CLI cancel the open prompt; the callback is cancelled too."""
    started = anyio.Event()
    cancelled = anyio.Event()

    async def slow(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    body = script(tool_turn("Bash", {"command": "touch late.txt"}, permission=True), "next")
    opts = options(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=slow) as session:
            await session.send("go")
            await started.wait()
            await session.interrupt()
            got = await turn_messages(session)
            await cancelled.wait()
            assert any(isinstance(m, ControlCancelRequest) for m in got)
            assert got[-1].is_error
            await session.send("again")
            again = await turn_messages(session)
            assert not again[-1].is_error
    assert not (Path(str(opts.cwd)) / "late.txt").exists()


async def test_interrupt_mid_stream_then_next_turn_works(tmp_path: Path) -> None:
    """An interrupted turn ends with an error result; the next prompt works."""
    long_text = "word " * 400
    body = script(text_turn(long_text, delay=0.01, chunk=4), text_turn("second"))
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body)) as session:
            await session.send("first")
            async for message in session.messages():
                if isinstance(message, StreamEvent):
                    break
            await session.interrupt()
            rest = await turn_messages(session)
            assert "error_during_execution" == rest[-1].subtype
            await session.send("next")
            again = await turn_messages(session)
            assert "second" == again[-1].result


async def test_control_requests_and_typed_errors(tmp_path: Path) -> None:
    """set_model works; a bad mode and an unknown subtype raise ControlRequestError."""
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script())) as session:
            await session.set_model("claude-haiku-4-5")
            await session.set_permission_mode("acceptEdits")
            with pytest.raises(ControlRequestError) as bad_mode:
                await session.set_permission_mode("nonsense")
            assert "invalid_mode" == bad_mode.value.error_code
            with pytest.raises(ControlRequestError) as unknown:
                await session.request(ctl.RawControl("definitely_unknown_subtype", {}))
            assert "unsupported_request" == unknown.value.error_code
            assert (await session.mcp_status()) is not None


async def test_garbage_lines_become_malformed_and_the_stream_goes_on(tmp_path: Path) -> None:
    """Lines that are not JSON arrive as MalformedLine; the turn still completes."""
    body = script(text_turn("fine"), garbage_lines=["not json", "[1,2]", '{"type": 5}'])
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body)) as session:
            await session.send("hi")
            got = await turn_messages(session)
    bad = [m for m in got if isinstance(m, MalformedLine)]
    assert 3 == len(bad)
    assert b"not json" == bad[0].line
    assert "fine" == got[-1].result


async def test_crash_mid_turn_fails_pending_requests(tmp_path: Path) -> None:
    """The CLI dies while a permission request is open: CLIExitedError, no hang."""
    body = script(
        tool_turn("Bash", {"command": "touch x"}, permission=True),
        crash_after_type="can_use_tool",
        crash_exit_code=3,
    )
    opts = options(tmp_path, body, permission_prompt_tool_name="stdio")
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            await session.send("go")
            with pytest.raises(CLIExitedError) as info:
                async for _ in session.messages():
                    pass
            assert 3 == info.value.exit_code
            with pytest.raises(CLIExitedError):
                await session.interrupt()
            with pytest.raises(CLIExitedError):
                await session.send("more")
    assert reaped(session.pid)


async def test_cli_that_exits_at_once_fails_initialize(tmp_path: Path) -> None:
    """A CLI that exits before answering initialize raises CLIExitedError with its code."""
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\necho 'cannot start: no credentials' >&2\nexit 7\n")
    exe.chmod(0o755)
    with anyio.fail_after(HANG_GUARD), pytest.raises(CLIExitedError) as info:
        async with Session(ClaudeCodeOptions(cli_path=exe)):
            pass
    assert 7 == info.value.exit_code
    assert "no credentials" in info.value.stderr_tail


async def test_watchdog_ends_a_silent_cli(tmp_path: Path) -> None:
    """No output after our first write within spawn_timeout: CLIStartError, child reaped."""
    body = script(hang=True, stderr_lines=["starting up..."])
    started = anyio.Event()
    # The watchdog's clock starts at our first write. Write only once the fake has started
    # and written its stderr: on a busy machine starting Python can take longer than any
    # spawn_timeout a test would pick, and the error must carry that stderr line.
    opts = options(
        tmp_path,
        body,
        spawn_timeout=0.5,
        initialize=False,
        stderr=lambda line: started.set() if "starting up" in line else None,
    )
    session = Session(opts)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            await started.wait()
            with pytest.raises(CLIStartError) as info:
                await session.initialize()
    assert "starting up..." in info.value.stderr_tail
    assert reaped(session.pid)


async def test_cli_not_found(tmp_path: Path) -> None:
    """A missing executable is CLINotFoundError before anything is spawned."""
    with pytest.raises(CLINotFoundError):
        async with Session(ClaudeCodeOptions(cli_path=tmp_path / "missing")):
            pass


async def test_huge_line_end_to_end(tmp_path: Path) -> None:
    """A 100 MiB tool result line arrives whole as one UserMessage."""
    size = 100 * 1024 * 1024
    body = script(text_turn("after"), big_line_bytes=size)
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body, max_line_bytes=128 * 1024 * 1024)) as session:
            await session.send("go")
            got = await turn_messages(session)
    users = [m for m in got if isinstance(m, UserMessage)]
    assert users
    assert "after" == got[-1].result
    assert not [m for m in got if isinstance(m, MalformedLine)]


async def test_huge_line_over_the_limit_is_skipped(tmp_path: Path) -> None:
    """Past max_line_bytes the line is reported as too long and the turn goes on."""
    body = script(text_turn("after"), big_line_bytes=2 * 1024 * 1024)
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body, max_line_bytes=1024 * 1024)) as session:
            await session.send("go")
            got = await turn_messages(session)
    [bad] = [m for m in got if isinstance(m, MalformedLine)]
    assert "too_long" == bad.reason
    assert "after" == got[-1].result


async def test_close_escalates_to_sigkill(tmp_path: Path) -> None:
    """A CLI that ignores SIGTERM and never exits is killed; the child is reaped."""
    body = script(ignore_sigterm=True, hang=True)
    opts = options(tmp_path, body, initialize=False, close_grace=0.2, kill_after=0.2)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            pid = session.pid
    assert reaped(pid)


@pytest.mark.parametrize("when", ["after_enter", "during_turn", "during_callback"])
async def test_cancelling_the_caller_kills_and_reaps(tmp_path: Path, when: str) -> None:
    """Cancellation at any point leaves no process behind."""
    body = script(
        text_turn("x" * 2000, delay=0.01, chunk=2),
        tool_turn("Bash", {"command": "true"}, permission=True),
    )
    pid: list[int | None] = []

    async def forever(req: InboundControlRequest) -> ctl.OutboundControlResponse:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    with anyio.fail_after(HANG_GUARD):
        with anyio.CancelScope() as scope:
            async with Session(options(tmp_path, body), can_use_tool=forever) as session:
                pid.append(session.pid)
                # The deadline starts once the session is up, however slow the machine.
                scope.deadline = anyio.current_time() + 0.5
                if when == "during_turn":
                    await session.send("go")
                    async for _ in session.messages():
                        pass
                elif when == "during_callback":
                    await session.send("go")
                    await turn_messages(session)
                    await session.send("tool")
                    async for _ in session.messages():
                        pass
                await anyio.sleep_forever()
    assert pid
    assert reaped(pid[0])


async def test_send_after_close_is_a_usage_error(tmp_path: Path) -> None:
    """A closed session refuses to send."""
    async with Session(options(tmp_path, script())) as session:
        await session.close()
        with pytest.raises(SessionClosedError):
            await session.send("late")


async def test_kill_from_outside_is_reported_with_signal(tmp_path: Path) -> None:
    """SIGKILL from outside mid-turn ends iteration with CLIExitedError(-9)."""
    body = script(text_turn("y" * 4000, delay=0.01, chunk=2))
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body)) as session:
            await session.send("go")

            async def kill_on_first_delta() -> None:
                killed = False
                async for message in session.messages():
                    # Once: deltas already read keep coming after the kill, and a second
                    # kill of the reaped process would fail.
                    if isinstance(message, StreamEvent) and session.pid and not killed:
                        os.kill(session.pid, signal.SIGKILL)
                        killed = True

            with pytest.raises(CLIExitedError) as info:
                await kill_on_first_delta()
            assert -9 == info.value.exit_code


async def test_child_environment_drops_claudecode_and_carries_trace_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLAUDECODE never reaches the CLI; an active span's context does (TRACEPARENT)."""
    import json

    from opentelemetry.sdk.trace import TracerProvider

    monkeypatch.setenv("CLAUDECODE", "1")
    record = tmp_path / "record.jsonl"
    provider = TracerProvider()
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("outer") as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        async with Session(options(tmp_path, script(record_path=str(record)), initialize=True)):
            pass
    first = json.loads(record.read_text().splitlines()[0])
    env = first["env"]
    assert "CLAUDECODE" not in env
    assert trace_id in env["TRACEPARENT"]
    assert "-p" in first["argv"] and "stream-json" in first["argv"]


async def test_close_inside_the_block_does_not_cancel_the_caller(tmp_path: Path) -> None:
    """close() stops the session's own tasks only; the caller's code goes on."""
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script(text_turn("bye")))) as session:
            await session.send("hello")
            await turn_messages(session)
            await session.close()
            rest = [m async for m in session.messages()]
            await anyio.sleep(0.01)  # a checkpoint: would raise if we had been cancelled
            reached = True
    assert reached
    assert all(not isinstance(m, ResultMessage) for m in rest)
    assert 0 == session.exit_code


async def test_fake_cli_driven_by_a_handler_function(tmp_path: Path) -> None:
    """A handler in the fake CLI answers prompts its own way; the client sees its lines."""
    handler = tmp_path / "handler.py"
    handler.write_text(
        "def handle(msg):\n"
        "    if msg.get('type') != 'user':\n"
        "        return None\n"
        "    text = msg['message']['content']\n"
        "    return ['not json at all', {'type': 'result', 'subtype': 'success',\n"
        "            'is_error': False, 'result': text.upper(), 'session_id': 'h1'}]\n"
    )
    body = script(handler=f"{handler}:handle")
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body)) as session:
            await session.send("shout")
            got = await turn_messages(session)
    assert [MalformedLine, ResultMessage] == [type(m) for m in got]
    assert "SHOUT" == got[-1].result
    assert "h1" == session.session_id


async def test_on_messages_receives_batches_in_the_reader(tmp_path: Path) -> None:
    """With on_messages every message goes to the callback, and the end is still reported."""
    received: list[Any] = []
    done = anyio.Event()

    def sink(batch: list[Any]) -> None:
        received.extend(batch)
        if any(isinstance(m, ResultMessage) for m in batch):
            done.set()

    body = script(text_turn("callback"))
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, body), on_messages=sink) as session:
            await session.send("hi")
            await done.wait()
            await session.close()
            assert [] == [m async for m in session.messages()]
    assert "callback" == next(m for m in received if isinstance(m, ResultMessage)).result


async def test_mcp_control_requests_and_raw_messages_reach_the_cli(tmp_path: Path) -> None:
    """The MCP convenience methods and send_message write the wire shapes the CLI expects."""
    import json

    record = tmp_path / "record.jsonl"
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script(record_path=str(record)))) as session:
            for call in (
                session.mcp_reconnect("fe"),
                session.mcp_toggle("fe", enabled=False),
                session.mcp_set_servers({"web": {"command": "srv"}}),
                session.mcp_message("fe", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            ):
                with pytest.raises(ControlRequestError):  # the fake supports none of them
                    await call
            await session.send_message(ctl.UpdateEnvironmentVariables(variables={"A": "1"}))
            await session.send_message(ctl.OutboundKeepAlive())
            await session.mcp_status()  # a round trip: everything above has been read
    received = [json.loads(line)["received"] for line in record.read_text().splitlines()[1:]]
    requests = [m["request"] for m in received if m["type"] == "control_request"]
    assert {"subtype": "mcp_reconnect", "serverName": "fe"} in requests
    assert {"subtype": "mcp_toggle", "serverName": "fe", "enabled": False} in requests
    assert {"subtype": "mcp_set_servers", "servers": {"web": {"command": "srv"}}} in requests
    assert any(r["subtype"] == "mcp_message" and r["server_name"] == "fe" for r in requests)
    kinds = [m["type"] for m in received]
    assert "update_environment_variables" in kinds
    assert "keep_alive" in kinds
    env = next(m for m in received if m["type"] == "update_environment_variables")
    assert {"A": "1"} == env["variables"]


async def test_set_effort_goes_out_as_flag_settings_and_bad_levels_never_do(
    tmp_path: Path,
) -> None:
    """set_effort sends apply_flag_settings {effortLevel} (null: back to the default); a level
    the CLI would drop silently is a UsageError before anything is written; settings that are
    not an object get the CLI's own error."""
    import json

    record = tmp_path / "record.jsonl"
    with anyio.fail_after(HANG_GUARD):
        async with Session(options(tmp_path, script(record_path=str(record)))) as session:
            await session.set_effort("low")
            await session.set_effort(None)
            await session.apply_flag_settings({"effortLevel": "xhigh", "fastMode": True})
            for bad in ("extreme", "", "LOW"):
                with pytest.raises(UsageError, match="unknown effort"):
                    await session.set_effort(bad)
            with pytest.raises(ControlRequestError, match="to be an object, got an array"):
                await session.request(ctl.RawControl("apply_flag_settings", {"settings": []}))
    received = [json.loads(line)["received"] for line in record.read_text().splitlines()[1:]]
    sent = [
        m["request"]
        for m in received
        if m["type"] == "control_request" and m["request"]["subtype"] == "apply_flag_settings"
    ]
    assert [
        {"effortLevel": "low"},
        {"effortLevel": None},
        {"effortLevel": "xhigh", "fastMode": True},
        [],
    ] == [r["settings"] for r in sent]
