"""On a cluster, sessions are renamed, archived and deleted as in one process, and their cost
is counted: the worker keeps title, archive flag and cost in the session's record (a prompt
names an untitled session), a gateway relabels or deletes a closed one in the registry
itself, and every gateway's list follows (real nats-server, a worker, two gateways)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.backend import SessionInfo, SessionSpec
from adapter.cluster import ClusterBackend, LocalNatsServer, NatsSettings
from adapter.events import Complete
from adapter.manager import UnknownSessionError
from claudecode import UsageError
from claudecode.testing import script, text_turn
from tests.support.waits import eventually, until_complete

from ._support import fast_config, running, wait_state, worker_defaults

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_titles_archive_cost_and_delete_on_a_cluster(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = fast_config()
    body = script(text_turn("one"), text_turn("two"))
    async with (
        running(nats_server, config, worker_defaults(tmp_path, body)) as (backend, _),
        ClusterBackend(NatsSettings(servers=[nats_server.url]), config) as other,
    ):
        info = await backend.create(SessionSpec(policy="autonomous"))
        assert (info.title, info.cost_usd, info.archived) == (None, 0.0, False)
        cost = 0.0
        async with backend.subscribe(info.id, after_seq=0) as events:
            for text in ("fix the flaky parser test\nand say why", "and now?"):
                await backend.prompt(info.id, text)
                done = await until_complete(events)
                cost += sum(e.cost_usd or 0.0 for e in done if isinstance(e, Complete))
        assert cost > 0

        async def counted(gateway: ClusterBackend) -> SessionInfo | None:
            found = await gateway.info(info.id)
            return found if found.cost_usd == pytest.approx(cost) else None

        # the first prompt named it; both turns' cost is in the record, for every gateway
        for gateway in (backend, other):
            seen = await eventually(lambda g=gateway: counted(g), poll=0.05, what="the cost")
            assert "fix the flaky parser test" == seen.title

        # open: renamed and archived on its worker; the other gateway's list follows
        async with other.watch() as changes:
            renamed = await backend.label(info.id, title="  The parser\n fix ", archived=True)
            assert ("The parser fix", True) == (renamed.title, renamed.archived)
            async for change in changes:
                if change.id == info.id and change.title == "The parser fix":
                    assert change.archived
                    break
        with pytest.raises(UsageError, match="empty"):
            await backend.label(info.id, title="   ")
        with pytest.raises(UsageError, match="close it first"):
            await backend.forget(info.id)

        # closed: the gateway relabels the record; the cost and the rest stay
        await backend.close(info.id)
        await wait_state(backend, info.id, "closed")
        back = await other.label(info.id, archived=False, title="Closed one")
        assert ("Closed one", False) == (back.title, back.archived)
        assert back.cost_usd == pytest.approx(cost) and back.state == "closed"
        assert "Closed one" == (await backend.info(info.id)).title

        # deleted: gone from every gateway's list, watchers told once with removed
        async with backend.watch() as changes:
            await other.forget(info.id)
            async for change in changes:
                if change.id == info.id and change.removed:
                    break
        for gateway in (backend, other):
            assert info.id not in [s.id for s in await gateway.list()]
            with pytest.raises(UnknownSessionError):
                await gateway.info(info.id)
        with pytest.raises(UnknownSessionError):
            await backend.forget(info.id)
        with pytest.raises(UnknownSessionError):
            await backend.label(info.id, title="again")
