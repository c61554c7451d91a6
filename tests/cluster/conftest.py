"""Fixtures of the cluster tests: real ``nats-server`` processes on 127.0.0.1.

Every server gets a port the kernel picks and its own temporary JetStream store, and is
killed (SIGKILL, reaped) when the test ends, whatever happened. nats-py runs on asyncio
only, so these tests do too.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.cluster import ClusterConfig, LocalNatsCluster, LocalNatsServer


@pytest.fixture
def anyio_backend() -> str:
    """nats-py is an asyncio library."""
    return "asyncio"


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[LocalNatsServer]:
    """One JetStream-enabled nats-server on a free loopback port."""
    with LocalNatsServer(tmp_path / "nats") as server:
        yield server


@pytest.fixture
def nats_cluster(tmp_path: Path) -> Iterator[LocalNatsCluster]:
    """Three routed nats-servers with clustered JetStream on loopback ports."""
    with LocalNatsCluster(tmp_path / "nats-cluster", size=3) as cluster:
        yield cluster


@pytest.fixture
def cluster_config() -> ClusterConfig:
    """A config with a prefix of its own (so tests sharing a server never meet)."""
    return ClusterConfig(prefix=f"t{uuid.uuid4().hex[:10]}")


@pytest.fixture
async def nats_client(nats_server: LocalNatsServer) -> AsyncIterator[Any]:
    """A nats-py client connected to :func:`nats_server`."""
    import nats

    nc = await nats.connect(nats_server.url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        yield nc
    finally:
        await nc.close()
