"""The server's guard: hosts, foreign origins, bearer tokens and body sizes, as one ASGI middleware.

It sits inside Starlette's CORS middleware (which answers preflights for the configured
origins) and before every route:

1. **Host.** A request (HTTP or WebSocket) whose ``Host`` header names neither this server
   (``localhost``, ``127.0.0.1``, ``[::1]`` or the address the connection arrived on, with
   the server's port) nor one of the allowed hosts is refused with 421. This is what stops
   DNS rebinding: a page on ``attacker.example`` whose name is re-pointed at 127.0.0.1 is
   same-origin with itself, so its requests carry ``Host: attacker.example``. An allowed
   host is ``name`` (any port) or ``name:port``; ``*`` turns the check off (for a proxy in
   front that checks it). A request without ``Host`` (HTTP/1.0) is let through: browsers
   always send one.
2. **Origin.** A request whose ``Origin`` header is neither one of those hosts nor one of
   the configured CORS origins is refused with 403: a page on another site cannot drive the
   agent through the user's browser, even on a loopback bind without a token (cross-site
   WebSocket hijacking, form posts). The request's own ``Host`` is not the measure: a
   rebinding page controls it (only with the Host check off, ``*``, is the page's origin
   compared with the ``Host``, as the proxy in front vouches for it). Clients that send no
   ``Origin`` (curl, SDKs, Node) are not affected.
3. **Token.** With a token configured, every path but the public ones needs ``Authorization:
   Bearer <token>`` (compared in constant time); WebSocket handshakes may carry it as a
   ``token`` query parameter instead, because browsers cannot set headers there. Failures
   are 401 (HTTP) or a refused handshake (WebSocket).
4. **Body size.** A declared ``Content-Length`` over the limit is answered 413 before the
   body is read; a chunked body that grows over it raises a 413 ``HTTPException`` from
   ``receive`` (answered as JSON by the app's error handlers).

A refused WebSocket handshake is answered 403, whatever the reason.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import json_error

__all__ = ("LOCAL_HOSTS", "AllowedHosts", "SecurityMiddleware", "token_matches")

#: The names a local client reaches the server by; always allowed, on the server's port.
LOCAL_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")


def token_matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token with the expected one."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _bearer(headers: Headers) -> str | None:
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip()


def _split_host(value: str, default_port: int) -> tuple[str, int] | None:
    """``name[:port]`` (IPv6 in brackets) as ``(name, port)``; ``None`` when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value.partition("]")
        if not bracket:
            return None
        name += "]"
        if not rest:
            return name, default_port
        if not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        name, colon, port_text = value.partition(":")
        if not colon:
            return (name, default_port) if name else None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None
    return (name, int(port_text)) if name else None


def _server_name(scope: Scope) -> tuple[str | None, int | None]:
    """The address and port the connection arrived on, as a Host header would name them."""
    server = scope.get("server")
    if not server or server[1] is None:
        return None, None
    address = str(server[0]).lower()
    return (f"[{address}]" if ":" in address else address), int(server[1])


class AllowedHosts:
    """The allowed hosts: local names and the bound address on the server's port, plus the
    configured ``name`` (any port) / ``name:port`` entries.

    Raises:
        ValueError: an entry is not ``name`` or ``name:port``.
    """

    def __init__(self, allowed: Collection[str]) -> None:
        self.anything = "*" in allowed
        self.any_port: set[str] = set()
        self.exact: set[tuple[str, int]] = set()
        for entry in allowed:
            if entry == "*":
                continue
            parsed = _split_host(entry, -1)
            if parsed is None:
                raise ValueError(f"not a host or host:port: {entry!r}")
            if parsed[1] == -1:
                self.any_port.add(parsed[0])
            else:
                self.exact.add(parsed)

    def allows(self, name: str, port: int, scope: Scope) -> bool:
        if name in self.any_port or (name, port) in self.exact:
            return True
        bound, bound_port = _server_name(scope)
        # Mounted without a socket (an in-process transport), the port is unknown.
        if bound_port is not None and port != bound_port:
            return False
        return name in LOCAL_HOSTS or name == bound

    def allows_host(self, host: str, scope: Scope) -> bool:
        if self.anything:
            return True
        secure = scope.get("scheme") in ("https", "wss")
        parsed = _split_host(host, 443 if secure else 80)
        return parsed is not None and self.allows(*parsed, scope)

    def allows_origin(self, origin: str, scope: Scope, host: str | None = None) -> bool:
        """Whether a page at ``origin`` may call: one of the allowed hosts. With the Host
        check off (``*``: a proxy in front checks it), the page must be on the ``host`` the
        request names, a same-origin check."""
        try:
            parts = urlsplit(origin)  # raises ValueError on some garbage (an open bracket)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.path or parts.query:
            return False
        default_port = 443 if parts.scheme == "https" else 80
        parsed = _split_host(parts.netloc, default_port)
        if parsed is None:
            return False
        if self.anything:
            return host is not None and parsed == _split_host(host, default_port)
        return self.allows(*parsed, scope)


class SecurityMiddleware:
    """Host, Origin, token and body-size checks (see the module docs)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_origins: Collection[str],
        max_body_bytes: int,
        allowed_hosts: Collection[str] = (),
        public_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)
        self.hosts = AllowedHosts(allowed_hosts)
        self.max_body_bytes = max_body_bytes
        self.public_paths = public_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is not None and not self.hosts.allows_host(host, scope):
            await self._refuse(scope, receive, send, 421, "host not allowed")
            return
        origin = headers.get("origin")
        if (
            origin is not None
            and origin.rstrip("/") not in self.allowed_origins
            and "*" not in self.allowed_origins
            and not self.hosts.allows_origin(origin, scope, host)
        ):
            await self._refuse(scope, receive, send, 403, "origin not allowed")
            return
        if self.token is not None and scope.get("path", "") not in self.public_paths:
            given = _bearer(headers)
            if given is None and kind == "websocket":
                query = scope.get("query_string", b"").decode("latin-1")
                given = dict(parse_qsl(query)).get("token")
            if not token_matches(given, self.token):
                await self._refuse(scope, receive, send, 401, "missing or invalid bearer token")
                return
        if kind == "websocket":
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self.max_body_bytes
            except ValueError:
                await self._refuse(scope, receive, send, 400, "invalid Content-Length")
                return
            if too_large:
                await self._refuse(scope, receive, send, 413, self._too_large_message)
                return
        await self.app(scope, self._limited(receive), send)

    @property
    def _too_large_message(self) -> str:
        return f"request body larger than {self.max_body_bytes} bytes"

    def _limited(self, receive: Receive) -> Receive:
        seen = 0
        limit = self.max_body_bytes
        message_text = self._too_large_message

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, message_text)
            return message

        return limited_receive

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, message: str
    ) -> None:
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403. (The
            # denial-response extension could carry the status and a JSON body, but uvicorn's
            # default WebSocket layer then logs an error for every refusal.)
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": message})
            return
        await json_error(status, message)(scope, receive, send)
