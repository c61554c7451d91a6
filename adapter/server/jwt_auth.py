"""Identities from an OpenID Connect provider: bearer tokens that are signed JWTs.

``serve --jwt-jwks URL --jwt-issuer ISS --jwt-audience AUD`` accepts an access or ID token
signed by one of the keys the provider publishes at ``URL`` (its JWKS), with PyJWT's
:class:`jwt.PyJWKClient` (keys cached, and fetched again when a token names a key id the
cache does not have, at most every :attr:`JwtSettings.refetch_cooldown_seconds`, so tokens
naming made-up key ids cannot make the server hammer the provider; the whole set is fetched
again every :attr:`JwtSettings.refresh_seconds`). A token is accepted
when its signature verifies (RS256, ES256, ...; never ``none`` nor HMAC with a public key),
``exp`` is in the future and ``nbf`` / ``iat`` not, ``iss`` is the issuer and ``aud`` names
the audience. The user's name is ``sub`` (or :attr:`JwtSettings.name_claim`); the user is an
admin when the claim of :attr:`JwtSettings.admin_claim` equals (or, for a list, contains)
its value, and may open terminals when :attr:`JwtSettings.terminals_claim` does the same.

A verified token is remembered (by its SHA-256, never the text) for
:attr:`JwtSettings.cache_seconds` or until it expires, whichever is first, so a client that
sends the same token with every request costs one signature check a minute instead of one per
request, and no thread hop. The price: a key the provider withdraws keeps working for tokens
already seen until their entry lapses; ``cache_seconds=0`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt

from claudecode.internal import get_logger

from ..owners import Principal

__all__ = (
    "JwtSettings",
    "JwtVerifier",
)

_log = get_logger("claudecode.adapter.server.identity")

#: Asymmetric algorithms only: a JWKS holds public keys.
_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)


@dataclass(frozen=True, kw_only=True)
class JwtSettings:
    """Where the keys are and what a token must say (see the module docs).

    ``admin_claim`` / ``terminals_claim`` are ``(claim, value)`` pairs; ``leeway_seconds``
    tolerates clock skew on ``exp`` / ``nbf``.
    """

    jwks_url: str
    issuer: str
    audience: str
    name_claim: str = "sub"
    admin_claim: tuple[str, str] | None = None
    terminals_claim: tuple[str, str] | None = None
    leeway_seconds: float = 30.0
    refresh_seconds: float = 300.0
    refetch_cooldown_seconds: float = 30.0
    timeout_seconds: float = 10.0
    cache_seconds: float = 60.0
    cache_entries: int = 4096


def _claim_has(claims: dict[str, Any], rule: tuple[str, str] | None) -> bool:
    if rule is None:
        return False
    name, expected = rule
    value = claims.get(name)
    if isinstance(value, list):
        return expected in [str(v) for v in value]
    return value is not None and str(value) == expected


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated parts: worth verifying as a JWT."""
    return token.count(".") == 2


class JwtVerifier:
    """Verifies bearer tokens against a provider's JWKS (blocking: call it in a thread)."""

    def __init__(self, settings: JwtSettings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        # Wall-clock time: entries end at the token's ``exp``, which is wall-clock too.
        self._clock = clock
        # digest -> (principal, until); insertion order is age order, the oldest goes first.
        self._verified: dict[bytes, tuple[Principal, float]] = {}
        # ``verify`` runs in worker threads while ``cached`` runs on the event loop.
        self._lock = threading.Lock()
        self._keys = jwt.PyJWKClient(
            settings.jwks_url,
            cache_keys=True,
            cache_jwk_set=True,
            lifespan=settings.refresh_seconds,
            timeout=settings.timeout_seconds,
            cooldown_duration=settings.refetch_cooldown_seconds,
        )

    def cached(self, token: str) -> Principal | None:
        """The user of a token verified recently and not yet expired (never blocks)."""
        if self.settings.cache_seconds <= 0:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            entry = self._verified.get(digest)
            if entry is None:
                return None
            principal, until = entry
            if self._clock() < until:
                return principal
            del self._verified[digest]
            return None

    def _remember(self, token: str, principal: Principal, expires: float) -> None:
        settings = self.settings
        if settings.cache_seconds <= 0 or settings.cache_entries <= 0:
            return
        until = min(expires + settings.leeway_seconds, self._clock() + settings.cache_seconds)
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            self._verified.pop(digest, None)
            while len(self._verified) >= settings.cache_entries:
                del self._verified[next(iter(self._verified))]
            self._verified[digest] = (principal, until)

    def verify(self, token: str) -> Principal | None:
        """The token's user, or ``None`` (bad signature, expired, wrong issuer / audience,
        unknown key, the JWKS unreachable: each logged, never the token itself)."""
        settings = self.settings
        try:
            key = self._keys.get_signing_key_from_jwt(token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=list(_ALGORITHMS),
                audience=settings.audience,
                issuer=settings.issuer,
                leeway=settings.leeway_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWKClientError, jwt.InvalidTokenError) as exc:
            _log.info("identity.jwt_refused", reason=type(exc).__name__, detail=str(exc))
            return None
        name = claims.get(settings.name_claim)
        if not isinstance(name, str) or not name:
            _log.info("identity.jwt_refused", reason="no name", claim=settings.name_claim)
            return None
        principal = Principal(
            name=name,
            admin=_claim_has(claims, settings.admin_claim),
            terminals=_claim_has(claims, settings.terminals_claim),
        )
        expires = claims["exp"]
        if isinstance(expires, int | float):
            self._remember(token, principal, float(expires))
        return principal
