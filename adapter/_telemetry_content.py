"""Content capture for a :class:`~adapter.TurnTracer` (a mixin): the normalized events and
tool payloads recorded on spans when content capture is on, each text cut to the tracer's
``max_content_chars``. Streaming deltas are never recorded one by one (hundreds per turn).
"""

from __future__ import annotations

import msgspec
from opentelemetry.trace import Span

from normalize import NormalizedPayload

from . import _semconv as sc
from ._telemetry_state import _DELTAS
from .events import Event, encode_event

__all__ = ("ContentCapture",)


class ContentCapture:
    """What content a turn's spans record, and how long it may be (a ``TurnTracer`` mixin)."""

    _capture: bool
    _max_chars: int

    def _capture_event(self, span: Span, event: Event) -> None:
        if not self._capture or isinstance(event, _DELTAS):
            return
        tag = type(event).__struct_config__.tag
        span.add_event(
            sc.EVENT_NORMALIZED,
            {
                sc.CLAUDECODE_EVENT_TYPE: str(tag),
                sc.CLAUDECODE_EVENT_JSON: self._clip(encode_event(event).decode()),
            },
        )

    def _payload_text(self, payload: NormalizedPayload) -> str:
        return self._clip(msgspec.json.encode(payload).decode())

    def _clip(self, text: str) -> str:
        if len(text) <= self._max_chars:
            return text
        return f"{text[: self._max_chars]}\u2026[{len(text) - self._max_chars} more chars]"
