"""The sans-IO stream-json protocol: bytes in, typed messages out; messages in, bytes out.

Theory of operation. :class:`ClaudeCodeProtocol` never awaits and never touches a socket or a
process; the async session is a short loop around it (as httpcore is around h11). It owns:

* the line framer (:class:`~claudecode._framing.LineBuffer`) and the typed decode of each line;
* the control plane's bookkeeping, in one place:

  - outbound requests (us -> CLI): request-id allocation and the table of pending requests.
    :meth:`start_request` registers a :class:`PendingRequest` and returns it with the bytes to
    write; when the matching ``control_response`` arrives, :meth:`receive_data` resolves it
    (``result`` or ``failure``) and calls its ``on_done`` hook, which is all the async layer
    needs to wake a waiter. At end of input every pending request is failed at once.
  - inbound requests (CLI -> us): each ``control_request`` is remembered until answered;
    ``control_cancel_request`` forgets it (and is still delivered, so the session can cancel
    the callback). Answering a request that was cancelled returns no bytes — the CLI
    ignores late answers anyway; answering one that never existed, or twice, is a
    :class:`~claudecode.errors.UsageError`. A request the host answers by itself because
    nobody did in time (:meth:`expire`) counts as cancelled for whoever answers it later:
    that late answer returns no bytes either, it lost a race it could not see.

Errors say who is to blame: caller mistakes raise :class:`UsageError`; anything the CLI
writes that we cannot decode comes out as a :class:`MalformedLine` or
:class:`UnknownMessage` *message* and the stream goes on.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from ._codec import (
    SystemEnvelope,
    decode_line,
    decode_line_fast,
    decode_small_line,
    encode_message,
    sniff_type,
)
from ._framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine
from .content import LARGE_TEXT_BYTES
from .control import (
    OutboundControlCancelRequest,
    OutboundControlRequest,
    OutboundControlResponse,
    OutboundMessage,
)
from .errors import UsageError
from .messages import (
    ControlCancelRequest,
    ControlFailure,
    ControlSuccess,
    InboundControlRequest,
    InboundControlResponse,
    InboundMessage,
    MalformedLine,
)

__all__ = ("ClaudeCodeProtocol", "PendingRequest", "request_subtype")

_MAX_REMEMBERED_CANCELLED = 1024
_CONTROL_KINDS = frozenset({InboundControlResponse, InboundControlRequest, ControlCancelRequest})
#: What the per-line loop must look at again: control messages and ``system`` envelopes.
_SPECIAL_KINDS = frozenset({SystemEnvelope, *_CONTROL_KINDS})


def request_subtype(body: Any) -> str:
    """The ``subtype`` tag of a control request body struct."""
    tag = getattr(type(body), "__struct_config__", None)
    if tag is not None and isinstance(tag.tag, str):
        return tag.tag
    subtype = getattr(body, "subtype", None)
    if isinstance(subtype, str):
        return subtype
    raise UsageError(f"{type(body).__name__} is not a control request body")


class PendingRequest:
    """An outbound control request waiting for its answer.

    ``done`` turns true exactly once; then either ``result`` (the CLI's success body, possibly
    ``None``) or ``failure`` (an error answer or, with ``exited`` set, the end of the stream)
    is filled in. ``on_done`` is called at that moment; the async layer sets it.
    """

    __slots__ = ("done", "exited", "failure", "on_done", "request_id", "result", "subtype")

    def __init__(self, request_id: str, subtype: str) -> None:
        self.request_id = request_id
        self.subtype = subtype
        self.done = False
        self.result: dict[str, Any] | None = None
        self.failure: ControlFailure | None = None
        self.exited = False
        self.on_done: Callable[[], None] | None = None

    def _finish(self) -> None:
        self.done = True
        if self.on_done is not None:
            self.on_done()

    def __repr__(self) -> str:
        state = "done" if self.done else "pending"
        return f"<PendingRequest {self.request_id} {self.subtype} {state}>"


class ClaudeCodeProtocol:
    """One side (the host's) of a stream-json conversation with the CLI, without I/O.

    Args:
        max_line_bytes: the longest stdout line accepted; longer lines become
            ``MalformedLine(reason="too_long")`` and are skipped.
    """

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._framer = LineBuffer(max_line_bytes)
        self._counter = itertools.count(1)
        self._salt = secrets.token_hex(4)
        self._outbound: dict[str, PendingRequest] = {}
        self._inbound: dict[str, InboundControlRequest] = {}
        self._cancelled: dict[str, None] = {}
        self._line_number = 0
        self._eof = False
        # The strict decoders of the hot path (the adapter's session swaps them: see
        # claudecode._stream_lite); a line they refuse takes the careful path either way.
        self._decode_fast: Callable[[Any], Any] = decode_line_fast
        self._decode_small: Callable[[Any], Any] = decode_small_line

    # -- receiving -------------------------------------------------------------------

    @property
    def at_eof(self) -> bool:
        """True once end of input was received."""
        return self._eof

    @property
    def pending_requests(self) -> list[PendingRequest]:
        """Outbound control requests still waiting for their answer."""
        return list(self._outbound.values())

    @property
    def open_inbound_requests(self) -> list[InboundControlRequest]:
        """Control requests from the CLI that nobody has answered yet, oldest first."""
        return list(self._inbound.values())

    def open_inbound_request(self, request_id: str) -> InboundControlRequest | None:
        """The open control request from the CLI with this id; ``None`` once it was answered
        or cancelled (or when there never was one)."""
        return self._inbound.get(request_id)

    def receive_data(self, data: bytes) -> list[InboundMessage]:
        """Feed bytes from the CLI's stdout; return the messages they completed, in order.

        ``b""`` means end of input: a trailing unterminated line is decoded, and every
        pending outbound request is failed (``exited`` set) and resolved.

        ``control_response`` messages are consumed here (they resolve their
        :class:`PendingRequest`); a response to an unknown request id is returned as is.
        Everything else, control requests and cancellations included, is returned.
        """
        if self._eof:
            raise UsageError("receive_data() after end of input")
        out: list[InboundMessage] = []
        number = self._line_number
        append = out.append
        # Any: a message, a system envelope or whatever the careful path makes of the line.
        decode = self._decode_fast
        if len(data) + self._framer.buffered > LARGE_TEXT_BYTES:
            decode = self._decode_small  # a line may be huge: decode_line keeps its text lazy
        special = _SPECIAL_KINDS
        message: Any
        for item in self._framer.feed(data):
            number += 1
            # The common line is one typed decode; everything else (blank, oversized, not
            # JSON, unknown or repaired lines) fails it and takes the careful path.
            try:
                message = decode(item)
            except Exception:
                message = self._odd_line(item, number)
                if message is None:
                    continue
            if message.__class__ in special:
                if message.__class__ is SystemEnvelope:
                    message = decode_line(item, number)  # ``system`` lines: by subtype
                if message.__class__ in _CONTROL_KINDS and not self._control(message):
                    continue
            append(message)
        self._line_number = number
        if not data:
            self._eof = True
            for pending in list(self._outbound.values()):
                pending.exited = True
                pending._finish()
            self._outbound.clear()
        return out

    @staticmethod
    def _odd_line(item: bytes | OversizedLine, number: int) -> InboundMessage | None:
        """A line the fast decode refused: ``None`` for a blank one, else what it is."""
        if item.__class__ is not bytes:
            assert isinstance(item, OversizedLine)
            return MalformedLine(
                line_number=item.line_number,
                line=item.head,
                reason="too_long",
                error=f"line of {item.size} bytes exceeds the limit; skipped",
                type_hint=sniff_type(item.head + b"\n" + item.tail),
            )
        assert isinstance(item, bytes)
        if not item or item.isspace():
            return None
        return decode_line(item, number)

    def _control(self, message: InboundMessage) -> bool:
        """Bookkeeping for a control message; ``False`` when it was consumed here."""
        if isinstance(message, InboundControlResponse):
            return not self._resolve(message)
        if isinstance(message, InboundControlRequest):
            self._inbound[message.request_id] = message
        elif (
            isinstance(message, ControlCancelRequest)
            and self._inbound.pop(message.request_id, None) is not None
        ):
            self._remember_cancelled(message.request_id)
        return True

    def _resolve(self, message: InboundControlResponse) -> bool:
        response = message.response
        pending = self._outbound.pop(response.request_id, None)
        if pending is None:
            return False
        if isinstance(response, ControlSuccess):
            pending.result = response.response
        else:
            assert isinstance(response, ControlFailure)
            pending.failure = response
        pending._finish()
        return True

    def _remember_cancelled(self, request_id: str) -> None:
        self._cancelled[request_id] = None
        if len(self._cancelled) > _MAX_REMEMBERED_CANCELLED:
            self._cancelled.pop(next(iter(self._cancelled)))

    # -- sending ---------------------------------------------------------------------

    def next_request_id(self) -> str:
        """A fresh request id, unique within this protocol object."""
        return f"req_{next(self._counter)}_{self._salt}"

    def start_request(self, body: Any) -> tuple[PendingRequest, bytes]:
        """Register an outbound control request; return its pending entry and its bytes.

        Raises:
            UsageError: the stream already ended.
        """
        if self._eof:
            raise UsageError("cannot send a control request: the CLI's output has ended")
        request_id = self.next_request_id()
        pending = PendingRequest(request_id, request_subtype(body))
        self._outbound[request_id] = pending
        return pending, encode_message(OutboundControlRequest(request_id=request_id, request=body))

    def abandon_request(self, pending: PendingRequest) -> bytes:
        """Forget a pending request (after a timeout); return a cancel message to write."""
        self._outbound.pop(pending.request_id, None)
        return encode_message(OutboundControlCancelRequest(request_id=pending.request_id))

    def send(self, message: OutboundMessage) -> bytes:
        """Encode ``message`` as one NDJSON line.

        A ``control_response`` must answer an open inbound request: one that the CLI has
        cancelled since yields ``b""`` (nothing to write).

        Raises:
            UsageError: the response answers no known request, or answers one twice.
            TypeError: the message holds something JSON cannot encode (a request it answers
                stays open).
        """
        if isinstance(message, OutboundControlResponse):
            request_id = message.response.request_id
            if request_id not in self._inbound:
                if request_id in self._cancelled:
                    return b""
                raise UsageError(
                    f"control response for {request_id!r}, which is not an open request"
                )
            # Encode first: an answer that cannot be encoded leaves the request open.
            data = encode_message(message)
            del self._inbound[request_id]
            return data
        return encode_message(message)

    def expire(self, response: OutboundControlResponse) -> bytes:
        """Encode the host's own answer to an open request that nobody answered in time.

        The request is closed as :meth:`send` closes it, and a later answer to it yields
        ``b""`` as one to a cancelled request does.

        Raises:
            UsageError: the response answers no open request (answered, cancelled, unknown).
        """
        request_id = response.response.request_id
        if request_id not in self._inbound:
            raise UsageError(f"cannot expire {request_id!r}, which is not an open request")
        data = self.send(response)
        self._remember_cancelled(request_id)
        return data

    def send_many(self, messages: Iterable[OutboundMessage]) -> bytes:
        """Encode several messages into one buffer (one write for the transport)."""
        return b"".join(self.send(m) for m in messages)
