"""Programs that leave ``query()`` early — ``return`` from inside ``async for``, without
closing the generator — and then call it again, on the official SDK and on the drop-in.

The abandoned generator is finalized later by the event loop, in another task; the next
call must not be cancelled by it, and (on the drop-in) the abandoned CLI must be reaped.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from benchmarks import procfs
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn

pytestmark = pytest.mark.anyio

KINDS = ("SystemMessage", "StreamEvent", "AssistantMessage", "UserMessage", "ResultMessage")
# What the libraries' own clean-ups leave to the interpreter, not failures of the program:
# trio warns about any async generator collected before it was exhausted (the program
# style under test), and the official SDK's subprocess transport can outlive its loop.
_TRIO_WARNS = pytest.mark.filterwarnings(
    "ignore:Async generator .* was garbage collected:ResourceWarning"
)
_SDK_LEAVES = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
RUNS = (
    pytest.param("claude_agent_sdk", "asyncio", id="official", marks=_SDK_LEAVES),
    pytest.param("claudecode.sdk", "asyncio", id="drop-in-asyncio"),
    pytest.param("claudecode.sdk", "trio", id="drop-in-trio", marks=_TRIO_WARNS),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # trio runs in its own thread (below), as the official SDK needs


def _fake(tmp_path: Path, name: str, *turns: Any) -> tuple[Path, Path, Path]:
    record, cwd = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-work"
    cwd.mkdir()
    body = {**script(*turns), "record_path": str(record)}
    return fake_cli_command(body, tmp_path / name), cwd, record


def _pid(record: Path) -> int:
    with record.open() as fh:
        pid: int = json.loads(fh.readline())["pid"]
    return pid


async def _ask(sdk: ModuleType, options: Any, kind: str) -> Any:
    """The most common way to call query(): return from inside the loop."""
    async for message in sdk.query(prompt="go", options=options):
        if type(message).__name__ == kind:
            return message
    raise AssertionError(f"no {kind} came")


async def _program(sdk: ModuleType, tmp_path: Path, kind: str) -> tuple[Any, list[Any], int]:
    def options(cli: Path, cwd: Path) -> Any:
        return sdk.ClaudeAgentOptions(
            cli_path=str(cli),
            cwd=str(cwd),
            include_partial_messages=True,
            allowed_tools=["Bash"],
            env={"CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"},
        )

    turn = tool_turn("Bash", {"command": "echo hi"}, after="done " * 40, delay=0.01)
    first_cli, first_cwd, first_record = _fake(tmp_path, "first", turn)
    second_cli, second_cwd, _ = _fake(tmp_path, "second", text_turn("again"))
    with anyio.fail_after(60):
        early = await _ask(sdk, options(first_cli, first_cwd), kind)
        rest = [m async for m in sdk.query(prompt="go", options=options(second_cli, second_cwd))]
    return early, rest, _pid(first_record)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("module", "backend"), RUNS)
async def test_returning_early_leaves_the_next_query_working(
    tmp_path: Path, module: str, backend: str, kind: str
) -> None:
    """Return from inside ``async for`` on each kind of message; the next query runs to its
    result, and the abandoned CLI goes away."""
    sdk = importlib.import_module(module)

    def main() -> tuple[Any, list[Any], int]:
        return anyio.run(_program, sdk, tmp_path, kind, backend=backend)

    early, rest, pid = await anyio.to_thread.run_sync(main)
    assert type(early).__name__ == kind
    result = rest[-1]
    assert isinstance(result, sdk.ResultMessage)
    assert ("success", "again") == (result.subtype, result.result)
    if module == "claudecode.sdk":
        for _ in range(600):  # reaped by the finalizer, in its own time
            if not procfs.exists(pid):
                break
            await anyio.sleep(0.05)
        assert not procfs.exists(pid)


async def test_cancelled_caller_reaps_the_cli(tmp_path: Path) -> None:
    """A caller cancelled in the middle of the stream (a timeout around the loop) leaves
    no CLI behind, and the next query works."""
    import claudecode.sdk as sdk

    cli, cwd, record = _fake(tmp_path, "slow", text_turn("slow " * 200, chunk=2, delay=0.02))
    options = sdk.ClaudeAgentOptions(cli_path=str(cli), cwd=str(cwd), include_partial_messages=True)
    seen = 0
    with anyio.move_on_after(60) as outer:
        with anyio.CancelScope() as scope:
            async for message in sdk.query(prompt="go", options=options):
                if isinstance(message, sdk.StreamEvent):
                    seen += 1
                    if seen == 3:
                        scope.cancel()
    assert not outer.cancelled_caught and seen == 3
    assert not procfs.exists(_pid(record))
    again_cli, again_cwd, _ = _fake(tmp_path, "again", text_turn("again"))
    again = sdk.ClaudeAgentOptions(cli_path=str(again_cli), cwd=str(again_cwd))
    with anyio.fail_after(60):
        messages = [m async for m in sdk.query(prompt="go", options=again)]
    assert "again" == messages[-1].result


@pytest.mark.parametrize("module", ["claude_agent_sdk", "claudecode.sdk"])
async def test_client_connected_and_disconnected_in_different_tasks(
    tmp_path: Path, module: str
) -> None:
    """connect() in one task, the turn and disconnect() in others (as fixtures do)."""
    sdk = importlib.import_module(module)
    cli, cwd, record = _fake(tmp_path, "client", text_turn("hello"))
    client = sdk.ClaudeSDKClient(
        sdk.ClaudeAgentOptions(
            cli_path=str(cli), cwd=str(cwd), env={"CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"}
        )
    )
    messages: list[Any] = []

    async def turn() -> None:
        await client.query("hi")
        messages.extend([m async for m in client.receive_response()])

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.connect)
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn)
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.disconnect)
    assert "hello" == messages[-1].result
    if module == "claudecode.sdk":
        assert not procfs.exists(_pid(record))
