"""An ACP agent in front of a cluster lists and loads the cluster's stored sessions.

The official ACP client (``@agentclientprotocol/sdk``) drives an agent whose sessions run on
a ``worker`` process with the real CLI (the fake Messages API behind it), its own HOME, on a
real nats-server: first an agent embedded in front of a
:class:`~adapter.cluster.ClusterBackend` (``acp_agent/cluster_gateway.py``), then
``claudecode-bridge acp --nats`` (the editor restarted). The agent's machine has no CLI files
of its own (an empty HOME): what ``session/list`` shows and ``session/load`` replays comes
from the transcripts the worker mirrors, which the gateway keeps a copy of
(``ClusterBackend.history_dir``); the loaded session resumes on the worker with its earlier
conversation.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import anyio
import pytest

from adapter.cluster import ClusterBackend, ClusterConfig, LocalNatsServer, NatsSettings
from tests.support.acp_client import drive, finish, start, text_of
from tests.support.cluster import until_a_worker_is_known, until_mirrored
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import wait_until

from ._cluster import worker, worker_env
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.node, pytest.mark.nats, pytest.mark.slow]

GATEWAY = Path(__file__).resolve().parents[1] / "acp_agent" / "cluster_gateway.py"
ROOT = Path(__file__).resolve().parents[2]


async def _until_mirrored(url: str, config: ClusterConfig, source: Path, sid: str) -> int:
    """Wait until the worker's transcript is wholly in the stream; its size."""
    nats = NatsSettings(servers=[url], name="test-probe")
    async with ClusterBackend(nats, config, history=False) as probe:
        return await until_mirrored(probe._js, config, source, sid, PROCESSES_GUARD)


def _until_copied(tmp: Path, sid: str, size: int) -> None:
    """Wait until the gateway's copy (under its TMPDIR) holds the whole transcript."""

    def copied() -> bool:
        copies = list(tmp.glob(f"bridge-history-*/projects/*/{sid}.jsonl"))
        return bool(copies) and copies[0].stat().st_size == size

    wait_until(copied, PROCESSES_GUARD, poll=0.05, what="the gateway's copy of the transcript")


def test_a_cluster_session_is_listed_and_loads_with_its_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    fake_api.add_main(text_turn("The word is teapot."), text_turn("It was teapot."))
    config = ClusterConfig(prefix=f"h{uuid.uuid4().hex[:8]}")
    cwd = str(cli_env.cwd)
    worker_home = tmp_path / "home-worker"
    gateway_home = tmp_path / "home-gateway"
    gateway_home.mkdir()
    gateway_tmp = tmp_path / "gateway-tmp"
    gateway_tmp.mkdir()
    go = tmp_path / "copied"

    def gateway_env() -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "HOME": str(gateway_home),
            "TMPDIR": str(gateway_tmp),
        }

    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker(
            "w1", server.url, config, cli_command, worker_env(cli_env, worker_home),
            tmp_path / "w1.log", "--cwd", cwd,
        ),
    ):  # fmt: skip
        anyio.run(until_a_worker_is_known, server.url, config)
        agent = [sys.executable, str(GATEWAY), server.url, config.prefix]
        first = drive(
            agent,
            [
                {"op": "initialize"},
                {"op": "new", "name": "a", "cwd": cwd},
                {"op": "prompt", "session": "a", "prompt": "remember the word teapot"},
                {"op": "end"},
            ],
            tmp_path / "acp-1",
            env=gateway_env(),
            cwd=cli_env.cwd,
        )
        assert {"stopReason": "end_turn"} == first["results"][2], first["results"]
        sid = first["sessions"]["a"]
        size = anyio.run(_until_mirrored, server.url, config, worker_home / ".claude", sid)

        # A second agent process (the editor restarted), on a machine without the CLI's
        # files: it lists and loads once its copy of the mirror has the whole conversation.
        before = len(fake_api.main_requests())
        command = [sys.executable, "-m", "adapter", "acp", "--policy", "autonomous"]
        command += ["--nats", server.url, "--nats-prefix", config.prefix]
        client = start(
            command,
            [
                {"op": "initialize"},
                {"op": "wait_file", "path": str(go)},
                {"op": "list", "cwd": cwd},
                {"op": "list"},
                {"op": "load", "name": "old", "sessionId": sid, "cwd": cwd},
                {"op": "prompt", "session": "old", "prompt": "what was the word?"},
                {"op": "end"},
            ],
            tmp_path / "acp-2",
            env=gateway_env(),
            cwd=cli_env.cwd,
        )
        try:
            _until_copied(gateway_tmp, sid, size)
            go.touch()
            second = finish(client, tmp_path / "acp-2")
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    assert not (gateway_home / ".claude").exists(), "the gateway's machine has no CLI files"
    _, _, here, everywhere, loaded, answered = second["results"]
    for listed in (here, everywhere):
        [stored] = [s for s in listed["sessions"] if s["sessionId"] == sid]
        assert (cwd, "remember the word teapot") == (stored["cwd"], stored["title"])
        assert stored["updatedAt"].endswith("Z")
    assert "error" not in loaded, loaded
    assert {"stopReason": "end_turn"} == answered, second["results"]
    # The history came before the load's answer, then the new turn.
    replayed = second["updates"]["old"]
    user = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert ["remember the word teapot"] == user[:1]
    assert "The word is teapot.It was teapot." == text_of(second, "old")
    # The session resumed on the worker with its context: the model got the earlier turn.
    later = fake_api.main_requests()[before:]
    assert later, "the loaded session never reached the model"
    assert "remember the word teapot" in json.dumps(later[-1].body["messages"])
    assert 0 == second["exit"]["code"], second["stderr"][-4000:]
