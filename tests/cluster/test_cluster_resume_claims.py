"""One open session per stored CLI session across gateways and workers (claims in the
deployment's ``<prefix>_resumes`` KV bucket), against a real nats-server with the fake CLI
behind the workers: two gateways resuming one stored session at once, a fork, a resume after
close, a claim whose holder ended elsewhere, and a lost session resumed by the sweep."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from adapter.backend import CliSessionInUseError, SessionInfo, SessionSpec
from adapter.cluster import ClusterBackend, LocalNatsServer, NatsSettings, SessionRecord
from adapter.cluster._claims import claim_key
from adapter.events import MessageChunk
from claudecode import UsageError
from claudecode.testing import script, text_turn
from tests.support.cluster import until_moved
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually, until_complete

from ._support import fast_config, running, worker_defaults

pytestmark = [pytest.mark.anyio, pytest.mark.nats]

STORED = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


async def test_two_gateways_resume_one_stored_session_once(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Of two gateways resuming one CLI session at once, one wins and the other raises
    CliSessionInUseError; while it is open a resume is refused through either gateway and a
    fork is not; once closed, it resumes again (through the other gateway)."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script())
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        running(nats_server, config, defaults, workers=({}, {})) as (first, _),
        ClusterBackend(settings, config) as second,
    ):
        results: list[SessionInfo | BaseException] = []

        async def resume(gateway: ClusterBackend) -> None:
            try:
                results.append(await gateway.create(SessionSpec(resume=STORED)))
            except CliSessionInUseError as exc:
                results.append(exc)

        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(resume, first)
                tg.start_soon(resume, second)
        [won] = [r for r in results if isinstance(r, SessionInfo)]
        [refused] = [r for r in results if isinstance(r, CliSessionInUseError)]
        assert isinstance(refused, UsageError) and STORED in str(refused)
        assert STORED == won.cli_session_id
        for gateway in (first, second):
            with pytest.raises(CliSessionInUseError, match=won.id):
                await gateway.create(SessionSpec(resume=STORED))
        forked = await second.create(SessionSpec(resume=STORED, fork=True))
        await first.close(won.id)
        again = await second.create(SessionSpec(resume=STORED))
        assert STORED == again.cli_session_id and again.id != won.id
        with pytest.raises(CliSessionInUseError):
            await first.create(SessionSpec(resume=STORED))
        await second.close(again.id)
        await second.close(forked.id)


async def test_a_claim_whose_holder_ended_is_free(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A claim left behind — its session ended without a release (its record is closed), or
    its record expired long ago (no record), or written by an earlier version ("<holder>
    <wall clock>") — does not block a resume; a pending claim without a record yet (a
    create in flight) does."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script())
    async with running(nats_server, config, defaults) as (backend, _):
        claims = backend._claims
        assert claims is not None
        registry = backend._require()
        ended = SessionRecord(
            info=SessionInfo(id="ended", state="closed", status="terminated", cli_session_id="a"),
            spec=SessionSpec(resume="a"),
        )
        await registry.put(ended)
        await claims.kv.put(claim_key("a"), b"ended")
        await claims.kv.put(claim_key("b"), b"gone")
        await claims.kv.put(claim_key("d"), f"legacy {time.time():.3f}".encode())
        await claims.kv.put(claim_key("c"), b"placing placing")
        for stored in ("a", "b", "d"):
            info = await backend.create(SessionSpec(resume=stored))
            assert stored == info.cli_session_id
            entry = await claims.kv.get(claim_key(stored))
            assert info.id.encode() == entry.value  # confirmed: its record is there
        with pytest.raises(CliSessionInUseError, match="placing"):
            await backend.create(SessionSpec(resume="c"))


async def test_a_resumed_session_keeps_its_claim_through_failover(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session resumed on another worker after its worker died is the same bridge
    session: it keeps its claim (a second resume is still refused) and keeps working."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("after failover")))
    async with running(nats_server, config, defaults) as (backend, workers):
        claims = backend._claims
        assert claims is not None
        # A session that resumed STORED through a gateway, on a worker that has died since.
        ghost = SessionRecord(
            info=SessionInfo(
                id="orphan",
                status="active",
                state="idle",
                owner="ghost-worker",
                cli_session_id=STORED,
                created_at=1.0,
            ),
            spec=SessionSpec(resume=STORED),
        )
        await claims.claim(STORED, "orphan")
        await backend._require().put(ghost)
        with pytest.raises(CliSessionInUseError, match="orphan"):
            await backend.create(SessionSpec(resume=STORED))
        resumed = await until_moved(backend, "orphan", workers[0].id, HANG_GUARD)
        assert STORED == resumed.cli_session_id
        with pytest.raises(CliSessionInUseError, match="orphan"):
            await backend.create(SessionSpec(resume=STORED))
        async with backend.subscribe("orphan") as stream:
            await backend.prompt("orphan", "still there?")
            seen = await until_complete(stream)
        assert "after failover" == "".join(e.text for e in seen if isinstance(e, MessageChunk))
        await backend.close("orphan")
        again = await backend.create(SessionSpec(resume=STORED))
        assert STORED == again.cli_session_id


async def test_a_fresh_session_holds_its_cli_session(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session that started its CLI session fresh holds it once the CLI reported its id:
    another gateway's resume of it is refused, a fork is not, and after close it resumes."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("hello")))
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        running(nats_server, config, defaults) as (first, _),
        ClusterBackend(settings, config) as second,
    ):
        fresh = await first.create(SessionSpec())
        async with first.subscribe(fresh.id) as stream:
            await first.prompt(fresh.id, "hi")
            await until_complete(stream)
        cli_id = (await first.info(fresh.id)).cli_session_id
        assert cli_id
        await eventually(lambda: second._require().sessions[fresh.id][0].info.cli_session_id)
        with pytest.raises(CliSessionInUseError, match=fresh.id):
            await second.create(SessionSpec(resume=cli_id))
        forked = await second.create(SessionSpec(resume=cli_id, fork=True))
        await first.close(fresh.id)
        await eventually(lambda: second._require().sessions[fresh.id][0].info.state == "closed")
        again = await second.create(SessionSpec(resume=cli_id))
        assert cli_id == again.cli_session_id
        await second.close(again.id)
        await second.close(forked.id)
