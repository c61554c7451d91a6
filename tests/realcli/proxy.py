"""A logging-only HTTP proxy that refuses everything (403).

Set as ``HTTPS_PROXY``/``HTTP_PROXY`` for a real CLI process: any host the CLI tries to reach
other than the fake API (which is exempted through ``NO_PROXY``) lands here, is recorded, and
is refused. Tests assert :meth:`RefusingProxy.attempts` stayed empty.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from claudecode._log import get_logger

from ._server import BackgroundServer, Listener, loopback_listener

__all__ = ("RefusingProxy",)

_log = get_logger(__name__)


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def _refuse(self) -> None:
        if self.command == "CONNECT":
            target = self.path
        else:
            parts = urlsplit(self.path)
            target = parts.netloc or self.headers.get("host", "") or self.path
        self.server.owner.record(f"{self.command} {target}", target)
        body = b"fake proxy: outbound traffic is not allowed in tests\n"
        self.send_response(403)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    do_CONNECT = do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _refuse

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("proxy " + format % args)


class _ProxyServer(BackgroundServer):
    owner: RefusingProxy


class RefusingProxy:
    """Records every proxied request and answers 403. Use as a context manager or start/stop."""

    def __init__(self, listen: Listener = loopback_listener) -> None:
        self._server = _ProxyServer(listen(), _ProxyHandler)
        self._server.owner = self
        self._lock = threading.Lock()
        self._attempts: list[str] = []
        self._requests: list[str] = []

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, the value for ``HTTPS_PROXY``."""
        return f"http://127.0.0.1:{self._server.port}"

    def start(self) -> RefusingProxy:
        """Start serving in the background."""
        self._server.start("fake-proxy")
        return self

    def stop(self) -> None:
        """Stop serving and close every connection."""
        self._server.stop()

    def record(self, request_line: str, target: str) -> None:
        """Remember one refused request (called by the handler)."""
        _log.warning("a process tried to reach the outside through the proxy", target=target)
        with self._lock:
            self._requests.append(request_line)
            self._attempts.append(target)

    def attempts(self) -> list[str]:
        """Every ``host:port`` (or URL authority) something tried to reach, in order."""
        with self._lock:
            return list(self._attempts)

    def requests(self) -> list[str]:
        """The refused requests as ``"METHOD target"`` strings."""
        with self._lock:
            return list(self._requests)

    def __enter__(self) -> RefusingProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
