"""Closing a session, and writing to a CLI that does not read: nothing hangs, nothing is lost.

The CLI is made to stop reading its stdin with SIGSTOP (the pipe fills), then resumed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from claudecode import CLIExitedError, ControlTimeoutError
from claudecode.control import McpStatus, RawControl
from claudecode.messages import InboundControlRequest
from claudecode.session import Session
from tests.claudecode._scripted_cli import scripted_options
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio

_ASK = {
    "type": "control_request",
    "request_id": "cli-perm",
    "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}},
}


def _received(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["received"] for line in record.read_text().splitlines()[1:]]


def _answers(record: Path) -> list[dict[str, Any]]:
    return [m["response"] for m in _received(record) if m["type"] == "control_response"]


@pytest.mark.parametrize("with_callback", [False, True])
async def test_close_with_a_permission_request_open_denies_it(
    tmp_path: Path, with_callback: bool
) -> None:
    """The deny reaches the CLI before the session counts as closed."""
    record = tmp_path / "record.jsonl"
    plan = {"user": [[_ASK]]}
    opts = scripted_options(tmp_path, plan, script_options={"record_path": str(record)})
    asked = anyio.Event()

    async def never_answers(req: InboundControlRequest) -> Any:
        asked.set()
        await anyio.sleep(3600)

    callback = never_answers if with_callback else None
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts, can_use_tool=callback) as session:
            await session.send("go")
            if with_callback:
                await asked.wait()
            else:
                async for message in session.messages():
                    if isinstance(message, InboundControlRequest):
                        break
            await session.close()
            assert session.closed
    answers = _answers(record)
    deny = next(a for a in answers if a["request_id"] == "cli-perm")
    assert deny["response"]["behavior"] == "deny"
    assert deny["response"]["message"] == "the session was closed"


def _signal(pid: int | None, sig: signal.Signals) -> None:
    assert pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


async def test_interrupt_behind_a_write_that_cannot_finish_times_out(tmp_path: Path) -> None:
    """A prompt stuck writing to a CLI that stopped reading holds the write lock: interrupt()
    and the answer to a permission request give up after control_timeout instead of
    queuing forever, and the session works again once the CLI reads."""
    plan = {"user": [[_ASK], [{"type": "result", "subtype": "success", "result": "big"}]]}
    # No initialize: a 1 s control timeout is for the stuck writes, not the CLI's start-up.
    opts = scripted_options(tmp_path, plan, control_timeout=1.0, initialize=False)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            await session.send("first")
            async for message in session.messages():
                if isinstance(message, InboundControlRequest):
                    ask = message
                    break
            _signal(session.pid, signal.SIGSTOP)  # the CLI stops reading its stdin
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.send, "x" * 4_000_000)  # fills the pipe, holds the lock
                    await anyio.sleep(0.2)
                    with pytest.raises(ControlTimeoutError):
                        await session.interrupt()
                    with pytest.raises(ControlTimeoutError):
                        await session.respond(ask.allow())
                    _signal(session.pid, signal.SIGCONT)
            finally:
                _signal(session.pid, signal.SIGCONT)
            # Nothing was cut off: the big prompt went through whole and got its turn.
            turn = [m async for m in session.receive_response()]
            assert turn[-1].result == "big"  # type: ignore[union-attr]
            assert await session.request(McpStatus(), timeout=30) is not None


async def test_control_request_cut_off_mid_write_ends_the_session(tmp_path: Path) -> None:
    """A request whose own bytes the CLI does not take in time: ControlTimeoutError for the
    caller; the CLI's input may hold half a line, so the session ends with the reason."""
    opts = scripted_options(tmp_path, {}, control_timeout=1.0, initialize=False)
    with anyio.fail_after(HANG_GUARD):
        async with Session(opts) as session:
            _signal(session.pid, signal.SIGSTOP)
            try:
                with pytest.raises(ControlTimeoutError):
                    await session.request(RawControl("pad", {"x": "y" * 4_000_000}))
            finally:
                _signal(session.pid, signal.SIGCONT)
            with pytest.raises(CLIExitedError) as info:
                await _drain(session)
    assert "did not read its input" in str(info.value)


async def _drain(session: Session) -> None:
    async for _ in session.messages():
        pass
