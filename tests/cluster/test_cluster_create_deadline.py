"""Placement stamps every create attempt with its own deadline: when that attempt stops
waiting (now plus ``create_timeout``), so the worker can refuse a create it gets to late."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from adapter.backend import SessionInfo
from adapter.cluster import ClusterConfig, placement
from adapter.cluster.placement import place_session
from adapter.cluster.wire import CreateSession, ErrorBody, Reply, decode_command, encode

pytestmark = pytest.mark.anyio


class _Workers:
    """The registry's part that placement reads: two known workers."""

    def __init__(self) -> None:
        self.workers = {"w1": object(), "w2": object()}

    def candidates(self, labels: dict[str, str], *, exclude: str | None = None) -> list[str]:
        return ["w1", "w2"]

    def note_placed(self, worker_id: str) -> None:
        pass


class _Nats:
    """Records the requests; the first worker declines, the second takes the session."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, CreateSession]] = []

    async def request(self, subject: str, payload: bytes, timeout: float) -> Any:
        command = decode_command(payload)
        assert isinstance(command, CreateSession)
        self.sent.append((subject, command))
        if len(self.sent) == 1:
            return SimpleNamespace(data=encode(Reply(error=ErrorBody("declined", "full"))))
        return SimpleNamespace(data=encode(Reply(info=SessionInfo(id="s", owner="w2"))))


async def test_each_attempt_carries_its_own_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # A wall clock that moves on 1000 s between readings: each attempt reads it afresh.
    readings = iter([1000.0, 2000.0])
    monkeypatch.setattr(placement, "time", SimpleNamespace(time=lambda: next(readings)))
    config = dataclasses.replace(ClusterConfig(prefix="p"), create_timeout=42.0)
    nc = _Nats()
    command = CreateSession(session_id="s", created_at=7.0)
    reply = await place_session(nc, _Workers(), config, command)  # type: ignore[arg-type]
    assert reply.info is not None and "w2" == reply.info.owner
    expected = [
        (config.worker_create_subject("w1"), msgspec.structs.replace(command, deadline=1042.0)),
        (config.worker_create_subject("w2"), msgspec.structs.replace(command, deadline=2042.0)),
    ]
    assert expected == nc.sent


async def test_the_queue_group_attempts_carry_deadlines_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readings = iter([1000.0, 2000.0])
    monkeypatch.setattr(placement, "time", SimpleNamespace(time=lambda: next(readings)))
    config = dataclasses.replace(ClusterConfig(prefix="p"), create_timeout=42.0)
    nc = _Nats()
    nobody = _Workers()
    nobody.workers = {}
    nobody.candidates = lambda labels, exclude=None: []  # type: ignore[method-assign]
    reply = await place_session(nc, nobody, config, CreateSession())  # type: ignore[arg-type]
    assert reply.info is not None
    assert [(config.create_subject, 1042.0), (config.create_subject, 2042.0)] == [
        (subject, sent.deadline) for subject, sent in nc.sent
    ]
