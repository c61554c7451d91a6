"""Fencing: a worker that lost a session to another worker stops writing for it.

A worker cut off from NATS long enough is declared dead; its sessions are marked lost and
resumed elsewhere, while its own CLIs may still run. When it comes back it must not publish
events, mirror transcript lines or write registry records for those sessions any more.

JetStream gives what is needed: ``Nats-Expected-Last-Subject-Sequence`` makes a publish
conditional on the subject's newest message being the one the writer knows (the KV bucket's
``update`` is the same header). Each writer of a session's events, transcript or record
remembers the stream sequence of its own last write and sends it with the next one; any
other writer in between (the process that declared the session lost, the new owner) moves
the subject on, and the stale writer's publish is refused with error 10071 ("wrong last
sequence") — checked by the server, whatever the writer's clock or view of the registry.

The server checks the expectation *before* de-duplication (as nats-server 2.15 does),
so a retry of a publish that did land (its acknowledgement was lost) is refused too;
:func:`conditional_publish` tells the two apart by the newest message's ``Nats-Msg-Id``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .wire import MSG_ID_HEADER

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext

    from ._acks import AckInbox

__all__ = (
    "EXPECTED_LAST_SUBJECT_SEQ",
    "FencedError",
    "conditional_publish",
    "is_wrong_last_sequence",
    "last_subject_seq",
)

#: The JetStream header that makes a publish conditional on the subject's newest message.
EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
#: JetStream's error code for a failed expectation ("wrong last sequence").
_WRONG_LAST_SEQUENCE = 10071
#: Seconds an acknowledgement through an :class:`~adapter.cluster._acks.AckInbox` is waited
#: for when no timeout is given (nats-py's JetStream context's default).
_ACK_TIMEOUT = 5.0


class FencedError(Exception):
    """Another process wrote to a subject this writer thought it owned: the session moved
    (it was declared lost and resumed elsewhere). The writer must stop."""


def is_wrong_last_sequence(exc: BaseException) -> bool:
    """Whether ``exc`` is JetStream refusing a conditional write (a publish, or a KV
    ``update``)."""
    from nats.js.errors import KeyWrongLastSequenceError

    return (
        isinstance(exc, KeyWrongLastSequenceError)
        or getattr(exc, "err_code", None) == _WRONG_LAST_SEQUENCE
    )


async def last_subject_seq(
    js: JetStreamContext, stream: str, subject: str
) -> tuple[int, str | None]:
    """The stream sequence of the subject's newest message and its ``Nats-Msg-Id``
    (``(0, None)``: the subject has none)."""
    from nats.js.errors import NotFoundError

    try:
        last = await js.get_last_msg(stream, subject)
    except NotFoundError:
        return 0, None
    assert last.seq is not None
    return last.seq, (last.headers or {}).get(MSG_ID_HEADER)


async def conditional_publish(
    js: JetStreamContext,
    stream: str,
    subject: str,
    payload: bytes,
    headers: dict[str, str],
    expected: int,
    *,
    timeout: float | None = None,
    acks: AckInbox | None = None,
) -> tuple[int, bool]:
    """Publish only if the subject's newest message is still at stream sequence
    ``expected`` (0: the subject is empty). Returns the message's stream sequence and
    whether it had landed before.

    ``headers`` must carry a ``Nats-Msg-Id`` unique to this write: when the server refuses
    the expectation because a message with this id is the newest (a retry after a lost
    acknowledgement), that is a success (``True``: the payload that landed is the earlier
    attempt's).

    ``acks`` publishes through that inbox instead of ``js.publish`` (the same errors, less
    CPU per publish: :mod:`adapter.cluster._acks`).

    Raises:
        FencedError: another writer's message came in between.
    """
    conditional = {**headers, EXPECTED_LAST_SUBJECT_SEQ: str(expected)}
    try:
        # No ``stream=``: nats-py would add a ``Nats-Expected-Stream`` header, which the
        # stream stores with the message and every consumer parses again; the subject
        # belongs to one stream by its prefix, and the expectation below is checked there.
        if acks is not None:
            seq = await acks.publish(
                subject, payload, conditional, _ACK_TIMEOUT if timeout is None else timeout
            )
        else:
            ack = await js.publish(
                subject,
                payload,
                headers=conditional,
                timeout=timeout,  # None: the context's own
            )
            seq = int(ack.seq)
    except Exception as exc:
        if not is_wrong_last_sequence(exc):
            raise
        seq, msg_id = await last_subject_seq(js, stream, subject)
        if msg_id is not None and msg_id == headers.get(MSG_ID_HEADER):
            return seq, True  # ours: it landed before (a retry)
        raise FencedError(
            f"{subject}: another writer's message (stream seq {seq}) came after ours "
            f"({expected}); the session moved elsewhere"
        ) from None
    return seq, False
