"""LocalBackend: the in-process SessionBackend, against the fake CLI subprocess."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter import (
    CliSessionInUseError,
    LocalBackend,
    MessageChunk,
    PermissionDecision,
    PermissionPolicy,
    PermissionRequest,
    SessionConfig,
    SessionInfo,
    SessionSpec,
    TooManySessionsError,
    UnknownPermissionError,
    UnknownSessionError,
)
from claudecode import UsageError
from claudecode.testing import script, text_turn, tool_turn
from tests.support.configs import fake_session_config
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import until_complete

pytestmark = pytest.mark.anyio


def defaults(tmp_path: Path, body: Any, **kwargs: Any) -> SessionConfig:
    kwargs.setdefault("policy", PermissionPolicy("supervised"))
    return fake_session_config(tmp_path, body, **kwargs)


async def next_state(changes: AsyncIterator[SessionInfo], state: str) -> SessionInfo:
    async for info in changes:
        if info.state == state:
            return info
    raise AssertionError(f"the watch ended before state {state!r}")


async def _until_idle(
    changes: AsyncIterator[SessionInfo], session_id: str
) -> AsyncIterator[SessionInfo]:
    """The changes watched until session ``session_id``'s turn ended (that one last)."""
    busy = False
    async for info in changes:
        yield info
        if info.id == session_id:
            busy = busy or info.state != "idle"
            if busy and info.state == "idle":
                return


def test_spec_overrides_the_defaults(tmp_path: Path) -> None:
    """A spec's fields replace the defaults'; unset ones keep them; policies go by name."""
    base = SessionConfig(
        cwd=tmp_path, model="base-model", policy=PermissionPolicy("supervised", None, frozenset())
    )
    backend = LocalBackend(base)
    same = backend.config_for(SessionSpec())
    assert base == same
    cfg = backend.config_for(
        SessionSpec(model="m2", policy="plan", permission_mode="acceptEdits", resume="abc")
    )
    assert ("m2", "plan", "acceptEdits", "abc") == (
        cfg.model,
        cfg.policy.name,
        cfg.permission_mode,
        cfg.resume,
    )
    assert frozenset() == cfg.policy.read_only_tools  # the backend's own tool set is kept
    assert tmp_path == cfg.cwd
    with pytest.raises(UsageError, match="unknown policy"):
        backend.config_for(SessionSpec(policy="custom"))
    named = backend.config_for(
        SessionSpec(cli_session_id="0f0e", mcp_servers={"ed": {"type": "http", "url": "u"}})
    )
    assert "0f0e" == named.cli_session_id
    assert {"mcpServers": {"ed": {"type": "http", "url": "u"}}} == named.mcp_config
    merged = LocalBackend(
        SessionConfig(mcp_config='{"mcpServers": {"base": {"type": "stdio", "command": "x"}}}')
    ).config_for(SessionSpec(mcp_servers={"ed": {"type": "http", "url": "u"}}))
    assert isinstance(merged.mcp_config, dict)
    assert ["base", "ed"] == sorted(merged.mcp_config["mcpServers"])
    effort = backend.config_for(SessionSpec(effort="high"))
    assert {"effort": "high"} == dict(effort.client_options)
    with pytest.raises(UsageError, match="unknown effort"):
        backend.config_for(SessionSpec(effort="extreme"))
    with pytest.raises(UsageError, match="does not exist"):
        backend.config_for(SessionSpec(cwd=str(tmp_path / "missing")))


async def test_lifecycle_states_watch_and_closed_replay(tmp_path: Path) -> None:
    """idle -> busy -> idle -> closed, reported by watch(); a closed session still answers
    info() and replays its history."""
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script(text_turn("Hi there!")))) as backend:
            async with backend.watch() as changes:
                info = await backend.create(SessionSpec(model="opus"))
                assert "idle" == info.state
                assert "connected" == info.status
                assert "opus" == info.model
                assert info.created_at > 1e9
                assert "idle" == (await next_state(changes, "idle")).state
                async with backend.subscribe(info.id, after_seq=0) as events:
                    await backend.prompt(info.id, "say hi\nplease")
                    busy = await next_state(changes, "busy")
                    assert "say hi" == busy.title
                    seen = await until_complete(aiter(events))
                assert "Hi there!" == "".join(e.text for e in seen if isinstance(e, MessageChunk))
                assert list(range(1, len(seen) + 1)) == [e.seq for e in seen]
                idle = await next_state(changes, "idle")
                assert idle.cli_session_id
                assert [info.id] == [i.id for i in await backend.list()]
                await backend.close(info.id)
                closed = await next_state(changes, "closed")
                assert "terminated" == closed.status
            after = await backend.info(info.id)
            assert "closed" == after.state
            assert ["closed"] == [i.state for i in await backend.list()]
            async with backend.subscribe(info.id, after_seq=0) as events:
                replayed = [e async for e in events]
            assert [e.seq for e in seen] == [e.seq for e in replayed[: len(seen)]]
            with pytest.raises(UsageError, match="closed"):
                await backend.prompt(info.id, "again")
            await backend.close(info.id)  # closing a closed session is a no-op


async def test_waiting_while_a_permission_is_open(tmp_path: Path) -> None:
    """An open permission request shows as `waiting`; answering it runs the tool."""
    body = script(tool_turn("Bash", {"command": "touch ok.txt"}, permission=True))
    cfg = defaults(tmp_path, body)
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(cfg) as backend:
            info = await backend.create(SessionSpec())
            async with backend.watch() as changes, backend.subscribe(info.id) as events:
                await backend.prompt(info.id, "go")
                request = None
                async for event in events:
                    if isinstance(event, PermissionRequest):
                        request = event
                        break
                assert request is not None
                waiting = await next_state(changes, "waiting")
                assert (request.pending_id,) == waiting.pending_permissions
                with pytest.raises(UnknownPermissionError):
                    await backend.answer_permission(info.id, "nope", PermissionDecision("allow"))
                await backend.answer_permission(
                    info.id, request.pending_id, PermissionDecision("allow")
                )
                await until_complete(aiter(events))
                assert () == (await next_state(changes, "idle")).pending_permissions
    assert (Path(str(cfg.cwd)) / "ok.txt").exists()


async def test_errors_unknown_ids_and_the_cap(tmp_path: Path) -> None:
    """Unknown ids, a bad policy name and the session cap are typed errors."""
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script()), max_sessions=1) as backend:
            for call in (
                backend.info("nope"),
                backend.prompt("nope", "x"),
                backend.interrupt("nope"),
                backend.close("nope"),
            ):
                with pytest.raises(UnknownSessionError):
                    await call
            with pytest.raises(UnknownSessionError):
                async with backend.subscribe("nope"):
                    pass
            with pytest.raises(UsageError, match="unknown policy"):
                await backend.create(SessionSpec(policy="yolo"))
            first = await backend.create(SessionSpec(), session_id="s1")
            assert "s1" == first.id
            with pytest.raises(TooManySessionsError):
                await backend.create(SessionSpec())


async def test_a_slow_watcher_holds_one_snapshot_per_session(tmp_path: Path) -> None:
    """A watcher that does not read keeps only the newest snapshot of each session."""
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script(text_turn("a"), text_turn("b")))) as b:
            async with b.watch() as changes:
                ids = [(await b.create(SessionSpec())).id for _ in range(2)]
                for text in ("one", "two"):
                    async with b.subscribe(ids[0]) as events:
                        await b.prompt(ids[0], text)
                        await until_complete(aiter(events))
                await b.close(ids[0])
                infos: list[SessionInfo] = []
                with anyio.move_on_after(0.5):
                    async for info in changes:
                        infos.append(info)
            # Both sessions reported, each once, with its newest state.
            assert sorted(ids) == sorted(i.id for i in infos)
            assert {ids[0]: "closed", ids[1]: "idle"} == {i.id: i.state for i in infos}


async def test_backend_exit_closes_sessions_and_ends_watchers(tmp_path: Path) -> None:
    """Leaving the backend closes every session (the CLI is reaped) and ends the watch."""
    with anyio.fail_after(HANG_GUARD):
        backend = LocalBackend(defaults(tmp_path, script()))
        async with backend:
            info = await backend.create(SessionSpec())
            async with backend.watch() as changes:
                await backend.aclose()
                states = [i.state async for i in changes]
        assert "closed" == states[-1]
        with pytest.raises(UsageError, match="not running"):
            await backend.create(SessionSpec())
        assert "closed" == (await backend.info(info.id)).state


async def test_a_turn_starts_with_one_change(tmp_path: Path) -> None:
    """Watchers see a turn start as busy with its title at once (every connection of a server
    gets each change: busy and then the title would be two frames to each)."""
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script(text_turn("Hi there!")))) as backend:
            info = await backend.create(SessionSpec())
            async with backend.watch() as changes:
                seen: list[SessionInfo] = []
                idle = anyio.Event()

                async def follow() -> None:
                    async for change in changes:
                        seen.append(change)
                        if "idle" == change.state:
                            idle.set()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(follow)
                    async with backend.subscribe(info.id, after_seq=0) as events:
                        await backend.prompt(info.id, "a title\nand more")
                        await until_complete(aiter(events))
                    await idle.wait()
                    tg.cancel_scope.cancel()
            busy = [change for change in seen if change.state == "busy"]
            # (The CLI's first status of the session, with its id and model, may follow as
            # a change of its own.)
            assert busy and all("a title" == change.title for change in busy)


async def test_the_cli_session_id_a_spec_names_is_listed_from_the_start(tmp_path: Path) -> None:
    """Before the CLI's first turn (when it reports its session id) a resumed session is
    listed under the id it resumes, a session told its id under that one; a fork gets a new
    id, unknown until the CLI reports it."""
    stored, chosen = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7", "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script())) as backend:
            resumed = await backend.create(SessionSpec(resume=stored))
            named = await backend.create(SessionSpec(cli_session_id=chosen))
            forked = await backend.create(SessionSpec(resume=stored, fork=True))
            assert stored == resumed.cli_session_id
            assert chosen == named.cli_session_id
            assert forked.cli_session_id is None
            listed = {i.id: i.cli_session_id for i in await backend.list()}
            assert {resumed.id: stored, named.id: chosen, forked.id: None} == listed


async def test_a_session_keeps_the_named_agent_it_started_from(tmp_path: Path) -> None:
    """The spec's ``named_agent`` is in the session's info from its creation, in the list,
    in what watchers see and after it closes; a session without one says none."""
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script(text_turn("ok")))) as backend:
            async with backend.watch() as changes:
                made = await backend.create(SessionSpec(named_agent="reviewer", origin="webui"))
                plain = await backend.create(SessionSpec())
                assert ("reviewer", None) == (made.named_agent, plain.named_agent)
                listed = {i.id: i.named_agent for i in await backend.list()}
                assert {made.id: "reviewer", plain.id: None} == listed
                await backend.prompt(made.id, "hi")
                seen = {info.id: info.named_agent async for info in _until_idle(changes, made.id)}
                assert "reviewer" == seen[made.id]
                assert seen.get(plain.id) is None
            await backend.close(made.id)
            closed = await backend.info(made.id)
            assert ("closed", "reviewer") == (closed.state, closed.named_agent)


async def test_a_cli_session_is_resumed_by_one_session_at_a_time(tmp_path: Path) -> None:
    """Of two creates resuming one CLI session at once, one wins; while it is open a resume
    is refused and a fork is not; once closed, it resumes again."""
    stored = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults(tmp_path, script())) as backend:
            results: list[SessionInfo | BaseException] = []

            async def resume() -> None:
                try:
                    results.append(await backend.create(SessionSpec(resume=stored)))
                except CliSessionInUseError as exc:
                    results.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(resume)
                tg.start_soon(resume)
            [won] = [r for r in results if isinstance(r, SessionInfo)]
            [refused] = [r for r in results if isinstance(r, CliSessionInUseError)]
            assert isinstance(refused, UsageError) and stored in str(refused)
            with pytest.raises(CliSessionInUseError):
                await backend.create(SessionSpec(resume=stored))
            forked = await backend.create(SessionSpec(resume=stored, fork=True))
            await backend.close(won.id)
            again = await backend.create(SessionSpec(resume=stored))
            assert stored == again.cli_session_id
            assert {won.id, forked.id, again.id} == {i.id for i in await backend.list()}
