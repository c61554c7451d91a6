"""The real CLI behind two cluster worker processes, each with its own HOME (nothing shared
on disk): the conversation a worker's CLI writes is mirrored into JetStream; after that
worker is killed (-9), the session resumes on the other worker from the mirror, and the next
prompt reaches the model with the earlier conversation (the fake Messages API's log)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    LocalNatsServer,
    NatsSettings,
    die_with_parent,
)
from adapter.cluster.transcripts import find_transcript
from adapter.events import ErrorEvent, MessageChunk
from tests.support.cluster import until_mirrored, until_moved
from tests.support.timeouts import NODE_GUARD
from tests.support.waits import eventually, until_complete

from ._cluster import worker, worker_env
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.nats, pytest.mark.slow, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    """nats-py is an asyncio library."""
    return "asyncio"


@contextlib.contextmanager
def serve_gateway(
    url: str, config: ClusterConfig, home: Path, tmp_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """A `serve --nats` gateway process with ``home`` as its HOME."""
    with open(tmp_path / "gateway.log", "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "adapter", "serve", "--port", "0", "--nats", url,
                "--nats-prefix", config.prefix, "--state-dir", str(tmp_path / "state"), "-v",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**os.environ, "HOME": str(home)},
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )  # fmt: skip
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


async def test_a_killed_workers_session_resumes_elsewhere_from_the_mirror(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    fake_api.add_main(text_turn("first answer"), text_turn("second answer"))
    config = ClusterConfig(prefix=f"r{uuid.uuid4().hex[:8]}")
    homes = {name: tmp_path / f"home-{name}" for name in ("wa", "wb")}
    env_a, env_b = (worker_env(cli_env, homes[name]) for name in ("wa", "wb"))
    cwd = str(cli_env.cwd)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker(
            "wa",
            server.url,
            config,
            cli_command,
            env_a,
            tmp_path / "wa.log",
            "--cwd",
            cwd,
            "--label",
            "pin=a",
        ) as wa,
        worker("wb", server.url, config, cli_command, env_b, tmp_path / "wb.log", "--cwd", cwd),
    ):
        async with ClusterBackend(NatsSettings(servers=[server.url]), config) as backend:
            registry = backend._require()
            await eventually(lambda: len(registry.workers) >= 2, NODE_GUARD, poll=0.1)
            info = await backend.create(SessionSpec(labels={"pin": "a"}))
            assert "wa" == info.owner and info.cli_session_id
            sid = info.cli_session_id
            async with backend.subscribe(info.id, after_seq=0) as events:
                await backend.prompt(info.id, "first prompt")
                first = await until_complete(events, guard=NODE_GUARD)
                assert "first answer" == "".join(
                    e.text for e in first if isinstance(e, MessageChunk)
                )
                # Wait until the whole file is mirrored, then kill the worker and its CLI.
                await until_mirrored(backend._js, config, homes["wa"] / ".claude", sid, NODE_GUARD)
                os.killpg(wa.pid, signal.SIGKILL)
                lost = []
                with anyio.fail_after(NODE_GUARD):
                    async for event in events:
                        lost.append(event)
                        if isinstance(event, ErrorEvent):
                            break
                if "interrupted" == lost[-1].kind:  # the registry still said busy
                    lost += await until_complete(events, guard=NODE_GUARD)
                else:
                    assert "cli_exited" == lost[-1].kind
                now = await until_moved(backend, info.id, "wb", NODE_GUARD)
                assert sid == now.cli_session_id
                await backend.prompt(info.id, "second prompt")
                second = await until_complete(events, guard=NODE_GUARD)
            assert "second answer" == "".join(e.text for e in second if isinstance(e, MessageChunk))
            seqs = [e.seq for e in first + lost + second]
            assert list(range(1, len(seqs) + 1)) == seqs
    # Nothing was shared on disk: worker b's CLI found the conversation in its own HOME,
    # restored from the mirror, and sent it to the model.
    assert find_transcript(homes["wb"] / ".claude", sid) is not None
    last = fake_api.main_requests()[-1]
    assert isinstance(last.body, dict)
    history = json.dumps(last.body["messages"])
    for text in ("first prompt", "first answer", "second prompt"):
        assert text in history


async def test_a_fork_is_mirrored_and_resumes_elsewhere(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """A session forked on another worker (resume with fork): the parent's conversation comes
    from the mirror, the fork gets an id of its own named up front, its file is mirrored as
    it grows, and after its worker is killed it resumes on the first worker with the forked
    conversation."""
    fake_api.add_main(
        text_turn("first answer"), text_turn("forked answer"), text_turn("after the kill")
    )
    config = ClusterConfig(prefix=f"f{uuid.uuid4().hex[:8]}")
    homes = {name: tmp_path / f"home-{name}" for name in ("wa", "wb")}
    env_a, env_b = (worker_env(cli_env, homes[name]) for name in ("wa", "wb"))
    cwd = str(cli_env.cwd)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker(
            "wa", server.url, config, cli_command, env_a, tmp_path / "wa.log",
            "--cwd", cwd, "--label", "pin=a",
        ),
        worker(
            "wb", server.url, config, cli_command, env_b, tmp_path / "wb.log",
            "--cwd", cwd, "--label", "pin=b",
        ) as wb,
    ):  # fmt: skip
        async with ClusterBackend(NatsSettings(servers=[server.url]), config) as backend:
            registry = backend._require()
            await eventually(lambda: len(registry.workers) >= 2, NODE_GUARD, poll=0.1)
            parent = await backend.create(SessionSpec(labels={"pin": "a"}))
            sid = parent.cli_session_id
            assert "wa" == parent.owner and sid
            async with backend.subscribe(parent.id, after_seq=0) as events:
                await backend.prompt(parent.id, "first prompt")
                await until_complete(events, guard=NODE_GUARD)
            await backend.close(parent.id)
            await until_mirrored(backend._js, config, homes["wa"] / ".claude", sid, NODE_GUARD)

            fork = await backend.create(
                SessionSpec(resume=sid, fork=True, cwd=cwd, labels={"pin": "b"})
            )
            fid = fork.cli_session_id
            assert "wb" == fork.owner and fid and fid != sid
            async with backend.subscribe(fork.id, after_seq=0) as events:
                await backend.prompt(fork.id, "fork prompt")
                forked = await until_complete(events, guard=NODE_GUARD)
                assert "forked answer" == "".join(
                    e.text for e in forked if isinstance(e, MessageChunk)
                )
                assert fid == (await backend.info(fork.id)).cli_session_id
                # The fork's own file, on worker b, mirrored as it grew.
                await until_mirrored(backend._js, config, homes["wb"] / ".claude", fid, NODE_GUARD)
                os.killpg(wb.pid, signal.SIGKILL)
                now = await until_moved(backend, fork.id, "wa", NODE_GUARD)
                assert fid == now.cli_session_id
                await backend.prompt(fork.id, "after the kill prompt")
                await until_complete(events, guard=NODE_GUARD)
    # Worker a had never run the fork: its file came from the mirror, and the model saw the
    # whole forked conversation, the parent's part included.
    assert find_transcript(homes["wa"] / ".claude", fid) is not None
    last = fake_api.main_requests()[-1]
    assert isinstance(last.body, dict)
    history = json.dumps(last.body["messages"])
    for text in ("first prompt", "first answer", "fork prompt", "forked answer"):
        assert text in history


async def test_a_gateway_lists_loads_and_resumes_the_clusters_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """A `serve --nats` gateway with no CLI files of its own (an empty HOME) lists the
    session a worker's CLI stored — from the transcripts mirror — over the WebSocket's
    `list_history`, shows its conversation when it is resumed, and the resumed session
    runs on the worker with the earlier turn visible to the model."""
    from websockets.asyncio.client import connect

    fake_api.add_main(text_turn("The first answer."), text_turn("Resumed answer."))
    config = ClusterConfig(prefix=f"h{uuid.uuid4().hex[:8]}")
    gateway_home = tmp_path / "home-gateway"
    gateway_home.mkdir()
    env = worker_env(cli_env, tmp_path / "home-w")
    cwd = str(cli_env.cwd)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker("w1", server.url, config, cli_command, env, tmp_path / "w1.log", "--cwd", cwd),
        serve_gateway(server.url, config, gateway_home, tmp_path) as gateway,
    ):
        assert gateway.stdout is not None
        line = gateway.stdout.readline().decode()
        assert "serving on http://127.0.0.1:" in line, (tmp_path / "gateway.log").read_text()
        url = line.split("serving on ", 1)[1].split()[0].replace("http://", "ws://") + "/ws"
        with anyio.fail_after(NODE_GUARD):
            async with connect(url, max_size=None) as ws:
                n = 0

                async def request(**frame: Any) -> dict[str, Any]:
                    nonlocal n
                    n += 1
                    await ws.send(json.dumps({**frame, "request_id": n}))
                    while True:
                        got: dict[str, Any] = json.loads(await ws.recv())
                        if got.get("request_id") == n:
                            return got

                async def turn(session_id: str, text: str) -> list[dict[str, Any]]:
                    ack = await request(type="prompt", session_id=session_id, text=text)
                    assert "ack" == ack["type"], ack
                    events = []
                    while True:
                        got = json.loads(await ws.recv())
                        if got["type"] == "event" and got["session_id"] == session_id:
                            events.append(got["event"])
                            if got["event"]["type"] == "complete":
                                return events

                async def created() -> dict[str, Any] | None:
                    ack = await request(type="create_session")
                    return ack if ack["type"] == "ack" else None

                ack = await eventually(created, NODE_GUARD, poll=0.2, what="the worker known")
                sid = ack["session_id"]
                cli_id = ack["session"]["cli_session_id"]
                await request(type="subscribe", session_id=sid, since_seq=0)
                await turn(sid, "remember the word teapot")
                assert "ack" == (await request(type="close_session", session_id=sid))["type"]

                async def listed_history() -> dict[str, Any] | None:
                    listed = await request(type="list_history", cwd=cwd)
                    assert "history" == listed["type"], listed
                    return listed if listed["sessions"] else None

                # the mirror reaches the gateway's copy
                listed = await eventually(listed_history, NODE_GUARD, poll=0.2, what="listed")
                [stored] = listed["sessions"]
                assert (cli_id, "remember the word teapot") == (
                    stored["session_id"],
                    stored["title"],
                )
                everywhere = await request(type="list_history")
                assert [cli_id] == [s["session_id"] for s in everywhere["sessions"]]

                ack = await request(type="create_session", resume=cli_id, cwd=cwd)
                assert "ack" == ack["type"], ack
                resumed = ack["session_id"]
                await ws.send(json.dumps({"type": "subscribe", "session_id": resumed}))
                while True:
                    snap = json.loads(await ws.recv())
                    if snap["type"] == "snapshot" and snap["session_id"] == resumed:
                        break
                assert ["remember the word teapot", "The first answer."] == [
                    e["text"] for e in snap["chat"]["entries"] if e["kind"] in ("user", "text")
                ]
                events = await turn(resumed, "what was the word?")
                [status] = [e for e in events if e["type"] == "session_status"]
                assert ("resumed", cli_id) == (status["status"], status["cli_session_id"])
    assert "teapot" in str(fake_api.main_requests()[-1].body), "the CLI sent the old turns"
    # The gateway had no CLI files: what it listed came from the mirror.
    assert not (gateway_home / ".claude").exists()
