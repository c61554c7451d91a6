"""When a worker's heartbeat key lapses, against a real nats-server: its sessions are
declared lost only if the worker does not answer on its own subject as well.

* NATS stalls for four heartbeat TTLs while every worker stays up (nats-server paused with
  SIGSTOP: the connections stay open, nothing is answered). The beats sent meanwhile wait
  in the workers' sockets and renew the keys once NATS reads again; a key whose expiry is
  applied first is judged with its worker answering. No session is lost: it keeps its
  owner, and its next turn runs there, its events numbered on with no error event.
* A worker whose beats stop getting through while it runs (its heartbeat writes made to do
  nothing): the sweeps of the gateway and of the other worker find its key gone, ask it,
  and leave its session alone; it works on.
* A worker that is itself stopped (SIGSTOP, so its connection stays open and nothing
  answers: a machine gone without closing its sockets) does not answer either: its
  session is declared lost and resumed on the other worker. (A worker whose process died
  closes its connection, and nobody answers at once: the kill -9 tests.)
* The heartbeat TTL of a deployment restarted with another one reaches the existing
  workers bucket.
* A worker's beat carries its wall clock, and one far off this process's is warned about
  (create deadlines compare the clocks)."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import uuid
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from adapter.backend import SessionSpec
from adapter.cluster import ClusterConfig, LocalNatsServer, NatsSettings
from adapter.cluster.registry import Registry, open_buckets
from adapter.cluster.wire import WorkerInfo, encode
from adapter.events import Complete, ErrorEvent, Event, MessageChunk
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.cluster import until_moved
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually, until_complete, until_event

from ._support import (
    fast_config,
    paused,
    processes,
    running,
    second_gateway,
    start_worker,
    wait_state,
    worker_defaults,
)

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


def _continued(first: list[Event], second: list[Event]) -> None:
    """The second turn ran where the first did: its own text, its events numbered on, and
    no error event in either."""
    assert "two" == "".join(e.text for e in second if isinstance(e, MessageChunk))
    assert first[-1].seq + 1 == second[0].seq
    assert not [e for e in first + second if isinstance(e, ErrorEvent)]


async def test_a_stall_longer_than_the_heartbeat_ttl_loses_no_session(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = fast_config()  # heartbeats every 0.5 s, dead after 1.5 s
    body = script(text_turn("one"), text_turn("two"))
    async with running(nats_server, config, worker_defaults(tmp_path, body), workers=({}, {})) as (
        backend,
        workers,
    ):
        registry = backend._require()
        info = await backend.create(SessionSpec())
        async with backend.subscribe(info.id, after_seq=0) as events:
            await backend.prompt(info.id, "first")
            first = await until_complete(events)
            with capture_logs() as logs:
                with paused(nats_server):
                    # Every heartbeat key outlives its TTL while nothing is answered.
                    await anyio.sleep(4 * config.heartbeat_ttl)
                await eventually(
                    lambda: {w.id for w in workers} <= set(registry.workers), HANG_GUARD
                )
                # Long enough for the sweeps of the gateway and both workers to have judged
                # the keys (a lost session is declared within a TTL and three intervals).
                await anyio.sleep(config.heartbeat_ttl + 4 * config.heartbeat_interval)
            assert [] == [log for log in logs if log["event"] == "cluster.session_lost"]
            record = await registry.get(info.id)
            assert record is not None
            assert ("idle", info.owner) == (record[0].info.status, record[0].info.owner)
            with anyio.fail_after(HANG_GUARD):
                await backend.prompt(info.id, "second")
            second = await until_complete(events)
        _continued(first, second)


async def test_a_running_worker_whose_beats_stop_keeps_its_session(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = fast_config()
    body = script(text_turn("one"), text_turn("two"))
    async with running(nats_server, config, worker_defaults(tmp_path, body), workers=({}, {})) as (
        backend,
        workers,
    ):
        registry = backend._require()
        info = await backend.create(SessionSpec())
        owner = next(w for w in workers if w.id == info.owner)
        async with backend.subscribe(info.id, after_seq=0) as events:
            await backend.prompt(info.id, "first")
            first = await until_complete(events)
            with capture_logs() as logs:
                assert owner.registry is not None

                async def no_beat(*_: object) -> None:
                    pass

                monkeypatch.setattr(owner.registry, "heartbeat", no_beat)
                await eventually(lambda: owner.id not in registry.workers, HANG_GUARD)

                def judged_by_two() -> bool:
                    # The sweeps of the gateway and of the other worker (and again).
                    asked = [
                        log
                        for log in logs
                        if log["event"] == "cluster.owner_answers_without_heartbeat"
                    ]
                    return len(asked) >= 4

                await eventually(judged_by_two, HANG_GUARD)
            assert {owner.id} == {
                log["worker"]
                for log in logs
                if log["event"] == "cluster.owner_answers_without_heartbeat"
            }
            assert [] == [log for log in logs if log["event"] == "cluster.session_lost"]
            record = await registry.get(info.id)
            assert record is not None
            assert ("idle", owner.id) == (record[0].info.status, record[0].info.owner)
            with anyio.fail_after(HANG_GUARD):
                await backend.prompt(info.id, "second")
            second = await until_complete(events)
            monkeypatch.undo()  # it beats again: a candidate for placement again
            await eventually(lambda: owner.id in registry.workers, HANG_GUARD)
        _continued(first, second)


@pytest.mark.slow
async def test_a_stopped_worker_does_not_answer_and_its_session_moves(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"l{uuid.uuid4().hex[:8]}")
    cli = fake_cli_command(script(text_turn("one"), text_turn("two")), tmp_path / "fake")
    with LocalNatsServer(tmp_path / "nats") as server, processes(tmp_path) as procs:
        start_worker(procs, server, config, "wa", cli, tmp_path, "--label", "pin=a")
        start_worker(procs, server, config, "wb", cli, tmp_path)
        async with second_gateway(server, config, 2) as backend:
            with anyio.fail_after(HANG_GUARD):
                info = await backend.create(SessionSpec(labels={"pin": "a"}))
            assert "wa" == info.owner
            stopped = procs.procs["wa"].pid
            async with backend.subscribe(info.id, after_seq=0) as events:
                await backend.prompt(info.id, "first")
                first = await until_complete(events)
                await wait_state(backend, info.id, "idle")  # what the record says when lost
                os.kill(stopped, signal.SIGSTOP)
                try:
                    await until_moved(backend, info.id, "wb", HANG_GUARD)
                    lost = await until_event(events, ErrorEvent)
                    # Idle when it was lost: nothing was interrupted.
                    assert isinstance(lost[-1], ErrorEvent) and "cli_exited" == lost[-1].kind
                    await backend.prompt(info.id, "second")
                    second = await until_complete(events)
                finally:
                    os.kill(stopped, signal.SIGCONT)
        assert isinstance(first[-1], Complete)
        # The second worker's CLI runs its script from the start: its first turn.
        assert "one" == "".join(e.text for e in second if isinstance(e, MessageChunk))
        seqs = [e.seq for e in first + lost + second]
        assert list(range(1, len(seqs) + 1)) == seqs


async def test_a_new_heartbeat_ttl_reaches_an_existing_bucket(
    nats_server: LocalNatsServer,
) -> None:
    """The workers bucket's age limit is the heartbeat TTL: a process started with another
    TTL updates it (longer, and shorter than the bucket's de-duplication window too), and
    one with the same TTL changes nothing."""
    config = fast_config()  # TTL 1.5 s
    nc = await NatsSettings(servers=[nats_server.url]).connect()
    try:
        js = nc.jetstream()
        stream = f"KV_{config.workers_bucket}"
        await open_buckets(js, config)
        assert 1.5 == (await js.stream_info(stream)).config.max_age
        for ttl in (4.0, 1.2):
            with capture_logs() as logs:
                await open_buckets(js, dataclasses.replace(config, heartbeat_ttl=ttl))
            now = (await js.stream_info(stream)).config
            assert (ttl, max(1.0, ttl)) == (now.max_age, now.subject_delete_marker_ttl)
            assert ttl >= (now.duplicate_window or 0)
            assert ["cluster.bucket_changed"] == [log["event"] for log in logs]
            assert {"max_age": ttl} == {k: v for k, v in logs[0]["after"].items() if k == "max_age"}
        with capture_logs() as logs:
            await open_buckets(js, dataclasses.replace(config, heartbeat_ttl=1.2))
        assert [] == logs
    finally:
        await nc.close()


class _Entry:
    """A KV watcher's entry of the workers bucket."""

    def __init__(self, worker: WorkerInfo) -> None:
        self.key = worker.id
        self.operation = None
        self.value = encode(worker)


def test_a_worker_clock_far_off_is_warned_about_once() -> None:
    """Create deadlines compare wall clocks: a beat whose clock is further off than a
    heartbeat interval and a margin gets one warning per worker; clocks in step, and
    workers that predate the field, get none."""
    config = ClusterConfig()
    registry = Registry(None, config)  # type: ignore[arg-type]  # no NATS: entries by hand
    now = time.time()
    beats = [
        WorkerInfo(id="in-step", clock=now + 0.2),
        WorkerInfo(id="old"),
        WorkerInfo(id="ahead", clock=now + 90),
        WorkerInfo(id="ahead", clock=now + 91),
        WorkerInfo(id="behind", clock=now - 30),
    ]
    with capture_logs() as logs:
        for beat in beats:
            registry._worker_entry(_Entry(beat))
    warned = [
        (log["worker"], round(log["ahead_by"])) for log in logs if log["log_level"] == "warning"
    ]
    assert [("ahead", 90), ("behind", -30)] == warned
    assert {"in-step", "old", "ahead", "behind"} == set(registry.workers)


async def test_a_worker_beat_carries_its_clock(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    async with running(nats_server, fast_config(), worker_defaults(tmp_path, script())) as (
        backend,
        workers,
    ):
        beat = backend._require().workers[workers[0].id]
        assert abs(beat.clock - time.time()) < 60  # the worker's wall clock, not 0
