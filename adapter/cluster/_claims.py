"""One open session per stored CLI session across the cluster: claims in a KV bucket.

Two CLIs resuming one conversation would both append to its transcript, so a gateway's
``create`` of a spec that resumes (without ``fork``) a CLI session first claims the CLI
session id in ``<prefix>_resumes``: a key per CLI session id whose value is the bridge
session id that holds it. The claim is a KV ``create`` (refused when the key exists), so of
two gateways resuming one session at once, one wins. A session created otherwise claims
no claim; a resume of the CLI session it started is refused while it is open too (it is
found by its CLI session id in the registry).

A claim is released when its session closes (:meth:`ResumeClaims.release`) and, whoever
ended the session — its worker on idle timeout or a crashed CLI, the sweep giving up on a
lost session — a claim whose holder's record is gone, ``closed``, ``terminated`` or
``errored`` counts as free (and so does one with no record a while after it was made: its
gateway died while placing it): the next claim takes it over with an update at the revision it
read, which again only one claimer wins. A lost session resumed on another worker by the
sweep keeps its bridge id, so it keeps its claim.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from claudecode._log import get_logger

from ..backend import CliSessionInUseError
from .config import ClusterConfig, valid_token
from .registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext
    from nats.js.kv import KeyValue

__all__ = ("ResumeClaims", "claim_key")

_log = get_logger("claudecode.adapter.cluster.claims")

#: A holder in one of these no longer holds its CLI session.
_ENDED_STATUSES = ("terminated", "errored")


def claim_key(cli_session_id: str) -> str:
    """The bucket key of a CLI session id (a digest when it is no valid KV key)."""
    if valid_token(cli_session_id):
        return cli_session_id
    return "h-" + hashlib.sha256(cli_session_id.encode()).hexdigest()


class ResumeClaims:
    """The claims bucket of a deployment, as one gateway uses it."""

    def __init__(self, js: JetStreamContext, config: ClusterConfig, registry: Registry) -> None:
        self._js = js
        self.config = config
        self._registry = registry
        self._kv: KeyValue | None = None

    async def open(self) -> None:
        """Open (create) the bucket."""
        from nats.js.errors import BucketNotFoundError

        try:
            self._kv = await self._js.key_value(self.config.resumes_bucket)
        except BucketNotFoundError:
            self._kv = await self._js.create_key_value(
                bucket=self.config.resumes_bucket, history=1, replicas=self.config.replicas
            )

    @property
    def kv(self) -> KeyValue:
        """The bucket."""
        assert self._kv is not None, "the claims bucket is not open"
        return self._kv

    async def claim(self, cli_session_id: str, session_id: str) -> int:
        """Claim ``cli_session_id`` for ``session_id``; returns the claim's revision.

        Raises:
            CliSessionInUseError: an open session holds it, or another claim won meanwhile.
        """
        from nats.js.errors import KeyDeletedError, KeyNotFoundError, KeyWrongLastSequenceError

        self._refuse_if_open(cli_session_id)
        key = claim_key(cli_session_id)
        value = _value(session_id)
        try:
            return int(await self.kv.create(key, value))
        except KeyWrongLastSequenceError:
            pass
        try:
            entry = await self.kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            entry = None
        try:
            if entry is None or not entry.value:  # released meanwhile
                return int(await self.kv.create(key, value))
            holder, claimed_at = _parse(entry.value)
            if await self._holds(holder, claimed_at):
                raise _in_use(cli_session_id, holder)
            # Its holder ended: take it over at the revision read, so of two claimers that
            # both found it free one wins.
            return int(await self.kv.update(key, value, last=entry.revision))
        except KeyWrongLastSequenceError:
            raise _in_use(cli_session_id, None) from None

    async def release(self, cli_session_id: str, session_id: str) -> None:
        """Drop the claim if ``session_id`` still holds it (best effort: a claim left
        behind is free once its holder has ended)."""
        from nats.js.errors import KeyDeletedError, KeyNotFoundError

        key = claim_key(cli_session_id)
        try:
            entry = await self.kv.get(key)
            if entry.value and _parse(entry.value)[0] == session_id:
                await self.kv.delete(key, last=entry.revision)
        except (KeyNotFoundError, KeyDeletedError):
            return
        except Exception as exc:
            _log.debug("cluster.claim_release_failed", session_id=session_id, error=repr(exc))

    def _refuse_if_open(self, cli_session_id: str) -> None:
        # A session that started this CLI session fresh (or forked into it) holds it without
        # a claim: the registry's copy names it once its CLI reported the id.
        for record, _ in list(self._registry.sessions.values()):
            info = record.info
            if (
                info.cli_session_id == cli_session_id
                and info.state != "closed"
                and info.status not in _ENDED_STATUSES
            ):
                raise _in_use(cli_session_id, info.id)

    async def _holds(self, session_id: str, claimed_at: float) -> bool:
        found = await self._registry.get(session_id)
        if found is None:
            # No record yet: its create is still placing it, unless that has taken longer
            # than a create may (its gateway died meanwhile), or its closed record expired.
            return time.time() - claimed_at < 2 * self.config.create_timeout
        info = found[0].info
        return info.state != "closed" and info.status not in _ENDED_STATUSES


def _value(session_id: str) -> bytes:
    """A claim's value: the holder's session id and when it claimed (wall clock)."""
    return f"{session_id} {time.time():.3f}".encode()


def _parse(value: bytes) -> tuple[str, float]:
    holder, _, at = value.decode(errors="replace").partition(" ")
    try:
        return holder, float(at)
    except ValueError:
        return holder, 0.0


def _in_use(cli_session_id: str, holder: str | None) -> CliSessionInUseError:
    where = f"session {holder}" if holder else "another session"
    return CliSessionInUseError(
        f"CLI session {cli_session_id} is open already in {where} (close it first, or fork)"
    )
