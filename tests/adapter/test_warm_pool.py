"""The warm pool of SessionManager / LocalBackend, with the demo CLI (a real subprocess):
creates with the default settings get a CLI started ahead, other settings start cold, the
pool refills, counts against max_sessions, is reaped when idle, nobody sees a pooled session
before it is handed out, and nothing outlives the backend."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from adapter import (
    LocalBackend,
    MessageChunk,
    PermissionPolicy,
    PoolStatus,
    SessionConfig,
    SessionManager,
    SessionSpec,
    TooManySessionsError,
)
from adapter.commands.demo import demo_cli
from benchmarks import procfs

pytestmark = pytest.mark.anyio


def demo_defaults(tmp_path: Path) -> SessionConfig:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return SessionConfig(
        cli_path=demo_cli(tmp_path / "demo"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )


async def eventually(check: Callable[[], object]) -> None:
    """Return once ``check()`` is true (a hang guard, not a timing)."""
    with anyio.fail_after(60):
        while True:
            if check():
                return
            await anyio.sleep(0.02)


async def until_pool(status: Callable[[], PoolStatus], want: Callable[[PoolStatus], bool]) -> None:
    await eventually(lambda: want(status()))


@pytest.fixture
def cli_pids() -> Callable[[], set[int]]:
    """Our running child processes the test started (not those of earlier tests, such as
    a network namespace's keeper)."""
    before = set(procfs.descendants(os.getpid()))

    def now() -> set[int]:
        return {p for p in procfs.descendants(os.getpid()) if procfs.running(p)} - before

    return now


async def first_text(backend: LocalBackend, session_id: str) -> str:
    async with backend.subscribe(session_id, after_seq=0) as events:
        await backend.prompt(session_id, "tour")
        with anyio.fail_after(60):
            async for event in events:
                if isinstance(event, MessageChunk):
                    return event.text
    raise AssertionError("no text")


async def test_a_default_create_gets_a_warm_cli_and_the_pool_refills(
    tmp_path: Path, cli_pids: Callable[[], set[int]]
) -> None:
    async with SessionManager(demo_defaults(tmp_path), warm=2, max_sessions=4) as manager:
        await until_pool(manager.pool_status, lambda s: s.warm == 2)
        assert [] == manager.sessions()  # pooled sessions are nobody's
        warm_pids = cli_pids()
        session = await manager.create(session_id="mine")
        # The CLI was one of the pooled ones, already initialized; the id is the one asked.
        assert session.pid in warm_pids
        assert ("mine", "connected") == (session.id, session.status)
        assert [session] == manager.sessions()
        assert {e.session_id for e in session.history()} <= {"mine"}
        assert 1 == manager.pool_status().in_use
        await until_pool(manager.pool_status, lambda s: s.warm == 2 and s.in_use == 1)
        # Other settings start cold: a CLI of their own, the pool untouched.
        cold = await manager.create(model="claude-other")
        assert cold.pid not in warm_pids
        assert PoolStatus(size=2, warm=2, starting=0, in_use=1) == manager.pool_status()
        await manager.close("mine")
        await until_pool(manager.pool_status, lambda s: s.in_use == 0)
    assert [] == [pid for pid in warm_pids if procfs.exists(pid)]


async def test_the_pool_counts_against_max_sessions(tmp_path: Path) -> None:
    """The pool never fills past the cap; a cold create at the cap stops a pooled CLI to
    make room, and a create past it with nothing pooled is refused."""
    async with SessionManager(demo_defaults(tmp_path), warm=2, max_sessions=2) as manager:
        await until_pool(manager.pool_status, lambda s: s.warm == 2)
        first = await manager.create(model="claude-other")  # evicts one pooled CLI
        assert manager.pool_status().warm == 1
        second = await manager.create()  # the other pooled one
        assert second.status == "connected"
        assert PoolStatus(size=2, warm=0, starting=0, in_use=1) == manager.pool_status()
        with pytest.raises(TooManySessionsError):
            await manager.create()
        await manager.close(first.id)
        # Room again: the pool takes it.
        await until_pool(manager.pool_status, lambda s: s.warm == 1)
        assert 2 == len(manager.sessions()) + manager.pool_status().warm


async def test_an_idle_pooled_cli_is_replaced(
    tmp_path: Path, cli_pids: Callable[[], set[int]]
) -> None:
    async with SessionManager(demo_defaults(tmp_path), warm=1, idle_timeout=0.3) as manager:
        await until_pool(manager.pool_status, lambda s: s.warm == 1)
        (pid,) = cli_pids()
        await eventually(lambda: not procfs.running(pid))
        await until_pool(manager.pool_status, lambda s: s.warm == 1)
        assert pid not in cli_pids()
        assert 1 == len(cli_pids())


async def test_a_cli_that_cannot_start_leaves_the_pool_empty_and_creates_fail_cleanly(
    tmp_path: Path, cli_pids: Callable[[], set[int]]
) -> None:
    broken = SessionConfig(cli_path=tmp_path / "no-such-cli", cwd=tmp_path)
    async with SessionManager(broken, warm=2) as manager:
        await anyio.sleep(0.3)
        status = manager.pool_status()
        assert (status.warm, status.in_use) == (0, 0)
        with pytest.raises(Exception, match="no-such-cli"):
            await manager.create()
    assert [] == sorted(cli_pids())


async def test_local_backend_hands_out_warm_sessions_to_default_specs_only(
    tmp_path: Path, cli_pids: Callable[[], set[int]]
) -> None:
    defaults = demo_defaults(tmp_path)
    async with LocalBackend(defaults, warm=1) as backend:
        await until_pool(backend.pool_status, lambda s: s.warm == 1)
        assert [] == await backend.list()
        info = await backend.create(SessionSpec(cwd=str(defaults.cwd), policy="supervised"))
        assert backend.pool_status().in_use == 1
        assert [info.id] == [s.id for s in await backend.list()]
        assert "Let me" in await first_text(backend, info.id)
        # A spec asking for another policy is not the pool's: in_use stays 1.
        other = await backend.create(SessionSpec(policy="autonomous"))
        assert backend.pool_status().in_use == 1
        assert "Let me" in await first_text(backend, other.id)
        await until_pool(backend.pool_status, lambda s: s.warm == 1)  # the replacement
        pids = cli_pids()
        assert len(pids) == 3  # two sessions and the pool's replacement
    assert [] == [pid for pid in pids if procfs.exists(pid)]


async def test_a_pooled_session_handed_out_under_an_id_renames_its_debug_files(
    tmp_path: Path,
) -> None:
    debug = tmp_path / "debug"
    defaults = dataclasses.replace(demo_defaults(tmp_path), debug_dir=debug)
    async with SessionManager(defaults, warm=1) as manager:
        await until_pool(manager.pool_status, lambda s: s.warm == 1)
        (pooled,) = {p.name.split(".")[0] for p in debug.iterdir()}
        session = await manager.create(session_id="mine")
        await manager.close(session.id)
    names = {p.name for p in debug.iterdir()}
    assert {"mine.protocol.jsonl", "mine.events.jsonl"} <= names
    assert not any(name.startswith(pooled) for name in names)
    # The files keep what was written while pooled (its first events, under the pooled id).
    assert (debug / "mine.events.jsonl").read_text()
