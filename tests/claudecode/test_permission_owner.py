"""The Session owns open permission requests and their expiry (``permission_timeout``).

Random interleavings of what the CLI does (asks, withdraws), what the caller does (answers)
and time passing, against a real Session over an in-memory peer on trio's mock clock (time
moves only when the test says): every request is answered exactly once unless the CLI
withdrew it first, never after it was answered; ``open_permission_requests`` is exactly what
is still open; ``on_permission_timeout`` hears of each timeout, once, before its denial is
written, and only when the time was up.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import pytest
import trio.lowlevel
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from claudecode import (
    ClaudeCodeOptions,
    ClaudeCodeProtocol,
    InboundControlRequest,
    InboundMessage,
    OutboundControlResponse,
    Session,
    UsageError,
)
from tests.support.peer import MemoryPeer, can_use_tool_line, control_cancel_line
from tests.support.timeouts import HANG_GUARD

T = TypeVar("T")

_TIMEOUT_TEXT = "no answer to the permission request in time"

_IDS = st.integers(0, 4).map(lambda i: f"r{i}")
_STEP = st.one_of(
    st.tuples(st.just("ask"), _IDS),
    st.tuples(st.just("answer"), _IDS),
    st.tuples(st.just("cancel"), _IDS),
    st.tuples(st.just("wait"), st.sampled_from([0.25, 0.5, 1.0, 2.5])),
)


@dataclass
class _Run:
    """What happened, as the test saw it."""

    limit: float | None
    asked_at: dict[str, float] = field(default_factory=dict)
    withdrawn_open: set[str] = field(default_factory=set)  # cancelled by the CLI while open
    answered_by_us: dict[str, str] = field(default_factory=dict)  # id -> behavior
    timed_out: dict[str, float] = field(default_factory=dict)  # id -> when noticed
    hook_calls: list[tuple[str, int]] = field(default_factory=list)  # (id, its writes then)
    delivered: dict[str, InboundControlRequest] = field(default_factory=dict)
    peer: MemoryPeer = field(default_factory=MemoryPeer)


def _is_timeout(body: dict[str, Any]) -> bool:
    answer = body.get("response") or {}
    return answer.get("behavior") == "deny" and answer.get("message") == _TIMEOUT_TEXT


def _on_mock_clock(main: Callable[[trio.testing.MockClock], Awaitable[T]], jumps: float) -> T:
    """Run ``main`` on trio with a clock that moves only when the test jumps it. A hang
    still ends: once every task has waited HANG_GUARD real seconds the clock jumps to the
    next deadline, the guard's at the latest (past the time the test jumps itself)."""
    clock = trio.testing.MockClock(autojump_threshold=HANG_GUARD)

    async def guarded() -> T:
        with anyio.fail_after(HANG_GUARD + jumps):
            return await main(clock)

    return anyio.run(guarded, backend="trio", backend_options={"clock": clock})


async def _scenario(
    clock: trio.testing.MockClock,
    steps: list[tuple[str, Any]],
    limit: float | None,
    answer_allow: bool,
) -> _Run:
    run = _Run(limit)
    peer = run.peer

    def on_messages(batch: list[InboundMessage]) -> None:
        for message in batch:
            if isinstance(message, InboundControlRequest):
                run.delivered[message.request_id] = message

    def on_timeout(req: InboundControlRequest) -> None:
        run.hook_calls.append((req.request_id, len(peer.responses(req.request_id))))

    options = ClaudeCodeOptions(
        initialize=False, permission_timeout=limit, permission_prompt_tool_name="stdio"
    )
    session = Session(
        options, transport=peer, on_messages=on_messages, on_permission_timeout=on_timeout
    )
    async with session:
        for kind, arg in steps:
            if kind == "ask" and arg not in run.asked_at:  # the CLI never reuses an id
                run.asked_at[arg] = clock.current_time()
                peer.emit(can_use_tool_line(arg))
            elif kind == "cancel" and arg in run.asked_at:
                if session.open_permission_request(arg) is not None:
                    run.withdrawn_open.add(arg)
                peer.emit(control_cancel_line(arg))
            elif kind == "answer" and arg in run.delivered:
                req = run.delivered[arg]
                was_open = session.open_permission_request(arg) is not None
                before = len(peer.responses(arg))
                response = req.allow() if answer_allow else req.deny("no")
                if arg in run.answered_by_us:  # answering twice is the caller's mistake
                    with pytest.raises(UsageError):
                        await session.respond(response)
                    continue
                # Open, withdrawn or timed out: no error (the caller could not know).
                await session.respond(response)
                assert before + int(was_open) == len(peer.responses(arg))
                if was_open:
                    run.answered_by_us[arg] = "allow" if answer_allow else "deny"
            elif kind == "wait":
                clock.jump(arg)
            await trio.testing.wait_all_tasks_blocked()
            _check_open(session, peer, run, clock.current_time())
        await session.close()
    return run


def _check_open(session: Session, peer: MemoryPeer, run: _Run, now: float) -> None:
    """After every step: what is open is exactly what nobody answered nor withdrew, and
    nothing stays open past its time."""
    for rid in run.asked_at:
        bodies = peer.responses(rid)
        if bodies and _is_timeout(bodies[0]) and rid not in run.answered_by_us:
            run.timed_out.setdefault(rid, now)
    expected = [
        rid for rid in run.asked_at if rid not in run.withdrawn_open and not peer.responses(rid)
    ]
    assert expected == [r.request_id for r in session.open_permission_requests]
    for rid in expected:
        assert session.open_permission_request(rid) is not None
        if run.limit is not None:
            assert now < run.asked_at[rid] + run.limit  # its timer would have fired
    for rid, noticed in run.timed_out.items():
        assert run.limit is not None
        assert noticed >= run.asked_at[rid] + run.limit  # never early
        assert session.open_permission_request(rid) is None


@pytest.mark.parametrize("limit", [None, 0.0, 1.0])
@given(steps=st.lists(_STEP, max_size=25), answer_allow=st.booleans())
def test_every_request_is_answered_once_and_never_after(
    limit: float | None, steps: list[tuple[str, Any]], answer_allow: bool
) -> None:
    jumps = sum(arg for kind, arg in steps if kind == "wait")
    run = _on_mock_clock(lambda clock: _scenario(clock, steps, limit, answer_allow), jumps)
    # The hook: once per timed-out request, before its denial was written.
    hooked = [rid for rid, _ in run.hook_calls]
    assert sorted(hooked) == sorted(run.timed_out)
    assert len(hooked) == len(set(hooked))
    assert all(0 == writes for _, writes in run.hook_calls)
    assert not run.timed_out.keys() & run.answered_by_us.keys()
    # Closing denied what was still open: each request the CLI did not withdraw while it
    # was open has exactly one answer (ours, the timeout's or the close's), the rest none.
    for rid in run.asked_at:
        assert (0 if rid in run.withdrawn_open else 1) == len(run.peer.responses(rid)), rid
    for rid, behavior in run.answered_by_us.items():
        assert behavior == run.peer.responses(rid)[0]["response"]["behavior"]


def test_a_hook_that_raises_still_lets_the_request_be_denied() -> None:
    """The caller's bug is logged; the CLI still gets its denial."""
    peer = MemoryPeer()

    def broken(req: InboundControlRequest) -> None:
        raise RuntimeError("caller bug")

    async def main(clock: trio.testing.MockClock) -> None:
        options = ClaudeCodeOptions(
            initialize=False, permission_timeout=1.0, permission_prompt_tool_name="stdio"
        )
        async with Session(options, transport=peer, on_permission_timeout=broken) as session:
            peer.emit(can_use_tool_line("r1"))
            await trio.testing.wait_all_tasks_blocked()
            assert ["r1"] == [r.request_id for r in session.open_permission_requests]
            clock.jump(1.0)
            await trio.testing.wait_all_tasks_blocked()
            assert () == session.open_permission_requests

    with capture_logs() as logs:
        _on_mock_clock(main, 1.0)
    [body] = peer.responses("r1")
    assert _is_timeout(body) and body["response"]["interrupt"] is True
    assert ["permission.timeout_hook_failed"] == [
        e["event"] for e in logs if e["event"] == "permission.timeout_hook_failed"
    ]


def test_a_callback_that_never_answers_is_reported_too() -> None:
    """With a ``can_use_tool`` callback the request never waits in the stream; when the
    callback does not return in time the hook hears of it all the same, before the denial."""
    peer = MemoryPeer()
    hooked: list[tuple[str, int]] = []

    async def never(req: InboundControlRequest) -> OutboundControlResponse:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    def on_timeout(req: InboundControlRequest) -> None:
        hooked.append((req.request_id, len(peer.responses(req.request_id))))

    async def main(clock: trio.testing.MockClock) -> None:
        options = ClaudeCodeOptions(initialize=False, permission_timeout=1.0)
        session = Session(
            options, transport=peer, can_use_tool=never, on_permission_timeout=on_timeout
        )
        async with session:
            peer.emit(can_use_tool_line("r1"))
            await trio.testing.wait_all_tasks_blocked()
            assert ["r1"] == [r.request_id for r in session.open_permission_requests]
            clock.jump(1.0)
            await trio.testing.wait_all_tasks_blocked()
            assert () == session.open_permission_requests

    _on_mock_clock(main, 1.0)
    assert [("r1", 0)] == hooked
    [body] = peer.responses("r1")
    assert "deny" == body["response"]["behavior"] and body["response"]["interrupt"] is True


def test_protocol_expire_closes_the_request_and_drops_a_late_answer() -> None:
    protocol = ClaudeCodeProtocol()
    [req] = protocol.receive_data(json.dumps(can_use_tool_line("r1")).encode() + b"\n")
    assert isinstance(req, InboundControlRequest)
    assert req is protocol.open_inbound_request("r1")
    assert protocol.expire(req.deny("late", interrupt=True))
    assert protocol.open_inbound_request("r1") is None
    assert b"" == protocol.send(req.allow())  # the caller lost a race it could not see
    with pytest.raises(UsageError):
        protocol.expire(req.deny("again"))
