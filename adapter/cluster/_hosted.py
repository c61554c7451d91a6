"""What a worker keeps per session it runs, and the small helpers its handlers share."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from claudecode.internal import get_logger

from ..backend import SessionSpec, clean_title
from ..config import SessionConfig
from ..events import Complete, Event
from ..session import AgentSession
from ._sessions import info_of
from .wire import Reply, SessionRecord, encode

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.msg import Msg

    from .eventlog import EventPublisher
    from .transcripts import TranscriptMirror

__all__ = ("COMMAND_QUEUE", "Hosted", "cli_env", "respond")

_log = get_logger("claudecode.adapter.cluster.worker")

#: Commands that may wait for a session; beyond, the sender gets a ``usage`` error.
COMMAND_QUEUE = 64


class Hosted:
    """What the worker keeps per session."""

    def __init__(self, session: AgentSession, spec: SessionSpec, first_seq: int, created: float):
        self.session = session
        self.spec = spec
        self.offset = first_seq - 1
        self.created_at = created
        self.changed = anyio.Event()
        self.sub: Any = None
        # Commands run in order, one at a time, in the session's own task (not in the NATS
        # callback, which unsubscribing would cancel mid-answer).
        self.commands, self.inbox = anyio.create_memory_object_stream[Any](COMMAND_QUEUE)
        self.drained = anyio.Event()
        self.ended = anyio.Event()
        self.finalized = anyio.Event()
        #: The revision of this worker's last write of the session's record (None: none
        #: yet); later writes are conditional on it.
        self.revision: int | None = None
        self.publisher: EventPublisher | None = None
        self.mirror: TranscriptMirror | None = None
        #: Cancelled when the session moved to another worker (this one is fenced off).
        self.scope = anyio.CancelScope()
        self.fenced = False
        #: The CLI session whose claim this session holds (released when it ends here).
        self.claimed: str | None = None
        #: :meth:`state` when the record writer last built the record it wrote.
        self.written_state: tuple[Any, ...] | None = None
        #: What people call it (the first prompt's first line until renamed), whether they
        #: put it away, and what its turns cost: in its record, as in one process.
        self.title: str | None = None
        self.archived = False
        self.cost_usd = 0.0

    def label(self, title: str | None, archived: bool | None) -> None:
        """Rename and/or archive (unset: unchanged; an empty title raises ``UsageError``)."""
        if title is not None:
            self.title = clean_title(title)
        if archived is not None:
            self.archived = archived

    def state(self) -> tuple[Any, ...]:
        """What the record says beyond its times and last seq, as a cheap key taken from
        the session (as ``LocalBackend`` does)."""
        session = self.session
        config = session.config
        return (
            session.status,
            session.status_reason,
            tuple(session.pending_permissions),
            session.cli_session_id,
            config.model,
            config.permission_mode,
            self.title,
            self.archived,
            self.cost_usd,
        )

    def record(self, owner: str) -> SessionRecord:
        """The session's registry record now, as ``owner`` writes it."""
        info = info_of(
            self.session,
            owner=owner,
            created_at=self.created_at,
            seq_offset=self.offset,
            spec=self.spec,
            title=self.title,
            archived=self.archived,
            cost_usd=self.cost_usd,
        )
        return SessionRecord(info=info, spec=self.spec)

    def published(self, events: Sequence[Event]) -> None:
        """After each published batch: count what its turns cost, tell the transcript mirror
        the session was active; wake the record's writer only when the state differs from
        the record it last wrote (the times and seq are refreshed on a timer)."""
        for event in events:
            if type(event) is Complete:
                self.cost_usd += event.cost_usd or 0.0
        if self.mirror is not None:
            self.mirror.nudge()
        if self.state() != self.written_state:
            # changed is replaced after each wake-up: set the current one.
            self.changed.set()


async def respond(msg: Msg, reply: Reply) -> None:
    """Answer a request (nothing for a plain publish; a lost connection is only logged)."""
    if not msg.reply:
        return  # a publish, not a request: nobody to answer
    try:
        await msg.respond(encode(reply))
    except Exception as exc:  # the connection is gone: the requester times out
        _log.debug("cluster.respond_failed", error=repr(exc))


def cli_env(config: SessionConfig) -> dict[str, str]:
    """The environment the CLI runs with (where its config directory is)."""
    inherit = config.client_options.get("inherit_env", True)
    return {**(os.environ if inherit else {}), **config.env}
