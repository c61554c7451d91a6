"""AcpAgent over the in-process LocalBackend and the fake CLI subprocess, driven frame by
frame in memory (asyncio and trio): permission flows the real-CLI tests cannot provoke."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
import structlog

from adapter.acp.agent import AcpAgent, AgentOptions
from adapter.acp.jsonrpc import JsonRpcError
from adapter.acp.params import cli_mcp_servers, prompt_input
from adapter.backend import SessionInfo, SessionSpec
from adapter.config import SessionConfig
from adapter.history import project_slug
from adapter.images import Image
from adapter.local import LocalBackend
from adapter.policies import PermissionPolicy
from benchmarks import procfs
from claudecode.testing import (
    fake_cli_command,
    script,
    text_block,
    text_turn,
    tool_use_block,
    turn,
)
from tests.support.timeouts import HANG_GUARD

from .memory_client import Client


def _bash_twice() -> dict[str, Any]:
    return script(
        turn(
            [tool_use_block("Bash", {"command": "ls"}, permission=True)],
            [tool_use_block("Bash", {"command": "ls -a"}, permission=True)],
            [text_block("done")],
        ),
        turn([text_block("second turn")]),
    )


async def _run(
    tmp_path: Path,
    body: dict[str, Any],
    scenario: Any,
    *,
    policy: str = "supervised",
    **config: Any,
) -> Client:
    cli = fake_cli_command(body, tmp_path / "fake")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    client = Client()
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy(policy), **config)
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults, idle_timeout=None) as backend:
            agent = AcpAgent(backend, client.agent_sends, AgentOptions(policy=policy))
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.serve, client.chunks())
                await client.request("initialize", {"protocolVersion": 1})
                rid = await client.request("session/new", {"cwd": str(work), "mcpServers": []})
                session_id = (await client.answer(rid))["result"]["sessionId"]
                await scenario(client, session_id)
                await client.inbox_send.aclose()
    return client


pytestmark = pytest.mark.anyio


async def test_reject_always_is_remembered_for_the_tool(tmp_path: Path) -> None:
    """reject_always: the second Bash call is denied without asking the editor again."""

    async def scenario(client: Client, sid: str) -> None:
        rid = await client.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        )
        ask = await client.wait_for(lambda m: m.get("method") == "session/request_permission")
        await client.send(
            {
                "id": ask["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "reject_always"}},
            }
        )
        assert {"stopReason": "end_turn"} == (await client.answer(rid))["result"]

    client = await _run(tmp_path, _bash_twice(), scenario)
    asked = [m for m in client.received if m.get("method") == "session/request_permission"]
    assert 1 == len(asked)
    finals = [
        u["status"] for u in client.updates("tool_call_update") if u.get("status") == "failed"
    ]
    assert ["failed", "failed"] == finals


async def test_the_cli_withdrawing_a_request_cancels_it_at_the_editor(tmp_path: Path) -> None:
    """A request nobody answers times out in the adapter (which denies it and interrupts the
    turn): the editor gets $/cancel_request for it, the prompt fails with an error, a late
    answer is ignored and the next prompt works."""

    async def scenario(client: Client, sid: str) -> None:
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        rid = await client.request("session/prompt", prompt)
        ask = await client.wait_for(lambda m: m.get("method") == "session/request_permission")
        cancel = await client.wait_for(lambda m: m.get("method") == "$/cancel_request")
        assert ask["id"] == cancel["params"]["requestId"]
        failed = await client.answer(rid)
        assert -32603 == failed["error"]["code"]
        late = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        await client.send({"id": ask["id"], "result": late})
        again = await client.request("session/prompt", prompt)
        assert {"stopReason": "end_turn"} == (await client.answer(again))["result"]

    client = await _run(tmp_path, _bash_twice(), scenario, permission_timeout=0.5)
    assert "second turn" in "".join(
        u["content"]["text"] for u in client.updates("agent_message_chunk")
    )


async def test_a_cancelled_answer_alone_cancels_the_turn(tmp_path: Path) -> None:
    """The editor answers a permission request `cancelled` without sending session/cancel:
    the tool does not run and the prompt still ends `cancelled`."""

    async def scenario(client: Client, sid: str) -> None:
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        rid = await client.request("session/prompt", prompt)
        ask = await client.wait_for(lambda m: m.get("method") == "session/request_permission")
        await client.send({"id": ask["id"], "result": {"outcome": {"outcome": "cancelled"}}})
        assert {"stopReason": "cancelled"} == (await client.answer(rid))["result"]

    client = await _run(tmp_path, _bash_twice(), scenario)
    asked = [m for m in client.received if m.get("method") == "session/request_permission"]
    assert 1 == len(asked)


async def test_cancel_request_of_the_prompt_cancels_the_turn(tmp_path: Path) -> None:
    """$/cancel_request naming the session/prompt request ends it `cancelled`."""

    async def scenario(client: Client, sid: str) -> None:
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        rid = await client.request("session/prompt", prompt)
        await client.wait_for(lambda m: m.get("method") == "session/request_permission")
        await client.send({"method": "$/cancel_request", "params": {"requestId": rid}})
        assert {"stopReason": "cancelled"} == (await client.answer(rid))["result"]

    await _run(tmp_path, _bash_twice(), scenario)


async def test_the_autonomous_policy_never_asks_the_editor(tmp_path: Path) -> None:
    async def scenario(client: Client, sid: str) -> None:
        rid = await client.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        )
        assert {"stopReason": "end_turn"} == (await client.answer(rid))["result"]

    client = await _run(tmp_path, _bash_twice(), scenario, policy="autonomous")
    assert not [m for m in client.received if m.get("method") == "session/request_permission"]
    assert 2 == len(
        [u for u in client.updates("tool_call_update") if u.get("status") == "completed"]
    )


async def test_a_second_prompt_while_one_runs_is_refused(tmp_path: Path) -> None:
    async def scenario(client: Client, sid: str) -> None:
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        first = await client.request("session/prompt", prompt)
        await client.wait_for(lambda m: m.get("method") == "session/request_permission")
        second = await client.request("session/prompt", prompt)
        assert -32600 == (await client.answer(second))["error"]["code"]
        await client.send({"method": "session/cancel", "params": {"sessionId": sid}})
        assert {"stopReason": "cancelled"} == (await client.answer(first))["result"]

    client = await _run(tmp_path, _bash_twice(), scenario)
    # The open permission request was cancelled at the editor too (ACP's cascade).
    asked = [m["id"] for m in client.received if m.get("method") == "session/request_permission"]
    withdrawn = [
        m["params"]["requestId"] for m in client.received if m.get("method") == "$/cancel_request"
    ]
    assert asked == withdrawn


# ------------------------------------------------------------------------ params


def test_prompt_content_blocks() -> None:
    text, images = prompt_input(
        [
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///src/app%20main.py", "name": "app main.py"},
            {
                "type": "resource",
                "resource": {"uri": "file:///src/x.py", "text": "unsaved = 1"},
            },
            {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="},
        ]
    )
    assert "look at\n@/src/app main.py\n" in text
    assert '<context ref="file:///src/x.py">\nunsaved = 1\n</context>' in text
    assert [Image.from_bytes("image/png", b"hello")] == images
    for bad in ([], [{"type": "audio", "data": "", "mimeType": "audio/wav"}], [{"type": "image"}]):
        with pytest.raises(JsonRpcError) as err:
            prompt_input(bad)
        assert -32602 == err.value.code


def test_mcp_servers_in_cli_form() -> None:
    servers = cli_mcp_servers(
        [
            {"name": "fs", "command": "npx", "args": ["srv"], "env": [{"name": "K", "value": "v"}]},
            {"type": "http", "name": "web", "url": "https://x", "headers": []},
        ]
    )
    assert {
        "fs": {"type": "stdio", "command": "npx", "args": ["srv"], "env": {"K": "v"}},
        "web": {"type": "http", "url": "https://x", "headers": {}},
    } == servers
    with pytest.raises(JsonRpcError):
        cli_mcp_servers([{"name": "x", "type": "carrier-pigeon"}])


def test_stdout_belongs_to_the_protocol() -> None:
    """After the command takes stdout, prints and children writing to descriptor 1 land on
    stderr; only what the agent writes to its private descriptor reaches stdout."""
    code = (
        "import os, subprocess, sys\n"
        "from adapter.commands.acp import _own_stdout\n"
        "fd = _own_stdout()\n"
        "print('stray print')\n"
        "os.write(1, b'raw write\\n')\n"
        "subprocess.run(['echo', 'child output'])\n"
        'os.write(fd, b\'{"jsonrpc":"2.0"}\\n\')\n'
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, env=dict(os.environ)
    )
    assert 0 == proc.returncode, proc.stderr
    assert b'{"jsonrpc":"2.0"}\n' == proc.stdout
    for text in (b"stray print", b"raw write", b"child output"):
        assert text in proc.stderr


@pytest.mark.parametrize("how", ["close stdin", "SIGTERM"])
def test_the_agent_ends_every_cli_when_stopped(tmp_path: Path, how: str) -> None:
    """Closing stdin, or SIGTERM from the editor: every session's CLI is closed and reaped,
    the agent exits 0."""
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter", "acp", "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        frames = [
            {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {"id": 2, "method": "session/new", "params": {"cwd": str(work), "mcpServers": []}},
            {"id": 3, "method": "session/new", "params": {"cwd": str(work), "mcpServers": []}},
        ]
        for frame in frames:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")
        proc.stdin.flush()
        answered: set[int] = set()
        while answered != {1, 2, 3}:
            msg = json.loads(proc.stdout.readline())
            if "result" in msg:
                answered.add(msg["id"])
        clis = procfs.children(proc.pid)
        assert len(clis) >= 2, clis
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            proc.stdin.close()
        assert 0 == proc.wait(timeout=120), proc.stderr.read() if proc.stderr else ""
        for pid in clis:
            assert not procfs.exists(pid), f"CLI {pid} outlived the agent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


class _RelayBug:
    """The backend, except that following a session created in a directory named ``bad``
    fails at once (fault injection: a bug in relaying that session)."""

    def __init__(self, backend: LocalBackend) -> None:
        self._backend = backend
        self._broken: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        info = await self._backend.create(spec, session_id=session_id)
        if spec.cwd and Path(spec.cwd).name == "bad":
            self._broken.add(info.id)
        return info

    @contextlib.asynccontextmanager
    async def subscribe(self, session_id: str, *, after_seq: int = 0) -> AsyncIterator[Any]:
        async with self._backend.subscribe(session_id, after_seq=after_seq) as events:
            yield _BrokenStream() if session_id in self._broken else events


class _BrokenStream:
    async def receive_batch(self) -> list[Any]:
        raise RuntimeError("a bug in relaying this session")


async def test_a_failure_relaying_one_session_ends_that_session_only(tmp_path: Path) -> None:
    cli = fake_cli_command(script(text_turn("fine")), tmp_path / "fake")
    work = tmp_path / "work"
    work.mkdir()
    client = Client()
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"))
    (work / "bad").mkdir()
    new = {"cwd": str(work), "mcpServers": []}
    prompt = [{"type": "text", "text": "go"}]
    with anyio.fail_after(HANG_GUARD), structlog.testing.capture_logs() as logs:
        async with LocalBackend(defaults, idle_timeout=None) as backend:
            relay_bug = _RelayBug(backend)
            agent = AcpAgent(relay_bug, client.agent_sends)  # type: ignore[arg-type]
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.serve, client.chunks())
                await client.request("initialize", {"protocolVersion": 1})
                good = (await client.answer(await client.request("session/new", new)))["result"]
                rid = await client.request("session/new", {**new, "cwd": str(work / "bad")})
                bad = (await client.answer(rid))["result"]
                rid = await client.request(
                    "session/prompt", {"sessionId": bad["sessionId"], "prompt": prompt}
                )
                failed = await client.answer(rid)
                # The relay fails before the prompt arrives (the session is gone: -32002) or
                # while it runs (-32603 naming the relay's failure); either way, an answer.
                assert failed["error"]["code"] in (-32002, -32603), failed
                # The agent and the other session go on.
                rid = await client.request(
                    "session/prompt", {"sessionId": good["sessionId"], "prompt": prompt}
                )
                assert {"stopReason": "end_turn"} == (await client.answer(rid))["result"]
                await client.inbox_send.aclose()
    failures = [e for e in logs if e["event"] == "acp.session_relay_failed"]
    assert [bad["sessionId"]] == [e["session_id"] for e in failures]


@pytest.mark.parametrize("local", [["--demo"], ["--cli", "/bin/true"]])
def test_nats_with_a_local_cli_is_a_usage_error(tmp_path: Path, local: list[str]) -> None:
    """``--nats`` runs the sessions on the cluster's workers: choosing a CLI to run here as
    well is refused (exit 2, the reason on stderr), before anything connects."""
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "acp", "--nats", "nats://127.0.0.1:9", *local],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, "HOME": str(tmp_path)},
        timeout=120,
    )
    assert 2 == done.returncode
    assert b"with --nats the workers run the sessions" in done.stderr
    assert b"" == done.stdout


HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
STORED = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


class _KeepsHistory(LocalBackend):
    """A backend whose sessions' history is kept apart from this machine's CLI directory
    (as a cluster gateway's copy of the workers' transcripts is)."""

    def __init__(self, history: Path, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._history_root = history

    @property
    def history_dir(self) -> Path:
        return self._history_root


def _work_with_stored_session(tmp_path: Path, config_root: Path) -> Path:
    """A working directory (``tmp_path / "work"``) whose project keeps the recorded session
    ``STORED`` under ``config_root``, laid out like the CLI's configuration directory."""
    work = tmp_path / "work"
    work.mkdir()
    project = config_root / "projects" / project_slug(work)
    project.mkdir(parents=True)
    stored = next(HISTORY.glob(f"*/{STORED}.jsonl"))
    (project / stored.name).write_bytes(stored.read_bytes())
    return work


async def test_two_agents_on_one_backend_list_its_history_and_load_it_once(
    tmp_path: Path,
) -> None:
    """Stored sessions come from the backend's history, not from the agent's own CLI
    directory; a session open in one agent cannot be loaded in another on the same backend
    (-32600) until it is closed there; loaded again, it gets a backend id of its own."""
    cli = fake_cli_command(script(text_turn("fine"), text_turn("fine again")), tmp_path / "fake")
    history = tmp_path / "history"
    work = _work_with_stored_session(tmp_path, history)
    # Where the agents would look for the CLI's own files: empty.
    options = AgentOptions(policy="autonomous", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "own")})
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"))
    load = {"sessionId": STORED, "cwd": str(work), "mcpServers": []}
    first, second = Client(), Client()
    with anyio.fail_after(HANG_GUARD):
        async with (
            _KeepsHistory(history, defaults, idle_timeout=None) as backend,
            anyio.create_task_group() as tg,
        ):
            for client in (first, second):
                agent = AcpAgent(backend, client.agent_sends, options)
                tg.start_soon(agent.serve, client.chunks())
                await client.answer(await client.request("initialize", {"protocolVersion": 1}))
            listed = await second.answer(await second.request("session/list", {}))
            assert [STORED] == [s["sessionId"] for s in listed["result"]["sessions"]]

            loaded = await first.answer(await first.request("session/load", load))
            assert "result" in loaded, loaded
            assert first.updates("user_message_chunk"), "the history was replayed"
            prompt = {"sessionId": STORED, "prompt": [{"type": "text", "text": "go"}]}
            done = await first.answer(await first.request("session/prompt", prompt))
            assert {"stopReason": "end_turn"} == done["result"]
            [running] = await backend.list()
            assert running.id.startswith(f"{STORED}-") and STORED == running.cli_session_id

            refused = await second.answer(await second.request("session/load", load))
            assert -32600 == refused["error"]["code"], refused
            assert "open already" in refused["error"]["message"]

            closed = {"sessionId": STORED}
            await first.answer(await first.request("session/close", closed))
            again = await second.answer(await second.request("session/load", load))
            assert "result" in again, again
            ids = {info.id for info in await backend.list()}
            assert 2 == len(ids), "loaded again under a backend id of its own"
            for client in (first, second):
                await client.inbox_send.aclose()


class _NoHistory(LocalBackend):
    """A backend that has a ``history_dir`` property and no history: it says ``None`` or
    raises AttributeError (as ``ClusterBackend(history=False)`` does). From Python 3.12
    ``isinstance`` counts both as a ``HistoryBackend``; ``None`` is one on every version."""

    def __init__(self, raises: bool, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raises = raises

    @property
    def history_dir(self) -> Path | None:
        if self._raises:
            raise AttributeError("no history")
        return None


@pytest.mark.parametrize("raises", [True, False], ids=["raises", "none"])
async def test_a_backend_without_a_history_lists_the_clis_own(tmp_path: Path, raises: bool) -> None:
    """Without a backend history, ``session/list`` reads the CLI's own directory (the
    agent's ``env``)."""
    cli = fake_cli_command(script(text_turn("unused")), tmp_path / "fake")
    own = tmp_path / "own"
    work = _work_with_stored_session(tmp_path, own)
    options = AgentOptions(policy="autonomous", env={"CLAUDE_CONFIG_DIR": str(own)})
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"))
    client = Client()
    with anyio.fail_after(HANG_GUARD):
        async with (
            _NoHistory(raises, defaults, idle_timeout=None) as backend,
            anyio.create_task_group() as tg,
        ):
            agent = AcpAgent(backend, client.agent_sends, options)
            tg.start_soon(agent.serve, client.chunks())
            await client.answer(await client.request("initialize", {"protocolVersion": 1}))
            listed = await client.answer(await client.request("session/list", {}))
            assert [STORED] == [s["sessionId"] for s in listed["result"]["sessions"]]
            await client.inbox_send.aclose()


async def test_two_agents_loading_one_stored_session_at_once_open_it_once(
    tmp_path: Path,
) -> None:
    """Two editors on one LocalBackend load the same stored session at the same moment:
    one gets it, the other ``-32600``. Before any prompt (the CLI has not reported its
    session id yet) the backend already lists the session under it, so loading it again is
    refused too; once it is closed, the other editor loads it."""
    cli = fake_cli_command(script(text_turn("fine")), tmp_path / "fake")
    own = tmp_path / "own"
    work = _work_with_stored_session(tmp_path, own)
    options = AgentOptions(policy="autonomous", env={"CLAUDE_CONFIG_DIR": str(own)})
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"))
    load = {"sessionId": STORED, "cwd": str(work), "mcpServers": []}
    clients = (Client(), Client())
    with anyio.fail_after(HANG_GUARD):
        async with (
            LocalBackend(defaults, idle_timeout=None) as backend,
            anyio.create_task_group() as tg,
        ):
            for client in clients:
                agent = AcpAgent(backend, client.agent_sends, options)
                tg.start_soon(agent.serve, client.chunks())
                await client.answer(await client.request("initialize", {"protocolVersion": 1}))
            # Both requests are in before either is answered.
            asked = [await client.request("session/load", load) for client in clients]
            answers = [await c.answer(n) for c, n in zip(clients, asked, strict=True)]
            assert ["error", "result"] == sorted(
                "result" if "result" in a else "error" for a in answers
            )
            [refused] = [a for a in answers if "error" in a]
            assert (
                -32600 == refused["error"]["code"] and "open already" in refused["error"]["message"]
            )
            opened, other = clients if "result" in answers[0] else clients[::-1]

            [running] = await backend.list()
            assert STORED == running.cli_session_id, "known before the CLI's first turn"
            again = await other.answer(await other.request("session/load", load))
            assert -32600 == again["error"]["code"], again

            await opened.answer(await opened.request("session/close", {"sessionId": STORED}))
            loaded = await other.answer(await other.request("session/load", load))
            assert "result" in loaded, loaded
            for client in clients:
                await client.inbox_send.aclose()
