"""The life of a CLI session claim (``<prefix>_resumes``) against a real nats-server with the
fake CLI behind the workers: a fresh session's and a fork's CLI session claimed by the worker
that names it (before any registry copy can show it), every claim released when its session
ends however it ends, a pending claim dropped by the server's TTL whatever the gateways'
clocks say, and the gateways' sweep removing what crashes left behind."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import anyio
import msgspec
import pytest
from structlog.testing import capture_logs

from adapter.backend import CliSessionInUseError, SessionInfo, SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
    SessionRecord,
)
from adapter.cluster._claims import claim_key
from claudecode.testing import script, text_turn
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually, until_complete

from ._support import (
    STORED,
    claim_of,
    claims_of,
    fast_config,
    running,
    until_no_claim,
    worker_defaults,
)

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_a_fresh_session_and_a_fork_are_claimed_where_their_ids_are_made(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """The worker claims the CLI session it names for a fresh session and for a fork before
    the session is in the registry: a gateway whose registry copy has not caught up yet
    still cannot resume either while they are open, nor start a session naming the id.
    Closing releases both claims, and nothing of them stays in the bucket."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("hello")))
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        running(nats_server, config, defaults) as (first, _),
        ClusterBackend(settings, config) as second,
    ):
        claims = claims_of(first)
        fresh = await first.create(SessionSpec())
        assert fresh.cli_session_id
        # Claimed, and confirmed (the record is there): no TTL, the bare holder.
        assert fresh.id.encode() == await claim_of(claims, fresh.cli_session_id)
        forked = await first.create(SessionSpec(resume=fresh.cli_session_id, fork=True))
        assert forked.cli_session_id and forked.cli_session_id != fresh.cli_session_id
        assert forked.id.encode() == await claim_of(claims, forked.cli_session_id)
        for open_session in (fresh, forked):
            # As if the second gateway's copy lagged: it has not seen the session yet.
            second._require().sessions.pop(open_session.id, None)
            assert open_session.cli_session_id
            with pytest.raises(CliSessionInUseError, match=open_session.id):
                await second.create(SessionSpec(resume=open_session.cli_session_id))
        # Naming it for a new session is refused by the worker, typed across the wire.
        with pytest.raises(CliSessionInUseError, match=fresh.id):
            await second.create(SessionSpec(cli_session_id=fresh.cli_session_id))
        await first.close(forked.id)
        await first.close(fresh.id)
        assert await claim_of(claims, fresh.cli_session_id) is None
        assert await claim_of(claims, forked.cli_session_id) is None
        # Nothing stays of a released claim: its purge marker expires too.
        marker = await first._js.get_msg(
            f"KV_{config.resumes_bucket}", subject=claims._subject(claim_key(fresh.cli_session_id))
        )
        assert marker.headers is not None
        assert "PURGE" == marker.headers.get("KV-Operation") and marker.headers.get("Nats-TTL")
        again = await second.create(SessionSpec(resume=fresh.cli_session_id))
        assert again.id.encode() == await claim_of(claims, fresh.cli_session_id)
        await second.close(again.id)
        assert await claim_of(claims, fresh.cli_session_id) is None


async def test_a_claim_goes_when_its_session_ends_on_its_worker(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """No gateway closes these sessions: one's CLI crashes, the other's worker shuts down.
    The worker releases each claim (a resumed one, made by the gateway, too)."""
    config = fast_config()
    crashing = worker_defaults(tmp_path, script(text_turn("bye"), crash_after_type="result"))
    settings = NatsSettings(servers=[nats_server.url])
    async with running(nats_server, config, crashing) as (backend, _):
        claims = claims_of(backend)
        resumed = await backend.create(SessionSpec(resume=STORED))
        assert resumed.id.encode() == await claim_of(claims, STORED)
        async with backend.subscribe(resumed.id) as stream:
            await backend.prompt(resumed.id, "hi")
            await until_complete(stream)
        await eventually(lambda: _ended(backend, resumed.id))
        await until_no_claim(claims, STORED)
        async with ClusterWorker(
            settings,
            config,
            worker_defaults(tmp_path, script()),
            idle_timeout=None,
            labels={"role": "second"},
        ) as second:
            await eventually(lambda: second.id in backend._require().workers)
            fresh = await backend.create(SessionSpec(labels={"role": "second"}))
            assert second.id == fresh.owner and fresh.cli_session_id
            assert fresh.id.encode() == await claim_of(claims, fresh.cli_session_id)
        # The worker stopped: it closed its session and released its claim on the way.
        assert await claim_of(claims, fresh.cli_session_id) is None


def _ended(backend: ClusterBackend, session_id: str) -> bool:
    found = backend._require().sessions.get(session_id)
    return found is not None and found[0].info.state in ("closed", "errored")


async def test_a_claim_goes_when_its_session_idles_out(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session its worker closes for idling releases its claim there."""
    config = fast_config()
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        ClusterWorker(settings, config, worker_defaults(tmp_path, script()), idle_timeout=0.5),
        ClusterBackend(settings, config) as backend,
    ):
        await eventually(lambda: backend._require().workers, HANG_GUARD)
        claims = claims_of(backend)
        info = await backend.create(SessionSpec(resume=STORED))
        await eventually(lambda: _ended(backend, info.id), HANG_GUARD)
        await until_no_claim(claims, STORED)


async def test_a_fenced_worker_leaves_the_claim_to_the_session(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A worker whose session's record was written by someone else (the session moved) drops
    the session without releasing its claim: the claim is the session's, wherever it runs."""
    config = fast_config()
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        claims = claims_of(backend)
        info = await backend.create(SessionSpec())
        assert info.cli_session_id
        registry = backend._require()
        found = await registry.get(info.id)
        assert found is not None
        moved = msgspec.structs.replace(found[0].info, owner="elsewhere")
        with capture_logs() as logs:
            await registry.put(SessionRecord(info=moved, spec=found[0].spec))
            await eventually(
                lambda: [e for e in logs if e["event"] == "cluster.session_ended"], HANG_GUARD
            )
        assert [e for e in logs if e["event"] == "cluster.session_fenced"]
        assert info.id.encode() == await claim_of(claims, info.cli_session_id)


async def test_a_lost_session_nobody_resumes_releases_its_claim(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session whose worker died, with resuming lost sessions off: the sweep ends it and
    releases its claim, so its CLI session can be resumed."""
    config = fast_config()
    settings = NatsSettings(servers=[nats_server.url])
    defaults = worker_defaults(tmp_path, script())
    async with (
        ClusterWorker(settings, config, defaults, idle_timeout=None, resume_lost=False),
        ClusterBackend(settings, config, resume_lost=False) as backend,
    ):
        claims = claims_of(backend)
        revision = await claims.claim(STORED, "orphan")
        ghost = SessionRecord(
            info=SessionInfo(
                id="orphan", status="active", state="idle", owner="ghost-worker",
                cli_session_id=STORED, created_at=1.0,
            ),
            spec=SessionSpec(resume=STORED),
        )  # fmt: skip
        await backend._require().put(ghost)
        await claims.confirm(STORED, "orphan", revision)
        await eventually(lambda: _ended(backend, "orphan"), HANG_GUARD)
        await until_no_claim(claims, STORED)
        info = await backend.create(SessionSpec(resume=STORED))
        await backend.close(info.id)


async def test_a_pending_claim_expires_on_the_server_whatever_the_clocks_say(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gateway that died while placing a resume leaves a pending claim and no record: it
    blocks resumes — even through a gateway whose clock runs a day ahead — until the server
    drops it after its TTL (twice ``create_timeout``); the claim holds no wall-clock time."""
    # A TTL far longer than the two claims below take, even on a loaded machine.
    config = dataclasses.replace(fast_config(), create_timeout=4.0)
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        claims = claims_of(backend)
        assert 8 == claims.pending_ttl
        await claims.claim(STORED, "dead-gateways-create")
        assert b"dead-gateways-create placing" == await claim_of(claims, STORED)
        real_time = time.time
        with monkeypatch.context() as skewed:
            skewed.setattr(time, "time", lambda: real_time() + 86_400)
            with pytest.raises(CliSessionInUseError, match="dead-gateways-create"):
                await claims.claim(STORED, "another")
        await until_no_claim(claims, STORED)
        await claims.claim(STORED, "another")
        assert b"another placing" == await claim_of(claims, STORED)


async def test_the_sweep_removes_what_crashes_left_behind(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Confirmed claims whose holder ended (a closed record, no record, a value of an
    earlier version) are purged by the gateway's sweep; a live session's claim and a
    pending claim stay."""
    config = dataclasses.replace(fast_config(), claim_sweep_interval=0.5)
    defaults = worker_defaults(tmp_path, script())
    async with running(nats_server, config, defaults) as (backend, _):
        claims = claims_of(backend)
        live = await backend.create(SessionSpec())
        assert live.cli_session_id
        ended = SessionRecord(
            info=SessionInfo(id="ended", state="closed", status="terminated", cli_session_id="a"),
            spec=SessionSpec(),
        )
        await backend._require().put(ended)
        await claims.kv.put(claim_key("a"), b"ended")
        await claims.kv.put(claim_key("b"), b"gone")
        await claims.kv.put(claim_key("c"), b"legacy 1700000000.000")
        await claims.claim("d", "placing")
        await until_no_claim(claims, "a", "b", "c")
        assert live.id.encode() == await claim_of(claims, live.cli_session_id)
        assert b"placing placing" == await claim_of(claims, "d")
        assert 0 == await claims.sweep()
        with anyio.fail_after(HANG_GUARD):
            await backend.close(live.id)


async def test_a_claims_bucket_without_message_ttls_is_given_them(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A deployment whose claims bucket was made by a client that did not allow per-message
    TTLs: the gateway allows them when it starts, and a pending claim can be taken."""
    from nats.js.api import StreamConfig

    config = fast_config()
    settings = NatsSettings(servers=[nats_server.url])
    nc = await settings.connect()
    try:
        js = nc.jetstream()
        bucket = config.resumes_bucket
        await js.add_stream(
            StreamConfig(
                name=f"KV_{bucket}",
                subjects=[f"$KV.{bucket}.>"],
                max_msgs_per_subject=1,
                allow_rollup_hdrs=True,
                deny_delete=True,
                allow_direct=True,
            )
        )
        async with ClusterBackend(settings, config) as backend:
            assert (await js.stream_info(f"KV_{bucket}")).config.allow_msg_ttl
            claims = claims_of(backend)
            await claims.claim(STORED, "placing-it")
            assert b"placing-it placing" == await claim_of(claims, STORED)
    finally:
        await nc.close()
