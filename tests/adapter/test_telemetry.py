"""TurnTracer: spans for turns, tool calls and control messages, and the canonical log line.

Every test passes its own ``TracerProvider`` with an in-memory exporter; the global provider
is never set. Event sequences are built by hand from :mod:`adapter.events`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from adapter.events import (
    ApiRetry,
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionCancelled,
    PermissionRequest,
    Raw,
    Reasoning,
    SessionStatus,
    TokenUsage,
    ToolCall,
    ToolUpdate,
)
from adapter.telemetry import CAPTURE_CONTENT_ENV, TURN_SPAN_NAME, TurnTracer, capture_from_env
from normalize import action_type_for, normalize_tool_use, title_for

SECRET_PROMPT = "please read the secret plan xyzzy"
SECRET_COMMAND = "cat /home/me/secret-plugh.txt"
SECRET_RESULT = "the answer is frobozz"
SECRETS = ("xyzzy", "plugh", "frobozz")


# ---------------------------------------------------------------------- fixtures and helpers


class _Recorder(SpanProcessor):
    """Counts spans started and ended (to check that nothing is left open)."""

    def __init__(self) -> None:
        self.started: set[int] = set()
        self.ended: set[int] = set()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.add(span.get_span_context().span_id)

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        self.ended.add(span.context.span_id)


@pytest.fixture(name="exporter")
def _exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture(name="recorder")
def _recorder() -> _Recorder:
    return _Recorder()


@pytest.fixture(name="provider")
def _provider(exporter: InMemorySpanExporter, recorder: _Recorder) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(recorder)
    yield provider
    provider.shutdown()


@pytest.fixture(name="tracer")
def _tracer(provider: TracerProvider) -> TurnTracer:
    return TurnTracer(session_id="sess-1", tracer_provider=provider, capture_content=False)


@pytest.fixture(name="capturing")
def _capturing(provider: TracerProvider) -> TurnTracer:
    return TurnTracer(session_id="sess-1", tracer_provider=provider, capture_content=True)


def tool_call(call_id: str, name: str, args: dict[str, Any], parent: str | None = None) -> ToolCall:
    payload = normalize_tool_use(name, args)
    return ToolCall(
        tool_call_id=call_id,
        tool_name=name,
        title=title_for(payload),
        normalized=payload,
        action_type=action_type_for(payload),
        parent_tool_call_id=parent,
    )


def tool_done(call: ToolCall, *, error: str | None = None) -> ToolUpdate:
    payload = call.normalized
    if error is not None:
        payload = msgspec.structs.replace(payload, error=error)
    return ToolUpdate(
        tool_call_id=call.tool_call_id,
        status="error" if error is not None else "complete",
        title=call.title,
        normalized=payload,
        tool_name=call.tool_name,
        parent_tool_call_id=call.parent_tool_call_id,
    )


def complete(**kwargs: Any) -> Complete:
    defaults: dict[str, Any] = {
        "cost_usd": 0.0123,
        "num_turns": 2,
        "tokens": TokenUsage(input=10, output=50, cache_read=200, cache_creation=30),
        "stop_reason": "end_turn",
        "terminal_reason": "completed",
        "model": "claude-sonnet-4-5",
        "result": SECRET_RESULT,
    }
    return Complete(**{**defaults, **kwargs})


def permission(pending_id: str, call: ToolCall) -> PermissionRequest:
    return PermissionRequest(
        pending_id=pending_id,
        tool_name=call.tool_name,
        input={"command": SECRET_COMMAND},
        normalized=call.normalized,
        title=call.title,
        action_type=call.action_type,
        tool_call_id=call.tool_call_id,
    )


def feed(tracer: TurnTracer, events: Sequence[Event]) -> None:
    for event in events:
        tracer.observe(event)


def finished(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return list(exporter.get_finished_spans())


def one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    matches = [s for s in finished(exporter) if s.name == name]
    assert 1 == len(matches), [s.name for s in finished(exporter)]
    return matches[0]


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.span_id)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def all_text(spans: Sequence[ReadableSpan]) -> str:
    """Every attribute, event attribute and status description, as one string."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(repr(dict(span.attributes or {})))
        parts.append(str(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.append(repr(dict(event.attributes or {})))
    return "\n".join(parts)


# ---------------------------------------------------------------------- the turn span


class TestTurnSpan:
    def test_a_turn_is_one_client_span_with_genai_attributes(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """start_turn opens ``invoke_agent claude-code``; Complete fills in usage and ends it."""
        tracer.start_turn(SECRET_PROMPT, model="claude-sonnet-4-5")
        assert tracer.turn_open
        assert [] == finished(exporter)
        tracer.observe(complete())

        span = one(exporter, TURN_SPAN_NAME)
        assert "invoke_agent claude-code" == TURN_SPAN_NAME
        assert SpanKind.CLIENT == span.kind
        assert span.parent is None
        assert StatusCode.UNSET == span.status.status_code
        assert {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.agent.name": "claude-code",
            "gen_ai.conversation.id": "sess-1",
            "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.response.model": "claude-sonnet-4-5",
            "gen_ai.usage.input_tokens": 240,  # 10 + 200 cache read + 30 cache creation
            "gen_ai.usage.output_tokens": 50,
            "gen_ai.usage.cache_read.input_tokens": 200,
            "gen_ai.usage.cache_creation.input_tokens": 30,
            "gen_ai.response.finish_reasons": ("end_turn",),
            "claudecode.cost_usd": 0.0123,
            "claudecode.num_turns": 2,
            "claudecode.terminal_reason": "completed",
            "claudecode.result.subtype": "success",
            "claudecode.session.id": "sess-1",
            "claudecode.turn.number": 1,
            "claudecode.turn.initiator": "user",
        } == attrs(span)
        assert not tracer.turn_open

    def test_conversation_id_becomes_the_cli_session_id(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """A session_status with the CLI's id replaces ours, on the open span and later ones."""
        tracer.start_turn("hi", model=None)
        tracer.observe(SessionStatus(status="new", cli_session_id="cli-42", model="claude-opus"))
        tracer.observe(complete())
        tracer.start_turn("again", model=None)
        tracer.observe(complete())

        first, second = finished(exporter)
        assert "cli-42" == attrs(first)["gen_ai.conversation.id"]
        assert "cli-42" == attrs(second)["gen_ai.conversation.id"]
        assert "claude-opus" == attrs(second)["gen_ai.request.model"]
        assert "sess-1" == attrs(second)["claudecode.session.id"]
        assert "cli-42" == tracer.conversation_id

    def test_api_error_sets_status_and_error_type(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """is_error with subtype success (how the CLI reports API errors) gives api_error."""
        tracer.start_turn("hi", model=None)
        tracer.observe(complete(is_error=True, result="API Error: 400 bad", terminal_reason=None))

        span = one(exporter, TURN_SPAN_NAME)
        assert StatusCode.ERROR == span.status.status_code
        assert "API Error: 400 bad" == span.status.description
        assert "api_error" == attrs(span)["error.type"]

    def test_error_type_is_the_result_subtype_when_not_success(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """A failed result's subtype (error_max_turns) is the error.type."""
        tracer.start_turn("hi", model=None)
        tracer.observe(complete(is_error=True, subtype="error_max_turns", result=None))

        span = one(exporter, TURN_SPAN_NAME)
        assert "error_max_turns" == attrs(span)["error.type"]
        assert "error_max_turns" == span.status.description

    def test_error_event_is_recorded_and_names_the_error(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """An error event becomes a span event; its kind and message describe the failure."""
        tracer.start_turn("hi", model=None)
        tracer.observe(ErrorEvent(message="overloaded", kind="api_error", status=529))
        tracer.observe(complete(is_error=True, terminal_reason="completed", result="x"))

        span = one(exporter, TURN_SPAN_NAME)
        assert ["claudecode.error"] == [e.name for e in span.events]
        event_attrs = dict(span.events[0].attributes or {})
        assert 529 == event_attrs["claudecode.error.status"]
        assert "api_error" == event_attrs["error.type"]
        assert "overloaded" == span.status.description

    def test_parent_context_is_honoured(
        self, provider: TracerProvider, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """With parent_context the turn joins the caller's trace."""
        outer = provider.get_tracer("test").start_span("request")
        tracer.start_turn("hi", model=None, parent_context=trace.set_span_in_context(outer))
        tracer.observe(complete())
        outer.end()

        turn = one(exporter, TURN_SPAN_NAME)
        assert outer.get_span_context().span_id == parent_id(turn)

    def test_a_prompt_sent_during_a_turn_is_queued(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """The second prompt's span opens when the first turn completes, and ends on the next."""
        tracer.start_turn("one", model="m1")
        tracer.start_turn("two", model="m2")
        tracer.observe(complete())
        assert tracer.turn_open
        tracer.observe(complete())
        assert not tracer.turn_open

        first, second = finished(exporter)
        assert (1, "m1") == (
            attrs(first)["claudecode.turn.number"],
            attrs(first)["gen_ai.request.model"],
        )
        assert (2, "m2") == (
            attrs(second)["claudecode.turn.number"],
            attrs(second)["gen_ai.request.model"],
        )
        assert first.end_time is not None and second.start_time is not None
        assert first.end_time <= second.start_time

    def test_events_without_a_turn_open_one_started_by_the_cli(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """A background sub-agent's second result gets a turn span of its own."""
        tracer.start_turn("hi", model=None)
        tracer.observe(complete())
        feed(tracer, [MessageChunk(message_id="m", text="later"), complete()])

        first, second = finished(exporter)
        assert "user" == attrs(first)["claudecode.turn.initiator"]
        assert "cli" == attrs(second)["claudecode.turn.initiator"]
        assert 2 == attrs(second)["claudecode.turn.number"]

    def test_status_events_alone_open_no_turn(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """Session status, errors and raw messages between turns create no spans."""
        feed(
            tracer,
            [
                SessionStatus(status="new"),
                ErrorEvent(message="x"),
                Raw(message_type="system", subtype="hook_started"),
            ],
        )
        assert not tracer.turn_open
        assert [] == finished(exporter)

    def test_operational_events_are_span_events(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """API retries are recorded on the turn even without content capture."""
        tracer.start_turn("hi", model=None)
        tracer.observe(ApiRetry(attempt=1, max_retries=10, delay_ms=600.0, error_status=529))
        tracer.observe(complete())

        (event,) = one(exporter, TURN_SPAN_NAME).events
        assert "claudecode.api_retry" == event.name
        assert {"attempt": 1, "max_retries": 10, "delay_ms": 600.0, "error_status": 529} == dict(
            event.attributes or {}
        )


class TestTraceparent:
    def test_traceparent_points_at_the_turn_span(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """TRACEPARENT carries the turn's trace id and span id, so the CLI's spans join."""
        assert {} == tracer.traceparent()
        tracer.start_turn("hi", model=None)
        env = tracer.traceparent()
        tracer.observe(complete())

        span = one(exporter, TURN_SPAN_NAME)
        assert span.context is not None
        version, trace_id, parent, flags = env["TRACEPARENT"].split("-")
        assert "00" == version
        assert int(flags, 16) & 0x01  # sampled
        assert f"{span.context.trace_id:032x}" == trace_id
        assert f"{span.context.span_id:016x}" == parent
        assert set(env) <= {"TRACEPARENT", "TRACESTATE"}
        assert {} == tracer.traceparent()

    def test_no_traceparent_without_an_sdk(self) -> None:
        """With the API's no-op provider there is no trace to join."""
        tracer = TurnTracer(session_id="s", tracer_provider=trace.NoOpTracerProvider())
        tracer.start_turn("hi", model=None)
        assert {} == tracer.traceparent()
        tracer.observe(complete())
        tracer.end("gone")

    @pytest.mark.parametrize("provider", ["noop", "global-unset"])
    def test_without_an_sdk_a_propagated_parent_still_reaches_the_cli(self, provider: str) -> None:
        """The no-op tracer's turn span carries a propagated parent's context on: the CLI
        joins that trace even though nothing in this process records spans."""
        parent = trace.NonRecordingSpan(
            trace.SpanContext(
                trace_id=0x0AF7651916CD43DD8448EB211C80319C,
                span_id=0xB7AD6B7169203331,
                is_remote=True,
                trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
            )
        )
        tracer = TurnTracer(
            session_id="s",
            # With no provider argument the tracer is the API's proxy, which resolves to the
            # no-op tracer while no global provider is set.
            tracer_provider=trace.NoOpTracerProvider() if provider == "noop" else None,
        )
        if provider == "global-unset" and not isinstance(
            trace.get_tracer_provider(), trace.ProxyTracerProvider
        ):
            pytest.skip("another test set a global tracer provider in this process")
        tracer.start_turn("hi", model=None, parent_context=trace.set_span_in_context(parent))
        assert tracer.turn_open
        env = tracer.traceparent()
        assert "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" == env["TRACEPARENT"]
        tracer.observe(complete())
        assert not tracer.turn_open


# ---------------------------------------------------------------------- tool spans


class TestToolSpans:
    def test_a_tool_call_is_an_internal_child_of_the_turn(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """ToolCall opens ``execute_tool {name}`` under the turn; ToolUpdate ends it."""
        call = tool_call("toolu_1", "Bash", {"command": SECRET_COMMAND})
        tracer.start_turn("hi", model=None)
        tracer.observe(call)
        assert [] == finished(exporter)
        tracer.observe(tool_done(call))
        assert ["execute_tool Bash"] == [s.name for s in finished(exporter)]
        tracer.observe(complete())

        tool = one(exporter, "execute_tool Bash")
        turn = one(exporter, TURN_SPAN_NAME)
        assert SpanKind.INTERNAL == tool.kind
        assert span_id(turn) == parent_id(tool)
        assert StatusCode.UNSET == tool.status.status_code
        assert {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.tool.name": "Bash",
            "gen_ai.tool.call.id": "toolu_1",
            "gen_ai.tool.type": "function",
            "claudecode.tool.kind": "shell_exec",
        } == attrs(tool)

    def test_mcp_tools_are_extensions(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """An ``mcp__server__tool`` call has gen_ai.tool.type=extension."""
        call = tool_call("toolu_m", "mcp__fe__echo", {"text": "x"})
        tracer.start_turn("hi", model=None)
        feed(tracer, [call, tool_done(call), complete()])

        tool = one(exporter, "execute_tool mcp__fe__echo")
        assert "extension" == attrs(tool)["gen_ai.tool.type"]
        assert "generic" == attrs(tool)["claudecode.tool.kind"]

    def test_sub_agent_tools_nest_under_the_agent_call(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """A tool call with parent_tool_call_id is a child of the Agent tool's span."""
        agent = tool_call("toolu_a", "Agent", {"prompt": "look around", "description": "d"})
        inner = tool_call("toolu_i", "Glob", {"pattern": "*.py"}, parent="toolu_a")
        tracer.start_turn("hi", model=None)
        feed(tracer, [agent, inner, tool_done(inner), tool_done(agent), complete()])

        agent_span = one(exporter, "execute_tool Agent")
        inner_span = one(exporter, "execute_tool Glob")
        turn = one(exporter, TURN_SPAN_NAME)
        assert span_id(turn) == parent_id(agent_span)
        assert span_id(agent_span) == parent_id(inner_span)
        assert "toolu_a" == attrs(inner_span)["claudecode.tool.parent_call_id"]
        assert "subagent_task" == attrs(agent_span)["claudecode.tool.kind"]

    def test_a_failed_tool_call_is_an_error(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """ToolUpdate with status error sets ERROR, error.type=tool_error and the message."""
        call = tool_call("toolu_1", "Bash", {"command": "false"})
        tracer.start_turn("hi", model=None)
        feed(tracer, [call, tool_done(call, error="host says no"), complete()])

        tool = one(exporter, "execute_tool Bash")
        assert StatusCode.ERROR == tool.status.status_code
        assert "host says no" == tool.status.description
        assert "tool_error" == attrs(tool)["error.type"]
        assert StatusCode.UNSET == one(exporter, TURN_SPAN_NAME).status.status_code

    def test_tool_calls_left_open_end_with_the_turn(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter, recorder: _Recorder
    ) -> None:
        """Complete ends every tool span still open (children before parents)."""
        agent = tool_call("toolu_a", "Agent", {"prompt": "p", "description": "d"})
        inner = tool_call("toolu_i", "Read", {"file_path": "/x"}, parent="toolu_a")
        tracer.start_turn("hi", model=None)
        feed(tracer, [agent, inner, complete()])

        assert recorder.started == recorder.ended
        names = [s.name for s in finished(exporter)]
        assert ["execute_tool Read", "execute_tool Agent", TURN_SPAN_NAME] == names
        assert attrs(one(exporter, "execute_tool Read"))["claudecode.synthetic"] is True

    def test_an_update_for_an_unknown_call_is_ignored(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """A ToolUpdate with no matching ToolCall creates no span."""
        call = tool_call("toolu_x", "Bash", {"command": "ls"})
        tracer.start_turn("hi", model=None)
        feed(tracer, [tool_done(call), complete()])
        assert [TURN_SPAN_NAME] == [s.name for s in finished(exporter)]


# ---------------------------------------------------------------------- control spans


class TestPermissionSpans:
    def test_a_permission_request_lasts_until_its_answer(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """``permission {tool}`` is a child of the tool call, inbound, ended by answered()."""
        call = tool_call("toolu_1", "Bash", {"command": SECRET_COMMAND})
        tracer.start_turn("hi", model=None)
        feed(tracer, [call, permission("req_1", call)])
        assert [] == finished(exporter)
        tracer.answered("req_1", "allow")
        tracer.answered("req_1", "deny")  # a second answer is ignored
        feed(tracer, [tool_done(call), complete()])

        perm = one(exporter, "permission Bash")
        assert span_id(one(exporter, "execute_tool Bash")) == parent_id(perm)
        assert SpanKind.SERVER == perm.kind
        assert {
            "claudecode.control.direction": "inbound",
            "claudecode.control.subtype": "can_use_tool",
            "claudecode.permission.pending_id": "req_1",
            "claudecode.permission.action_type": "command",
            "claudecode.permission.decision": "allow",
            "gen_ai.tool.name": "Bash",
            "gen_ai.tool.call.id": "toolu_1",
        } == attrs(perm)

    def test_a_timed_out_request_is_an_error_a_withdrawn_one_is_not(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """PermissionCancelled ends the span; only a timeout marks it ERROR."""
        call = tool_call("toolu_1", "Bash", {"command": "ls"})
        tracer.start_turn("hi", model=None)
        feed(
            tracer,
            [
                call,
                permission("req_1", call),
                PermissionCancelled(pending_id="req_1", reason="timeout"),
                permission("req_2", call),
                PermissionCancelled(pending_id="req_2"),
            ],
        )
        timed_out, withdrawn = finished(exporter)
        assert StatusCode.ERROR == timed_out.status.status_code
        assert "timeout" == attrs(timed_out)["error.type"]
        assert StatusCode.UNSET == withdrawn.status.status_code
        assert "cancelled_by_cli" == attrs(withdrawn)["claudecode.permission.cancel_reason"]
        tracer.end()


class TestControlSpans:
    def test_a_control_span_is_a_child_of_the_turn(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """control() opens ``control {name}`` under the turn, current inside the block."""
        tracer.start_turn("hi", model=None)
        with tracer.control("set_model", direction="outbound", model="opus", skipped=None) as span:
            assert span is trace.get_current_span()
        tracer.observe(complete())

        control = one(exporter, "control set_model")
        assert span_id(one(exporter, TURN_SPAN_NAME)) == parent_id(control)
        assert SpanKind.CLIENT == control.kind
        assert {
            "claudecode.control.direction": "outbound",
            "claudecode.control.subtype": "set_model",
            "claudecode.control.model": "opus",
        } == attrs(control)

    def test_without_a_turn_a_control_span_is_a_root(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """An inbound hook callback between turns is a root SERVER span."""
        with tracer.control("hook_callback", direction="inbound", **{"hook.event": "Stop"}):
            pass
        span = one(exporter, "control hook_callback")
        assert span.parent is None
        assert SpanKind.SERVER == span.kind
        assert "Stop" == attrs(span)["hook.event"]

    def test_an_exception_marks_the_control_span_and_propagates(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """An exception escaping the block sets ERROR and error.type to its class name."""
        with (
            pytest.raises(TimeoutError, match="no answer"),
            tracer.control("interrupt", direction="outbound"),
        ):
            raise TimeoutError("no answer")
        span = one(exporter, "control interrupt")
        assert StatusCode.ERROR == span.status.status_code
        assert "no answer" == span.status.description
        assert "TimeoutError" == attrs(span)["error.type"]
        assert otel_context.get_current() == otel_context.Context()

    def test_an_interrupt_makes_the_turn_interrupted(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """After control('interrupt') the failing result is logged as interrupted."""
        tracer.start_turn("hi", model=None)
        with structlog.testing.capture_logs() as logs:
            with tracer.control("interrupt", direction="outbound"):
                pass
            tracer.observe(complete(is_error=True, subtype="error_during_execution"))

        span = one(exporter, TURN_SPAN_NAME)
        assert "error_during_execution" == attrs(span)["error.type"]
        assert ["interrupted"] == [e["outcome"] for e in logs if e["event"] == "turn.completed"]


# ---------------------------------------------------------------------- content capture


def _sensitive_turn(tracer: TurnTracer) -> None:
    call = tool_call("toolu_1", "Bash", {"command": SECRET_COMMAND})
    tracer.start_turn(SECRET_PROMPT, model=None)
    tracer.record_raw(json.dumps({"type": "user", "text": SECRET_PROMPT}), direction="outbound")
    feed(
        tracer,
        [
            MessageChunk(message_id="m1", text=SECRET_RESULT),
            Reasoning(message_id="m1", text=SECRET_RESULT),
            call,
            permission("req_1", call),
        ],
    )
    tracer.answered("req_1", "allow")
    feed(tracer, [tool_done(call), complete()])


class TestContentCapture:
    def test_off_no_content_anywhere(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """By default no prompt, tool argument or result appears in any span."""
        assert not tracer.capture_content
        _sensitive_turn(tracer)
        text = all_text(finished(exporter))
        assert [] == [secret for secret in SECRETS if secret in text]

    def test_on_records_prompt_tool_data_and_events(
        self, capturing: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """With capture on: input/output messages, tool arguments/result, event span events."""
        _sensitive_turn(capturing)

        turn = one(exporter, TURN_SPAN_NAME)
        inputs = json.loads(attrs(turn)["gen_ai.input.messages"])
        assert [{"role": "user", "parts": [{"type": "text", "content": SECRET_PROMPT}]}] == inputs
        outputs = json.loads(attrs(turn)["gen_ai.output.messages"])
        assert SECRET_RESULT == outputs[0]["parts"][0]["content"]
        turn_events = [e.name for e in turn.events]
        # deltas are not recorded one by one; the raw line and the complete event are
        assert ["claudecode.raw", "claudecode.event"] == turn_events
        assert "complete" == dict(turn.events[1].attributes or {})["claudecode.event.type"]

        tool = one(exporter, "execute_tool Bash")
        assert SECRET_COMMAND in attrs(tool)["gen_ai.tool.call.arguments"]
        assert "shell_exec" == json.loads(attrs(tool)["gen_ai.tool.call.result"])["kind"]
        assert ["tool_call", "tool_update"] == [
            dict(e.attributes or {})["claudecode.event.type"] for e in tool.events
        ]
        perm = one(exporter, "permission Bash")
        assert SECRET_COMMAND in str(dict(perm.events[0].attributes or {})["claudecode.event.json"])

    def test_captured_text_is_truncated(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """Each captured text is cut to max_content_chars, with a marker."""
        tracer = TurnTracer(
            session_id="s", tracer_provider=provider, capture_content=True, max_content_chars=10
        )
        tracer.start_turn("x" * 25, model=None)
        tracer.observe(complete(result="y" * 3))
        inputs = json.loads(attrs(one(exporter, TURN_SPAN_NAME))["gen_ai.input.messages"])
        assert "x" * 10 + "\u2026[15 more chars]" == inputs[0]["parts"][0]["content"]

    def test_raw_lines_need_capture(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """record_raw does nothing with capture off."""
        tracer.start_turn("hi", model=None)
        tracer.record_raw(b'{"type":"assistant"}')
        tracer.observe(complete())
        assert () == tuple(one(exporter, TURN_SPAN_NAME).events)

    @pytest.mark.parametrize(
        ("value", "expected"),
        [("true", True), ("TRUE", True), ("span_only", True), ("false", False), ("", False)],
    )
    def test_the_environment_sets_the_default(
        self, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
    ) -> None:
        """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is the default; an argument wins."""
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, value)
        assert expected == capture_from_env()
        assert expected == TurnTracer(session_id="s").capture_content
        assert TurnTracer(session_id="s", capture_content=True).capture_content

    def test_capture_is_off_without_the_variable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Unset, the variable means no capture."""
        monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
        assert not TurnTracer(session_id="s").capture_content


# ---------------------------------------------------------------------- end()


class TestEnd:
    def test_end_with_a_reason_closes_everything_as_an_error(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter, recorder: _Recorder
    ) -> None:
        """end(reason) ends permission, tool and turn spans; the turn is ERROR."""
        call = tool_call("toolu_1", "Bash", {"command": "ls"})
        tracer.start_turn("hi", model=None)
        tracer.start_turn("queued", model=None)
        feed(tracer, [call, permission("req_1", call)])
        with structlog.testing.capture_logs() as logs:
            tracer.end("CLI exited with code 1")

        assert recorder.started == recorder.ended
        assert not tracer.turn_open
        turn = one(exporter, TURN_SPAN_NAME)  # the queued prompt never ran: no span
        assert StatusCode.ERROR == turn.status.status_code
        assert "CLI exited with code 1" == turn.status.description
        assert "_OTHER" == attrs(turn)["error.type"]
        perm = one(exporter, "permission Bash")
        assert "session_ended" == attrs(perm)["claudecode.permission.cancel_reason"]
        (line,) = logs
        assert ("error", "_OTHER", 1) == (line["outcome"], line["error_type"], line["tool_calls"])

    def test_end_uses_the_last_error_kind(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """An error event seen before end() gives the error.type."""
        tracer.start_turn("hi", model=None)
        tracer.observe(ErrorEvent(message="exited", kind="cli_exited"))
        tracer.end("exited")
        assert "cli_exited" == attrs(one(exporter, TURN_SPAN_NAME))["error.type"]

    def test_end_without_a_reason_is_not_an_error(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """Closing a session mid-turn ends the turn unset, logged as interrupted."""
        tracer.start_turn("hi", model=None)
        with structlog.testing.capture_logs() as logs:
            tracer.end()
        assert StatusCode.UNSET == one(exporter, TURN_SPAN_NAME).status.status_code
        assert ["interrupted"] == [line["outcome"] for line in logs]

    def test_after_end_events_open_no_turn(
        self, tracer: TurnTracer, exporter: InMemorySpanExporter
    ) -> None:
        """Stray events after end() are ignored until the next start_turn."""
        tracer.end()
        tracer.observe(complete())
        assert [] == finished(exporter)
        tracer.start_turn("hi", model=None)
        tracer.observe(complete())
        assert [TURN_SPAN_NAME] == [s.name for s in finished(exporter)]


# ---------------------------------------------------------------------- canonical log line


class TestCanonicalLogLine:
    def test_one_turn_completed_line_per_turn(self, tracer: TurnTracer) -> None:
        """Each turn logs exactly one ``turn.completed`` with usage, cost and tool counts."""
        ok = tool_call("toolu_1", "Bash", {"command": "ls"})
        bad = tool_call("toolu_2", "Read", {"file_path": "/nope"})
        with structlog.testing.capture_logs() as logs:
            tracer.start_turn("hi", model="claude-sonnet-4-5")
            feed(tracer, [ok, bad, tool_done(ok), tool_done(bad, error="missing"), complete()])
            tracer.start_turn("again", model=None)
            tracer.observe(complete(is_error=True, result="API Error: 500"))

        assert ["turn.completed", "turn.completed"] == [line["event"] for line in logs]
        first, second = logs
        duration = first.pop("duration_ms")
        trace_id = first.pop("trace_id")
        assert isinstance(duration, float) and duration >= 0
        assert isinstance(trace_id, str) and 32 == len(trace_id)
        assert {
            "event": "turn.completed",
            "log_level": "info",
            "session_id": "sess-1",
            "conversation_id": "sess-1",
            "turn": 1,
            "cost_usd": 0.0123,
            "input_tokens": 10,
            "output_tokens": 50,
            "cache_read_tokens": 200,
            "cache_creation_tokens": 30,
            "tool_calls": 2,
            "tool_errors": 1,
            "outcome": "success",
            "error_type": None,
            "model": "claude-sonnet-4-5",
            "num_turns": 2,
            "stop_reason": "end_turn",
        } == first
        assert (2, "error", "api_error") == (
            second["turn"],
            second["outcome"],
            second["error_type"],
        )

    def test_an_explicit_logger_is_used(self, provider: TracerProvider) -> None:
        """A logger passed in receives the line."""
        from claudecode._log import get_logger

        logger = get_logger("claudecode.custom").bind(run_id="r1")
        tracer = TurnTracer(session_id="s", tracer_provider=provider, logger=logger)
        with structlog.testing.capture_logs() as logs:
            tracer.start_turn("hi", model=None)
            tracer.observe(complete())
        assert ["r1"] == [line["run_id"] for line in logs]

    def test_nothing_is_logged_before_a_turn_ends(self, tracer: TurnTracer) -> None:
        """Starting a turn and observing events logs nothing."""
        with structlog.testing.capture_logs() as logs:
            tracer.start_turn("hi", model=None)
            tracer.observe(MessageChunk(message_id="m", text="t"))
        assert [] == logs
        tracer.end()


# ---------------------------------------------------------------------- properties

_CALL_IDS = ["toolu_a", "toolu_b", "toolu_c"]
_EVENTS = st.one_of(
    st.builds(
        lambda i, name, parent: tool_call(i, name, {"command": "ls"}, parent=parent),
        st.sampled_from(_CALL_IDS),
        st.sampled_from(["Bash", "Agent", "mcp__s__t"]),
        st.none() | st.sampled_from(_CALL_IDS),
    ),
    st.builds(
        lambda i, err: tool_done(tool_call(i, "Bash", {"command": "ls"}), error=err),
        st.sampled_from(_CALL_IDS),
        st.none() | st.just("boom"),
    ),
    st.builds(
        lambda p, i: permission(p, tool_call(i, "Bash", {"command": "ls"})),
        st.sampled_from(["req_1", "req_2"]),
        st.sampled_from(_CALL_IDS),
    ),
    st.builds(
        PermissionCancelled,
        pending_id=st.sampled_from(["req_1", "req_2"]),
        reason=st.sampled_from(["cancelled_by_cli", "timeout"]),
    ),
    st.builds(lambda e: complete(is_error=e), st.booleans()),
    st.builds(ErrorEvent, message=st.text(max_size=5)),
    st.builds(SessionStatus, status=st.just("new"), cli_session_id=st.none() | st.just("c")),
    st.builds(MessageChunk, message_id=st.just("m"), text=st.text(max_size=5)),
)
_STEPS = st.lists(
    st.one_of(
        _EVENTS,
        st.sampled_from(["start", "answer", "interrupt"]),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(steps=_STEPS, capture=st.booleans(), reason=st.none() | st.just("gone"))
def test_any_sequence_ends_every_span_and_logs_once_per_turn(
    steps: list[Event | str], capture: bool, reason: str | None
) -> None:
    """Whatever arrives, after end() every span is closed and each turn logged exactly once."""
    recorder = _Recorder()
    provider = TracerProvider()
    provider.add_span_processor(recorder)
    tracer = TurnTracer(session_id="s", tracer_provider=provider, capture_content=capture)
    with structlog.testing.capture_logs() as logs:
        for step in steps:
            if step == "start":
                tracer.start_turn("p", model=None)
            elif step == "answer":
                tracer.answered("req_1", "allow")
            elif step == "interrupt":
                with tracer.control("interrupt", direction="outbound"):
                    pass
            else:
                assert isinstance(step, Event)
                tracer.observe(step)
        tracer.end(reason)
    assert recorder.started == recorder.ended
    assert [] == [line for line in logs if line["event"] != "turn.completed"]
    turn_numbers = [line["turn"] for line in logs]
    assert list(range(1, len(turn_numbers) + 1)) == turn_numbers
    provider.shutdown()
