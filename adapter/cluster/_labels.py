"""A gateway's writes of a session's record: relabelling a closed session, and deleting one.

An open session's record is its worker's to write (a :class:`~adapter.cluster.wire.Label`
command renames or archives it there). Once closed, no worker writes it again (its final
record expires after ``closed_retention``): the gateway rewrites it itself, conditional on
the revision it read, so two gateways relabelling at once never lose a change silently (the
loser reads again and retries). Deleting writes a last record marked ``removed`` that expires
within a second: every watcher (each gateway's session list) sees it go, then the key is gone.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from claudecode import UsageError

from ..backend import SessionInfo, clean_title
from ..manager import UnknownSessionError
from .fencing import is_wrong_last_sequence
from .registry import Registry

__all__ = ("relabel_closed", "remove_closed")

#: Conditional writes tried before giving up (each one lost to another writer).
_TRIES = 5
#: Seconds a removed session's last record stays (long enough for every watcher to see it).
_REMOVED_TTL = 1.0


async def _rewrite(
    registry: Registry,
    session_id: str,
    change: Callable[[SessionInfo], SessionInfo],
    ttl: float,
) -> SessionInfo:
    for _ in range(_TRIES):
        found = await registry.get(session_id)
        if found is None or found[0].info.removed:
            raise UnknownSessionError(f"no session {session_id!r}")
        record, revision = found
        if record.info.state != "closed":
            raise UsageError(f"session {session_id!r} is open: its worker writes its record")
        info = change(record.info)
        try:
            await registry.put(
                msgspec.structs.replace(record, info=info), ttl=ttl, revision=revision
            )
        except Exception as exc:
            if is_wrong_last_sequence(exc):
                continue  # written meanwhile: read it again
            raise
        return info
    raise UsageError(f"session {session_id!r} kept changing; try again")


async def relabel_closed(
    registry: Registry,
    session_id: str,
    *,
    title: str | None,
    archived: bool | None,
    retention: float,
) -> SessionInfo:
    """Rename and/or archive a closed session (kept ``retention`` seconds from now)."""
    title = clean_title(title) if title is not None else None

    def change(info: SessionInfo) -> SessionInfo:
        return msgspec.structs.replace(
            info,
            title=info.title if title is None else title,
            archived=info.archived if archived is None else archived,
        )

    return await _rewrite(registry, session_id, change, retention)


async def remove_closed(registry: Registry, session_id: str) -> None:
    """Delete a closed session: its last record says ``removed`` and soon expires."""
    await _rewrite(
        registry,
        session_id,
        lambda info: msgspec.structs.replace(info, removed=True),
        _REMOVED_TTL,
    )
