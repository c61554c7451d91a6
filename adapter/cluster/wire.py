"""What crosses NATS: event batches, commands and their answers, registry records.

Everything is msgspec JSON. Decoding anything that arrives from the wire goes through
:func:`decode_batch`, :func:`decode_command`, :func:`decode_reply`, :func:`decode_record`
and :func:`decode_worker`, which raise :class:`WireError` (never anything else) on bytes
that are not what they should be, so a malformed message is logged and dropped by whoever
received it.

An event batch is one JetStream message: a JSON array of events with consecutive ``seq``
(:func:`batch_range` reads the first and last from the body); its ``Nats-Msg-Id`` header is
``<session>:<last seq>`` so a retried publish is de-duplicated by the stream, and it is the
only header a batch carries of its own (every header is stored with the message and parsed
again by every consumer). The end of a session's events is a message with an empty body and
the ``Bridge-End`` header (the last ``seq``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from claudecode import ClaudeCodeError, ControlRequestError, UsageError

from ..backend import CliSessionInUseError, SessionInfo, SessionSpec
from ..events import AnyEvent, Event
from ..images import Image
from ..manager import TooManySessionsError, UnknownSessionError
from ..policies import PermissionDecision
from ..questions import InvalidAnswerError
from ..session import UnknownPermissionError

__all__ = (
    "AnswerPermission",
    "AnswerQuestion",
    "batch_range",
    "Close",
    "Command",
    "CreateExpiredError",
    "CreateSession",
    "DeclineQuestion",
    "decode_batch",
    "decode_command",
    "decode_record",
    "decode_reply",
    "decode_worker",
    "encode",
    "encode_batch",
    "encode_events",
    "END_HEADER",
    "error_body",
    "ErrorBody",
    "Interrupt",
    "Label",
    "MSG_ID_HEADER",
    "Prompt",
    "raise_error",
    "Reply",
    "SessionRecord",
    "SetEffort",
    "SetModel",
    "SetPermissionMode",
    "WireError",
    "WorkerInfo",
)

MSG_ID_HEADER = "Nats-Msg-Id"
#: On the end-of-events marker: the session's last seq.
END_HEADER = "Bridge-End"


class WireError(ValueError):
    """Bytes from NATS that are not a valid bridge message (logged and dropped)."""


# -- events -------------------------------------------------------------------------------

_event_list = msgspec.json.Decoder(list[AnyEvent])
_encoder = msgspec.json.Encoder()


def encode_batch(events: list[Event]) -> bytes:
    """One JSON array of events."""
    return _encoder.encode(events)


def encode_events(events: list[Event]) -> list[bytes]:
    """Each event as JSON: a batch is ``b"[" + b",".join(some of them) + b"]"``, so a
    publisher that splits a batch by size encodes every event once."""
    encode = _encoder.encode
    return [encode(event) for event in events]


class _Seq(msgspec.Struct):
    seq: int


_seq_list = msgspec.json.Decoder(list[_Seq])


def batch_range(data: bytes | None) -> tuple[int, int] | None:
    """The first and last ``seq`` of an event batch's body (only the numbers are decoded);
    ``None`` for anything that is not a non-empty batch."""
    if not data:
        return None
    try:
        seqs = _seq_list.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not seqs:
        return None
    return seqs[0].seq, seqs[-1].seq


def decode_batch(data: bytes) -> list[AnyEvent]:
    """The events of one batch, checked to be consecutive.

    Raises:
        WireError: not a JSON array of events, empty, or with a hole in ``seq``.
    """
    try:
        events = _event_list.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireError(f"not an event batch: {exc}") from None
    if not events:
        raise WireError("empty event batch")
    first = events[0].seq
    for offset, event in enumerate(events):
        if event.seq != first + offset:
            raise WireError("event batch with a hole in seq")
    return events


# -- commands -----------------------------------------------------------------------------


class _Command(msgspec.Struct, tag_field="op", kw_only=True, frozen=True):
    pass


class Prompt(_Command, tag="prompt", frozen=True):
    """Send a prompt; ``images`` as their base64 text (``[media type, base64]`` in JSON, as
    the ``(media type, bytes)`` pairs of earlier versions encoded)."""

    text: str
    images: list[Image] = []


class AnswerPermission(_Command, tag="answer_permission", frozen=True):
    """Answer an open permission request."""

    pending_id: str
    behavior: Literal["allow", "allow_always", "deny"]
    message: str = ""
    interrupt: bool = False
    updated_input: dict[str, Any] | None = None

    def decision(self) -> PermissionDecision:
        """As the adapter's :class:`~adapter.PermissionDecision`."""
        return PermissionDecision(self.behavior, self.message, self.interrupt, self.updated_input)


class AnswerQuestion(_Command, tag="answer_question", frozen=True):
    """Answer an open question: question text -> the chosen labels (or free text)."""

    pending_id: str
    answers: dict[str, list[str]] = {}


class DeclineQuestion(_Command, tag="decline_question", frozen=True):
    """Decline an open question (``message``: why, read by the model)."""

    pending_id: str
    message: str | None = None


class Interrupt(_Command, tag="interrupt", frozen=True):
    """Interrupt the running turn."""


class SetModel(_Command, tag="set_model", frozen=True):
    """Use another model from the next turn on."""

    model: str | None = None


class SetEffort(_Command, tag="set_effort", frozen=True):
    """Use another effort level from the next model request on (``None``: the model's
    default). Workers that predate it answer with an error: the command is not decoded."""

    effort: str | None = None


class SetPermissionMode(_Command, tag="set_permission_mode", frozen=True):
    """Switch the CLI's permission mode."""

    mode: str


class Label(_Command, tag="label", frozen=True):
    """Rename and/or archive an open session (unset: unchanged); answered with its info.
    A closed session's record is relabelled by the gateway itself (no worker writes it)."""

    title: str | None = None
    archived: bool | None = None


class Close(_Command, tag="close", frozen=True):
    """End the session."""


class CreateSession(_Command, tag="create", frozen=True):
    """Start a session (to the workers' queue group or one worker's own subject).

    ``session_id``: the bridge id (a resumed lost session keeps its id); ``first_seq``: the
    seq its first event gets (a resumed session continues its numbering); ``created_at``:
    kept from the first start; ``deadline``: when the sender stops waiting for the answer
    (wall-clock epoch seconds, 0 for none). A worker refuses a create whose deadline has
    passed, on receipt and again right before the session is registered, so a create it
    answers late never leaves a session that nobody asked for. Workers that predate the
    field ignore it (msgspec skips unknown fields); a request without it has no deadline.
    """

    spec: SessionSpec = SessionSpec()
    session_id: str | None = None
    first_seq: int = 1
    created_at: float = 0.0
    deadline: float = 0.0
    #: What a resumed lost session was called and cost so far (kept from its record).
    title: str | None = None
    archived: bool = False
    cost_usd: float = 0.0


Command: TypeAlias = (
    Prompt
    | AnswerPermission
    | AnswerQuestion
    | DeclineQuestion
    | Interrupt
    | SetModel
    | Label
    | SetEffort
    | SetPermissionMode
    | Close
    | CreateSession
)
_command = msgspec.json.Decoder(Command)


def decode_command(data: bytes) -> Command:
    """One command.

    Raises:
        WireError: anything else.
    """
    try:
        command: Command = _command.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireError(f"not a command: {exc}") from None
    return command


# -- replies ------------------------------------------------------------------------------

ErrorType: TypeAlias = Literal[
    "unknown_session",
    "too_many_sessions",
    "unknown_permission",
    "cli_session_in_use",
    "usage",
    "control",
    "cli",
    "declined",
    "bad_request",
    "internal",
    "unavailable",
]


class ErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """A typed error: ``type`` says which exception the caller raises (``subtype`` and
    ``code``: a control request the CLI refused)."""

    type: ErrorType
    message: str
    subtype: str | None = None
    code: str | None = None


class Reply(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """The answer to a command: ``error`` unset means done; ``info`` when there is one."""

    error: ErrorBody | None = None
    info: SessionInfo | None = None


_reply = msgspec.json.Decoder(Reply)


def decode_reply(data: bytes) -> Reply:
    """One reply.

    Raises:
        WireError: anything else.
    """
    try:
        return _reply.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireError(f"not a reply: {exc}") from None


def error_body(exc: BaseException) -> ErrorBody:
    """The wire form of an exception a worker caught."""
    if isinstance(exc, UnknownSessionError):
        return ErrorBody("unknown_session", str(exc))
    if isinstance(exc, TooManySessionsError):
        return ErrorBody("too_many_sessions", str(exc))
    if isinstance(exc, UnknownPermissionError):
        return ErrorBody("unknown_permission", str(exc))
    if isinstance(exc, CliSessionInUseError):
        return ErrorBody("cli_session_in_use", str(exc))
    if isinstance(exc, InvalidAnswerError):  # a subtype: older gateways read plain usage
        return ErrorBody("usage", str(exc), "invalid_answer")
    if isinstance(exc, UsageError):
        return ErrorBody("usage", str(exc))
    if isinstance(exc, ControlRequestError):
        return ErrorBody("control", exc.error_message, exc.subtype, exc.error_code)
    if isinstance(exc, ClaudeCodeError):
        return ErrorBody("cli", str(exc))
    return ErrorBody("internal", f"{type(exc).__name__}: {exc}")


def raise_error(error: ErrorBody) -> None:
    """Raise the exception an :class:`ErrorBody` stands for."""
    message = error.message
    if error.type == "unknown_session":
        raise UnknownSessionError(message)
    if error.type in ("too_many_sessions", "declined"):
        raise TooManySessionsError(message)
    if error.type == "unknown_permission":
        raise UnknownPermissionError(message)
    if error.type == "cli_session_in_use":
        raise CliSessionInUseError(message)
    if error.type == "usage" and error.subtype == "invalid_answer":
        raise InvalidAnswerError(message)
    if error.type in ("usage", "bad_request"):
        raise UsageError(message)
    if error.type == "control":
        raise ControlRequestError(error.subtype or "?", message, error.code)
    raise ClaudeCodeError(message)


# -- registry -----------------------------------------------------------------------------


class SessionRecord(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A session's entry in the sessions bucket: the public snapshot and what started it
    (so a lost session can be started again elsewhere)."""

    info: SessionInfo
    spec: SessionSpec = SessionSpec()


class WorkerInfo(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A worker's heartbeat: who it is, its load and its labels; ``clock``: its wall clock
    when it wrote the beat (0: a worker that predates the field), so that the others can
    see a clock far off theirs (create deadlines are wall-clock times)."""

    id: str
    sessions: int = 0
    max_sessions: int = 0
    labels: dict[str, str] = {}
    host: str = ""
    started_at: float = 0.0
    clock: float = 0.0


_record = msgspec.json.Decoder(SessionRecord)
_worker = msgspec.json.Decoder(WorkerInfo)


def decode_record(data: bytes) -> SessionRecord:
    """One session record.

    Raises:
        WireError: anything else.
    """
    try:
        return _record.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireError(f"not a session record: {exc}") from None


def decode_worker(data: bytes) -> WorkerInfo:
    """One worker heartbeat.

    Raises:
        WireError: anything else.
    """
    try:
        return _worker.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireError(f"not a worker heartbeat: {exc}") from None


def encode(value: msgspec.Struct) -> bytes:
    """Any wire struct as JSON."""
    return _encoder.encode(value)


class CreateExpiredError(Exception):
    """A worker refuses a create its sender stopped waiting for (its deadline passed);
    ``body`` is the ``unavailable`` error it answers with."""

    def __init__(self, body: ErrorBody) -> None:
        super().__init__(body.message)
        self.body = body
