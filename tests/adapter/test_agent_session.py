"""AgentSession and SessionManager against the fake CLI subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.config import SessionConfig
from adapter.events import (
    AvailableCommands,
    Complete,
    Event,
    MessageChunk,
    PermissionCancelled,
    PermissionRequest,
    SessionStatus,
    ToolCall,
    ToolUpdate,
    UserMessage,
)
from adapter.fanout import SubscriberDropped
from adapter.manager import SessionManager, TooManySessionsError, UnknownSessionError
from adapter.policies import PermissionDecision, PermissionPolicy
from adapter.session import AgentSession, UnknownPermissionError
from claudecode.testing import script, text_turn, tool_turn
from tests.support.configs import fake_session_config
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import until_complete

pytestmark = pytest.mark.anyio


def config(tmp_path: Path, body: Any, **kwargs: Any) -> SessionConfig:
    kwargs.setdefault("policy", PermissionPolicy("supervised"))
    return fake_session_config(tmp_path, body, **kwargs)


async def test_turn_events_and_status_lifecycle(tmp_path: Path) -> None:
    """connected -> active -> idle -> terminated; the turn's events arrive in order."""
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path, script(text_turn("Hi!")))) as session:
            assert "connected" == session.status
            with session.subscribe(after_seq=0) as events:
                await session.prompt("hello")
                assert "active" == session.status
                seen = await until_complete(events)
            assert "idle" == session.status
            assert session.cli_session_id
    assert "terminated" == session.status
    kinds = [type(e) for e in seen]
    assert AvailableCommands == kinds[0]
    assert SessionStatus in kinds
    assert "Hi!" == "".join(e.text for e in seen if isinstance(e, MessageChunk))
    [prompted] = [e for e in seen if isinstance(e, UserMessage)]
    assert "hello" == prompted.text
    assert prompted.seq < min(e.seq for e in seen if isinstance(e, MessageChunk | SessionStatus))
    assert list(range(1, len(seen) + 1)) == [e.seq for e in seen]
    assert {session.id} == {e.session_id for e in seen}


async def test_supervised_permission_request_answered(tmp_path: Path) -> None:
    """A permission_request event is answered through the session; the tool runs."""
    body = script(tool_turn("Bash", {"command": "touch ok.txt"}, permission=True))
    cfg = config(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                seen: list[Event] = []
                async for event in events:
                    seen.append(event)
                    if isinstance(event, PermissionRequest):
                        assert [event.pending_id] == session.pending_permissions
                        assert {"allow", "deny"} <= {o.id for o in event.options}
                        await session.answer_permission(
                            event.pending_id, PermissionDecision("allow")
                        )
                        with pytest.raises(UnknownPermissionError):
                            await session.answer_permission(
                                event.pending_id, PermissionDecision("deny")
                            )
                    if isinstance(event, Complete):
                        break
    assert (Path(str(cfg.cwd)) / "ok.txt").exists()
    updates = [e for e in seen if isinstance(e, ToolUpdate)]
    assert ["complete"] == [u.status for u in updates]


async def test_autonomous_policy_never_asks(tmp_path: Path) -> None:
    """autonomous: no permission_request events; the tool runs."""
    body = script(tool_turn("Bash", {"command": "touch auto.txt"}, permission=True))
    cfg = config(tmp_path, body, policy=PermissionPolicy("autonomous"))
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                seen = await until_complete(events)
    assert not [e for e in seen if isinstance(e, PermissionRequest)]
    assert (Path(str(cfg.cwd)) / "auto.txt").exists()


async def test_custom_policy_decides(tmp_path: Path) -> None:
    """custom: the callback's deny is applied without asking a person."""
    asked: list[str] = []

    async def decide(request: PermissionRequest) -> PermissionDecision | None:
        asked.append(request.tool_name)
        return PermissionDecision("deny", "policy says no")

    body = script(tool_turn("Bash", {"command": "touch no.txt"}, permission=True))
    cfg = config(tmp_path, body, policy=PermissionPolicy("custom", decide))
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                seen = await until_complete(events)
    assert ["Bash"] == asked
    assert not (Path(str(cfg.cwd)) / "no.txt").exists()
    complete = seen[-1]
    assert isinstance(complete, Complete)
    assert complete.permission_denials


async def test_unanswered_permission_times_out(tmp_path: Path) -> None:
    """No answer within permission_timeout: permission_cancelled, then a denial."""
    body = script(tool_turn("Bash", {"command": "touch late.txt"}, permission=True))
    cfg = config(tmp_path, body, permission_timeout=0.3)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                seen = await until_complete(events)
    cancelled = [e for e in seen if isinstance(e, PermissionCancelled)]
    assert ["timeout"] == [c.reason for c in cancelled]
    assert not (Path(str(cfg.cwd)) / "late.txt").exists()


async def test_closing_with_a_pending_request_cancels_it(tmp_path: Path) -> None:
    """Closing the session denies what is pending and says so."""
    body = script(tool_turn("Bash", {"command": "touch never.txt"}, permission=True))
    cfg = config(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            events = session.subscribe(after_seq=0)
            await session.prompt("go")
            async for event in events:
                if isinstance(event, PermissionRequest):
                    break
        rest = [e async for e in events]
    assert any(isinstance(e, PermissionCancelled) and e.reason == "session_closed" for e in rest)
    assert not (Path(str(cfg.cwd)) / "never.txt").exists()


async def test_slow_subscriber_is_dropped_and_can_catch_up(tmp_path: Path) -> None:
    """A subscriber with a tiny buffer is dropped; resubscribing from its seq catches up."""
    body = script(text_turn("word " * 300, chunk=3))
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path, body)) as session:
            slow = session.subscribe(max_pending=5)
            fast = session.subscribe()
            await session.prompt("go")
            seen = await until_complete(fast)

            async def drain() -> None:
                while True:
                    await slow.receive_batch()

            with pytest.raises(SubscriberDropped) as info:
                await drain()
            again = session.subscribe(after_seq=info.value.last_seq)
            replay = await until_complete(again)
    assert seen[-1].seq == replay[-1].seq
    assert replay[0].seq == info.value.last_seq + 1


async def test_an_observer_sees_every_batch_as_published_and_a_broken_one_is_dropped(
    tmp_path: Path,
) -> None:
    """``observe``: every event once, in order, the status already following the batch; an
    observer that raises is dropped while the session and the other observers go on."""
    body = script(text_turn("word " * 200, chunk=3), text_turn("again"))
    observed: list[Event] = []
    statuses: list[str] = []
    broken_calls = 0

    def broken(batch: Any) -> None:
        nonlocal broken_calls
        broken_calls += 1
        raise RuntimeError("a bug in an observer")

    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path, body)) as session:
            before = session.history()

            def follow(batch: Any) -> None:
                observed.extend(batch)
                if any(isinstance(e, Complete) for e in batch):
                    statuses.append(session.status)

            session.observe(broken)
            stop = session.observe(follow)
            with session.subscribe() as events:
                await session.prompt("go")
                seen = await until_complete(events)
                stop()
                await session.prompt("more")
                await until_complete(events)
            assert "idle" == session.status
    assert 1 == broken_calls
    assert [e.seq for e in seen] == [e.seq for e in observed]
    assert list(range(len(before) + 1, len(before) + len(observed) + 1)) == [
        e.seq for e in observed
    ]
    assert ["idle"] == statuses  # the status had followed the turn's end already


async def test_cli_crash_ends_the_stream_with_an_error(tmp_path: Path) -> None:
    """The CLI dies mid-turn: pending tools are closed, an error event, status errored."""
    body = script(
        tool_turn("Bash", {"command": "true"}, permission=True),
        crash_after_type="can_use_tool",
        crash_exit_code=9,
    )
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(config(tmp_path, body)) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                seen = [e async for e in events]
            assert "errored" == session.status
    tool_calls = {e.tool_call_id for e in seen if isinstance(e, ToolCall)}
    closed = {e.tool_call_id for e in seen if isinstance(e, ToolUpdate)}
    assert tool_calls <= closed
    assert any(type(e).__name__ == "ErrorEvent" for e in seen)


async def test_manager_runs_sessions_with_a_cap(tmp_path: Path) -> None:
    """Sessions are kept by id, capped, and closed individually or all at exit."""
    with anyio.fail_after(HANG_GUARD):
        async with SessionManager(config(tmp_path, script("one")), max_sessions=2) as manager:
            a = await manager.create()
            b = await manager.create(session_id="bee")
            assert {a.id, "bee"} == {s.id for s in manager.sessions()}
            assert b is manager.get("bee")
            with pytest.raises(TooManySessionsError):
                await manager.create()
            await manager.close(a.id)
            with pytest.raises(UnknownSessionError):
                manager.get(a.id)
            c = await manager.create()
            assert "connected" == c.status
        assert "terminated" == b.status and "terminated" == c.status


async def test_manager_reaps_idle_sessions(tmp_path: Path) -> None:
    """A session idle past idle_timeout is closed."""
    with anyio.fail_after(HANG_GUARD):
        async with SessionManager(config(tmp_path, script()), idle_timeout=0.2) as manager:
            session = await manager.create()
            with anyio.fail_after(HANG_GUARD):
                await session.wait_closed()
            assert [] == manager.sessions()


async def test_allow_always_stops_asking_for_that_tool(tmp_path: Path) -> None:
    """After allow_always for Bash, the next Bash call runs without a permission request."""
    from claudecode.testing import tool_use_block, turn

    body = script(
        turn(
            [tool_use_block("Bash", {"command": "touch one.txt"}, permission=True)],
            [tool_use_block("Bash", {"command": "touch two.txt"}, permission=True)],
            ["both done"],
        )
    )
    cfg = config(tmp_path, body)
    asked: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                async for event in events:
                    if isinstance(event, PermissionRequest):
                        asked.append(event.input.get("command", ""))
                        await session.answer_permission(
                            event.pending_id, PermissionDecision("allow_always")
                        )
                    if isinstance(event, Complete):
                        break
    assert ["touch one.txt"] == asked
    assert (Path(str(cfg.cwd)) / "two.txt").exists()


async def test_exit_plan_mode_without_a_result_completes_after_the_grace(tmp_path: Path) -> None:
    """After ExitPlanMode is approved and the CLI sends no result, the turn is completed."""
    handler = tmp_path / "plan_handler.py"
    handler.write_text(
        "def handle(msg):\n"
        "    if msg.get('type') != 'user':\n"
        "        return None\n"
        "    tool = {'type': 'tool_use', 'id': 'toolu_plan', 'name': 'ExitPlanMode',\n"
        "            'input': {'plan': '1. do it'}}\n"
        "    return [\n"
        "        {'type': 'system', 'subtype': 'init', 'session_id': 's1', 'model': 'm',\n"
        "         'permissionMode': 'plan', 'tools': ['ExitPlanMode'], 'uuid': 'u0'},\n"
        "        {'type': 'assistant', 'message': {'id': 'msg1', 'role': 'assistant',\n"
        "         'model': 'm', 'content': [tool]}, 'session_id': 's1', 'uuid': 'u1',\n"
        "         'parent_tool_use_id': None},\n"
        "        {'type': 'control_request', 'request_id': 'cli-plan', 'request': {\n"
        "         'subtype': 'can_use_tool', 'tool_name': 'ExitPlanMode',\n"
        "         'input': {'plan': '1. do it'}, 'tool_use_id': 'toolu_plan'}},\n"
        "    ]\n"
    )
    body = script(handler=f"{handler}:handle")
    cfg = config(tmp_path, body, policy=PermissionPolicy("plan"), plan_exit_grace=0.2)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("plan it")
                seen: list[Event] = []
                async for event in events:
                    seen.append(event)
                    if isinstance(event, PermissionRequest):
                        assert "ExitPlanMode" == event.tool_name
                        await session.answer_permission(
                            event.pending_id, PermissionDecision("allow")
                        )
                    if isinstance(event, Complete):
                        break
            assert "idle" == session.status
    complete = seen[-1]
    assert isinstance(complete, Complete)
    assert complete.synthetic
    assert "plan_approved" == complete.terminal_reason


async def test_manager_survives_a_session_that_cannot_start(tmp_path: Path) -> None:
    """A CLI that dies at start raises from create(); the manager and others go on."""
    from claudecode import CLIExitedError

    broken = tmp_path / "broken-claude"
    broken.write_text("#!/bin/sh\necho 'no credentials' >&2\nexit 3\n")
    broken.chmod(0o755)
    with anyio.fail_after(HANG_GUARD):
        async with SessionManager(config(tmp_path, script("fine"))) as manager:
            with pytest.raises(CLIExitedError):
                await manager.create(cli_path=str(broken))
            assert [] == manager.sessions()
            good = await manager.create()
            assert "connected" == good.status


@pytest.mark.parametrize("capture", [False, True])
async def test_traces_of_a_session_turn(tmp_path: Path, capture: bool) -> None:
    """One invoke_agent span per turn with its tool span; raw lines only with capture on."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    body = script(tool_turn("Bash", {"command": "echo secret-output"}, permission=True))
    cfg = config(
        tmp_path,
        body,
        policy=PermissionPolicy("autonomous"),
        tracer_provider=provider,
        capture_content=capture,
    )
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("a secret prompt")
                await until_complete(events)
    spans = exporter.get_finished_spans()
    turn = next(s for s in spans if s.name == "invoke_agent claude-code")
    tool = next(s for s in spans if s.name == "execute_tool Bash")
    assert turn.context is not None and tool.parent is not None
    assert turn.context.span_id == tool.parent.span_id
    raw = [e for e in turn.events if e.name == "claudecode.raw"]
    texts = " ".join(str(e.attributes) for s in spans for e in s.events) + " ".join(
        str(s.attributes) for s in spans
    )
    if capture:
        assert any('"type":"result"' in str(e.attributes) for e in raw)
        assert "a secret prompt" in texts
    else:
        assert [] == raw
        assert "a secret prompt" not in texts
        assert "secret-output" not in texts


async def test_supervised_hook_answers_are_traced(tmp_path: Path) -> None:
    """Each PreToolUse hook answer is a control span (inbound) with the decision."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    body = script(tool_turn("Bash", {"command": "true"}, permission=True))
    cfg = config(tmp_path, body, tracer_provider=provider)
    with anyio.fail_after(HANG_GUARD):
        async with AgentSession(cfg) as session:
            with session.subscribe() as events:
                await session.prompt("go")
                async for event in events:
                    if isinstance(event, PermissionRequest):
                        await session.answer_permission(
                            event.pending_id, PermissionDecision("allow")
                        )
                    if isinstance(event, Complete):
                        break
    [hook] = [s for s in exporter.get_finished_spans() if s.name == "control hook_callback"]
    assert hook.attributes is not None
    assert "inbound" == hook.attributes["claudecode.control.direction"]
    assert "ask" == hook.attributes["claudecode.control.decision"]
    assert "Bash" == hook.attributes["claudecode.control.tool"]
