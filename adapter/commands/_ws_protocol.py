"""The WebSocket protocol ``serve`` runs under uvicorn: uvicorn's own (over ``websockets``'
sans-I/O core), changed where a client that stops reading its socket would otherwise be
closed with a code no document names, and whose permessage-deflate costs less CPU
(:mod:`adapter.server.ws.deflate`).

A client that stops reading fills the server's send buffer, and uvicorn then holds every
send of the application, ``websocket.close`` as much as ``websocket.send``, until the buffer
drains. So the application's typed close for a client too slow (4001 on ``/ws``, 1013 on
``/ws/pty``) was never written, and uvicorn's keepalive (a ping every ``ws_ping_interval``,
``ws_ping_timeout`` to answer) failed the connection with 1011 when the client did not
answer, which it cannot while it reads nothing. Two changes:

* A close is written at once, behind what is buffered, even while the buffer is full: it is
  the last frame of the connection, so the buffer stays bounded, and the client reads it
  whenever it resumes, however long it stalled.
* A keepalive that times out closes the connection with the route's slow-consumer code and
  reason, not 1011: a peer that does not answer its pings either reads nothing (and will
  read the close when it resumes: reconnecting and catching up is what it must do) or is
  gone (and reads no close at all). The application is told the client is gone (its sends
  would otherwise wait for room for as long as the client stalls).

A close sent while frames have not reached the client (the send buffer, or the kernel's)
keeps the connection, reading and dropping what the client sends, until the client answers
the close or closes (at most :attr:`WebSocketProtocol.stall_limit`, then it is reset): a
socket closed before the client read what it holds would answer the client's next pong with
a reset that drops the undelivered frames, the close among them.

The subclass leans on the attributes of uvicorn's implementation (``writable``,
``close_sent``, ``close_timer``, ``read_paused``, the keepalive's timers), as of uvicorn 0.53
(the ``server`` extra's floor); the tests in ``tests/server/test_ws_stall.py`` run it.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Final

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from claudecode.internal import get_logger

try:  # the kernel's count of unacknowledged bytes (Unix)
    import fcntl
    import termios
except ImportError:  # pragma: no cover - Windows
    fcntl = termios = None  # type: ignore[assignment]

from ..server.terminal_routes import CLOSE_LAGGING
from ..server.ws.deflate import offer_fast_deflate
from ..server.ws.protocol import CLOSE_SLOW_CONSUMER

__all__ = ("SLOW_CLOSE_PTY", "SLOW_CLOSE_WS", "WebSocketProtocol")

_log = get_logger("claudecode.adapter.ws")

#: What a ``/ws`` client whose send buffer stayed full through a keepalive is closed with.
SLOW_CLOSE_WS: Final = (
    CLOSE_SLOW_CONSUMER,
    "too slow: the client stopped reading; reconnect and subscribe with since_seq",
)
#: The same for a ``/ws/pty`` viewer (it reconnects for a fresh screen).
SLOW_CLOSE_PTY: Final = (CLOSE_LAGGING, "too slow: the viewer stopped reading; reconnect")


def _unsent_in_kernel(transport: asyncio.BaseTransport) -> int:
    """Bytes the kernel holds for the peer that it has not acknowledged (Linux's
    ``SIOCOUTQ``, the same number as ``TIOCOUTQ``); 0 where that cannot be told."""
    sock = transport.get_extra_info("socket")
    request = getattr(termios, "TIOCOUTQ", None) if termios is not None else None
    if sock is None or request is None or not sys.platform.startswith("linux"):
        return 0
    try:
        answer = fcntl.ioctl(sock.fileno(), request, b"\0\0\0\0")
    except (OSError, ValueError):
        return 0
    return int.from_bytes(answer, sys.byteorder, signed=True)


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol with the typed close for a client that stops reading
    (see the module docs)."""

    #: Seconds a client that has not read up to its close may take to answer it: then its
    #: connection is reset, what it never read dropped (its socket and buffers freed).
    stall_limit: float = 600.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A cheaper permessage-deflate: short messages plain, the rest at level 1.
        offer_fast_deflate(self.conn)

    async def send(self, message: Any) -> None:
        if (
            message["type"] != "websocket.close"
            or not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
        ):
            await super().send(message)
            return
        behind = self._behind()
        if self.writable.is_set():
            await super().send(message)
        else:
            # Past uvicorn's wait for room: a ready event in its place for this one send
            # (nothing runs in between: the wait on a set event does not suspend), the
            # paused one back afterwards for whoever waits on it.
            paused = self.writable
            self.writable = asyncio.Event()
            self.writable.set()
            try:
                await super().send(message)
            finally:
                self.writable = paused
        if self.close_sent and behind:
            self._hold()

    def keepalive_timeout(self) -> None:
        if self.close_sent or self.transport.is_closing():
            super().keepalive_timeout()  # closing already: uvicorn's (it does nothing)
            return
        self.pong_timer = None
        self.pending_ping_payload = None
        path = str(self.scope.get("path", ""))
        code, reason = SLOW_CLOSE_PTY if path.startswith("/ws/pty/") else SLOW_CLOSE_WS
        behind = self._behind()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else None
        _log.info("ws.stalled", client=client, path=path, code=code, unread=behind)
        self.conn.send_close(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        # The application learns the client is gone: its reader gets the disconnect, and
        # its sends waiting for room fail as after a lost connection instead of waiting for
        # as long as the client stalls.
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self.disconnected = True
        self.writable.set()
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()
        if behind:
            self._hold()
        else:  # all with the client already: uvicorn's usual wait for its reply
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)

    def _behind(self) -> bool:
        """Whether frames sent have not all reached the client's machine: it is not reading
        (or is gone)."""
        return (
            not self.writable.is_set()
            or self.transport.get_write_buffer_size() > 0
            or _unsent_in_kernel(self.transport) > 0
        )

    def _hold(self) -> None:
        """Keep the connection, reading (and dropping) what the client sends, until it
        answers its close (or closes), at most :attr:`stall_limit`. uvicorn's usual wait
        for the answer is 10 s, then the socket is closed, and a socket closed before the
        client read what it holds answers the client's next frame (a pong) with a reset
        that drops what was not delivered yet: the close among it."""
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(self.stall_limit, self.transport.abort)
