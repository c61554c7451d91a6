"""permessage-deflate as the server sends it: a cheaper compressor, and small messages sent
as they are (needs the ``server`` extra; ``serve``'s WebSocket protocol,
:mod:`adapter.commands._ws_protocol`, applies it to every connection).

uvicorn's WebSocket protocol offers permessage-deflate with zlib's default level (6); on the
corpus, zlib was most of what a deflate client cost the server beyond a plain one. Here:

* level 1: about a quarter less zlib time for ~15% more bytes on the wire (JSON events
  compress well at any level);
* a message under :data:`MIN_DEFLATE` bytes goes uncompressed: RFC 7692 lets a sender
  compress message by message (the first frame's RSV1 bit says which), and each
  compress-and-flush has a fixed cost that a few dozen saved bytes do not repay. Every
  conforming client reads both; the compressor's history is not touched by the messages
  it skips, so context takeover stays correct.

What a client receives is the same messages; only their bytes on the wire differ.
"""

from __future__ import annotations

from typing import Any

from websockets.extensions.permessage_deflate import (
    PerMessageDeflate,
    ServerPerMessageDeflateFactory,
)
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol
from websockets.typing import ExtensionParameter

__all__ = ("COMPRESS_SETTINGS", "MIN_DEFLATE", "offer_fast_deflate")

#: Messages shorter than this (bytes) are sent uncompressed.
MIN_DEFLATE = 512
#: zlib settings of the server's compressor (uvicorn's memLevel; level 1, zlib's fastest).
COMPRESS_SETTINGS = {"memLevel": 5, "level": 1}


class _Deflate(PerMessageDeflate):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._skipping = False  # the message being sent went uncompressed

    def encode(self, frame: Frame) -> Frame:
        if frame.opcode is Opcode.CONT:  # the rest of a message: as its first frame went
            return frame if self._skipping else super().encode(frame)
        if frame.opcode.value > 0x7:  # control frames are never compressed
            return frame
        # A whole message (fin) that is short goes as it is; a fragmented one is compressed.
        self._skipping = frame.fin and len(frame.data) < MIN_DEFLATE
        return frame if self._skipping else super().encode(frame)


class _DeflateFactory(ServerPerMessageDeflateFactory):
    def process_request_params(
        self, params: Any, accepted_extensions: Any
    ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, extension = super().process_request_params(params, accepted_extensions)
        ours = _Deflate(
            extension.remote_no_context_takeover,
            extension.local_no_context_takeover,
            extension.remote_max_window_bits,
            extension.local_max_window_bits,
            self.compress_settings,
        )
        return response, ours


def offer_fast_deflate(conn: ServerProtocol) -> None:
    """Make the connection's permessage-deflate this module's, if its server offers it (a
    WebSocket protocol calls this as it starts; uvicorn's settings but the level)."""
    if conn.available_extensions:
        conn.available_extensions = [
            _DeflateFactory(
                server_max_window_bits=12,
                client_max_window_bits=12,
                compress_settings=dict(COMPRESS_SETTINGS),
            )
        ]
