"""Line codec: one complete NDJSON line <-> one typed message. No I/O.

The codec's parts, each in a module of its own:

* :mod:`claudecode._codec.wire`: the wire unions the lines decode into, their decoders, and the
  ``type`` / ``subtype`` tables;
* :mod:`claudecode._codec.decode_inbound`: :func:`decode_line` for the CLI's stdout (never
  raises; the hot path is one typed decode, the careful path runs only when it fails);
* :mod:`claudecode._codec.line_shape`: what a refused line is (malformed, of an unknown type, or
  with content blocks of unknown types), for both directions' careful paths;
* :mod:`claudecode._codec.decode_outbound`: :func:`decode_outbound_line` for the CLI's stdin (fake
  CLIs and tests);
* :mod:`claudecode._codec.encode`: :func:`encode_message`, any message as one NDJSON line.

This module gathers what the rest of the package uses from them.
"""

from __future__ import annotations

from .decode_inbound import SystemEnvelope, decode_line, decode_line_fast, decode_small_line
from .decode_outbound import decode_outbound_line
from .encode import encode_message
from .line_shape import sniff_type
from .wire import MALFORMED_LINE_MAX
from .wire import InboundWire as _InboundWire  # claudecode._stream_lite decodes with it

__all__ = (
    "_InboundWire",
    "decode_line",
    "decode_line_fast",
    "decode_outbound_line",
    "decode_small_line",
    "encode_message",
    "MALFORMED_LINE_MAX",
    "sniff_type",
    "SystemEnvelope",
)
