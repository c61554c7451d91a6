"""Client sockets that misbehave the way real clients do."""

from __future__ import annotations

import socket
import threading

from .timeouts import HANG_GUARD


class GatedSocket(socket.socket):
    """A TCP socket whose reads wait while ``gate`` is clear: a client that stops reading
    (its receive window fills, then the server's send buffer). A read waits at most a few
    hang guards, so a test that forgets to open the gate still ends."""

    def __init__(self) -> None:
        super().__init__(socket.AF_INET, socket.SOCK_STREAM)
        self.gate = threading.Event()
        self.gate.set()

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self.gate.wait(HANG_GUARD * 4)
        return super().recv(bufsize, flags)
