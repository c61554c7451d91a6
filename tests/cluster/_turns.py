"""One turn through a worker and a gateway backend in this process, for the tests of how
they connect to NATS (credentials, TLS)."""

from __future__ import annotations

from adapter.backend import SessionSpec
from adapter.cluster import ClusterBackend, ClusterConfig, ClusterWorker, NatsSettings
from adapter.config import SessionConfig
from adapter.events import Complete, MessageChunk
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually


async def one_turn_text(
    settings: NatsSettings, config: ClusterConfig, defaults: SessionConfig
) -> str:
    """Start a worker and a backend with ``settings``, run one prompt in a new session
    through them, close the session and return the turn's streamed text."""
    async with (
        ClusterWorker(settings, config, defaults, idle_timeout=None),
        ClusterBackend(settings, config) as backend,
    ):
        # until the worker's first heartbeat reached the backend (the callers' guards bound it)
        await eventually(
            lambda: backend._require().workers, PROCESSES_GUARD, poll=0.05, what="a worker known"
        )
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
