"""Where a new session runs: the least loaded worker that carries the requested labels.

The registry's copy of the heartbeats gives each worker's load and labels; the candidates are
asked in order on their own subjects, and one that declines (at its cap, or its labels
changed) passes the request on to the next. With no candidate known (a gateway that has not
seen a heartbeat yet), the request goes to the workers' queue group, where NATS picks a
member and a full one declines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claudecode._log import get_logger

from .config import ClusterConfig
from .registry import Registry
from .wire import CreateSession, ErrorBody, Reply, WireError, decode_reply, encode

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS

__all__ = ("place_session",)

_log = get_logger("claudecode.adapter.cluster.placement")

#: Queue-group attempts when no worker is known or every known one declined.
_QUEUE_ATTEMPTS = 6


async def _ask(nc: NATS, subject: str, payload: bytes, timeout: float) -> Reply | None:
    from nats.errors import NoRespondersError, TimeoutError

    try:
        msg = await nc.request(subject, payload, timeout=timeout)
    except NoRespondersError:
        return None
    except TimeoutError:
        # NATS or the worker did not answer (a worker that answers late may still start
        # the session: the caller must not take this for "nothing started").
        return Reply(error=ErrorBody("unavailable", f"no answer on {subject} within {timeout} s"))
    try:
        return decode_reply(msg.data)
    except WireError as exc:
        _log.warning("cluster.malformed_reply", subject=subject, error=str(exc))
        return Reply(error=ErrorBody("internal", "a worker sent a malformed reply"))


async def place_session(
    nc: NATS,
    registry: Registry,
    config: ClusterConfig,
    command: CreateSession,
    *,
    exclude: str | None = None,
) -> Reply:
    """Start a session on some worker; the reply of the one that took it, or an error
    (``declined`` when every worker is full or none carries the labels)."""
    payload = encode(command)
    last: Reply | None = None
    for worker_id in registry.candidates(command.spec.labels, exclude=exclude):
        reply = await _ask(
            nc, config.worker_create_subject(worker_id), payload, config.create_timeout
        )
        if reply is None:
            continue  # gone since its last heartbeat
        if reply.error is None:
            registry.note_placed(worker_id)
            return reply
        if reply.error.type != "declined":
            return reply
        last = reply
    for _ in range(_QUEUE_ATTEMPTS):
        reply = await _ask(nc, config.create_subject, payload, config.create_timeout)
        if reply is None:
            break
        if reply.error is None or reply.error.type != "declined":
            return reply
        last = reply
    if last is not None:
        return last
    return Reply(error=ErrorBody("declined", "no worker is available to run the session"))
