"""set_effort through a cluster gateway: the command crosses NATS to the owning worker, whose
CLI gets the apply_flag_settings request; an unknown level comes back as a UsageError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter.backend import SessionSpec
from adapter.cluster import LocalNatsServer
from claudecode import UsageError
from claudecode.testing import script

from ._support import fast_config, running, worker_defaults

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_set_effort_reaches_the_workers_cli(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    record = tmp_path / "record.jsonl"
    defaults = worker_defaults(tmp_path, script(record_path=str(record)))
    async with running(nats_server, fast_config(), defaults) as (backend, _):
        info = await backend.create(SessionSpec())
        await backend.set_effort(info.id, "low")
        await backend.set_effort(info.id, None)
        with pytest.raises(UsageError, match="unknown effort 'extreme'"):
            await backend.set_effort(info.id, "extreme")
        await backend.close(info.id)
    received = [json.loads(line).get("received") for line in record.read_text().splitlines()]
    settings = [
        m["request"]["settings"]
        for m in received
        if m and m["type"] == "control_request" and m["request"]["subtype"] == "apply_flag_settings"
    ]
    assert [{"effortLevel": "low"}, {"effortLevel": None}] == settings
