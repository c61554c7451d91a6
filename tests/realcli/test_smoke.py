"""One raw smoke test: the real CLI, plain subprocess and JSON lines, against the fake API."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from .cli import STREAM_JSON_ARGS, CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Text, Thinking, Turn


class LineReader:
    """Reads JSON lines from a pipe in a thread so the test can wait with a deadline."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream: IO[bytes]) -> None:
        for raw in stream:
            if raw.strip():
                self.lines.put(json.loads(raw))
        self.lines.put(None)

    def until(self, predicate: Any, timeout: float = 20.0) -> dict[str, Any]:
        """Return the first line matching ``predicate``; fail on EOF or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"timed out; lines so far: {[m.get('type') for m in self.seen]}")
            try:
                message = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                pytest.fail(f"CLI closed stdout; lines: {[m.get('type') for m in self.seen]}")
            self.seen.append(message)
            if predicate(message):
                return message

    def join(self, timeout: float = 10.0) -> None:
        """Wait for EOF on the pipe."""
        self._thread.join(timeout)


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


@pytest.mark.realcli
def test_plain_text_turn_through_the_real_cli(
    cli_command: str, fake_api: FakeAnthropicAPI, cli_env: CLIEnv, tmp_path: Path
) -> None:
    answer = "Hello from the fake API! How can I help?"
    fake_api.add_main(Turn(blocks=[Thinking("The user says hi."), Text(answer)], chunk=8))
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        proc = subprocess.Popen(
            [cli_command, *STREAM_JSON_ARGS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=cli_env(),
            cwd=cli_env.cwd,
        )
    try:
        assert proc.stdout is not None
        assert proc.stdin is not None
        reader = LineReader(proc.stdout)
        send(
            proc,
            {
                "type": "control_request",
                "request_id": "req_1",
                "request": {"subtype": "initialize"},
            },
        )
        init = reader.until(
            lambda m: (
                m.get("type") == "control_response" and m["response"].get("request_id") == "req_1"
            )
        )
        assert init["response"]["subtype"] == "success"
        send(
            proc,
            {
                "type": "user",
                "message": {"role": "user", "content": "say hi"},
                "parent_tool_use_id": None,
                "session_id": "default",
            },
        )
        result = reader.until(lambda m: m.get("type") == "result")
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
        reader.join()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == answer
    text_deltas = [
        m["event"]["delta"]["text"]
        for m in reader.seen
        if m.get("type") == "stream_event"
        and m["event"]["type"] == "content_block_delta"
        and m["event"]["delta"]["type"] == "text_delta"
    ]
    assert "".join(text_deltas) == answer
    [request] = fake_api.main_requests()
    assert fake_api.last_user_text(request) == "say hi"
    assert request.query == "beta=true"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.streamed
    assert fake_api.exhausted_requests() == []
    assert fake_api.unknown_requests() == []
    assert fake_api.proxy_attempts() == []
    assert (cli_env.home / ".claude.json").exists()
