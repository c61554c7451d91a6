"""The ``event`` frame of a published event as text, encoded once for every client.

A session's subscribers share its event objects, so a small identity cache lets the second
and later clients of a session reuse the text the first one's frame was encoded to.
"""

from __future__ import annotations

import collections

from ...events import Event
from .protocol import encode_frame, event_frame

__all__ = ("event_text",)

_ENCODED: collections.OrderedDict[int, tuple[Event, str]] = collections.OrderedDict()
_ENCODED_MAX = 128  # entries; only frames up to _ENCODED_BYTES: at most 8 MiB held
_ENCODED_BYTES = 64 * 1024


def event_text(event: Event) -> str:
    """The ``event`` frame of a published event as text, encoded once for every client of
    the session (subscribers share the event objects; a small identity cache)."""
    hit = _ENCODED.get(id(event))
    if hit is not None and hit[0] is event:
        return hit[1]
    text = encode_frame(event_frame(event)).decode()  # type: ignore[arg-type]
    if len(text) <= _ENCODED_BYTES:
        _ENCODED[id(event)] = (event, text)
        if len(_ENCODED) > _ENCODED_MAX:
            _ENCODED.popitem(last=False)
    return text
