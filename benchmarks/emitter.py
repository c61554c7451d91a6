"""A tiny fake Claude Code CLI for the benchmarks: stream-json out as fast as the pipe takes it.

Standard library only, run as a file (``python -S emitter.py [any argv]``) through the wrapper
script :func:`benchmarks.emitter_path` writes; every argument is accepted and ignored, so it
works as ``cli_path`` for our client and for the official SDK alike.

It answers every ``control_request`` on stdin with a ``control_response`` (``initialize``
gets a plausible body, anything else ``{}``). What it writes for each ``user`` message depends
on ``BENCH_MODE``:

``corpus``  the NDJSON file ``BENCH_CORPUS`` in 1 MiB writes, then a final ``result``
            (``uuid`` = ``corpus.END_UUID``) whose ``result`` text is
            ``bench-start=<CLOCK_MONOTONIC ns when writing began>``.
``paced``   one API message whose ``BENCH_LINES`` text deltas are written one per write at
            ``BENCH_RATE`` lines/s, each delta's text being ``t<monotonic ns>`` taken just
            before its write; then the final ``result``. ``BENCH_PACING=poisson`` draws
            each gap from an exponential distribution of mean ``1 / BENCH_RATE`` (a Poisson
            stream, seeded per process) instead of a fixed period: many emitters started
            together then stream independently, as separate runs do, instead of writing in
            step (see ``benchmarks.agui``).
``bigline`` an ``assistant`` Bash tool_use, then one ``user`` tool_result line whose content
            is ``BENCH_SIZE`` bytes (ASCII, or with ``BENCH_TEXT=unicode`` mostly ASCII with
            CJK and an emoji on every line), then the final ``result``.

With ``BENCH_WARMUP=1`` (any mode) the first prompt only gets a one-delta ``paced`` reply:
a server that starts its session on the first request can then be measured on the second.

It exits on stdin EOF (after finishing any stream in progress), or quietly when stdout breaks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import sys
import time
from typing import Any

END_UUID = "00000000-0000-4000-8000-00000000e0d0"
SESSION_ID = "34bae207-b45d-4516-b9ab-119ad1ad1013"
MODEL = "claude-opus-5-5"
CHUNK = 1024 * 1024


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    for start in range(0, len(view), CHUNK):
        chunk = view[start : start + CHUNK]
        while chunk:
            written = os.write(1, chunk)
            chunk = chunk[written:]


def _final_result(text: str, uuid: str = END_UUID) -> bytes:
    return _dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 1,
            "duration_api_ms": 1,
            "num_turns": 1,
            "result": text,
            "stop_reason": "end_turn",
            "session_id": SESSION_ID,
            "total_cost_usd": 0.0,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "modelUsage": {},
            "permission_denials": [],
            "terminal_reason": "completed",
            "uuid": uuid,
        }
    )


def _initialize_body() -> dict[str, Any]:
    return {
        "commands": [{"name": "compact", "description": "Compact", "argumentHint": ""}],
        "agents": [{"name": "general-purpose", "description": "General-purpose agent"}],
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [{"value": "default", "displayName": "Default", "description": MODEL}],
        "account": {"tokenSource": "none", "apiKeySource": "none", "apiProvider": "firstParty"},
        "pid": os.getpid(),
        "claude_code_version": "2.1.332",
        "current_permission_mode": "default",
    }


_counter = itertools.count(1)


def _uuid() -> str:
    """A fresh uuid (the adapter drops lines whose uuid it has seen)."""
    return f"00000000-0000-4000-8000-{next(_counter):012d}"


def _stream_event(event: dict[str, Any], msg_id: str) -> bytes:
    return _dumps(
        {
            "type": "stream_event",
            "event": event,
            "session_id": SESSION_ID,
            "parent_tool_use_id": None,
            "uuid": _uuid(),
            "api_message_id": msg_id,
        }
    )


def _assistant(msg_id: str, block: dict[str, Any]) -> bytes:
    return _dumps(
        {
            "type": "assistant",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
            "uuid": _uuid(),
        }
    )


class Emitter:
    """State of one emitter process (what to stream and how many prompts so far)."""

    def __init__(self) -> None:
        self.mode = os.environ.get("BENCH_MODE", "corpus")

        self.corpus = b""
        if self.mode == "corpus":
            with open(os.environ["BENCH_CORPUS"], "rb") as fh:
                self.corpus = fh.read()
        self.prompts = 0
        self.big = b""
        if self.mode == "bigline":  # built before the prompt, so timing covers only the pipe
            self.big = self.build_bigline(int(os.environ["BENCH_SIZE"]))

    def on_prompt(self) -> None:
        self.prompts += 1
        if self.prompts == 1 and os.environ.get("BENCH_WARMUP"):
            # The first prompt starts the session (spawn, initialize): a short reply, so the
            # measured stream is the next prompt's.
            self.paced(1, 1000.0)
        elif self.mode == "corpus":
            started = time.monotonic_ns()
            _write_all(self.corpus)
            _write_all(_final_result(f"bench-start={started}"))
        elif self.mode == "paced":
            self.paced(
                int(os.environ.get("BENCH_LINES", "300")),
                float(os.environ.get("BENCH_RATE", "100")),
            )
        elif self.mode == "bigline":
            _write_all(self.big)
        else:
            raise SystemExit(f"unknown BENCH_MODE {self.mode!r}")

    def paced(self, lines: int, rate: float) -> None:
        msg_id = f"msg_paced{self.prompts:06d}"
        head: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ]
        _write_all(b"".join(_stream_event(e, msg_id) for e in head))
        interval = 1.0 / rate
        # One template, split around the stamp: a write costs a few string joins, so 50
        # emitters on two cores leave as much CPU as possible to the process under test.
        template = _dumps(
            {
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "t@T@ "},
                },
                "session_id": SESSION_ID,
                "parent_tool_use_id": None,
                "uuid": "@U@",
                "api_message_id": msg_id,
            }
        )
        part1, rest = template.split(b"@T@")
        part2, part3 = rest.split(b"@U@")
        monotonic_ns, write, sleep = time.monotonic_ns, os.write, time.sleep
        poisson = os.environ.get("BENCH_PACING") == "poisson"
        gap = random.Random(os.urandom(8)).expovariate if poisson else None
        due = time.monotonic()
        for _ in range(lines):
            # On a schedule either way: a late write (the emitter was not scheduled) is
            # followed by catch-up writes, so the rate holds whatever the load.
            due += interval if gap is None else gap(rate)
            pause = due - time.monotonic()
            if pause > 0:
                sleep(pause)
            uuid = _uuid().encode()
            write(1, b"%s%d%s%s%s" % (part1, monotonic_ns(), part2, uuid, part3))
        tail = [
            _stream_event({"type": "content_block_stop", "index": 0}, msg_id),
            _assistant(msg_id, {"type": "text", "text": "paced"}),
            _stream_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": lines},
                },
                msg_id,
            ),
            _stream_event({"type": "message_stop"}, msg_id),
            # A fresh uuid: a session may be prompted again (the adapter drops repeats).
            _final_result("paced", _uuid()),
        ]
        _write_all(b"".join(tail))

    @staticmethod
    def build_bigline(size: int) -> bytes:
        msg_id = "msg_bigline"
        tool_id = "toolu_bigline000000000000000"
        pattern = b"0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ output\\n"
        if os.environ.get("BENCH_TEXT") == "unicode":
            # Mostly ASCII with CJK and an emoji per line: Python holds such text with 4 bytes
            # per character (the worst case for memory), as the CLI writes it (raw UTF-8).
            text = "0123456789 abcdef ghijk \u51fa\u529b \u2713 r\u00e9sum\u00e9 \U0001f600 out\\n"
            pattern = text.encode()
        head = _dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": "@@",
                            "is_error": False,
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION_ID,
                "uuid": _uuid(),
            }
        )
        before, after = head.split(b"@@")
        filler = size - len(before) - len(after) + 1
        body = (pattern * (filler // len(pattern) + 1))[:filler]
        # No character cut in half, no escape cut after its backslash.
        cut = body.decode("utf-8", "ignore").encode().rstrip(b"\\")
        body = cut + b"x" * (filler - len(cut))
        if body.endswith(b"\\"):
            body = body[:-1] + b"x"
        tool_use = _assistant(
            msg_id,
            {
                "type": "tool_use",
                "id": tool_id,
                "name": "Bash",
                "input": {"command": "cat big.log"},
            },
        )
        return b"".join((tool_use, before, body, after, _final_result("bigline")))

    def run(self) -> None:
        stdin = sys.stdin.buffer
        for raw in stdin:
            if not raw.strip():
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            kind = message.get("type")
            if kind == "control_request":
                request = message.get("request") or {}
                body = _initialize_body() if request.get("subtype") == "initialize" else {}
                _write_all(
                    _dumps(
                        {
                            "type": "control_response",
                            "response": {
                                "subtype": "success",
                                "request_id": message.get("request_id"),
                                "response": body,
                            },
                        }
                    )
                )
            elif kind == "user":
                self.on_prompt()


def main() -> None:
    """Run the emitter on stdin/stdout until stdin ends."""
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        Emitter().run()
    os._exit(0)


if __name__ == "__main__":
    main()
