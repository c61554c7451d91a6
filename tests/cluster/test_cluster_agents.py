"""Named agents on a cluster, all separate processes: a `serve --nats --agents FILE` gateway
(which runs no session, so it leaves the agents' directories to the workers), one `worker`
process (fake CLI), one nats-server. A CopilotKit run of an agent crosses NATS as that
agent's spec: the worker's CLI starts in the agent's directory with its system prompt and
tool rules, and the gateway lists the session with the agent's name; an agent whose
directory the worker lacks gets a worded run error."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.cluster import LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.processes import child, worker_child
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


def sse_events(raw: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(frame[len(b"data: ") :])
        for frame in raw.split(b"\n\n")
        if frame.startswith(b"data: ")
    ]


async def run_of(http: httpx.AsyncClient, agent: str, text: str) -> list[dict[str, Any]]:
    body = {
        "threadId": uuid.uuid4().hex,
        "runId": uuid.uuid4().hex,
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": {},
    }
    response = await http.post(f"/copilotkit/agent/{agent}/run", json=body)
    assert 200 == response.status_code, response.text
    return sse_events(response.content)


async def test_a_gateway_sends_each_agents_spec_to_the_worker(tmp_path: Path) -> None:
    record = tmp_path / "argv.jsonl"
    cli = fake_cli_command(script(text_turn("from the worker"), record_path=str(record)), tmp_path)
    alpha = tmp_path / "alpha"
    alpha.mkdir()
    agents = tmp_path / "agents.toml"
    agents.write_text(
        f'[agents.alpha]\ncwd = "{alpha}"\nsystem_prompt = "You are ALPHA."\n'
        'allowed_tools = ["Read", "Bash(git diff:*)"]\n'
        '[agents.ghost]\ncwd = "nowhere"\n'
    )
    nats_args = ("--nats-prefix", f"a{uuid.uuid4().hex[:8]}")
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker_child(tmp_path / "w.log", server.url, nats_args, "w1", cli),
        child(
            tmp_path / "g.log", "serve", "--port", "0", "--nats", server.url, *nats_args,
            "--agents", str(agents),
        ) as gateway,
    ):  # fmt: skip
        assert gateway.stdout is not None
        line = gateway.stdout.readline().decode()
        assert "serving on http://127.0.0.1:" in line, (tmp_path / "g.log").read_text()
        base = line.split("serving on ", 1)[1].split()[0]
        async with httpx.AsyncClient(base_url=base, timeout=PROCESSES_GUARD) as http:

            async def answered() -> list[dict[str, Any]] | None:
                events = await run_of(http, "alpha", "hi alpha")
                said = [e for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
                return events if said else None  # no worker known yet: a run error

            events = await eventually(answered, PROCESSES_GUARD, poll=0.2, what="a worker")
            assert "RUN_FINISHED" == events[-1]["type"]
            session_id = events[1]["snapshot"]["sessionId"]

            async def listed() -> dict[str, Any] | None:
                sessions = (await http.get("/api/sessions")).json()
                return next((s for s in sessions if s["id"] == session_id), None)

            # The gateway lists it from the record the worker wrote: the agent's name in it.
            session = await eventually(listed, PROCESSES_GUARD, poll=0.2, what="the record")
            assert ("alpha", "w1") == (session.get("named_agent"), session["owner"])
            info = (await http.get(f"/api/sessions/{session_id}")).json()
            assert "alpha" == info["named_agent"]
            ghost = await run_of(http, "ghost", "hi ghost")
    (error,) = [e for e in ghost if e["type"] == "RUN_ERROR"]
    assert "nowhere' does not exist" in error["message"]
    (launch,) = [json.loads(line) for line in record.read_text().splitlines() if '"argv"' in line]
    argv = launch["argv"]
    assert str(alpha) == launch["cwd"]
    assert "You are ALPHA." == argv[argv.index("--system-prompt") + 1]
    assert "Read,Bash(git diff:*)" == argv[argv.index("--allowedTools") + 1]
