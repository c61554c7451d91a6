"""Who is calling: the users file, the admin token, JWTs, and the middleware that says so.

**The users file** (``serve --users FILE``, ``ServerSettings.users_file``) is TOML::

    [[users]]
    name = "alice"
    token_sha256 = "<64 hex digits: sha256 of alice's bearer token>"
    role = "user"          # "user" or "admin"
    terminals = false      # may this user open terminal sessions?

Tokens are never stored, only their SHA-256; a presented token is hashed and compared with
every user's hash in constant time (:func:`hmac.compare_digest`, no early exit). Other keys
are ignored with a warning; a malformed file is refused at start, and a malformed edit keeps
the users loaded before (logged). The file is read again when it changes (checked at most
once a second, on requests) and on :meth:`Authenticator.reload` (``serve`` calls it on
SIGHUP). ``claudecode-bridge users add`` prints a new token and its entry.

**The admin token** (``--token``) is one admin user named ``admin``. **JWTs** are verified by
:mod:`adapter.server.jwt_auth`.

:class:`IdentityMiddleware` runs inside the security middleware (which has checked the
``Origin`` and the body size): it takes the bearer token (``Authorization: Bearer``, or
``?token=`` on a WebSocket handshake), answers 401 / refuses the handshake when it names
nobody, and runs the request as that user (:func:`adapter.owners.acting_as`), which is what
the ownership layer below the front ends checks. With no identity configured every request
runs as the implicit local user (:data:`~adapter.owners.LOCAL`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from claudecode.internal import get_logger

from ..owners import LOCAL, Principal, acting_as
from .errors import json_error
from .jwt_auth import JwtSettings, JwtVerifier, looks_like_jwt

__all__ = (
    "ADMIN_NAME",
    "Authenticator",
    "front_end_of",
    "hash_token",
    "IdentityMiddleware",
    "new_token",
    "parse_users",
    "User",
    "user_entry",
    "UsersFile",
    "UsersFileError",
)

_log = get_logger("claudecode.adapter.server.identity")

#: The user ``--token`` stands for.
ADMIN_NAME = "admin"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_KNOWN_KEYS = frozenset({"name", "token_sha256", "role", "terminals"})
#: Seconds between two looks at the users file's modification time.
_CHECK_SECONDS = 1.0


class UsersFileError(ValueError):
    """The users file cannot be used (its message says where and why)."""


@dataclass(frozen=True, slots=True)
class User:
    """One entry of the users file."""

    principal: Principal
    digest: bytes


def hash_token(token: str) -> str:
    """The ``token_sha256`` of ``token`` (hex)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new random bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'


def user_entry(name: str, token: str, *, admin: bool = False, terminals: bool = False) -> str:
    """The users-file entry for ``name`` with ``token`` (only its hash is written)."""
    return (
        "[[users]]\n"
        f"name = {_toml_string(name)}\n"
        f'token_sha256 = "{hash_token(token)}"\n'
        f'role = "{"admin" if admin else "user"}"\n'
        f"terminals = {'true' if terminals else 'false'}\n"
    )


def parse_users(text: str, *, source: str = "users file") -> tuple[list[User], list[str]]:
    """The users of a users file's ``text`` and the warnings about it.

    Raises:
        UsersFileError: not TOML, no ``[[users]]`` list, an entry without a valid ``name`` /
            ``token_sha256`` / ``role`` / ``terminals``, or two entries with one name or one
            hash.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsersFileError(f"{source}: not valid TOML: {exc}") from None
    warnings = [f"{source}: unknown key {key!r} ignored" for key in data if key != "users"]
    entries = data.get("users", [])
    if not isinstance(entries, list):
        raise UsersFileError(f"{source}: 'users' must be an array of tables ([[users]])")
    users: list[User] = []
    names: set[str] = set()
    digests: set[bytes] = set()
    for index, entry in enumerate(entries, 1):
        where = f"{source}: user #{index}"
        if not isinstance(entry, dict):
            raise UsersFileError(f"{where}: not a table")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip() or not name.isprintable():
            raise UsersFileError(f"{where}: 'name' must be a non-empty printable string")
        where = f"{source}: user {name!r}"
        digest_hex = entry.get("token_sha256")
        if not isinstance(digest_hex, str) or not _HEX64.fullmatch(digest_hex.lower()):
            raise UsersFileError(f"{where}: 'token_sha256' must be 64 hex digits")
        role = entry.get("role", "user")
        if role not in ("user", "admin"):
            raise UsersFileError(f'{where}: \'role\' must be "user" or "admin"')
        terminals = entry.get("terminals", False)
        if not isinstance(terminals, bool):
            raise UsersFileError(f"{where}: 'terminals' must be true or false")
        warnings.extend(
            f"{where}: unknown key {k!r} ignored" for k in entry if k not in _KNOWN_KEYS
        )
        digest = bytes.fromhex(digest_hex)
        if name in names:
            raise UsersFileError(f"{where}: listed twice")
        if digest in digests:
            raise UsersFileError(f"{where}: the same token_sha256 as another user")
        names.add(name)
        digests.add(digest)
        users.append(User(Principal(name, admin=role == "admin", terminals=terminals), digest))
    return users, warnings


def _match(users: Collection[User], token: str) -> Principal | None:
    """The user whose hash is ``token``'s, comparing with every one (constant time each)."""
    digest = hashlib.sha256(token.encode("utf-8")).digest()
    found: Principal | None = None
    for user in users:
        if hmac.compare_digest(digest, user.digest):
            found = user.principal
    return found


class UsersFile:
    """The users of ``path``, read at construction (see the module docs).

    Raises:
        UsersFileError: the file cannot be read or is malformed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.users: tuple[User, ...] = ()
        self._stamp: tuple[int, int, int] | None = None
        self._checked = 0.0
        self._load()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _load(self) -> None:
        stamp = self._stat()
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsersFileError(f"{self.path}: cannot be read: {exc}") from None
        users, warnings = parse_users(text, source=str(self.path))
        for warning in warnings:
            _log.warning("identity.users_file_warning", warning=warning)
        self.users = tuple(users)
        self._stamp = stamp
        _log.info("identity.users_loaded", path=str(self.path), users=len(users))

    def reload(self) -> bool:
        """Read the file again; on error keep the users loaded before (logged)."""
        try:
            self._load()
        except UsersFileError as exc:
            _log.error("identity.users_file_invalid", error=str(exc))
            self._stamp = self._stat()  # not again until it changes
            return False
        return True

    def check(self) -> None:
        """Reload when the file changed (looked at most once a second)."""
        now = time.monotonic()
        if now - self._checked < _CHECK_SECONDS:
            return
        self._checked = now
        if self._stat() != self._stamp:
            self.reload()

    def match(self, token: str) -> Principal | None:
        """The user whose token this is."""
        self.check()
        return _match(self.users, token)


class Authenticator:
    """Every identity source of a server: the admin token, the users file, JWTs."""

    def __init__(
        self,
        *,
        token: str | None = None,
        users: UsersFile | None = None,
        jwt: JwtSettings | None = None,
    ) -> None:
        self._admin = (
            () if token is None else (User(Principal(ADMIN_NAME, True, True), _digest(token)),)
        )
        self.users = users
        self.jwt = None if jwt is None else JwtVerifier(jwt)

    def reload(self) -> None:
        """Read the users file again (SIGHUP)."""
        if self.users is not None:
            self.users.reload()

    async def authenticate(self, token: str | None) -> Principal | None:
        """Whose bearer token ``token`` is (``None``: nobody's)."""
        if not token:
            return None
        principal = _match(self._admin, token)
        if principal is None and self.users is not None:
            principal = self.users.match(token)
        if principal is None and self.jwt is not None and looks_like_jwt(token):
            principal = self.jwt.cached(token)
            if principal is None:
                # Fetching the provider's keys blocks: off the event loop.
                principal = await anyio.to_thread.run_sync(self.jwt.verify, token)
        return principal


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _bearer(headers: Headers) -> str | None:
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip()


def front_end_of(path: str) -> str:
    """The front end a request path belongs to (as the audit log names it)."""
    if path.startswith("/ws/pty"):
        return "pty"
    if path == "/ws" or path.startswith("/ws/"):
        return "ws"
    if path.startswith(("/agui", "/copilotkit")):
        return "agui"
    return "rest"


class IdentityMiddleware:
    """Runs each request as its caller (see the module docs)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator | None,
        public_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.public_paths = public_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        path: str = scope.get("path", "")
        if kind not in ("http", "websocket") or path in self.public_paths:
            await self.app(scope, receive, send)
            return
        via = front_end_of(path)
        if self.authenticator is None:
            with acting_as(LOCAL, via):
                await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        given = _bearer(headers)
        if given is None and kind == "websocket":
            query = scope.get("query_string", b"").decode("latin-1")
            given = dict(parse_qsl(query)).get("token")
        principal = await self.authenticator.authenticate(given)
        if principal is None:
            await _refuse(scope, receive, send)
            return
        with acting_as(principal, via):
            await self.app(scope, receive, send)


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
    message = "missing or invalid bearer token"
    if scope["type"] == "websocket":
        # Closing before accepting makes the server answer the handshake with 403.
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 1008, "reason": message})
        return
    response: Any = json_error(401, message)
    await response(scope, receive, send)
