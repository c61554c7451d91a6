"""The WebSocket protocol ``serve`` runs under uvicorn: uvicorn's own (over ``websockets``'
sans-I/O core), changed where a client that stops reading its socket would otherwise be
closed with a code no document names.

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

A close behind a full buffer keeps the connection, reading and dropping what the client sends,
until the buffer drains (or for :attr:`WebSocketProtocol.stall_limit` at most, then it is
reset), and only then waits uvicorn's usual while for the client's reply: a socket closed
before the client read the close would answer its next pong with a reset that loses the
close and the frames before it.

The subclass leans on the attributes of uvicorn's implementation (``writable``,
``close_sent``, ``close_timer``, ``read_paused``, the keepalive's timers), as of uvicorn 0.53
(the ``server`` extra's floor); the tests in ``tests/server/test_ws_stall.py`` run it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from claudecode.internal import get_logger

from ..server.terminal_routes import CLOSE_LAGGING
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


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol with the typed close for a client that stops reading
    (see the module docs)."""

    #: Seconds a client may go on reading nothing once its close is buffered: then its
    #: connection is reset, what it never read dropped (its socket and buffers freed).
    stall_limit: float = 600.0
    #: Whether a close waits behind a full buffer for the client to read again.
    _held = False

    async def send(self, message: Any) -> None:
        if (
            message["type"] == "websocket.close"
            and not self.writable.is_set()
            and self.handshake_complete
            and not self.close_sent
            and self.initial_response is None
        ):
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
            if self.close_sent:
                self._hold()
            return
        await super().send(message)

    def keepalive_timeout(self) -> None:
        if self.close_sent or self.transport.is_closing():
            super().keepalive_timeout()  # closing already: uvicorn's (it does nothing)
            return
        self.pong_timer = None
        self.pending_ping_payload = None
        path = str(self.scope.get("path", ""))
        code, reason = SLOW_CLOSE_PTY if path.startswith("/ws/pty/") else SLOW_CLOSE_WS
        full = not self.writable.is_set()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else None
        _log.info("ws.stalled", client=client, path=path, code=code, send_buffer_full=full)
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
        if full:
            self._hold()
        else:  # the close is with the kernel: uvicorn's usual wait for the client's reply
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)

    def _hold(self) -> None:
        """Keep the connection, reading (and dropping) what the client sends, until it reads
        its close: closing the socket now would answer its next pong with a reset that
        loses the close (and the frames before it). uvicorn's usual wait for the client's
        close reply starts once the buffer drains (:meth:`resume_writing`)."""
        self._held = True
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(self.stall_limit, self.transport.abort)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._held:  # the client reads again: its close is on the way
            self._held = False
            if self.close_timer is not None:
                self.close_timer.cancel()
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)
