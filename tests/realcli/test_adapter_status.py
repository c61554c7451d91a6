"""The session is ``idle`` after every turn the real CLI completes (real CLI, fake API):
one prompt after another, a ``set_model`` between turns, a prompt after one the CLI queued;
and a session closed after any of them ends ``terminated``, with no error.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from adapter.backend import SessionInfo, SessionSpec
from adapter.events import Complete, ErrorEvent, MessageChunk
from adapter.local import LocalBackend
from adapter.session import AgentSession
from tests.support.configs import real_cli_config
from tests.support.timeouts import NODE_GUARD
from tests.support.waits import until_complete

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def _turn(session: AgentSession, events: Any, text: str) -> Complete:
    await session.prompt(text)
    complete = (await until_complete(events, guard=NODE_GUARD))[-1]
    # The status follows the turn as its Complete is published: no waiting needed.
    assert "idle" == session.status
    return complete


async def test_idle_after_each_turn_and_after_set_model(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(text_turn("one"), text_turn("two"), text_turn("three"))
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            with session.subscribe() as events:
                first = await _turn(session, events, "first")
                second = await _turn(session, events, "second")
                await session.set_model("claude-haiku-4-5")
                await session.set_permission_mode("acceptEdits")
                await session.interrupt()  # nothing runs: changes nothing
                assert "idle" == session.status
                third = await _turn(session, events, "third")
    assert ["one", "two", "three"] == [c.result for c in (first, second, third)]
    assert (session.status, session.status_reason) == ("terminated", None)
    assert [] == [e for e in session.history() if isinstance(e, ErrorEvent)]


async def test_idle_after_a_turn_that_follows_a_queued_prompt(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """Once the CLI has reported a queued prompt (command_lifecycle), a prompt sent to an
    idle CLI still ends in ``idle``."""
    fake_api.add_main(
        text_turn("slow words " * 60, chunk=3, delay=0.02),
        text_turn("The queued answer."),
        text_turn("The last answer."),
    )
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            with session.subscribe() as events:
                await session.prompt("talk slowly")
                async for event in events:
                    if isinstance(event, MessageChunk):  # the first turn is streaming
                        break
                await session.prompt("and then this")
                await until_complete(events, guard=NODE_GUARD)
                queued = (await until_complete(events, guard=NODE_GUARD))[-1]
                assert "idle" == session.status
                last = await _turn(session, events, "one more")
    assert ("The queued answer.", "The last answer.") == (queued.result, last.result)
    assert (session.status, session.status_reason) == ("terminated", None)
    assert [] == [e for e in session.history() if isinstance(e, ErrorEvent)]


async def _next_state(changes: Any, state: str) -> SessionInfo:
    async for info in changes:
        if info.state == state:
            return info
    raise AssertionError(f"the watch ended before state {state!r}")


async def test_local_backend_reports_idle_after_each_turn(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """SessionInfo.state as front ends see it: idle once a turn completed (info() and
    watch()), after a second prompt and after set_model between turns."""
    fake_api.add_main(text_turn("one"), text_turn("two"), text_turn("three"))
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", client={"close_grace": 10.0}
    )
    with anyio.fail_after(NODE_GUARD):
        async with (
            LocalBackend(config) as backend,
            backend.watch() as changes,
        ):
            info = await backend.create(SessionSpec())
            async with backend.subscribe(info.id) as events:
                for n, text in enumerate(("first", "second", "third")):
                    if n == 2:
                        await backend.set_model(info.id, "claude-haiku-4-5")
                        assert "idle" == (await backend.info(info.id)).state
                    await backend.prompt(info.id, text)
                    complete = (await until_complete(aiter(events), guard=NODE_GUARD))[-1]
                    assert "idle" == (await backend.info(info.id)).state
                    # The watch says so too, in a snapshot taken after the Complete.
                    while (idle := await _next_state(changes, "idle")).last_seq < complete.seq:
                        pass
                    assert "idle" == idle.status
            await backend.close(info.id)
            closed = await _next_state(changes, "closed")
    assert (closed.status, closed.status_reason) == ("terminated", None)
