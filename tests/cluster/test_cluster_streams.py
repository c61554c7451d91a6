"""Workers and gateways starting at once on a JetStream store that is nearly reserved.

nats-server checks the storage of a stream's ``max_bytes`` before it notices that the stream
to add already exists, so every process after the first one that *added* the event and
transcript streams again failed with "insufficient storage resources" once the streams'
reservations filled most of the store (by default 75% of the free disk): two of three
workers of a run never started. The streams are now looked up first and added only when
missing.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from adapter.cluster import ClusterConfig, LocalNatsServer
from adapter.cluster.eventlog import ensure_event_stream
from adapter.cluster.transcripts import ensure_transcript_stream

pytestmark = [pytest.mark.nats, pytest.mark.anyio]


class SmallStoreServer(LocalNatsServer):
    """A nats-server whose JetStream store holds the two streams' reservations once (the
    limits are reservations, not disk written: nothing this size is allocated)."""

    def _config(self) -> str:
        return super()._config().replace("store_dir:", "max_file_store: 10G, store_dir:", 1)


async def _connect(url: str) -> Any:
    import nats

    return await nats.connect(url)


async def test_second_process_finds_streams_in_a_nearly_full_store(tmp_path: Path) -> None:
    # 1 GiB + 8 GiB reserved of the server's 10 GiB store
    config = ClusterConfig(
        prefix=f"t{uuid.uuid4().hex[:10]}", event_max_bytes=1 << 30, transcript_max_bytes=8 << 30
    )
    with SmallStoreServer(tmp_path / "nats") as server:
        first, second = await _connect(server.url), await _connect(server.url)
        try:
            for nc in (first, second):  # the first worker, then the next one
                js = nc.jetstream()
                await ensure_event_stream(js, config)
                await ensure_transcript_stream(js, config)
            js = second.jetstream()
            info = await js.stream_info(config.event_stream)
            assert info.config.max_bytes == config.event_max_bytes
            # A new stream that does not fit is still refused, with the server's error.
            from nats.js.errors import APIError

            other = ClusterConfig(prefix=f"t{uuid.uuid4().hex[:10]}", transcript_max_bytes=8 << 30)
            with pytest.raises(APIError, match="insufficient storage"):
                await ensure_transcript_stream(js, other)
        finally:
            await first.close()
            await second.close()


async def test_changed_limits_still_update_the_stream(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"t{uuid.uuid4().hex[:10]}")
    with LocalNatsServer(tmp_path / "nats") as server:
        nc = await _connect(server.url)
        try:
            js = nc.jetstream()
            await ensure_event_stream(js, config)
            smaller = ClusterConfig(
                prefix=config.prefix,
                event_max_age=3600.0,
                event_max_bytes=config.event_max_bytes // 2,
            )
            await ensure_event_stream(js, smaller)
            info = await js.stream_info(config.event_stream)
            assert info.config.max_bytes == smaller.event_max_bytes
            assert info.config.max_age == pytest.approx(3600.0)
        finally:
            await nc.close()
