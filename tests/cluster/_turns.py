"""One turn through a worker and a gateway backend in this process, for the tests of how
they connect to NATS (credentials, TLS)."""

from __future__ import annotations

import anyio

from adapter.backend import SessionSpec
from adapter.cluster import ClusterBackend, ClusterConfig, ClusterWorker, NatsSettings
from adapter.config import SessionConfig
from adapter.events import Complete, MessageChunk


async def one_turn_text(
    settings: NatsSettings, config: ClusterConfig, defaults: SessionConfig
) -> str:
    """Start a worker and a backend with ``settings``, run one prompt in a new session
    through them, close the session and return the turn's streamed text."""
    async with (
        ClusterWorker(settings, config, defaults, idle_timeout=None),
        ClusterBackend(settings, config) as backend,
    ):
        while True:  # until the worker's first heartbeat reached the backend
            if backend._require().workers:
                break
            await anyio.sleep(0.05)
        info = await backend.create(SessionSpec())
        text = ""
        async with backend.subscribe(info.id, after_seq=0) as events:
            await backend.prompt(info.id, "hello")
            async for event in events:
                if isinstance(event, MessageChunk):
                    text += event.text
                if isinstance(event, Complete):
                    break
        await backend.close(info.id)
        return text
