"""Bridge processes for the cluster and ACP tests: ``python -m adapter ...`` children and
WebSocket frames sent to them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

from adapter.cluster import die_with_parent


@contextlib.contextmanager
def child(
    log: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m adapter ARGS`` in its own process group, stdout piped (a gateway prints its
    URL there), stderr to ``log``, ``env`` added to this process's environment; killed with
    its group at exit."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "adapter", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=out,
            env=None if env is None else {**os.environ, **env},
            start_new_session=True,
            # Gone with this process even when it dies without running its cleanup.
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def worker_child(
    log: Path, nats_url: str, nats_args: Sequence[str], worker_id: str, cli: Path
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """A ``claudecode-bridge worker`` child (:func:`child`) on ``nats_url`` (``nats_args``:
    its other NATS options, e.g. the prefix) named ``worker_id``, running ``cli``, sessions
    never reaped for idleness."""
    return child(
        log,
        "worker",
        "--nats",
        nats_url,
        *nats_args,
        "--id",
        worker_id,
        "--cli",
        str(cli),
        "--idle-timeout",
        "0",
    )


async def send(ws: ClientConnection, **frame: Any) -> None:
    """One JSON frame to a bridge WebSocket."""
    await ws.send(json.dumps(frame))


async def follow_frame(
    ws: ClientConnection, frame: dict[str, Any], last: dict[str, int], done: set[str]
) -> None:
    """Check one server frame of sessions that ask for approvals: a snapshot sets where the
    session's events continue (``last``), every event must be the next ``seq``, a permission
    request is allowed, a ``complete`` adds the session to ``done``."""
    session_id = frame.get("session_id", "")
    if frame["type"] == "snapshot":
        last.setdefault(session_id, frame["chat"]["last_seq"])
    elif frame["type"] == "event":
        assert last[session_id] + 1 == frame["seq"], (session_id, frame, last)
        last[session_id] = frame["seq"]
        event = frame["event"]
        if event["type"] == "permission_request":
            await send(
                ws,
                type="permission_response",
                session_id=session_id,
                pending_id=event["pending_id"],
                decision="allow",
            )
        elif event["type"] == "complete":
            done.add(session_id)
