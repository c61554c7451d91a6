"""A session's permission requests, end to end in order, whoever ends them.

The open requests and their time limit are the client's (claudecode.Session); the adapter
keeps only who answers them. Random interleavings of what the CLI does (asks, in the same
batch as the tool call; withdraws what it got no answer to), what a person does (answers,
declines a question), a custom policy deciding slowly, and time passing (trio's mock clock),
against a real AgentSession over an in-memory peer. What a client sees:

* each request's events are its opening (``permission_request`` / ``question_request``, after
  its tool call from the same batch) then exactly one ending (``permission_resolved`` or
  ``permission_cancelled``: by the CLI, ``timeout`` or ``session_closed``), nothing after;
  a request a policy settled alone shows nothing, or its question and its resolution;
* the ending is published before the CLI reads the answer it announces;
* ``pending_permissions`` is what is opened and not ended, oldest first; a timeout comes
  only once the time is up; the CLI gets exactly one answer to each request it did not
  withdraw.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import pytest
import trio.testing
from hypothesis import example, given
from hypothesis import strategies as st

from adapter.config import SessionConfig
from adapter.errors import UnknownPermissionError
from adapter.events import (
    Event,
    PermissionCancelled,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
    ToolCall,
)
from adapter.policies import PermissionDecision, PermissionPolicy
from adapter.session import AgentSession
from tests.support.peer import MemoryPeer, can_use_tool_line, control_cancel_line
from tests.support.timeouts import HANG_GUARD
from tests.support.transcripts import assistant, tool_use

T = TypeVar("T")

_LIMIT = 1.0
_IDS = st.integers(0, 3)
_ASK = st.tuples(
    st.just("ask"),
    _IDS,
    st.sampled_from(["Bash", "AskUserQuestion"]),
    # what a custom policy does with it: decide after a delay, or defer to a person
    st.sampled_from([0.0, 0.5, 1.5]),
    st.sampled_from(["defer", "deny", "allow"]),
)
_STEP = st.one_of(
    _ASK,
    st.tuples(st.just("answer"), _IDS, st.sampled_from(["allow", "deny"])),
    st.tuples(st.just("cancel"), _IDS),
    st.tuples(st.just("wait"), st.sampled_from([0.25, 0.5, 1.0])),
)
_QUESTION = {
    "questions": [
        {
            "question": "Which one?",
            "header": "Pick",
            "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
            "multiSelect": False,
        }
    ]
}

_ENDINGS = (PermissionResolved, PermissionCancelled)


def _on_mock_clock(main: Callable[[trio.testing.MockClock], Awaitable[T]], jumps: float) -> T:
    """Run ``main`` on trio with a clock that moves only when the test jumps it (a hang
    still ends: after HANG_GUARD real seconds the clock jumps to the next deadline)."""
    clock = trio.testing.MockClock(autojump_threshold=HANG_GUARD)

    async def guarded() -> T:
        with anyio.fail_after(HANG_GUARD + jumps):
            return await main(clock)

    return anyio.run(guarded, backend="trio", backend_options={"clock": clock})


def _rid(i: int) -> str:
    return f"req-{i}"


def _of(events: list[Event], rid: str) -> list[Event]:
    return [e for e in events if getattr(e, "pending_id", None) == rid]


async def _policy(request: PermissionRequest) -> PermissionDecision | None:
    delay, outcome = request.input["plan"]
    await anyio.sleep(delay)
    if outcome == "defer":
        return None
    if outcome == "allow" and request.tool_name == "AskUserQuestion":
        return PermissionDecision("allow", updated_input={"answers": {"Which one?": "A"}})
    return PermissionDecision(outcome, "policy says so")


@dataclass
class _Run:
    asked_at: dict[str, float] = field(default_factory=dict)
    withdrawn: set[str] = field(default_factory=set)
    #: for each answer the CLI read: the events of its request published by then
    published_before: dict[str, list[Event]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    peer: MemoryPeer = field(default_factory=MemoryPeer)


async def _scenario(clock: trio.testing.MockClock, steps: list[Any], custom: bool) -> _Run:
    run = _Run()
    policy = PermissionPolicy("custom", _policy) if custom else PermissionPolicy("supervised")
    config = SessionConfig(
        policy=policy, permission_timeout=_LIMIT, client_options={"initialize": False}
    )
    session = AgentSession(config, transport=run.peer)

    def on_line(line: dict[str, Any]) -> None:
        if line.get("type") == "control_response":
            rid = line["response"]["request_id"]
            run.published_before[rid] = _of(session.history(), rid)

    run.peer.on_line = on_line
    async with session:
        for step in steps:
            await _step(session, run, clock, step)
            await trio.testing.wait_all_tasks_blocked()
            _check_pending(session, run, clock.current_time())
        run.events = session.history()
    run.events = session.history()
    return run


async def _step(session: AgentSession, run: _Run, clock: trio.testing.MockClock, step: Any) -> None:
    kind, *args = step
    if kind == "ask" and _rid(args[0]) not in run.asked_at:
        index, tool, delay, outcome = args
        rid = _rid(index)
        tool_input: dict[str, Any] = dict(_QUESTION) if tool == "AskUserQuestion" else {}
        tool_input["plan"] = [delay, outcome]
        run.asked_at[rid] = clock.current_time()
        # The tool call and its permission request in one batch, as the CLI writes them.
        call = assistant(f"m{index}", tool_use(f"tu{index}", name=tool, **tool_input))
        ask = can_use_tool_line(rid, tool_input, tool_name=tool, tool_use_id=f"tu{index}")
        run.peer.emit(call, ask)
    elif kind == "cancel" and _rid(args[0]) in run.asked_at:
        rid = _rid(args[0])
        if not run.peer.responses(rid):  # the CLI withdraws only what it still waits for
            run.withdrawn.add(rid)
            run.peer.emit(control_cancel_line(rid))
    elif kind == "answer":
        rid, behavior = _rid(args[0]), args[1]
        pending = rid in session.pending_permissions
        try:
            if rid not in session.pending_questions:
                await session.answer_permission(rid, PermissionDecision(behavior))
            elif behavior == "deny":
                await session.decline_question(rid, "not now")
            else:
                await session.answer_question(rid, {"Which one?": ["A"]})
        except UnknownPermissionError:
            assert not pending
        else:
            assert pending
    elif kind == "wait":
        clock.jump(args[0])


def _check_pending(session: AgentSession, run: _Run, now: float) -> None:
    events = session.history()
    opened = [
        e.pending_id
        for e in events
        if isinstance(e, PermissionRequest | QuestionRequest)
        and not any(isinstance(x, _ENDINGS) for x in _of(events, e.pending_id))
    ]
    assert opened == session.pending_permissions
    for rid in opened:
        assert now < run.asked_at[rid] + _LIMIT  # its time is not up yet
    for e in events:
        if isinstance(e, PermissionCancelled) and e.reason == "timeout":
            assert now >= run.asked_at[e.pending_id] + _LIMIT


@pytest.mark.parametrize("custom", [False, True], ids=["supervised", "custom"])
@given(steps=st.lists(_STEP, max_size=20))
@example(  # a deferring policy asks a person about req-0 after req-1 is asked
    steps=[
        ("ask", 0, "Bash", 0.5, "defer"),
        ("wait", 0.25),
        ("ask", 1, "Bash", 0.0, "defer"),
        ("wait", 0.25),
    ]
)
def test_every_request_ends_once_in_order_whoever_ends_it(custom: bool, steps: list[Any]) -> None:
    jumps = sum(step[1] for step in steps if step[0] == "wait")
    run = _on_mock_clock(lambda clock: _scenario(clock, steps, custom), jumps)
    events = run.events
    for rid in run.asked_at:
        mine = _of(events, rid)
        answers = run.peer.responses(rid)
        assert len(answers) == (0 if rid in run.withdrawn else 1), rid
        if not mine:  # a policy settled it alone, nothing to show
            assert custom and answers
            continue
        if len(mine) == 1:  # withdrawn while a policy was deciding
            [only] = mine
            assert custom and isinstance(only, PermissionCancelled)
            assert "cancelled_by_cli" == only.reason
            continue
        opening, ending = mine
        assert isinstance(opening, PermissionRequest | QuestionRequest)
        assert isinstance(ending, _ENDINGS)
        # after its tool call, published from the same batch
        [call] = [
            e for e in events if isinstance(e, ToolCall) and e.tool_call_id == opening.tool_call_id
        ]
        assert events.index(call) < events.index(opening)
        if rid in run.withdrawn:
            assert isinstance(ending, PermissionCancelled)
            assert ending.reason in ("cancelled_by_cli", "timeout", "session_closed")
            continue
        # the CLI read the answer only after the ending was published
        assert ending in run.published_before[rid]
        [answer] = answers
        if isinstance(ending, PermissionResolved):
            expected = (
                "allow" if ending.decision in ("allow", "allow_always", "answered") else "deny"
            )
            assert expected == answer["response"]["behavior"]
        else:
            assert "deny" == answer["response"]["behavior"]
            assert answer["response"]["interrupt"] is True
