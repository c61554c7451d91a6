"""permessage-deflate as the server sends it: short messages uncompressed, the others at
zlib's fastest level; whatever the mix, a client's decoder (the ``websockets`` package's)
reads back every message, with the compressor's history carried across messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode

from adapter.commands.serve import uvicorn_config
from adapter.server.ws.deflate import MIN_DEFLATE, _Deflate
from claudecode.testing import script, text_turn

from ._client import connect, serve

_messages = st.lists(
    st.one_of(
        st.text(max_size=MIN_DEFLATE // 4),
        st.text(min_size=MIN_DEFLATE, max_size=4 * MIN_DEFLATE),
        st.builds(
            lambda n: json.dumps({"type": "event", "delta": "word " * n}), st.integers(0, 400)
        ),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(_messages, st.booleans())
def test_any_messages_read_back_and_only_long_ones_are_compressed(
    messages: list[str], fragment: bool
) -> None:
    # The server's side as negotiated by default: context takeover, 12-bit windows.
    server = _Deflate(False, False, 12, 12, {"memLevel": 5, "level": 1})
    client = PerMessageDeflate(False, False, 12, 12)  # remote: the server's window
    for text in messages:
        data = text.encode()
        if fragment and len(data) > 2:
            # A fragmented message is compressed whole, whatever its size.
            half = len(data) // 2
            first = server.encode(Frame(Opcode.TEXT, data[:half], fin=False))
            rest = server.encode(Frame(Opcode.CONT, data[half:], fin=True))
            assert first.rsv1 and not rest.rsv1
            got = bytes(client.decode(first).data) + bytes(client.decode(rest).data)
        else:
            frame = server.encode(Frame(Opcode.TEXT, data))
            assert frame.rsv1 == (len(data) >= MIN_DEFLATE)
            got = bytes(client.decode(frame).data)
        assert data == got
    ping = Frame(Opcode.PING, b"x")
    assert server.encode(ping) is ping


@pytest.mark.server
def test_a_deflate_client_of_the_server_reads_short_frames_plain_and_long_ones_compressed(
    tmp_path: Path,
) -> None:
    reply = "All the words. " * 200  # one long delta: a message well over MIN_DEFLATE
    with serve(tmp_path, script(text_turn(reply)), config=uvicorn_config) as url:
        c = connect(url, compression="deflate")
        try:
            (extension,) = c.conn.protocol.extensions
            assert isinstance(extension, PerMessageDeflate)
            seen: list[tuple[bool, int]] = []
            decode = extension.decode

            def watching(frame: Frame, *, max_size: int | None = None) -> Frame:
                out = decode(frame, max_size=max_size)
                seen.append((frame.rsv1, len(out.data)))
                return out

            extension.decode = watching  # type: ignore[method-assign]
            sid = c.request({"type": "create_session"})["session_id"]
            c.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
            c.request({"type": "prompt", "session_id": sid, "text": "go"})
            frames = c.until(lambda f: f["type"] == "event" and f["event"]["type"] == "complete")
            text = "".join(
                f["event"].get("text", "")
                for f in frames
                if f["type"] == "event" and f["event"]["type"] == "message_chunk"
            )
            assert reply == text
            assert all(rsv1 == (size >= MIN_DEFLATE) for rsv1, size in seen), seen
            assert any(rsv1 for rsv1, _ in seen) and not all(rsv1 for rsv1, _ in seen)
        finally:
            c.close()
