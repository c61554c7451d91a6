"""How the cluster connects to NATS and names what it keeps there.

:class:`NatsSettings` holds the standard connection options (server URLs, a credentials
file, TLS files); :class:`ClusterConfig` the deployment's namespace (``prefix``) and the
limits of what JetStream keeps. Every subject, stream and bucket name is derived from the
prefix, so several deployments can share one NATS account.

Connecting waits for a NATS that is not there yet (a worker may start before its NATS) but
fails at once, with :class:`NatsConnectError`, when NATS refuses us for a reason a retry cannot
fix: credentials it rejects, a credentials file that is not one, a TLS certificate one side
does not trust.
"""

from __future__ import annotations

import contextlib
import re
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from claudecode.errors import ClaudeCodeError
from claudecode.internal import get_logger

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS

__all__ = ("ClusterConfig", "NatsConnectError", "NatsSettings", "valid_token")

_log = get_logger("claudecode.adapter.cluster.nats")


class NatsConnectError(ClaudeCodeError, ConnectionError):
    """NATS refused the connection for a reason retrying cannot fix: rejected or malformed
    credentials, or a TLS certificate one side does not trust. Raised by
    :meth:`NatsSettings.connect` (so by a worker or gateway starting), never retried."""


# What the server says (in its -ERR) when it rejects who we are; see nats-server's auth.
_AUTH_REFUSALS = ("authorization violation", "authentication expired", "authentication revoked")


def _permanent(exc: BaseException) -> str | None:
    """Why ``exc``, met while connecting, will not go away by retrying (None: it may)."""
    text = str(exc)
    if any(refusal in text.lower() for refusal in _AUTH_REFUSALS):
        return f"NATS refused the credentials ({text.removeprefix('nats: ').strip()})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: the NATS server's certificate is not trusted ({exc.verify_message})"
    if isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError):
        return None  # the connection went away mid-handshake (a server restarting): retry
    if isinstance(exc, ssl.SSLError):
        return f"TLS handshake with NATS failed ({exc.reason or exc})"
    return None


def _check_creds(path: str) -> None:
    """Refuse a credentials file nats-py would choke on (it loops forever on a file without a
    JWT block) or that holds no valid user seed, before connecting."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise NatsConnectError(f"NATS credentials file {path}: {exc.strerror or exc}") from exc

    def after(marker: bytes) -> bytes:
        for index, line in enumerate(lines[:-1]):
            if marker in line:
                return lines[index + 1].strip()
        return b""

    jwt, seed = after(b"BEGIN NATS USER JWT"), after(b"BEGIN USER NKEY SEED")
    if jwt.count(b".") != 2 or not seed.startswith(b"SU"):
        raise NatsConnectError(
            f"NATS credentials file {path}: not a user credentials file (a user JWT and "
            "its NKey seed, as nsc writes them)"
        )
    try:
        import nkeys  # type: ignore[import-untyped]

        nkeys.from_seed(bytearray(seed)).wipe()
    except ImportError as exc:
        raise NatsConnectError("NATS credentials need the nkeys package") from exc
    except Exception as exc:  # nkeys raises its own error types for a bad seed
        raise NatsConnectError(f"NATS credentials file {path}: invalid user seed") from exc


_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def valid_token(value: str) -> bool:
    """Whether ``value`` can be one subject token and one KV key (session and worker ids):
    letters, digits, ``_`` and ``-``, at most 128 characters."""
    return bool(_TOKEN.match(value))


@dataclass(frozen=True, kw_only=True)
class NatsSettings:
    """Where and how to connect to NATS.

    ``servers``: one or more ``nats://`` / ``tls://`` URLs (give every member of a cluster);
    ``creds``: a credentials file (JWT + NKey seed) as made by ``nsc``; ``tls_ca``,
    ``tls_cert``, ``tls_key``: PEM files for TLS (a client certificate when the server
    verifies clients); ``name``: the connection name shown by the server's monitoring.
    Secrets stay in files: nothing here is meant for a command line except paths.
    """

    servers: Sequence[str] = ("nats://127.0.0.1:4222",)
    creds: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    name: str | None = None
    connect_timeout: float = 5.0

    def tls_context(self) -> ssl.SSLContext | None:
        """An SSL context from the TLS files (``None`` when none is set and no URL is tls)."""
        wants_tls = any(url.startswith("tls://") for url in self.servers)
        if not (self.tls_ca or self.tls_cert or wants_tls):
            return None
        context = ssl.create_default_context(
            ssl.Purpose.SERVER_AUTH, cafile=self.tls_ca if self.tls_ca else None
        )
        if self.tls_cert:
            context.load_cert_chain(self.tls_cert, self.tls_key)
        return context

    async def connect(self, **callbacks: Any) -> NATS:
        """A connected nats-py client that keeps reconnecting (forever) when NATS goes away.

        Waits while no server answers (logging each failed attempt), but raises
        :class:`NatsConnectError` at once when one refuses us (see the module docstring).
        """
        from nats.aio.client import Client

        if self.creds:
            _check_creds(self.creds)
        nc = Client()
        connecting = True
        user_error_cb: Callable[[Exception], Awaitable[None]] | None = callbacks.pop(
            "error_cb", None
        )

        async def on_error(exc: Exception) -> None:
            if user_error_cb is not None:
                await user_error_cb(exc)
            reason = _permanent(exc)
            if connecting and reason is not None:
                # Raised inside nats-py's connect loop, this ends it (instead of a retry).
                raise NatsConnectError(reason) from exc
            _log.warning("cluster.nats_error", error=str(exc) or repr(exc))

        options: dict[str, Any] = {
            "servers": list(self.servers),
            "connect_timeout": self.connect_timeout,
            "max_reconnect_attempts": -1,
            "reconnect_time_wait": 0.5,
            "allow_reconnect": True,
        }
        if self.name:
            options["name"] = self.name
        if self.creds:
            options["user_credentials"] = self.creds
        context = self.tls_context()
        if context is not None:
            options["tls"] = context
        options.update(callbacks)
        options["error_cb"] = on_error
        try:
            await nc.connect(**options)
        except BaseException:
            connecting = False
            # Bounded: closing a socket whose TLS handshake failed can wait forever.
            with contextlib.suppress(Exception), anyio.move_on_after(self.connect_timeout):
                await nc.close()
            raise
        connecting = False
        return nc


@dataclass(frozen=True, kw_only=True)
class ClusterConfig:
    """The deployment's names and limits in NATS.

    ``prefix`` namespaces every subject (``<prefix>.events.<session>``, ...), stream
    (``<PREFIX>_EVENTS``) and bucket (``<prefix>_sessions``, ``<prefix>_workers``).
    ``event_max_age`` / ``event_max_bytes`` bound the event stream (seconds / bytes);
    ``replicas`` is the stream's replication in a NATS cluster (1, 3 or 5).
    ``heartbeat_interval`` is how often a worker renews its key; a worker whose key is
    ``heartbeat_ttl`` seconds old is taken for dead unless it answers a direct request
    within ``heartbeat_interval`` (:func:`~adapter.cluster.recovery.owner_answers`), so its
    sessions are declared lost within about ``heartbeat_ttl + 3 * heartbeat_interval``
    seconds. ``request_timeout`` bounds a command's
    round trip; ``create_timeout`` the start of a session (a CLI takes seconds).
    ``closed_retention``: seconds a closed session stays listed.
    ``claim_sweep_interval``: how often each gateway removes the CLI session claims that
    crashed processes left behind (:mod:`adapter.cluster._claims`).
    ``transcript_max_age`` / ``transcript_max_bytes`` bound the mirrored CLI transcripts
    (a session older than that cannot be resumed on another worker).
    ``publish_linger``: seconds a worker holds a session's ready batch so that the batches
    of its other sessions that get ready meanwhile leave in the same socket write (0: none;
    rounded up to whole milliseconds, the event loops' timer resolution; the default
    measured best on uvloop, BENCHMARKS.md's NATS section).
    """

    prefix: str = "bridge"
    event_max_age: float = 24 * 3600.0
    event_max_bytes: int = 256 << 20
    max_message_bytes: int = 512 * 1024
    replicas: int = 1
    heartbeat_interval: float = 1.0
    heartbeat_ttl: float = 3.0
    request_timeout: float = 10.0
    create_timeout: float = 60.0
    closed_retention: float = 300.0
    claim_sweep_interval: float = 60.0
    transcript_max_age: float = 30 * 24 * 3600.0
    transcript_max_bytes: int = 1 << 30
    publish_linger: float = 0.002
    labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _PREFIX.match(self.prefix):
            raise ValueError(
                f"cluster prefix {self.prefix!r}: use 1-32 letters, digits, '_' or '-'"
            )
        if self.heartbeat_ttl <= self.heartbeat_interval:
            raise ValueError("heartbeat_ttl must be longer than heartbeat_interval")

    # -- names ---------------------------------------------------------------------------

    @property
    def event_stream(self) -> str:
        """The JetStream stream holding every session's events."""
        return f"{self.prefix.upper()}_EVENTS"

    def event_subject(self, session_id: str) -> str:
        """The subject of one session's events."""
        return f"{self.prefix}.events.{session_id}"

    @property
    def event_subjects(self) -> str:
        """The event stream's subject filter."""
        return f"{self.prefix}.events.>"

    @property
    def transcript_stream(self) -> str:
        """The JetStream stream mirroring the CLI's conversation files."""
        return f"{self.prefix.upper()}_TRANSCRIPTS"

    def transcript_subject(self, cli_session_id: str) -> str:
        """The subject of one CLI session's file."""
        return f"{self.prefix}.transcript.{cli_session_id}"

    @property
    def transcript_subjects(self) -> str:
        """The transcripts stream's subject filter."""
        return f"{self.prefix}.transcript.>"

    @property
    def sessions_bucket(self) -> str:
        """The KV bucket of session records."""
        return f"{self.prefix}_sessions"

    @property
    def workers_bucket(self) -> str:
        """The KV bucket of worker heartbeats."""
        return f"{self.prefix}_workers"

    @property
    def resumes_bucket(self) -> str:
        """The KV bucket of claimed CLI session ids (one open session resumes each)."""
        return f"{self.prefix}_resumes"

    @property
    def ends_bucket(self) -> str:
        """The KV bucket of ended sessions whose end a gateway recorded (in its audit log)."""
        return f"{self.prefix}_ends"

    def command_subject(self, session_id: str) -> str:
        """Where the owning worker answers commands for a session."""
        return f"{self.prefix}.cmd.{session_id}"

    @property
    def create_subject(self) -> str:
        """The queue group subject every worker answers creation requests on."""
        return f"{self.prefix}.create"

    def worker_create_subject(self, worker_id: str) -> str:
        """One worker's own creation subject (placement by load or label)."""
        return f"{self.prefix}.worker.{worker_id}.create"

    def worker_alive_subject(self, worker_id: str) -> str:
        """The subject a worker answers on while it runs (asked before its sessions are
        declared lost for a lapsed heartbeat)."""
        return f"{self.prefix}.worker.{worker_id}.alive"

    @property
    def worker_queue(self) -> str:
        """The queue group name of the workers."""
        return f"{self.prefix}-workers"
