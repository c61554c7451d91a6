"""The WebSocket protocol: typed, versioned frames (pure; no I/O).

Every frame is one JSON object (a text message) with a ``type``. A client sends
:data:`ClientFrame`\\ s, the server sends :data:`ServerFrame`\\ s. A request may carry a
``request_id`` (a string or an integer) that every reply to it echoes. The JSON Schema of
both unions is :func:`ws_schema` (published as ``docs/ws-schema.json``).

Client -> server: ``hello``, ``create_session``, ``list_sessions``, ``subscribe`` (with
``since_seq`` to catch up), ``unsubscribe``, ``prompt``, ``permission_response``,
``question_response``, ``interrupt``, ``set_model``, ``set_permission_mode``,
``close_session``, ``update_session`` (rename, archive), ``delete_session``,
``list_history``, ``get_image`` (an image sent with a prompt), ``ping``.

Server -> client: ``event`` (one adapter event, exactly as ``docs/event-schema.json``
defines it, with its session's ``seq``), ``snapshot`` (the chat view and the session's
state when subscribing), ``session_list`` (on connect, and the answer to ``list_sessions``) /
``session_changed`` (badges: busy, waiting, idle, errored, closed; every session's once the
client asked for the list, else those of its subscriptions), ``history`` (stored
sessions), ``image`` (the answer to ``get_image``), ``ack``, ``error``, ``pong``.

:func:`decode_client_frame` never raises: it returns a frame or a :class:`Error` with one of
the :data:`ErrorCode`\\ s (invalid JSON — not UTF-8, or nested more than 128 levels —,
not an object, no or unknown ``type``, a field of the wrong type, an id over 256 characters,
NUL in a field that reaches the CLI — naming the field), echoing the ``request_id`` when it
could be read (and is at most 256 characters).

Close codes (:data:`CLOSE_CODES`): 1008 policy (Origin refused), 1009 frame too large (in
bytes), 1011 internal error, 4001 the client fell behind: its session queue overflowed, or
it left too many replies unread (reconnect and ``subscribe`` with ``since_seq``), 4401
unauthorized, 4003 unsupported protocol version.
"""

from __future__ import annotations

import re
import typing
from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec

from ...backend import SessionInfo
from ...chat.snapshot import ChatSnapshot
from ...events import AnyEvent, event_schema
from ...history.transcripts import HistorySession
from ..agents import AGENT_NAME_PATTERN
from ..input_checks import (
    MAX_ID_LENGTH,
    MAX_JSON_DEPTH,
    SPEC_TEXT_FIELDS,
    JSONRejected,
    decode_json,
    nul_field,
    too_deep,
)

__all__ = (
    "CLOSE_CODES",
    "CLOSE_FRAME_TOO_LARGE",
    "CLOSE_INTERNAL",
    "CLOSE_POLICY",
    "CLOSE_SLOW_CONSUMER",
    "CLOSE_UNAUTHORIZED",
    "CLOSE_UNSUPPORTED_VERSION",
    "PROTOCOL_VERSION",
    "Ack",
    "AgentInfo",
    "ClientFrame",
    "CloseSession",
    "CreateSession",
    "DeleteSession",
    "Error",
    "ErrorCode",
    "EventFrame",
    "GetImage",
    "Hello",
    "History",
    "ImageData",
    "ImageFrame",
    "Interrupt",
    "ListHistory",
    "ListSessions",
    "PermissionResponse",
    "QuestionResponse",
    "Ping",
    "Pong",
    "Prompt",
    "RequestId",
    "ServerFrame",
    "SessionChanged",
    "SessionList",
    "SetModel",
    "SetPermissionMode",
    "Snapshot",
    "Subscribe",
    "Unsubscribe",
    "UpdateSession",
    "decode_client_frame",
    "encode_frame",
    "event_frame",
    "ws_schema",
)

#: The protocol version this server speaks (``hello.version``).
PROTOCOL_VERSION: Final = 1

CLOSE_POLICY: Final = 1008
CLOSE_FRAME_TOO_LARGE: Final = 1009
CLOSE_INTERNAL: Final = 1011
CLOSE_SLOW_CONSUMER: Final = 4001
CLOSE_UNSUPPORTED_VERSION: Final = 4003
CLOSE_UNAUTHORIZED: Final = 4401
#: Every close code the server uses, with its meaning.
CLOSE_CODES: Final = {
    CLOSE_POLICY: "Origin not allowed",
    CLOSE_FRAME_TOO_LARGE: "frame larger than the limit",
    CLOSE_INTERNAL: "internal server error",
    CLOSE_SLOW_CONSUMER: "client fell behind, left too much unread or stopped reading; "
    "reconnect and subscribe with since_seq",
    CLOSE_UNSUPPORTED_VERSION: "unsupported protocol version",
    CLOSE_UNAUTHORIZED: "missing or wrong bearer token",
}

RequestId: TypeAlias = str | int | None

ErrorCode: TypeAlias = Literal[
    "invalid_json",
    "invalid_frame",
    "unknown_type",
    "unsupported_version",
    "unknown_session",
    "unknown_permission",
    "unknown_agent",
    "not_subscribed",
    "too_many_sessions",
    "history_not_found",
    "session_in_use",
    "bad_request",
    "cli_error",
    "unavailable",
    "forbidden",
    "internal",
]


class _Frame(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True, frozen=True):
    request_id: RequestId = None


# ----------------------------------------------------------------- client -> server


class Hello(_Frame, frozen=True, tag="hello"):
    """Optional first frame: the protocol version the client speaks (answered by an ``ack``
    carrying the server's ``version``, or an ``unsupported_version`` error and close 4003).
    ``client_id`` names the client in the server's log."""

    version: int
    client_id: str | None = None


#: A named agent's name as a frame may carry it (the agents file's rule for names).
AgentName: TypeAlias = Annotated[str, msgspec.Meta(pattern=AGENT_NAME_PATTERN, max_length=64)]


class CreateSession(_Frame, frozen=True, tag="create_session"):
    """Start a session (every field optional; unset ones take the server's defaults).

    ``origin`` names the client in the session list (default ``websocket``; the built-in
    web UI says ``webui``). ``effort`` is the CLI's ``--effort`` (``low`` ... ``max``).
    ``cwd`` must be a directory on the machine that runs the session (else a
    ``bad_request`` before any CLI starts).
    ``resume`` a stored CLI session (``resume_session_at`` a message uuid in it; ``fork`` to
    continue under a new id). Answered by an ``ack`` with ``session_id`` and ``session``.

    ``named_agent`` starts the session from one of the server's named agents (``serve
    --agents``; their names and descriptions come in the ``ack`` to ``hello``): its working
    directory, model, policy, effort, system prompt, tool rules, extra directories and MCP
    servers. The frame's own ``cwd``, ``model``, ``policy``, ``permission_mode`` and
    ``effort``, when set, replace the agent's, as they replace the server's settings without
    one; what only the agents file can set (system prompt, tool rules, directories, MCP
    servers) stays the agent's. A name the server does not offer is an ``unknown_agent``
    error; without ``named_agent`` the session takes the server's settings. The session's
    info (the ``ack``'s ``session``, the list, ``session_changed``, ``snapshot``) names the
    agent in its ``named_agent`` from then on.

    ``kind="terminal"`` starts a terminal session instead: ``agent`` (``claude``, ``codex``,
    ``cursor-agent``, ``gemini``, ``copilot``, ``shell``) in ``cwd`` with ``cols`` x ``rows``
    (``skip_permissions`` passes the agent's flag for it); its screen is served on
    ``/ws/pty/{session_id}``, and ``close_session`` stops it.
    """

    cwd: str | None = None
    model: str | None = None
    policy: str | None = None
    permission_mode: str | None = None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    origin: str | None = None
    resume: str | None = None
    resume_session_at: str | None = None
    fork: bool = False
    kind: Literal["chat", "terminal"] = "chat"
    agent: str | None = None
    named_agent: AgentName | None = None
    cols: int = 80
    rows: int = 24
    skip_permissions: bool = False


class ListSessions(_Frame, frozen=True, tag="list_sessions"):
    """Ask for a ``session_list`` and watch the list: from then on a ``session_changed`` for
    every change of every session (without it, only for the sessions subscribed to)."""


class Subscribe(_Frame, frozen=True, tag="subscribe"):
    """Receive a session's events. Without ``since_seq``: a ``snapshot``, then every event
    after it. With ``since_seq``: the events after that seq (no snapshot), as far back as
    the server's history reaches (else a snapshot)."""

    session_id: str
    since_seq: int | None = None


class Unsubscribe(_Frame, frozen=True, tag="unsubscribe"):
    """Stop receiving a session's events."""

    session_id: str


class ImageData(msgspec.Struct, kw_only=True, frozen=True):
    """An image for a prompt: base64 ``data`` of ``media_type`` (``image/png`` ...)."""

    media_type: str
    data: str


class Prompt(_Frame, frozen=True, tag="prompt"):
    """Send a prompt (queued by the CLI when a turn is running)."""

    session_id: str
    text: str
    images: list[ImageData] = []


class PermissionResponse(_Frame, frozen=True, tag="permission_response"):
    """Answer a ``permission_request`` event: ``allow`` (with an optionally edited
    ``updated_input``), ``allow_always``, or ``deny`` (with a ``message`` for the model)."""

    session_id: str
    pending_id: str
    decision: Literal["allow", "allow_always", "deny"]
    updated_input: dict[str, Any] | None = None
    message: str | None = None


class QuestionResponse(_Frame, frozen=True, tag="question_response"):
    """Answer a ``question_request`` event: ``answers`` maps each question's text to the
    chosen option labels (one free-text answer instead is fine; an empty list or a question
    left out skips it), or ``decline`` it (``message``: why, read by the model). Acked like
    ``permission_response``; answers that do not fit the questions are ``bad_request``."""

    session_id: str
    pending_id: str
    answers: dict[str, list[str]] = {}
    decline: bool = False
    message: str | None = None


class Interrupt(_Frame, frozen=True, tag="interrupt"):
    """Interrupt the running turn."""

    session_id: str


class SetModel(_Frame, frozen=True, tag="set_model"):
    """Use ``model`` from the next turn on (``null``: the default)."""

    session_id: str
    model: str | None = None


class SetPermissionMode(_Frame, frozen=True, tag="set_permission_mode"):
    """Switch the CLI's permission mode (``default``, ``acceptEdits``, ``plan`` ...)."""

    session_id: str
    mode: str


class CloseSession(_Frame, frozen=True, tag="close_session"):
    """End a session."""

    session_id: str


class UpdateSession(_Frame, frozen=True, tag="update_session"):
    """Rename (``title``) and/or archive (``archived``) a session, open or recently closed;
    unset fields change nothing. Answered by an ``ack`` with the ``session`` as it is now
    (and a ``session_changed`` to whoever follows it); a backend that cannot label sessions
    answers ``bad_request``."""

    session_id: str
    title: str | None = None
    archived: bool | None = None


class DeleteSession(_Frame, frozen=True, tag="delete_session"):
    """Delete a closed session, or remove an ended terminal: it leaves the list (whoever
    follows the list gets a last ``session_changed`` with ``removed``). Answered by an
    ``ack``; an open session or a running terminal is a ``bad_request`` (close or stop it
    first)."""

    session_id: str


class ListHistory(_Frame, frozen=True, tag="list_history"):
    """Ask for the stored sessions of ``cwd`` (of every project when unset), newest first."""

    cwd: str | None = None
    limit: int = 50


class GetImage(_Frame, frozen=True, tag="get_image"):
    """Ask for image ``index`` (from 0) of a prompt shown as chat entry ``entry_id`` (a
    ``user`` entry with ``images``), answered by an ``image`` frame. Only images of the
    types PNG, JPEG, GIF and WebP sent through this server's WebSocket protocol, or stored in
    a resumed session's transcript, are kept (a bounded amount); another one is a
    ``bad_request`` error and the client shows the count instead."""

    session_id: str
    entry_id: str
    index: int = 0


class Ping(_Frame, frozen=True, tag="ping"):
    """Answered by ``pong``."""


ClientFrame: TypeAlias = (
    Hello
    | CreateSession
    | ListSessions
    | Subscribe
    | Unsubscribe
    | Prompt
    | PermissionResponse
    | QuestionResponse
    | Interrupt
    | SetModel
    | SetPermissionMode
    | CloseSession
    | UpdateSession
    | DeleteSession
    | ListHistory
    | GetImage
    | Ping
)

# ----------------------------------------------------------------- server -> client


class EventFrame(_Frame, frozen=True, tag="event"):
    """One event of a subscribed session (``event.seq == seq``)."""

    session_id: str
    seq: int
    event: AnyEvent


class Snapshot(_Frame, frozen=True, tag="snapshot"):
    """The session as everyone else sees it: the chat view (entries, todos, usage and cost,
    context window, capabilities), its state and open permission requests. Events with
    ``seq > chat.last_seq`` follow."""

    session_id: str
    session: SessionInfo
    chat: ChatSnapshot


class SessionList(_Frame, frozen=True, tag="session_list"):
    """Every session the client may see."""

    sessions: list[SessionInfo]


class SessionChanged(_Frame, frozen=True, tag="session_changed"):
    """A session was created, changed state, got or lost a permission request, or closed.
    Sent for every session to a connection that asked for the list (``list_sessions``), else
    for the sessions it subscribed to. While many change at once they may come a little
    later, and a change not yet sent is replaced by a newer one: the last is always sent."""

    session: SessionInfo


class History(_Frame, frozen=True, tag="history"):
    """Stored sessions (answer to ``list_history``)."""

    sessions: list[HistorySession]


class AgentInfo(msgspec.Struct, kw_only=True, frozen=True):
    """A named agent a session can start from (``create_session``'s ``named_agent``): its
    ``name`` and what the agents file says it is for."""

    name: str
    description: str


class Ack(_Frame, frozen=True, tag="ack"):
    """A request succeeded. ``session_id`` / ``session``: the session it created or acted on
    (for ``create_session`` with ``resume``, ``session.cli_session_id`` confirms which CLI
    session opened once the CLI reported it); ``version`` and ``agents``: the answer to
    ``hello`` (the named agents ``create_session`` may name, in the agents file's order;
    without a file the one agent ``default``, the server's settings)."""

    session_id: str | None = None
    session: SessionInfo | None = None
    version: int | None = None
    agents: list[AgentInfo] | None = None


class Error(_Frame, frozen=True, tag="error"):
    """A request failed, or a subscription ended (``session_id`` set, no ``request_id``);
    the connection stays open.

    ``unavailable``: the server cannot reach its sessions for now (a cluster gateway lost its
    connection to NATS). Every subscription gets one and ends; requests get one meanwhile.
    Nothing is lost: retry, and ``subscribe`` again with ``since_seq`` set to the last seq
    received once the server is back (its ``/readyz`` says so). ``forbidden``: the caller's
    user may not do this (a terminal without ``terminals``); another user's session answers
    ``unknown_session``, as an id nobody runs.
    """

    code: ErrorCode
    message: str
    session_id: str | None = None


class Pong(_Frame, frozen=True, tag="pong"):
    """The answer to ``ping``."""


class ImageFrame(_Frame, frozen=True, tag="image"):
    """The answer to ``get_image``: one image a person sent, ``data`` in base64 of
    ``media_type`` (one of ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``)."""

    session_id: str
    entry_id: str
    index: int
    media_type: str
    data: str


ServerFrame: TypeAlias = (
    EventFrame | Snapshot | SessionList | SessionChanged | History | ImageFrame | Ack | Error | Pong
)

_client_decoder = msgspec.json.Decoder(ClientFrame)
_CLIENT_TYPES = frozenset(t.__struct_config__.tag for t in typing.get_args(ClientFrame))
_encoder = msgspec.json.Encoder()


def _request_id(obj: dict[Any, Any]) -> RequestId:
    value = obj.get("request_id")
    if isinstance(value, str) and len(value) > MAX_ID_LENGTH:
        return None  # not echoed: replies stay small
    if isinstance(value, str | int) and not isinstance(value, bool):
        return value
    return None


#: Text fields that become a command line, a path or a model name: no NUL in them.
_NUL_FREE: Final[dict[type[Any], tuple[str, ...]]] = {
    CreateSession: (*SPEC_TEXT_FIELDS, "agent"),
    ListHistory: ("cwd",),
    SetModel: ("model",),
    SetPermissionMode: ("mode",),
}
_AGENT_NAME = re.compile(AGENT_NAME_PATTERN)
_TOO_DEEP = f"the frame is nested more than {MAX_JSON_DEPTH} levels deep"


def _checked(frame: ClientFrame) -> ClientFrame | Error:
    """The frame, or an error for what its types cannot say: identifiers short enough to
    echo, no NUL in the fields that reach the CLI or the file system."""
    request_id = frame.request_id
    if isinstance(request_id, str) and len(request_id) > MAX_ID_LENGTH:
        message = f"`$.request_id` is longer than {MAX_ID_LENGTH} characters"
        return Error(code="invalid_frame", message=message)
    session_id = getattr(frame, "session_id", None)
    if isinstance(session_id, str) and len(session_id) > MAX_ID_LENGTH:
        message = f"`$.session_id` is longer than {MAX_ID_LENGTH} characters"
        return Error(code="invalid_frame", message=message, request_id=request_id)
    named = getattr(frame, "named_agent", None)
    if isinstance(named, str) and not _AGENT_NAME.fullmatch(named):
        # The schema's pattern lets a trailing newline through ("$" matches before one).
        message = "`$.named_agent` is not an agent name (letters, digits, '-' and '_')"
        return Error(code="invalid_frame", message=message, request_id=request_id)
    name = nul_field(frame, _NUL_FREE.get(type(frame), ()))
    if name is not None:
        message = f"`$.{name}` must not contain NUL"
        return Error(code="invalid_frame", message=message, request_id=request_id)
    return frame


def decode_client_frame(data: bytes | str) -> ClientFrame | Error:
    """One client frame, or the :class:`Error` to answer it with. Never raises."""
    try:
        frame: ClientFrame = _client_decoder.decode(data)
    except msgspec.DecodeError as exc:
        typed_error = str(exc)
    except RecursionError:
        return Error(code="invalid_json", message=_TOO_DEEP)
    except UnicodeDecodeError:
        return Error(code="invalid_json", message="the frame is not valid UTF-8")
    else:
        if too_deep(data):
            return Error(code="invalid_json", message=_TOO_DEEP)
        return _checked(frame)
    try:
        obj: Any = decode_json(data)
    except JSONRejected as exc:
        return Error(code="invalid_json", message=f"the frame is {exc}")
    except msgspec.DecodeError:
        return Error(code="invalid_json", message="the frame is not valid JSON")
    if not isinstance(obj, dict):
        return Error(code="invalid_frame", message="a frame must be a JSON object")
    request_id = _request_id(obj)
    kind = obj.get("type")
    if not isinstance(kind, str):
        return Error(
            code="invalid_frame", message="a frame needs a string 'type'", request_id=request_id
        )
    if kind not in _CLIENT_TYPES:
        return Error(
            code="unknown_type",
            message=f"unknown frame type {kind[:64]!r}",
            request_id=request_id,
        )
    return Error(code="invalid_frame", message=typed_error[:300], request_id=request_id)


def encode_frame(frame: ServerFrame | ClientFrame) -> bytes:
    """A frame as compact JSON."""
    return _encoder.encode(frame)


def event_frame(event: AnyEvent) -> EventFrame:
    """The ``event`` frame of a published event (its ``session_id`` and ``seq``)."""
    return EventFrame(session_id=event.session_id, seq=event.seq, event=event)


def _external(value: Any, shared: set[str]) -> Any:
    """``value`` with references to the event schema's definitions pointing into it."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in shared:
            return {**value, "$ref": _EVENT_SCHEMA + ref}
        return {k: _external(v, shared) for k, v in value.items()}
    if isinstance(value, list):
        return [_external(v, shared) for v in value]
    return value


_EVENT_SCHEMA = "event-schema.json"


def ws_schema() -> dict[str, Any]:
    """The JSON Schema of the protocol: ``client`` and ``server`` frame unions.

    Events and the tool payloads inside them are defined by the event schema
    (``event-schema.json``, :func:`adapter.events.event_schema`) and referenced from here, so
    this schema changes only when the protocol itself does.
    """
    (client, server), components = msgspec.json.schema_components(
        [ClientFrame, ServerFrame], ref_template="#/$defs/{name}"
    )
    shared = set(event_schema()["$defs"]) & set(components)
    components = {k: v for k, v in components.items() if k not in shared}
    event_frame_def = components["EventFrame"]
    event_frame_def["properties"]["event"] = {
        "$ref": _EVENT_SCHEMA,
        "description": "One event, as the event schema defines it.",
    }
    client, server, components = (_external(x, shared) for x in (client, server, components))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "claudecode-bridge WebSocket protocol",
        "version": PROTOCOL_VERSION,
        "client": client,
        "server": server,
        "$defs": components,
    }
