"""The registry's state follows every turn at once, not at the next periodic refresh: a
completed turn is ``idle`` (also after a second prompt and a ``set_model`` between turns).

The periodic refresh is pushed out of reach, so only the worker's "something was published"
signal can bring the record up to date (real nats-server, fake CLI).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.backend import SessionSpec
from adapter.cluster import LocalNatsServer
from adapter.cluster import _records as cluster_records
from claudecode.testing import script, text_turn
from tests.support.waits import until_complete

from ._support import fast_config, running, wait_state, worker_defaults

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_the_record_is_idle_after_each_turn(
    nats_server: LocalNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_records, "REFRESH", 3600.0)
    body = script(text_turn("one"), text_turn("two"), text_turn("three"))
    async with running(nats_server, fast_config(), worker_defaults(tmp_path, body)) as (
        backend,
        _,
    ):
        info = await backend.create(SessionSpec(policy="autonomous"))
        async with backend.subscribe(info.id, after_seq=0) as events:
            for n, text in enumerate(("first", "second", "third")):
                if n == 2:
                    await backend.set_model(info.id, "claude-haiku-4-5")
                await backend.prompt(info.id, text)
                await until_complete(events)
                idle = await wait_state(backend, info.id, "idle")
                assert "idle" == idle.status
        await backend.close(info.id)
        closed = await wait_state(backend, info.id, "closed")
        assert (closed.status, closed.status_reason) == ("terminated", None)


def test_record_refreshes_are_spread_not_in_step() -> None:
    # Sessions prompted together must not refresh their records in the same instant every
    # period: each period is drawn anew around _REFRESH.
    periods = [cluster_records.refresh_period() for _ in range(500)]
    low, high = cluster_records.REFRESH * 0.5, cluster_records.REFRESH * 1.5
    assert all(low <= period < high for period in periods)
    assert max(periods) - min(periods) > cluster_records.REFRESH * 0.5
    assert sum(periods) / len(periods) == pytest.approx(cluster_records.REFRESH, rel=0.1)
