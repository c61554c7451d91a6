"""A worker's warm pool (``warm=N``), with the fake CLI behind a real nats-server: a create
whose spec asks for nothing else gets a CLI started ahead, under the CLI session id it was
started with (claimed, in the registry); another spec starts cold; the pool refills and goes
with the worker."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import anyio
import pytest

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
)
from adapter.config import SessionConfig
from adapter.events import Complete, MessageChunk
from benchmarks import procfs
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_a_worker_hands_out_warm_clis_with_their_own_cli_session_ids(
    tmp_path: Path, nats_server: LocalNatsServer
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cli = fake_cli_command(script(text_turn("warm hello")), tmp_path / "fake")
    defaults = SessionConfig(cli_path=cli, cwd=work, permission_timeout=None)
    config = ClusterConfig(prefix=f"t{uuid.uuid4().hex[:10]}", heartbeat_interval=0.5)
    settings = NatsSettings(servers=[nats_server.url])
    before = set(procfs.descendants(os.getpid()))
    with anyio.fail_after(120):
        async with (
            ClusterWorker(settings, config, defaults, idle_timeout=None, warm=1) as worker,
            ClusterBackend(settings, config) as backend,
        ):
            await eventually(lambda: worker.pool_status().warm == 1)
            await eventually(lambda: len(backend._require().workers) >= 1)
            warm_pids = set(procfs.descendants(os.getpid())) - before
            info = await backend.create(SessionSpec())
            assert 1 == worker.pool_status().in_use
            assert info.cli_session_id is not None
            assert (await backend.info(info.id)).cli_session_id == info.cli_session_id
            texts: list[str] = []
            async with backend.subscribe(info.id, after_seq=0) as events:
                await backend.prompt(info.id, "hi")
                async for event in events:
                    if isinstance(event, MessageChunk):
                        texts.append(event.text)
                    if isinstance(event, Complete):
                        break
            assert "warm hello" == "".join(texts)
            # Another model: a cold CLI; the pool is refilled meanwhile, with a new id.
            other = await backend.create(SessionSpec(model="claude-other"))
            assert other.cli_session_id not in (None, info.cli_session_id)
            assert 1 == worker.pool_status().in_use
            await eventually(lambda: worker.pool_status().warm == 1)
            pids = set(procfs.descendants(os.getpid())) - before
            assert warm_pids < pids
    assert [] == [pid for pid in pids if procfs.running(pid)]
