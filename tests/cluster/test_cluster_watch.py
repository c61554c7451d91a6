"""A gateway's watch() reports the registry changes that matter, as LocalBackend's does: a
record whose only news is its seq and last activity (a busy session's periodic refresh) is
not reported; a state, model, permission or owner change is, and so is the first record."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from adapter.backend import SessionInfo
from adapter.cluster import SessionRecord
from adapter.cluster._watchers import Watchers
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


def pending(watchers: Watchers) -> list[SessionInfo]:
    """What the (only) watcher has pending now, taken: publish() is synchronous."""
    (latest, _), *_ = watchers._all
    taken = list(latest.values())
    latest.clear()
    return taken


async def test_only_changes_that_matter_are_reported() -> None:
    watchers = Watchers()
    busy = SessionInfo(id="s1", status="active", state="busy", last_seq=10, owner="w1")
    async with watchers.watch() as changes:
        watchers.publish(SessionRecord(info=busy))
        with anyio.fail_after(HANG_GUARD):
            assert busy == await changes.__anext__()

        for seq in (20, 30, 40):  # the periodic refresh of a busy session
            watchers.publish(
                SessionRecord(info=msgspec.structs.replace(busy, last_seq=seq, last_activity=seq))
            )
        assert [] == pending(watchers)

        waiting = msgspec.structs.replace(
            busy, state="waiting", pending_permissions=("p1",), last_seq=41
        )
        moved = msgspec.structs.replace(busy, owner="w2", last_seq=42)
        watchers.publish(SessionRecord(info=waiting))
        assert [waiting] == pending(watchers)
        watchers.publish(SessionRecord(info=moved))
        assert [moved] == pending(watchers)

        closed = msgspec.structs.replace(moved, status="terminated", state="closed")
        watchers.publish(SessionRecord(info=closed))
        assert [closed] == pending(watchers)
        assert {} == watchers._reported  # nothing kept for a closed session
