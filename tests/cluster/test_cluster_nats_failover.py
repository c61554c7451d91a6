"""NATS failures: a 3-node cluster with the event stream replicated three times loses nothing
when one node is stopped mid-stream; a gateway reports a NATS outage and recovers; a worker
process given ``--nats-replicas 3`` replicates what it creates three times."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterEventStream,
    EventPublisher,
    LocalNatsCluster,
    LocalNatsServer,
    NatsSettings,
    ensure_event_stream,
)
from adapter.cluster.registry import open_buckets
from adapter.cluster.transcripts import ensure_transcript_stream
from adapter.events import Event, MessageChunk
from adapter.fanout import EventHub
from claudecode.testing import fake_cli_command, script
from tests.support.processes import worker_child
from tests.support.timeouts import RESTART_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow]


async def _ready(js: Any, config: ClusterConfig) -> None:
    # The JetStream meta group elects a leader after the routes are up, then the stream its
    # own: a consumer asked for before that waits for it, beyond a request's timeout on a
    # busy machine. Ready once the stream has a leader and both other copies are current.
    with anyio.fail_after(RESTART_GUARD):
        while True:
            try:
                await ensure_event_stream(js, config)
                cluster = (await js.stream_info(config.event_stream)).cluster
                peers = (cluster.replicas or []) if cluster is not None else []
                current = [getattr(peer, "current", False) for peer in peers]
                if cluster is not None and cluster.leader and current == [True, True]:
                    return
            except Exception:
                pass
            await anyio.sleep(0.5)


async def test_one_node_stopped_mid_stream_loses_nothing(nats_cluster: LocalNatsCluster) -> None:
    import nats

    config = ClusterConfig(prefix=f"c{uuid.uuid4().hex[:8]}", replicas=3)
    # The publisher talks to node 0 first, the subscriber to node 2; node 0 is stopped.
    pub_nc = await nats.connect(nats_cluster.urls, reconnect_time_wait=0.2, dont_randomize=True)
    sub_nc = await nats.connect(
        list(reversed(nats_cluster.urls)), reconnect_time_wait=0.2, dont_randomize=True
    )
    try:
        pub_js, sub_js = pub_nc.jetstream(timeout=5), sub_nc.jetstream(timeout=5)
        await _ready(pub_js, config)
        hub = EventHub("ha")
        publisher = EventPublisher(pub_js, config, "ha")
        stream = ClusterEventStream("ha", 0)
        await stream.start(sub_js, config)
        total = 0
        async with anyio.create_task_group() as tg:
            tg.start_soon(publisher.run, hub)
            for i in range(60):
                hub.publish([MessageChunk(message_id="m", text=f"{i}:{j}") for j in range(5)])
                total += 5
                if i == 20:
                    nats_cluster.servers[0].kill()
                await anyio.sleep(0.01)
            hub.close()
        with anyio.fail_after(RESTART_GUARD):
            got = [e.seq async for e in stream]
        assert list(range(1, total + 1)) == got
        await stream.close()
    finally:
        await pub_nc.close()
        await sub_nc.close()


async def test_a_gateway_reports_a_nats_outage_and_recovers(tmp_path: Path) -> None:
    """NATS stopped: the gateway's readiness says disconnected; NATS back (same store): ready
    again, and a subscription opened before the outage receives what is published after it,
    with nothing lost or repeated."""
    import nats

    config = ClusterConfig(prefix=f"o{uuid.uuid4().hex[:8]}")
    with LocalNatsServer(tmp_path / "nats") as server:
        settings = NatsSettings(servers=[server.url])
        pub_nc = await nats.connect(server.url, reconnect_time_wait=0.2, max_reconnect_attempts=-1)
        try:
            async with ClusterBackend(settings, config) as backend:
                pub_js = pub_nc.jetstream(timeout=5)
                hub = EventHub("out")
                publisher = EventPublisher(pub_js, config, "out")
                await publisher.publish(hub.publish(chunks(3)))
                stream = ClusterEventStream("out", 0)
                await stream.start(backend._js, config)
                assert (await backend.readiness())["ready"]
                server.kill()
                await eventually(lambda: not backend.ready, RESTART_GUARD)
                assert "disconnected" == (await backend.readiness())["nats"]
                server.start()
                await eventually(lambda: backend.ready, RESTART_GUARD)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(publisher.run, hub)
                    hub.publish(chunks(4))
                    hub.close()
                with anyio.fail_after(RESTART_GUARD):
                    got = [e.seq async for e in stream]
                assert list(range(1, 8)) == got
                await stream.close()
        finally:
            await pub_nc.close()


def chunks(n: int) -> list[Event]:
    return [MessageChunk(message_id="m", text=str(i)) for i in range(n)]


async def test_a_worker_given_three_replicas_keeps_three_copies(
    nats_cluster: LocalNatsCluster, tmp_path: Path
) -> None:
    """``worker --nats-replicas 3`` (a process, on the 3-node cluster) where a deployment
    with single copies ran before: the event and transcript streams and the session and
    worker buckets are replicated three times from its start on."""
    import nats

    config = ClusterConfig(prefix=f"r{uuid.uuid4().hex[:8]}")
    cli = fake_cli_command(script(), tmp_path / "fake")
    nc = await nats.connect(nats_cluster.urls, reconnect_time_wait=0.2)
    try:
        js = nc.jetstream(timeout=5)
        with anyio.fail_after(RESTART_GUARD):  # the JetStream meta group elects a leader first
            while True:
                try:
                    await js.account_info()
                    break
                except Exception:
                    await anyio.sleep(0.5)
        # What a deployment on one copy left: every stream and bucket of the prefix.
        await ensure_event_stream(js, config)  # type: ignore[arg-type]
        await ensure_transcript_stream(js, config)  # type: ignore[arg-type]
        await open_buckets(js, config)  # type: ignore[arg-type]
        nats_args = ("--nats-prefix", config.prefix, "--nats-replicas", "3")
        log = tmp_path / "w1.log"
        with worker_child(log, ",".join(nats_cluster.urls), nats_args, "w1", cli):
            await eventually(
                lambda: "worker w1 ready" in log.read_text(errors="replace"), RESTART_GUARD
            )
            streams = (
                config.event_stream,
                config.transcript_stream,
                f"KV_{config.sessions_bucket}",
                f"KV_{config.workers_bucket}",
            )
            replicas = [(await js.stream_info(name)).config.num_replicas for name in streams]
        assert [3, 3, 3, 3] == replicas
    finally:
        await nc.close()
