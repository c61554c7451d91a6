"""Ownership across a cluster, all separate processes: two `serve --nats --users` gateways,
one `worker` (fake CLI), one nats-server. A session's owner travels in its record, so the
gateway that did not create it enforces it the same; each gateway writes its own audit log."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.sync.client as ws_client

from adapter.cluster import ClusterConfig, LocalNatsServer
from adapter.server.identity import new_token, user_entry
from claudecode.testing import fake_cli_command, script
from tests.support.agui_clients import drive
from tests.support.processes import child, worker_child

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.server]

WAIT = 180


def base_url(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert "serving on http://127.0.0.1:" in line, line
    return line.split("serving on ", 1)[1].split()[0]


def as_user(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def create(http: httpx.Client) -> dict[str, Any]:
    """A session, once the gateway knows a worker."""
    deadline = time.monotonic() + WAIT
    while True:
        answer = http.post("/api/sessions", json={})
        if answer.status_code == 201:
            body: dict[str, Any] = answer.json()
            return body
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.2)


def test_two_gateways_enforce_the_owner_in_the_session_record(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"u{uuid.uuid4().hex[:8]}")
    tokens = {name: new_token() for name in ("alice", "bob", "root")}
    users = tmp_path / "users.toml"
    users.write_text(
        "\n".join(user_entry(name, token, admin=name == "root") for name, token in tokens.items())
    )
    cli = fake_cli_command(script(), tmp_path / "fake")
    nats_args = ("--nats-prefix", config.prefix)

    def gateway(n: int) -> Any:
        return child(
            tmp_path / f"g{n}.log",
            "serve",
            "--port",
            "0",
            "--nats",
            server.url,
            *nats_args,
            "--users",
            str(users),
            "--audit-log",
            str(tmp_path / f"audit{n}.jsonl"),
            "--state-dir",
            str(tmp_path / f"state{n}"),
        )

    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker_child(tmp_path / "w1.log", server.url, nats_args, "w1", cli),
        gateway(1) as g1,
        gateway(2) as g2,
    ):
        first, second = base_url(g1), base_url(g2)
        with as_user(first, tokens["alice"]) as alice1:
            session = create(alice1)
        sid = session["id"]
        assert ("alice", "w1") == (session["user"], session["owner"])
        with (
            as_user(second, tokens["alice"]) as alice2,
            as_user(second, tokens["bob"]) as bob2,
            as_user(second, tokens["root"]) as root2,
        ):
            # The other gateway knows whose it is.
            assert sid in [s["id"] for s in alice2.get("/api/sessions").json()]
            assert sid not in [s["id"] for s in bob2.get("/api/sessions").json()]
            refused, unknown = bob2.get(f"/api/sessions/{sid}"), bob2.get("/api/sessions/nope")
            assert 404 == refused.status_code == unknown.status_code
            assert refused.json()["error"].replace(sid, "X") == unknown.json()["error"].replace(
                "nope", "X"
            )
            prompt = bob2.post(f"/api/sessions/{sid}/prompt", json={"text": "bob was here"})
            assert 404 == prompt.status_code
            # Terminals run on the gateway itself: none for users without them.
            assert 403 == bob2.post("/api/terminals", json={"agent": "shell"}).status_code
            # alice drives it over the second gateway's /ws; bob's socket hears nothing of it.
            ws_base = second.replace("http://", "ws://") + "/ws?token="
            with (
                ws_client.connect(ws_base + tokens["alice"], open_timeout=WAIT) as a,
                ws_client.connect(ws_base + tokens["bob"], open_timeout=WAIT) as b,
            ):
                bob_frames = [json.loads(b.recv(timeout=WAIT))]
                b.send(json.dumps({"type": "list_sessions", "request_id": "l"}))
                a.recv(timeout=WAIT)  # its session list
                a.send(json.dumps({"type": "subscribe", "session_id": sid, "request_id": "s"}))
                a.send(json.dumps({"type": "prompt", "session_id": sid, "text": "alice only"}))
                while True:
                    frame = json.loads(a.recv(timeout=WAIT))
                    assert frame["type"] != "error", frame
                    if frame["type"] == "event" and frame["event"]["type"] == "complete":
                        break
                b.send(json.dumps({"type": "ping", "request_id": "p"}))
                while not bob_frames or bob_frames[-1].get("request_id") != "p":
                    bob_frames.append(json.loads(b.recv(timeout=WAIT)))
                assert sid not in json.dumps(bob_frames)
                assert "alice only" not in json.dumps(bob_frames)
            assert 200 == root2.delete(f"/api/sessions/{sid}").status_code
            # AG-UI (the real @ag-ui/client) through the second gateway: the thread's session
            # is bob's on the first gateway too, and alice's t1 there is not his.
            run = {"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "t1"}
            drive(second, [{**run, "text": "bob on g2"}], tmp_path / "bob", token=tokens["bob"])
            with as_user(first, tokens["bob"]) as bob1, as_user(first, tokens["alice"]) as alice1:
                bobs = [s for s in bob1.get("/api/sessions").json() if s["state"] != "closed"]
                assert 1 == len(bobs) and "bob" == bobs[0]["user"]
                assert bobs[0]["id"] not in json.dumps(alice1.get("/api/sessions").json())
            seen = drive(
                second,
                [{"op": "connect", "client": "1.0.0", "path": "/agui/connect", "threadId": "t1"}],
                tmp_path / "alice",
                token=tokens["alice"],
            )
            assert [] == seen["steps"][0]["events"]
    records = [json.loads(line) for line in (tmp_path / "audit2.jsonl").read_text().splitlines()]
    assert ("admin_action", "root", sid, "alice") in [
        (r["action"], r["user"], r.get("session"), r.get("owner")) for r in records
    ]
    first_log = (tmp_path / "audit1.jsonl").read_text()
    assert "session_create" in first_log and "admin_action" not in first_log
