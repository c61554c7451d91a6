"""Where a new session runs: the least loaded worker that carries the requested labels.

The registry's copy of the heartbeats gives each worker's load and labels; the candidates are
asked in order on their own subjects, and one that declines (at its cap, or its labels
changed) passes the request on to the next. Only when the copy knows no worker at all (a
gateway that has not seen a heartbeat yet) does the request go to the workers' queue group,
where NATS picks a member and a full one declines: the group also holds workers whose
heartbeats lapsed, and one that is stuck rather than gone (its connection open, nothing
answering) would hold the request for the whole ``create_timeout``. A session being moved
off a lost worker (``exclude``) never goes to the group, which may pick that worker.

Every attempt carries its deadline (``CreateSession.deadline``: now plus ``create_timeout``),
and a worker that gets to the request, or to registering the session, after it refuses
rather than start a session whose creator has given up.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from claudecode.internal import get_logger

from .config import ClusterConfig
from .registry import Registry
from .wire import CreateSession, ErrorBody, Reply, WireError, decode_reply, encode

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS

__all__ = ("place_session",)

_log = get_logger("claudecode.adapter.cluster.placement")

#: Queue-group attempts when no worker is known.
_QUEUE_ATTEMPTS = 6


async def _ask(nc: NATS, subject: str, payload: bytes, timeout: float) -> Reply | None:
    from nats.errors import NoRespondersError, TimeoutError

    try:
        msg = await nc.request(subject, payload, timeout=timeout)
    except NoRespondersError:
        return None
    except TimeoutError:
        # NATS or the worker did not answer. A worker that gets to it late refuses (the
        # request's deadline passed), but one whose clock lags this one's by more than the
        # transit may still start it: the caller must not take this for "nothing started".
        return Reply(error=ErrorBody("unavailable", f"no answer on {subject} within {timeout} s"))
    try:
        return decode_reply(msg.data)
    except WireError as exc:
        _log.warning("cluster.malformed_reply", subject=subject, error=str(exc))
        return Reply(error=ErrorBody("internal", "a worker sent a malformed reply"))


def _stamped(command: CreateSession, config: ClusterConfig) -> bytes:
    # Each attempt waits its own ``create_timeout``, so it carries its own deadline: the
    # worker refuses the create once nobody waits for its answer any more.
    return encode(msgspec.structs.replace(command, deadline=time.time() + config.create_timeout))


async def place_session(
    nc: NATS,
    registry: Registry,
    config: ClusterConfig,
    command: CreateSession,
    *,
    exclude: str | None = None,
) -> Reply:
    """Start a session on some worker; the reply of the one that took it, or an error
    (``declined`` when every worker is full or none carries the labels; ``exclude``: a
    worker not to ask, by name or through the queue group)."""
    last: Reply | None = None
    for worker_id in registry.candidates(command.spec.labels, exclude=exclude):
        reply = await _ask(
            nc,
            config.worker_create_subject(worker_id),
            _stamped(command, config),
            config.create_timeout,
        )
        if reply is None:
            continue  # gone since its last heartbeat
        if reply.error is None:
            registry.note_placed(worker_id)
            return reply
        if reply.error.type != "declined":
            return reply
        last = reply
    if registry.workers or exclude is not None:
        if last is not None:
            return last
        wanted = f" with the labels {command.spec.labels}" if command.spec.labels else ""
        return Reply(
            error=ErrorBody("declined", f"no live worker{wanted} has room for the session")
        )
    for _ in range(_QUEUE_ATTEMPTS):
        reply = await _ask(
            nc, config.create_subject, _stamped(command, config), config.create_timeout
        )
        if reply is None:
            break
        if reply.error is None or reply.error.type != "declined":
            return reply
        last = reply
    if last is not None:
        return last
    return Reply(error=ErrorBody("declined", "no worker is available to run the session"))
