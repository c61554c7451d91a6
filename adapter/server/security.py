"""The server's guard: foreign origins, bearer tokens and body sizes, as one ASGI middleware.

It sits inside Starlette's CORS middleware (which answers preflights for the configured
origins) and before every route:

1. **Origin.** A request (HTTP or WebSocket) whose ``Origin`` header is neither the server's
   own origin nor one of the configured ones is refused with 403: a page on another site
   cannot drive the agent through the user's browser, even on a loopback bind without a
   token (cross-site WebSocket hijacking, form posts). Clients that send no ``Origin``
   (curl, SDKs, Node) are not affected.
2. **Token.** With a token configured, every path but the public ones needs ``Authorization:
   Bearer <token>`` (compared in constant time); WebSocket handshakes may carry it as a
   ``token`` query parameter instead, because browsers cannot set headers there. Failures
   are 401 (HTTP) or a refused handshake (WebSocket).
3. **Body size.** A declared ``Content-Length`` over the limit is answered 413 before the
   body is read; a chunked body that grows over it raises a 413 ``HTTPException`` from
   ``receive`` (answered as JSON by the app's error handlers).
"""

from __future__ import annotations

import hmac
from collections.abc import Collection
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import json_error

__all__ = ("SecurityMiddleware", "token_matches")


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


def _same_origin(origin: str, headers: Headers) -> bool:
    host = headers.get("host")
    if not host:
        return False
    try:
        return urlsplit(origin).netloc.lower() == host.lower()
    except ValueError:
        return False


class SecurityMiddleware:
    """Origin, token and body-size checks (see the module docs)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_origins: Collection[str],
        max_body_bytes: int,
        public_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.public_paths = public_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if (
            origin is not None
            and origin.rstrip("/") not in self.allowed_origins
            and "*" not in self.allowed_origins
            and not _same_origin(origin, headers)
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
            # Closing before accepting makes the server answer the handshake with 403.
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": message})
            return
        await json_error(status, message)(scope, receive, send)
