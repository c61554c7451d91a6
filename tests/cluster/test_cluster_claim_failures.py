"""CLI session claims when things go wrong, against a real nats-server with the fake CLI
behind the workers: a release while NATS does not answer (paused with SIGSTOP) is bounded
and never holds up the end of a session, the gateways' sweep removes what it left; a CLI
that fails to start, a confirm that fails and a worker process killed -9 between claim and
confirm leave no claim and give the client the typed error; NATS paused mid-claim gives
ClusterUnavailableError and a pending claim the server drops after its TTL; two claimers
of one CLI session through separate connections, one wins; a close of a session whose claim
is pending ends it once it has started."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from adapter.backend import CliSessionInUseError, SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterUnavailableError,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
)
from adapter.cluster._claims import RELEASE_BOUND, ResumeClaims
from adapter.config import SessionConfig
from benchmarks.procfs import cmdline, descendants
from claudecode.errors import ClaudeCodeError
from claudecode.testing import fake_cli_command, script
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from ._support import (
    STORED,
    claim_of,
    claims_of,
    fast_config,
    paused,
    processes,
    running,
    start_worker,
    until_no_claim,
    worker_defaults,
)

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def until_claimed(claims: ResumeClaims, cli_session_id: str) -> bytes:
    """Wait until the CLI session is claimed; its value (a hang guard, not a timing). A
    read NATS answers too late (busy with what it got while paused) is read again."""
    from nats.errors import TimeoutError as NatsTimeoutError

    async def claimed() -> bytes | None:
        with contextlib.suppress(NatsTimeoutError):
            return await claim_of(claims, cli_session_id)
        return None

    value: bytes = await eventually(claimed, poll=0.05, what=f"{cli_session_id} claimed")
    return value


def _runs(pid: int, marker: bytes) -> bool:
    """Whether a descendant of ``pid`` has ``marker`` in its command line (the worker has
    other children than its CLIs)."""
    return any(marker in b" ".join(cmdline(child) or ()) for child in descendants(pid))


def _events(logs: list[dict[str, object]], name: str) -> list[int]:
    return [i for i, entry in enumerate(logs) if entry["event"] == name]


async def test_a_release_does_not_wait_for_a_paused_nats(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """With NATS paused and a request timeout of an hour, a release gives up after its own
    short bound (the hang guard would fire long before the request timeout) and leaves the
    claim, which is still its session's when NATS answers again."""
    config = dataclasses.replace(fast_config(), request_timeout=3600.0)
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        claims = claims_of(backend)
        assert claims.release_timeout == RELEASE_BOUND < HANG_GUARD
        info = await backend.create(SessionSpec(resume=STORED))
        with capture_logs() as logs, paused(nats_server):
            with anyio.fail_after(HANG_GUARD):
                assert not await claims.release(STORED, info.id)
        assert _events(logs, "cluster.claim_release_timed_out")
        assert info.id.encode() == await claim_of(claims, STORED)
        with anyio.fail_after(HANG_GUARD):
            await backend.close(info.id)
        assert await claim_of(claims, STORED) is None


async def test_a_session_ends_before_its_release_and_a_paused_nats_holds_neither(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NATS stops answering just as the worker releases the claim of a session whose CLI went
    (request timeout: an hour). The session has ended by then (gone from the worker, its
    ``ended`` set), the release gives up after its bound, and the claim it left is swept
    once NATS answers again: its holder ended."""
    config = dataclasses.replace(fast_config(), request_timeout=3600.0, claim_sweep_interval=0.5)
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (
        backend,
        (worker,),
    ):
        claims = claims_of(backend)
        info = await backend.create(SessionSpec(resume=STORED))
        assert info.id.encode() == await claim_of(claims, STORED)
        assert worker._claims is not None
        release = worker._claims.release
        seen: list[tuple[bool, bool]] = []

        async def release_with_nats_paused(
            cli_session_id: str, session_id: str, **options: bool
        ) -> bool:
            still_hosted = session_id in worker.session_ids
            with paused(nats_server):
                gone = await release(cli_session_id, session_id, **options)
            seen.append((still_hosted, gone))
            return gone

        monkeypatch.setattr(worker._claims, "release", release_with_nats_paused)
        with capture_logs() as logs:
            await worker._manager.close(info.id)
            await eventually(lambda: seen, HANG_GUARD)
            assert [(False, False)] == seen
            assert _events(logs, "cluster.claim_release_timed_out")
            # The release sent nothing but its read: the gateways' sweep removes the claim.
            await until_no_claim(claims, STORED)
        assert _events(logs, "cluster.claims_swept")
        monkeypatch.undo()
        again = await backend.create(SessionSpec(resume=STORED))
        await backend.close(again.id)


async def test_a_cli_that_fails_to_start_leaves_no_claim(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """The worker cannot start the CLI: the client gets the worker's typed error (not a hang,
    not a claim error), and neither the resume's claim (the gateway's) nor a fresh session's
    (the worker's) is left, so the CLI session can be resumed at once."""
    config = fast_config()
    missing = SessionConfig(cli_path=tmp_path / "no-cli", cwd=tmp_path, permission_timeout=None)
    async with running(nats_server, config, missing) as (backend, _):
        claims = claims_of(backend)
        for spec in (SessionSpec(resume=STORED), SessionSpec()):
            with (
                anyio.fail_after(HANG_GUARD),
                pytest.raises(ClaudeCodeError, match="not an executable file"),
            ):
                await backend.create(spec)
        assert [] == await claims._entries()
        # Free: a claim for it is taken at once.
        await claims.claim(STORED, "next")
        assert b"next placing" == await claim_of(claims, STORED)


async def test_a_confirm_that_fails_leaves_no_claim(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's confirm of the claim fails (its KV write refused or timed out): the
    session is not started, the client gets the error, and the pending claim is released by
    whoever made it (the gateway for a resume, the worker for a fresh session)."""
    config = fast_config()
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (
        backend,
        (worker,),
    ):
        claims = claims_of(backend)
        assert worker._claims is not None

        async def failing_confirm(*args: object) -> None:
            raise TimeoutError("the confirm's write timed out")

        monkeypatch.setattr(worker._claims, "confirm", failing_confirm)
        assert worker._nc is not None
        subscriptions = len(worker._nc._subs)
        for spec in (SessionSpec(resume=STORED), SessionSpec()):
            with anyio.fail_after(HANG_GUARD), pytest.raises(Exception, match="timed out"):
                await backend.create(spec)
        assert [] == await claims._entries()
        # Nothing of the sessions is left on the worker: no session, no command subscription.
        assert not worker.session_ids
        assert subscriptions == len(worker._nc._subs)
        monkeypatch.undo()
        info = await backend.create(SessionSpec(resume=STORED))
        assert info.id.encode() == await claim_of(claims, STORED)
        await backend.close(info.id)


async def test_two_claimers_on_their_own_connections_one_wins(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Claims of one CLI session made at once through two connections (as two workers, or a
    worker and a gateway, make them): exactly one is taken, the other is refused with the
    typed error, whichever order NATS sees them in."""
    config = fast_config()
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        ClusterWorker(settings, config, worker_defaults(tmp_path, script()), idle_timeout=None),
        ClusterBackend(settings, config) as backend,
    ):
        nc = await settings.connect()
        try:
            other = ResumeClaims(nc.jetstream(), config, backend._require())
            await other.open()
            claims = claims_of(backend)

            async def claim(
                by: ResumeClaims, holder: str, cli_session_id: str, outcome: dict[str, list[str]]
            ) -> None:
                try:
                    await by.claim(cli_session_id, holder)
                    outcome["won"].append(holder)
                except CliSessionInUseError:
                    outcome["refused"].append(holder)

            for round_ in range(20):
                cli_session_id = f"race-{round_}"
                outcome: dict[str, list[str]] = {"won": [], "refused": []}
                with anyio.fail_after(HANG_GUARD):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(claim, claims, "first", cli_session_id, outcome)
                        tg.start_soon(claim, other, "second", cli_session_id, outcome)
                won, refused = outcome["won"], outcome["refused"]
                assert 1 == len(won) and 1 == len(refused), (won, refused)
                value = await claim_of(claims, cli_session_id)
                assert value is not None and value.startswith(won[0].encode() + b" ")
        finally:
            await nc.close()


async def test_a_worker_killed_between_claim_and_confirm(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A resume placed on a worker process that is killed -9 while its CLI starts (the
    gateway's claim made, the worker's confirm never written): the client gets the typed
    error once the placement gives up, not a hang; the gateway drops its pending claim, and
    the CLI session can be resumed on another worker at once."""
    config = dataclasses.replace(fast_config(), create_timeout=5.0)
    hanging = fake_cli_command({**script(), "hang_before_init": True}, tmp_path / "hanging")
    settings = NatsSettings(servers=[nats_server.url])
    with processes(tmp_path) as procs:
        start_worker(procs, nats_server, config, "w-doomed", hanging, tmp_path)
        async with ClusterBackend(settings, config) as backend:
            registry = backend._require()
            await eventually(lambda: "w-doomed" in registry.workers, HANG_GUARD)
            claims = claims_of(backend)
            failed: list[BaseException] = []

            async def create() -> None:
                try:
                    await backend.create(SessionSpec(resume=STORED))
                except Exception as exc:
                    failed.append(exc)

            with anyio.fail_after(HANG_GUARD):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(create)
                    # Its CLI is there, never initialized: the worker has not confirmed.
                    doomed = procs.procs["w-doomed"].pid
                    await eventually(lambda: _runs(doomed, STORED.encode()), HANG_GUARD)
                    value = await claim_of(claims, STORED)
                    assert value is not None and value.endswith(b" placing")
                    procs.kill("w-doomed")
            assert len(failed) == 1 and isinstance(failed[0], ClaudeCodeError), failed
            assert await claim_of(claims, STORED) is None
            async with ClusterWorker(
                settings, config, worker_defaults(tmp_path, script()), idle_timeout=None
            ):
                info = await backend.create(SessionSpec(resume=STORED))
                assert info.id.encode() == await claim_of(claims, STORED)
                await backend.close(info.id)


async def test_nats_paused_mid_claim(nats_server: LocalNatsServer, tmp_path: Path) -> None:
    """NATS stops answering while a gateway claims a CLI session: the create fails with
    ClusterUnavailableError (not nats-py's own error, not a hang; also when the caller chose
    the session id, whose check comes first). The claim's write lands
    when NATS answers again, pending: resumes of that CLI session are refused with the typed
    error until the server drops it after its TTL (twice ``create_timeout``), then work."""
    config = dataclasses.replace(fast_config(), request_timeout=1.0, create_timeout=6.0)
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        claims = claims_of(backend)
        with (
            paused(nats_server),
            anyio.fail_after(HANG_GUARD),
            pytest.raises(ClusterUnavailableError, match="claim"),
        ):
            await backend.create(SessionSpec(resume=STORED))
        with (
            paused(nats_server),
            anyio.fail_after(HANG_GUARD),
            pytest.raises(ClusterUnavailableError, match="NATS did not answer"),
        ):
            # With the session id chosen, the first NATS read is whether the id is taken.
            await backend.create(SessionSpec(resume=STORED), session_id="chosen")
        value = await until_claimed(claims, STORED)
        holder, _, state = value.partition(b" ")
        assert b"placing" == state
        with pytest.raises(CliSessionInUseError, match=holder.decode()):
            await backend.create(SessionSpec(resume=STORED))
        await until_no_claim(claims, STORED)
        info = await backend.create(SessionSpec(resume=STORED))
        await backend.close(info.id)


async def test_a_close_while_the_claim_is_pending(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close that reaches a session whose claim is still pending (its caller chose the
    session id; the worker's confirm held back here) waits in the session's command queue:
    the create returns the started session, the close then ends it, and the claim goes."""
    config = fast_config()
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (
        backend,
        (worker,),
    ):
        claims = claims_of(backend)
        assert worker._claims is not None
        confirm = worker._claims.confirm
        confirming, go_on = anyio.Event(), anyio.Event()

        async def held_confirm(cli_session_id: str, session_id: str, revision: int) -> None:
            confirming.set()
            await go_on.wait()
            await confirm(cli_session_id, session_id, revision)

        monkeypatch.setattr(worker._claims, "confirm", held_confirm)
        done: list[str] = []

        async def create() -> None:
            await backend.create(SessionSpec(resume=STORED), session_id="early")
            done.append("created")

        async def close() -> None:
            await backend.close("early")
            done.append("closed")

        def queued() -> bool:
            hosted = worker._hosted.get("early")
            return hosted is not None and hosted.inbox.statistics().current_buffer_used > 0

        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(create)
                await confirming.wait()
                assert b"early placing" == await claim_of(claims, STORED)
                tg.start_soon(close)
                await eventually(queued, HANG_GUARD)
                assert not done
                go_on.set()
        assert ["created", "closed"] == done
        assert "early" not in worker.session_ids
        await until_no_claim(claims, STORED)
