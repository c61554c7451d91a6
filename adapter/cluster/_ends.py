"""Which gateway records a session's end: the first to claim it, in a KV bucket.

Every gateway watches every session of the deployment, so each one sees a session close;
its audit log's ``session_end`` record must be written once per deployment, not once per
gateway. A gateway writes it only after a KV ``create`` of the session's id in
``<prefix>_ends`` succeeded (refused when the key exists, so of N gateways one wins).

Not the gateway that created the session: it may have stopped since, and the end would go
unrecorded. Not the worker: the audit log is the gateways' (``serve --audit-log``), and a
session lost with its worker ends without one.

A claim expires (per-message TTL), so the bucket does not grow without end, but only well
after the closed record it answers for (``closed_retention``): a closed record delivered
again (a gateway's registry watch started anew after NATS came back) finds it claimed.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from claudecode.internal import get_logger

from .config import ClusterConfig

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext
    from nats.js.kv import KeyValue

__all__ = ("EndClaims", "claim_ttl")

_log = get_logger("claudecode.adapter.cluster.ends")


def claim_ttl(config: ClusterConfig) -> int:
    """Seconds an end's claim lives: twice the closed record's, and an hour at least."""
    return int(max(2 * config.closed_retention, 3600.0))


class EndClaims:
    """The ``<prefix>_ends`` bucket, opened (created) on first use. A claim's value names
    the process that holds it (host and pid), for whoever looks for its audit record."""

    def __init__(self, js: JetStreamContext, config: ClusterConfig) -> None:
        self._js = js
        self.config = config
        self._holder = f"{socket.gethostname()}:{os.getpid()}".encode()
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            from nats.js.errors import BucketNotFoundError

            name = self.config.ends_bucket
            try:
                self._kv = await self._js.key_value(name)
            except BucketNotFoundError:
                # nats-py makes every bucket with per-message TTLs allowed.
                self._kv = await self._js.create_key_value(
                    bucket=name, history=1, replicas=self.config.replicas
                )
        return self._kv

    async def claim(self, session_id: str) -> bool:
        """Whether this gateway records the end of ``session_id`` (it claimed it first).

        Raises:
            Exception: NATS did not answer (the caller decides: see
                :meth:`adapter.owners.OwnedBackend.auditing_ends`).
        """
        from nats.js.errors import KeyWrongLastSequenceError

        kv = await self._bucket()
        try:
            await kv.create(session_id, self._holder, msg_ttl=claim_ttl(self.config))
        except KeyWrongLastSequenceError:
            _log.debug("cluster.end_recorded_elsewhere", session_id=session_id)
            return False
        return True
