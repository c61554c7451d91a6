"""A private fast path for :mod:`adapter`: ``stream_event`` lines read without their ids.

The adapter's translator reads a ``stream_event`` line's ``event``, ``parent_tool_use_id``
and ``api_message_id`` only: it does not check stream events for duplicates (the CLI never
repeats them), so their ``uuid`` is not needed, nor their ``session_id``. Decoding those
two strings for every token is most of what separates the adapter's decode from a decode
that skips them (~45 ns of ~500 per corpus line, and less memory to allocate and free).

:func:`use_lite_stream_events` makes a :class:`~claudecode.session.Session` (before it
starts) decode the lines its strict fast path accepts as :class:`StreamEventLite` instead
of :class:`~claudecode.messages.StreamEvent`; everything else is decoded as before (a line
the fast path refuses takes the careful path, which gives the public classes). The
session's ``on_messages`` callback then receives ``StreamEventLite`` objects where a
``StreamEvent`` would be: only for a consumer that handles both (the adapter's session). The
public client API and what :meth:`~claudecode.session.Session.receive_batch` returns are
unchanged for every other session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeAlias, Union, get_args

import msgspec

from ._codec import _InboundWire
from .content import LARGE_TEXT_BYTES
from .messages import InboundMessage, StreamEvent, _Inbound
from .stream_events import StreamEventPayload

if TYPE_CHECKING:
    from .session import Session

__all__ = (
    "LiteInbound",
    "StreamEventLite",
    "decode_line_lite",
    "decode_small_line_lite",
    "use_lite_stream_events",
)


class StreamEventLite(_Inbound, frozen=True, tag="stream_event", gc=False):
    """A ``stream_event`` line with only the fields the adapter reads (see the module).

    Its ``session_id``, ``uuid`` and the other fields of
    :class:`~claudecode.messages.StreamEvent` are skipped while decoding.
    """

    event: StreamEventPayload
    parent_tool_use_id: str | None = None
    api_message_id: str | None = None


#: What such a session hands to ``on_messages``.
LiteInbound: TypeAlias = InboundMessage | StreamEventLite

#: The inbound union with :class:`StreamEventLite` in place of ``StreamEvent``.
_LITE_WIRE: Final[Any] = Union[  # built from a tuple of classes
    (*(t for t in get_args(_InboundWire) if t is not StreamEvent), StreamEventLite)
]
_lite_decoder: Final[msgspec.json.Decoder[Any]] = msgspec.json.Decoder(_LITE_WIRE)

#: :data:`claudecode._codec.decode_line_fast` with :class:`StreamEventLite`.
decode_line_lite: Final = _lite_decoder.decode


def decode_small_line_lite(line: Any) -> Any:
    """:func:`claudecode._codec.decode_small_line` with :class:`StreamEventLite`."""
    if len(line) > LARGE_TEXT_BYTES:
        raise ValueError("a huge line: decode it with decode_line")
    return _lite_decoder.decode(line)


def use_lite_stream_events(session: Session) -> None:
    """Make ``session`` (not started yet) decode stream events as :class:`StreamEventLite`."""
    protocol = session._protocol
    protocol._decode_fast = decode_line_lite
    protocol._decode_small = decode_small_line_lite
