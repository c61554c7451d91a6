"""An ACP agent in front of a cluster loses NATS in the middle of a turn: the official ACP
client (``@agentclientprotocol/sdk``) drives an agent whose sessions run on a ``worker``
process (fake CLI) through a :class:`~adapter.cluster.ClusterBackend`, on a real nats-server
that is stopped and started again (same port, same store).

* the running ``session/prompt`` answers a JSON-RPC error ``-32603`` whose message says the
  service is unavailable and whose data is ``{"reason": "unavailable", "retryable": true}``;
  a prompt meanwhile gets the same; the agent and its session stay up;
* NATS back: a prompt sent again (the client retries while the error says ``unavailable``)
  ends its turn, and the session's updates hold the whole of both turns once, in order —
  nothing the worker produced during the outage is lost.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.cluster import ClusterConfig, LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.acp_client import finish, start, text_of
from tests.support.cluster import until_a_worker_is_known
from tests.support.processes import child
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import wait_until

pytestmark = [pytest.mark.node, pytest.mark.nats, pytest.mark.slow]

GATEWAY = Path(__file__).parent / "cluster_gateway.py"
ROOT = Path(__file__).resolve().parents[2]


def _wire(work: Path) -> list[dict[str, Any]]:
    path = work / "wire.agent.ndjson"
    lines = path.read_bytes().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip().endswith(b"}")]


def _until(work: Path, what: str, predicate: Any) -> None:
    wait_until(lambda: predicate(_wire(work)), PROCESSES_GUARD, poll=0.05, what=what)


def _errors(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["error"] for m in wire if "error" in m and "method" not in m]


def test_the_prompt_answers_unavailable_and_the_session_goes_on(tmp_path: Path) -> None:
    prefix = f"acp{uuid.uuid4().hex[:8]}"
    first = "slow " * 300
    cli = fake_cli_command(
        script(text_turn(first, delay=0.02, chunk=4), text_turn("back again")), tmp_path / "fake"
    )
    work = tmp_path / "work"
    work.mkdir()
    back = tmp_path / "nats-is-back"
    steps = [
        {"op": "initialize"},
        {"op": "new", "name": "a", "cwd": str(work)},
        {"op": "prompt", "session": "a", "prompt": "talk slowly"},
        {"op": "prompt", "session": "a", "prompt": "meanwhile"},
        {"op": "wait_file", "path": str(back)},
        {"op": "prompt", "session": "a", "prompt": "again", "retryUnavailable": True},
        {"op": "end"},
    ]
    with LocalNatsServer(tmp_path / "nats") as server:
        nats = ("--nats", server.url, "--nats-prefix", prefix)
        with child(
            tmp_path / "w.log", "worker", *nats, "--id", "w1", "--cli", str(cli),
            "--cwd", str(work), "--idle-timeout", "0", "-v",
        ):  # fmt: skip
            anyio.run(until_a_worker_is_known, server.url, ClusterConfig(prefix=prefix))
            agent = [sys.executable, str(GATEWAY), server.url, prefix]
            env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(ROOT)}
            client = start(agent, steps, tmp_path / "acp", env=env, cwd=work)
            try:
                _until(
                    tmp_path / "acp",
                    "the first chunk",
                    lambda wire: any(
                        m.get("method") == "session/update"
                        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                        for m in wire
                    ),
                )
                server.stop()  # NATS goes away in the middle of the turn
                _until(tmp_path / "acp", "two errors", lambda wire: len(_errors(wire)) >= 2)
                server.start()  # same port, same store
                back.touch()
                report = finish(client, tmp_path / "acp")
            finally:
                if client.poll() is None:
                    client.kill()
                    client.wait()
    results = report["results"]
    for failed in results[2:4]:
        error = failed["error"]
        assert -32603 == error["code"], failed
        assert error["message"].startswith("Service unavailable: "), error
        assert {"reason": "unavailable", "retryable": True} == error["data"]
    assert {"stopReason": "end_turn"} == results[5]
    # Every chunk of both turns, once and in order: the rest of the first turn was followed
    # again from where the relay was when NATS went away.
    assert first + "back again" == text_of(report, "a")
    assert 0 == report["exit"]["code"], report["stderr"][-4000:]
