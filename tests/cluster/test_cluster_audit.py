"""The audit log of a deployment with several gateways: every `serve --nats --audit-log`
gateway sees every session end, yet one session's end is one ``session_end`` record across
all their audit logs, whichever gateway created or closed it (a `worker` process and the
fake CLI behind it, on a real nats-server). A gateway whose claim gets no answer writes the
record anyway."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from structlog.testing import capture_logs

from adapter.audit import AuditLog
from adapter.backend import SessionSpec
from adapter.cluster import ClusterBackend, ClusterWorker, LocalNatsServer, NatsSettings
from adapter.owners import LOCAL, acting_as, owned
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.timeouts import HANG_GUARD, PROCESSES_GUARD
from tests.support.waits import eventually, wait_until

from ._support import (
    Processes,
    fast_config,
    processes,
    start_gateway,
    start_worker,
    worker_defaults,
)

pytestmark = [pytest.mark.nats, pytest.mark.server, pytest.mark.slow]

#: What a gateway logs (at debug) when another one records a session's end.
ELSEWHERE = "cluster.end_recorded_elsewhere"


def records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def ends(logs: list[Path], session_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Every ``session_end`` of ``session_id``, as (the audit log's name, the record)."""
    return [
        (log.stem, r)
        for log in logs
        for r in records(log)
        if r["action"] == "session_end" and r.get("session") == session_id
    ]


def decided(procs: Processes, logs: list[Path], session_id: str) -> bool:
    """Whether every gateway has dealt with the end of ``session_id``: written its record,
    or logged that another one records it."""
    written = {name for name, _ in ends(logs, session_id)}
    return all(
        log.stem in written
        or any(
            ELSEWHERE in line and session_id in line for line in procs.log(log.stem).splitlines()
        )
        for log in logs
    )


def test_one_session_end_is_one_record_across_the_gateways(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = fast_config()
    cli = fake_cli_command(script(text_turn("Done.")), tmp_path / "fake")
    logs = [tmp_path / f"g{n}.jsonl" for n in (1, 2, 3)]
    with processes(tmp_path) as procs:
        start_worker(procs, nats_server, config, "w1", cli, tmp_path)
        urls = [
            start_gateway(procs, nats_server, config, "-vv", "--audit-log", str(log), name=log.stem)
            for log in logs
        ]

        def created(url: str) -> str | None:
            with httpx.Client(base_url=url, timeout=PROCESSES_GUARD) as http:
                response = http.post("/api/sessions", json={})
            return str(response.json()["id"]) if response.status_code == 201 else None

        # one session closed through the gateway that did not create it, one through its own
        first = wait_until(lambda: created(urls[0]), PROCESSES_GUARD, poll=0.2, what="w1 known")
        second = wait_until(lambda: created(urls[1]), PROCESSES_GUARD, poll=0.2, what="w1 known")
        for session_id in (first, second):
            with httpx.Client(base_url=urls[1], timeout=PROCESSES_GUARD) as http:
                assert 200 == http.delete(f"/api/sessions/{session_id}").status_code
        for session_id in (first, second):
            wait_until(
                lambda: decided(procs, logs, session_id),  # noqa: B023 - used at once
                PROCESSES_GUARD,
                poll=0.1,
                what=f"every gateway decided on {session_id}'s end",
            )
            found = ends(logs, session_id)
            assert 1 == len(found), found  # one record, in one of the three logs
            record = found[0][1]
            assert ("local", None) == (record["user"], record.get("reason"))
        creates = [
            r["session"] for log in logs for r in records(log) if r["action"] == "session_create"
        ]
        assert sorted([first, second]) == sorted(creates)


@pytest.mark.anyio
async def test_an_end_whose_claim_fails_is_recorded_all_the_same(tmp_path: Path) -> None:
    """A gateway NATS refuses the ends bucket (an account set up before it existed): its
    claim gets no answer, and it writes the record anyway, with a warning: a record twice
    beats none."""
    config = dataclasses.replace(fast_config(), request_timeout=2.0)
    ends = f"{config.prefix}_ends"
    refused = [
        f"$JS.API.STREAM.CREATE.KV_{ends}",
        f"$JS.API.STREAM.INFO.KV_{ends}",
        f"$KV.{ends}.>",
    ]
    users = f"""authorization {{ users = [
      {{ user: worker, password: w1 }},
      {{ user: gateway, password: g1,
         permissions: {{ publish: {{ allow: [">"], deny: {json.dumps(refused)} }} }} }}
    ] }}"""
    log = tmp_path / "audit.jsonl"
    with LocalNatsServer(tmp_path / "nats", extra_config=users) as server:
        as_worker = NatsSettings(servers=[server.url.replace("//", "//worker:w1@")])
        as_gateway = NatsSettings(servers=[server.url.replace("//", "//gateway:g1@")])
        defaults = worker_defaults(tmp_path, script(text_turn("Done.")))
        async with (
            ClusterWorker(as_worker, config, defaults, idle_timeout=None),
            ClusterBackend(as_gateway, config) as cluster,
        ):
            gateway = owned(cluster, audit=AuditLog(log))
            await eventually(lambda: cluster.registry and cluster.registry.workers)
            with capture_logs() as logs, acting_as(LOCAL):
                async with gateway.auditing_ends():
                    info = await gateway.create(SessionSpec())
                    await gateway.close(info.id)
                    with anyio.fail_after(HANG_GUARD):
                        found = await eventually(lambda: ends_in(log, info.id))
    assert [("local", info.id)] == [(r["user"], r["session"]) for r in found]
    [warning] = [e for e in logs if e["event"] == "owners.end_claim_failed"]
    assert info.id == warning["session_id"]


def ends_in(path: Path, session_id: str) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["action"] == "session_end" and r["session"] == session_id]
