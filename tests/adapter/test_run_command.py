"""``claudecode-bridge run --demo``: the whole pipeline with the built-in stand-in, and OTLP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def run(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "adapter", "run", *args],
        capture_output=True,
        timeout=120,
        check=False,
        env=env,
        input=stdin,
        start_new_session=True,  # no controlling terminal: the prompts read stdin
    )


def test_demo_renders_the_whole_pipeline() -> None:
    """The README's first command: text, a tool, a diff and a summary; exit 0."""
    done = run("--demo")
    out = done.stdout.decode()
    assert 0 == done.returncode, done.stderr.decode()
    assert "Run `ls -la`" in out
    assert "Edit greeting.py" in out
    assert '+    return f"Hello, {name}!"' in out
    assert "done ·" in out


def test_demo_json_follows_the_public_schema() -> None:
    """--json prints one event per line that decodes as the event union."""
    from adapter.events import (
        Complete,
        MessageChunk,
        PermissionResolved,
        QuestionRequest,
        ToolCall,
        ToolUpdate,
        decode_event,
    )

    done = run("--demo", "--json")
    assert 0 == done.returncode, done.stderr.decode()
    events = [decode_event(line) for line in done.stdout.splitlines()]
    assert isinstance(events[-1], Complete)
    calls = {e.tool_call_id for e in events if isinstance(e, ToolCall)}
    updates = {e.tool_call_id for e in events if isinstance(e, ToolUpdate)}
    assert calls == updates
    assert 5 == len(calls)
    # --demo approves everything (the autonomous policy), which declines the tour's question
    [question] = [e for e in events if isinstance(e, QuestionRequest)]
    assert ["Formal", "Casual"] == [o.label for o in question.questions[0].options]
    [resolved] = [e for e in events if isinstance(e, PermissionResolved)]
    assert (question.pending_id, "declined", "policy") == (
        resolved.pending_id,
        resolved.decision,
        resolved.by,
    )
    text = "".join(e.text for e in events if isinstance(e, MessageChunk))
    assert "No greeting style was chosen" in text


def test_demo_asks_its_question_at_the_terminal() -> None:
    """--approve ask: the question's options are numbered, the answer (2: Casual) reaches the
    stand-in CLI, whose next sentence names it."""
    done = run("--demo", "--approve", "ask", stdin=b"y\n2\ny\ny\n")
    out = done.stdout.decode()
    assert 0 == done.returncode, done.stderr.decode()
    assert "Style: Which greeting style should I use?" in out
    assert "  2. Casual" in out
    assert "You chose Casual" in out


def test_usage_error_exit_code() -> None:
    """A missing prompt without --demo is a usage error (2)."""
    assert 2 == run().returncode


class _Collector(BaseHTTPRequestHandler):
    spans: list[Any]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                self.server.spans.extend(scope_spans.spans)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(name="collector")
def _collector() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    server.spans = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_otlp_export_reaches_a_collector(collector: ThreadingHTTPServer, tmp_path: Path) -> None:
    """--otlp sends the run's trace: a root span, the turn, one span per tool, one trace."""
    port = collector.server_address[1]
    done = run("--demo", "--json", "--otlp", f"http://127.0.0.1:{port}")
    assert 0 == done.returncode, done.stderr.decode()
    spans = collector.spans  # type: ignore[attr-defined]
    names = [s.name for s in spans]
    assert "claudecode-bridge run" in names
    assert "invoke_agent claude-code" in names
    assert {"execute_tool Bash", "execute_tool Edit", "execute_tool Write"} <= set(names)
    assert 1 == len({s.trace_id for s in spans})
    by_id = {s.span_id: s for s in spans}
    turn = next(s for s in spans if s.name == "invoke_agent claude-code")
    assert "claudecode-bridge run" == by_id[turn.parent_span_id].name
    tool = next(s for s in spans if s.name == "execute_tool Edit")
    assert turn.span_id == tool.parent_span_id
    attributes = {a.key: a.value for a in turn.attributes}
    assert "anthropic" == attributes["gen_ai.provider.name"].string_value
    assert attributes["gen_ai.usage.input_tokens"].int_value > 0
    assert json.dumps(names)
