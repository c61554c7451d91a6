"""What happens to the sessions of a worker that died.

Every worker and gateway sweeps its copy of the registry once per heartbeat interval. A
session whose owner's heartbeat key is gone is *lost*: the first process to move its record
from the revision it saw to ``status="lost"`` (an optimistic update, so exactly one wins)
tells the session's subscribers — an ``error`` event on the session's stream, and for a turn
that was running, the turn ended as interrupted (never silently replayed) — and, when it can,
starts the session again on another worker with ``--resume`` of the same CLI session, under
the same bridge session id, its events numbered on from where they stopped. The ``error``
is published on the condition that the stream holds nothing newer than what was read, which
fences the old owner off: any event it still publishes afterwards is refused
(:mod:`adapter.cluster.fencing`). A session
created with placement labels is resumed on a worker that carries them if there is one, and
on any other worker otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import msgspec

from claudecode.internal import get_logger

from ..backend import SessionInfo
from ..events import Complete, ErrorEvent, Event
from ._claims import ResumeClaims
from .config import ClusterConfig
from .eventlog import last_published_seq
from .fencing import FencedError, conditional_publish, last_subject_seq
from .placement import place_session
from .registry import Registry
from .transcripts import fence_transcript
from .wire import END_HEADER, MSG_ID_HEADER, CreateSession, SessionRecord, encode_batch

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS

__all__ = ("owner_answers", "recover_lost_session", "sweep_lost_sessions")

_log = get_logger("claudecode.adapter.cluster.recovery")


def _lost_events(info: SessionInfo, first_seq: int) -> list[Event]:
    owner = info.owner or "?"
    events: list[Event] = []
    if info.state in ("busy", "waiting"):
        events.append(
            ErrorEvent(
                message=f"worker {owner} stopped while a turn ran; the turn was interrupted",
                kind="interrupted",
            )
        )
        events.append(
            Complete(
                is_error=True,
                subtype="error_during_execution",
                terminal_reason="worker_lost",
                synthetic=True,
            )
        )
    else:
        events.append(
            ErrorEvent(message=f"worker {owner} stopped; the session was lost", kind="cli_exited")
        )
    for offset, event in enumerate(events):
        event.seq = first_seq + offset
        event.session_id = info.id
    return events


async def owner_answers(nc: NATS, config: ClusterConfig, worker_id: str) -> bool:
    """Whether the worker answers on its own subject within a heartbeat interval.

    A heartbeat key can lapse while its worker runs: its beats did not get through for a
    while (JetStream without a leader for the bucket, a stall), or the key's expiry was
    applied before the beat that renewed it. A worker that is gone does not answer: no
    responders at once when its connection closed, a timeout when its machine vanished."""
    from nats.errors import Error as NatsError

    try:
        await nc.request(
            config.worker_alive_subject(worker_id),
            b"",
            timeout=min(config.heartbeat_interval, config.request_timeout),
        )
    except (NatsError, TimeoutError):
        return False
    return True


async def sweep_lost_sessions(
    nc: NATS,
    registry: Registry,
    config: ClusterConfig,
    *,
    resume: bool,
    claims: ResumeClaims | None,
    own_id: str | None = None,
) -> None:
    """One sweep: every session the registry copy has as lost goes through
    :func:`recover_lost_session`, unless its owner answers (:func:`owner_answers`; the
    owners are asked at once, once per sweep); a failure is logged and the sweep goes on.
    Sessions owned by ``own_id`` are skipped (a worker whose own heartbeat key lapsed
    still runs them)."""
    lost = [
        (record, revision)
        for record, revision in registry.lost_sessions()
        if record.info.owner is not None and record.info.owner != own_id
    ]
    alive: set[str] = set()

    async def ask(owner: str) -> None:
        if await owner_answers(nc, config, owner):
            _log.warning("cluster.owner_answers_without_heartbeat", worker=owner)
            alive.add(owner)

    async with anyio.create_task_group() as tg:
        for owner in {record.info.owner for record, _ in lost}:
            assert owner is not None
            tg.start_soon(ask, owner)
    for record, revision in lost:
        if record.info.owner in alive:
            continue
        try:
            await recover_lost_session(
                nc, registry, config, record, revision, resume=resume, claims=claims
            )
        except Exception as exc:
            _log.warning("cluster.recovery_failed", session_id=record.info.id, error=repr(exc))


async def recover_lost_session(
    nc: NATS,
    registry: Registry,
    config: ClusterConfig,
    record: SessionRecord,
    revision: int,
    *,
    resume: bool = True,
    claims: ResumeClaims | None = None,
) -> bool:
    """Declare one session lost (if this process wins the claim), tell its subscribers and
    resume it elsewhere. Returns whether this process handled it.

    A session resumed elsewhere keeps its CLI session's claim (``claims``); one that ends
    here releases it."""
    info = record.info
    lost = SessionRecord(
        info=msgspec.structs.replace(
            info,
            status="lost",
            state="errored",
            status_reason=f"worker {info.owner} stopped sending heartbeats",
            pending_permissions=(),
        ),
        spec=record.spec,
    )
    if not await registry.claim(lost, revision):
        return False
    _log.warning("cluster.session_lost", session_id=info.id, worker=info.owner)
    js = nc.jetstream(timeout=config.request_timeout)
    stream, subject = config.event_stream, config.event_subject(info.id)
    while True:
        # Numbered after the newest event, and published on the condition that nothing
        # came in between: the owner may still be publishing (it is only cut off from the
        # heartbeats, or slow). Once this is in, any later publish of the old owner is
        # refused (adapter.cluster.fencing).
        expected, _ = await last_subject_seq(js, stream, subject)
        last = await last_published_seq(js, config, info.id)
        events = _lost_events(info, last + 1)
        final = events[-1].seq
        try:
            tail, _ = await conditional_publish(
                js,
                stream,
                subject,
                encode_batch(events),
                {MSG_ID_HEADER: f"{info.id}:{final}"},
                expected,
            )
        except FencedError:
            continue  # the old owner's last batch came in between: number after it
        break
    if info.cli_session_id:
        await fence_transcript(js, config, info.cli_session_id, str(revision))
    reason = "the session has no CLI session id to resume"
    if resume and info.cli_session_id:
        spec = msgspec.structs.replace(
            record.spec,
            resume=info.cli_session_id,
            cli_session_id=None,
            resume_session_at=None,
            fork=False,
        )
        command = CreateSession(
            spec=spec,
            session_id=info.id,
            first_seq=final + 1,
            created_at=info.created_at,
            title=info.title,
            archived=info.archived,
            cost_usd=info.cost_usd,
        )
        reply = await place_session(nc, registry, config, command, exclude=info.owner)
        if reply.error is not None and reply.error.type == "declined" and spec.labels:
            # Labels choose where a session starts; a lost one had better run anywhere.
            unlabelled = msgspec.structs.replace(
                command, spec=msgspec.structs.replace(spec, labels={})
            )
            reply = await place_session(nc, registry, config, unlabelled, exclude=info.owner)
        if reply.error is None:
            _log.info(
                "cluster.session_resumed",
                session_id=info.id,
                worker=reply.info.owner if reply.info else None,
            )
            return True
        reason = f"could not resume: {reply.error.message}"
    elif not resume:
        reason = "resuming lost sessions is off"
    # Nobody takes it: the session ends here.
    await registry.put(
        SessionRecord(
            info=msgspec.structs.replace(
                lost.info, state="closed", status="errored", status_reason=reason
            ),
            spec=record.spec,
        ),
        ttl=config.closed_retention,
    )
    ended = ErrorEvent(message=f"session ended: {reason}", kind="cli_exited")
    ended.seq, ended.session_id = final + 1, info.id
    try:
        tail, _ = await conditional_publish(
            js,
            stream,
            subject,
            encode_batch([ended]),
            {MSG_ID_HEADER: f"{info.id}:{final + 1}"},
            tail,
        )
        await conditional_publish(
            js,
            stream,
            subject,
            b"",
            {MSG_ID_HEADER: f"{info.id}:end:{final + 1}", END_HEADER: str(final + 1)},
            tail,
        )
    except FencedError:
        # A worker took the session after all (its answer to the placement was lost).
        _log.info("cluster.session_taken_meanwhile", session_id=info.id)
        return True
    if claims is not None and info.cli_session_id:
        await claims.release(info.cli_session_id, info.id)
    return True
