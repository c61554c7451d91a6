"""A threading HTTP server that serves an already-bound listening socket.

The socket may have been created inside another network namespace (see :mod:`.netns`): a
socket keeps the namespace it was created in, so ordinary threads can accept and serve on it.
The server tracks its open connections so :meth:`BackgroundServer.stop` ends keep-alive and
half-streamed connections at once and joins every handler thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from claudecode._log import get_logger

__all__ = ("BackgroundServer", "loopback_listener")

_log = get_logger(__name__)

Listener = Callable[[], socket.socket]
"""Returns a TCP socket bound to 127.0.0.1 and listening."""


def loopback_listener() -> socket.socket:
    """A listening socket on an ephemeral port of 127.0.0.1 in this process's namespace."""
    return socket.create_server(("127.0.0.1", 0))


class BackgroundServer(ThreadingHTTPServer):
    """Serve ``handler`` on ``sock`` from a background thread; one thread per connection."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, sock: socket.socket, handler: type[BaseHTTPRequestHandler]) -> None:
        host, port = sock.getsockname()[:2]
        super().__init__((host, port), handler, bind_and_activate=False)
        self.socket.close()  # the unbound socket the base class made; ours is already listening
        self.socket = sock
        self.server_name = host
        self.server_port = port
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The listening port."""
        return self.server_port

    def start(self, name: str) -> None:
        """Start serving in a background thread."""
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, cut every open connection, join all threads, close the socket."""
        self.stopping.set()
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
        with self._connections_lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self.server_close()  # joins the handler threads (block_on_close)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Track the connection, then hand it to a handler thread."""
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Forget the connection and close it."""
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log a handler failure instead of printing a traceback to stderr."""
        _log.debug("fake server handler failed", client=client_address, exc_info=True)
