"""One open session per stored CLI session across the cluster: claims in a KV bucket.

Two CLIs resuming one conversation would both append to its transcript, so every session
holds the CLI session id it runs on as a key of ``<prefix>_resumes`` whose value names the
bridge session. A claim is taken with a KV ``create`` (refused when the key exists) or, when
its holder has ended, an update at the revision read, so of two claimers one wins.

* A gateway's ``create`` of a spec that resumes (without ``fork``) claims the id before the
  session is placed. The worker that starts a session claims the id it names up front for a
  fresh session or a fork, before its CLI starts and before the id is in the registry, so a
  resume of it is refused from the instant anyone can learn it.
* A claim is *pending* until the session's record is in the registry: it carries a
  per-message TTL (twice ``create_timeout``), so the server drops the claim of a create whose
  gateway or worker died while placing it, by its own clock. The worker then *confirms* it:
  the same key rewritten without a TTL, which lasts as long as the session does.
* The worker releases the claim when the session ends there (closed, idle, its CLI exited or
  crashed); the lost-session sweep releases it when it ends a lost session that no worker
  takes. A lost session resumed on another worker keeps its bridge id, so it keeps its claim.
  A worker fenced off (its session moved) never releases. A release purges the key at the
  revision read (only the holder's claim goes) and the purge marker expires, so nothing is
  left of a released claim. It waits on NATS :data:`RELEASE_BOUND` seconds at most, and a
  worker releases after the session has ended: no end waits for an unreachable NATS.
* What a crash leaves behind all the same (a release that failed, a process that died
  between the end and the release) counts as free — its holder's record is ``closed``,
  ``terminated``, ``errored`` or gone — and the gateways' sweep
  (:meth:`ResumeClaims.sweep`, every ``claim_sweep_interval``) purges it.

No wall clock is compared anywhere: a pending claim's age is the server's TTL.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import TYPE_CHECKING, Any

import anyio

from claudecode.internal import get_logger

from ..backend import CliSessionInUseError, SessionInfo
from .config import ClusterConfig, valid_token
from .fencing import EXPECTED_LAST_SUBJECT_SEQ, is_wrong_last_sequence
from .registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext
    from nats.js.kv import KeyValue

    from ..config import SessionConfig

__all__ = ("RELEASE_BOUND", "ResumeClaims", "claim_key", "claimed_cli_session")

_log = get_logger("claudecode.adapter.cluster.claims")

#: A holder in one of these no longer holds its CLI session.
_ENDED_STATUSES = ("terminated", "errored")

#: The value's suffix of a pending claim (its session has no record yet).
_PENDING = b"placing"

#: Seconds the purge marker of a released claim lives (then nothing is left of the key).
_MARKER_TTL = 60

#: Seconds a release waits on NATS at most (or ``request_timeout`` when shorter): releases
#: run where sessions end, which must not wait for an unreachable NATS; a claim left behind
#: is free once its holder has ended, and swept.
RELEASE_BOUND = 2.0


def claim_key(cli_session_id: str) -> str:
    """The bucket key of a CLI session id (a digest when it is no valid KV key)."""
    if valid_token(cli_session_id):
        return cli_session_id
    return "h-" + hashlib.sha256(cli_session_id.encode()).hexdigest()


def claimed_cli_session(config: SessionConfig) -> str | None:
    """The CLI session a session started with ``config`` holds: the one it resumes (not
    forking), else the one it is told to create (``--session-id``)."""
    return (None if config.fork_session else config.resume) or config.cli_session_id


def _live(info: SessionInfo) -> bool:
    return info.state != "closed" and info.status not in _ENDED_STATUSES


class ResumeClaims:
    """The claims bucket of a deployment, as one gateway or worker uses it."""

    def __init__(self, js: JetStreamContext, config: ClusterConfig, registry: Registry) -> None:
        self._js = js
        self.config = config
        self._registry = registry
        self._kv: KeyValue | None = None
        #: Seconds :meth:`release` waits on NATS at most.
        self.release_timeout = min(RELEASE_BOUND, config.request_timeout)

    @property
    def pending_ttl(self) -> int:
        """Seconds a pending claim lives (whole seconds: what ``Nats-TTL`` takes)."""
        return max(1, math.ceil(2 * self.config.create_timeout))

    async def open(self) -> None:
        """Open (create) the bucket."""
        from nats.js.errors import BucketNotFoundError

        try:
            self._kv = await self._js.key_value(self.config.resumes_bucket)
        except BucketNotFoundError:
            # nats-py makes every bucket with per-message TTLs allowed.
            self._kv = await self._js.create_key_value(
                bucket=self.config.resumes_bucket, history=1, replicas=self.config.replicas
            )
            return
        # A bucket made by an earlier client may not allow them; pending claims need them.
        stream = f"KV_{self.config.resumes_bucket}"
        info = await self._js.stream_info(stream)
        if not info.config.allow_msg_ttl:
            _log.info("cluster.claims_bucket_ttl_enabled", bucket=self.config.resumes_bucket)
            await self._js.update_stream(dataclasses.replace(info.config, allow_msg_ttl=True))

    @property
    def kv(self) -> KeyValue:
        """The bucket."""
        assert self._kv is not None, "the claims bucket is not open"
        return self._kv

    # -- claiming ----------------------------------------------------------------------

    async def claim(self, cli_session_id: str, session_id: str) -> int:
        """Claim ``cli_session_id`` for ``session_id`` (pending); returns its revision.

        A claim ``session_id`` holds already is kept as it is.

        Raises:
            CliSessionInUseError: a live session holds it, or another claim won meanwhile.
        """
        self._refuse_if_open(cli_session_id, session_id)
        key = claim_key(cli_session_id)
        value = session_id.encode() + b" " + _PENDING
        try:
            if (revision := await self._create(key, value, self.pending_ttl)) is not None:
                return revision
            entry = await self._get(key)
            if entry is None:  # released meanwhile
                if (revision := await self._create(key, value, self.pending_ttl)) is not None:
                    return revision
                raise _in_use(cli_session_id, None)
            holder, pending = _parse(entry.value)
            if holder == session_id:
                return int(entry.revision)
            if await self._holds(holder, pending):
                raise _in_use(cli_session_id, holder)
            # Its holder ended: take it over at the revision read, so of two claimers that
            # both found it free one wins.
            return await self._write(key, value, last=int(entry.revision), ttl=self.pending_ttl)
        except Exception as exc:
            if is_wrong_last_sequence(exc):
                raise _in_use(cli_session_id, None) from None
            raise

    async def confirm(self, cli_session_id: str, session_id: str, revision: int) -> None:
        """Make the pending claim of ``session_id`` (at ``revision``) last until released:
        its session's record is in the registry now. A claim that expired meanwhile (the
        create took longer than its TTL) is taken again if nobody else did.

        Raises:
            CliSessionInUseError: another session holds it now.
        """
        key = claim_key(cli_session_id)
        value = session_id.encode()
        for _ in range(3):
            try:
                await self._write(key, value, last=revision)
                return
            except Exception as exc:
                if not is_wrong_last_sequence(exc):
                    raise
            entry = await self._get(key)
            if entry is None:  # it expired: take it again
                if await self._create(key, value, None) is not None:
                    return
                continue
            holder, pending = _parse(entry.value)
            if holder != session_id:
                raise _in_use(cli_session_id, holder)
            if not pending:
                return
            revision = int(entry.revision)
        raise _in_use(cli_session_id, None)

    async def release(
        self, cli_session_id: str, session_id: str, *, pending_only: bool = False
    ) -> bool:
        """Remove the claim if ``session_id`` still holds it (``pending_only``: only while
        pending — a confirmed one belongs to a session that started). Best effort, and
        waits on NATS ``release_timeout`` seconds at most: a claim left behind is free once
        its holder has ended, and swept. Returns whether it went."""
        key = claim_key(cli_session_id)
        with anyio.move_on_after(self.release_timeout):
            try:
                entry = await self._get(key)
                if entry is None:
                    return False
                holder, pending = _parse(entry.value)
                if holder != session_id or (pending_only and not pending):
                    return False
                await self._purge(key, int(entry.revision))
                return True
            except Exception as exc:
                _log.info("cluster.claim_release_failed", session_id=session_id, error=repr(exc))
                return False
        _log.info("cluster.claim_release_timed_out", session_id=session_id)
        return False

    async def sweep(self) -> int:
        """Purge the claims whose holder has ended (what a crash or a failed release left
        behind); pending claims expire on the server. Returns how many went."""
        removed = 0
        for key, value, revision in await self._entries():
            holder, pending = _parse(value)
            if pending:
                continue
            copy = self._registry.sessions.get(holder)
            if copy is not None and _live(copy[0].info):
                continue
            if await self._holds(holder, pending):  # the bucket, not a copy that may lag
                continue
            try:
                await self._purge(key, revision)
            except Exception as exc:
                if not is_wrong_last_sequence(exc):
                    raise
                continue  # claimed anew meanwhile
            removed += 1
        if removed:
            _log.info("cluster.claims_swept", removed=removed)
        return removed

    # -- the bucket ----------------------------------------------------------------------

    def _subject(self, key: str) -> str:
        return f"$KV.{self.config.resumes_bucket}.{key}"

    async def _create(self, key: str, value: bytes, ttl: int | None) -> int | None:
        """Create the key; ``None`` when it exists."""
        from nats.js.errors import KeyWrongLastSequenceError

        try:
            return int(await self.kv.create(key, value, msg_ttl=ttl))
        except KeyWrongLastSequenceError:
            return None

    async def _write(self, key: str, value: bytes, *, last: int, ttl: int | None = None) -> int:
        """Write the key if it is still at revision ``last``."""
        headers = {EXPECTED_LAST_SUBJECT_SEQ: str(last)}
        ack = await self._js.publish(self._subject(key), value, headers=headers, msg_ttl=ttl)
        return int(ack.seq)

    async def _purge(self, key: str, last: int) -> None:
        """Remove the key if it is still at revision ``last``; the marker expires."""
        from nats.js.kv import KV_OP, KV_PURGE, MSG_ROLLUP_SUBJECT

        headers = {
            KV_OP: KV_PURGE,
            "Nats-Rollup": MSG_ROLLUP_SUBJECT,
            EXPECTED_LAST_SUBJECT_SEQ: str(last),
        }
        await self._js.publish(self._subject(key), b"", headers=headers, msg_ttl=_MARKER_TTL)

    async def _get(self, key: str) -> Any:
        from nats.js.errors import KeyDeletedError, KeyNotFoundError

        try:
            entry = await self.kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            return None
        return entry if entry.value else None

    async def _entries(self) -> list[tuple[str, bytes, int]]:
        """Every claim in the bucket now: key, value, revision."""
        watcher: Any = await self.kv.watchall(ignore_deletes=True)
        found: list[tuple[str, bytes, int]] = []
        try:
            async for entry in watcher:
                if entry is None:
                    break
                if entry.value:
                    found.append((entry.key, entry.value, int(entry.revision)))
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await watcher.stop()
                except Exception as exc:
                    _log.debug("cluster.watch_stop_failed", error=repr(exc))
        return found

    # -- holders -------------------------------------------------------------------------

    def _refuse_if_open(self, cli_session_id: str, session_id: str) -> None:
        # The claim decides; this only answers early from the registry copy (and covers a
        # session started by a worker of an earlier version, which claimed nothing).
        for record, _ in list(self._registry.sessions.values()):
            info = record.info
            if info.cli_session_id == cli_session_id and info.id != session_id and _live(info):
                raise _in_use(cli_session_id, info.id)

    async def _holds(self, session_id: str, pending: bool) -> bool:
        found = await self._registry.get(session_id)
        if found is None:
            # No record: a pending claim's create is still placing it (the server drops
            # the claim after its TTL if that create died); a confirmed one's session
            # closed so long ago that its record expired.
            return pending
        return _live(found[0].info)


def _parse(value: bytes) -> tuple[str, bool]:
    """A claim's holder and whether it is pending (a value of an earlier version, "<holder>
    <wall clock>", counts as confirmed)."""
    holder, _, rest = value.decode(errors="replace").partition(" ")
    return holder, rest.encode() == _PENDING


def _in_use(cli_session_id: str, holder: str | None) -> CliSessionInUseError:
    where = f"session {holder}" if holder else "another session"
    return CliSessionInUseError(
        f"CLI session {cli_session_id} is open already in {where} (close it first, or fork)"
    )
