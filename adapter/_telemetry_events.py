"""What each normalized event records on a turn's spans (a :class:`~adapter.TurnTracer`
mixin): tool calls as ``execute_tool`` spans under the turn (or under their parent tool call),
permission requests as ``permission`` spans, errors, retries, rate limits, compactions and
denials as span events, the result's usage and outcome on the turn span, which it ends.

A turn is opened here too when an event that only a turn produces arrives with none open (a
background sub-agent that makes the CLI start a turn by itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from normalize import NormalizedPayload, split_mcp_name

from . import _semconv as sc
from ._telemetry_state import (
    _TURN_STARTERS,
    Outcome,
    _error_type,
    _kind,
    _messages,
    _put,
    _Turn,
)
from .events import (
    ApiRetry,
    CompactBoundary,
    Complete,
    ErrorEvent,
    Event,
    PermissionCancelled,
    PermissionDenied,
    PermissionRequest,
    RateLimit,
    SessionStatus,
    ToolCall,
    ToolUpdate,
)

__all__ = ("TurnEventSpans",)


class TurnEventSpans:
    """Normalized events -> spans, span attributes and span events (a ``TurnTracer`` mixin)."""

    _tracer: Tracer
    _capture: bool
    _model: str | None
    _conversation_id: str
    _turn: _Turn | None
    _closed: bool

    if TYPE_CHECKING:  # the TurnTracer and its ContentCapture provide them

        def _open_turn(
            self,
            prompt: str | None,
            *,
            model: str | None,
            parent_context: Context | None,
            initiator: Literal["user", "cli"],
        ) -> _Turn: ...

        def _finish(
            self,
            turn: _Turn,
            *,
            outcome: Outcome,
            complete: Complete | None,
            ended_by: str = "turn_ended",
            error_type: str | None = None,
        ) -> None: ...

        def _capture_event(self, span: trace.Span, event: Event) -> None: ...

        def _payload_text(self, payload: NormalizedPayload) -> str: ...

        def _clip(self, text: str) -> str: ...

    def _observe(self, event: Event) -> None:
        if isinstance(event, SessionStatus):
            self._on_session_status(event)
            return
        turn = self._turn
        if turn is None:
            if self._closed or not isinstance(event, _TURN_STARTERS):
                return
            turn = self._open_turn(None, model=None, parent_context=None, initiator="cli")
        if isinstance(event, ToolCall):
            self._on_tool_call(turn, event)
        elif isinstance(event, ToolUpdate):
            self._on_tool_update(turn, event)
        elif isinstance(event, PermissionRequest):
            self._on_permission_request(turn, event)
        elif isinstance(event, PermissionCancelled):
            self._on_permission_cancelled(turn, event)
        elif isinstance(event, Complete):
            self._on_complete(turn, event)
        elif isinstance(event, ErrorEvent):
            self._on_error(turn, event)
        else:
            self._on_other(turn, event)

    def _on_session_status(self, event: SessionStatus) -> None:
        if event.model:
            self._model = event.model
        if event.cli_session_id:
            self._conversation_id = event.cli_session_id
            if self._turn is not None:
                self._turn.span.set_attribute(sc.GEN_AI_CONVERSATION_ID, event.cli_session_id)
        if self._turn is not None:
            self._capture_event(self._turn.span, event)

    def _on_tool_call(self, turn: _Turn, event: ToolCall) -> None:
        if not turn.traced:
            # No trace to add to (no OpenTelemetry SDK): a span would be a no-op, but making
            # one costs a context and an attribute dict per call. The call is still counted
            # and remembered (INVALID_SPAN is the no-op span) for the canonical log line.
            turn.tools[event.tool_call_id] = trace.INVALID_SPAN
            turn.tool_calls += 1
            return
        parent = turn.span
        if event.parent_tool_call_id is not None:
            parent = turn.tools.get(event.parent_tool_call_id, parent)
        attributes: dict[str, AttributeValue] = {
            sc.GEN_AI_OPERATION_NAME: sc.GEN_AI_OPERATION_EXECUTE_TOOL,
            sc.GEN_AI_PROVIDER_NAME: sc.GEN_AI_PROVIDER_ANTHROPIC,
            sc.GEN_AI_TOOL_NAME: event.tool_name,
            sc.GEN_AI_TOOL_CALL_ID: event.tool_call_id,
            sc.GEN_AI_TOOL_TYPE: (
                sc.GEN_AI_TOOL_TYPE_EXTENSION
                if split_mcp_name(event.tool_name) is not None
                else sc.GEN_AI_TOOL_TYPE_FUNCTION
            ),
            sc.CLAUDECODE_TOOL_KIND: _kind(event.normalized),
        }
        if event.parent_tool_call_id is not None:
            attributes[sc.CLAUDECODE_TOOL_PARENT_CALL_ID] = event.parent_tool_call_id
        if self._capture:
            attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = self._payload_text(event.normalized)
        span = self._tracer.start_span(
            f"{sc.GEN_AI_OPERATION_EXECUTE_TOOL} {event.tool_name}",
            context=trace.set_span_in_context(parent),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        stale = turn.tools.pop(event.tool_call_id, None)
        if stale is not None:  # the same id twice: keep the newer call
            stale.end()
        turn.tools[event.tool_call_id] = span
        turn.tool_calls += 1
        self._capture_event(span, event)

    def _on_tool_update(self, turn: _Turn, event: ToolUpdate) -> None:
        span = turn.tools.pop(event.tool_call_id, None)
        if span is None:
            self._capture_event(turn.span, event)
            return
        if self._capture:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, self._payload_text(event.normalized))
        self._capture_event(span, event)
        if event.synthetic:
            span.set_attribute(sc.CLAUDECODE_SYNTHETIC, True)
        if event.status == "error":
            turn.tool_errors += 1
            span.set_attribute(sc.ERROR_TYPE, "tool_error")
            span.set_status(Status(StatusCode.ERROR, self._clip(event.normalized.error or "")))
        span.end()

    def _on_permission_request(self, turn: _Turn, event: PermissionRequest) -> None:
        parent = turn.span
        for call_id in (event.parent_tool_call_id, event.tool_call_id):
            if call_id is not None:
                parent = turn.tools.get(call_id, parent)
        attributes: dict[str, AttributeValue] = {
            sc.CLAUDECODE_CONTROL_DIRECTION: sc.DIRECTION_INBOUND,
            sc.CLAUDECODE_CONTROL_SUBTYPE: "can_use_tool",
            sc.CLAUDECODE_PERMISSION_PENDING_ID: event.pending_id,
            sc.CLAUDECODE_PERMISSION_ACTION_TYPE: event.action_type,
            sc.GEN_AI_TOOL_NAME: event.tool_name,
        }
        if event.tool_call_id is not None:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = event.tool_call_id
        span = self._tracer.start_span(
            f"permission {event.tool_name}",
            context=trace.set_span_in_context(parent),
            kind=SpanKind.SERVER,
            attributes=attributes,
        )
        stale = turn.permissions.pop(event.pending_id, None)
        if stale is not None:
            stale.end()
        turn.permissions[event.pending_id] = span
        self._capture_event(span, event)

    def _on_permission_cancelled(self, turn: _Turn, event: PermissionCancelled) -> None:
        span = turn.permissions.pop(event.pending_id, None)
        if span is None:
            return
        span.set_attribute(sc.CLAUDECODE_PERMISSION_CANCEL_REASON, event.reason)
        if event.reason == "timeout":
            span.set_attribute(sc.ERROR_TYPE, "timeout")
            span.set_status(Status(StatusCode.ERROR, "permission request timed out"))
        span.end()

    def _on_error(self, turn: _Turn, event: ErrorEvent) -> None:
        turn.error_kind = event.kind
        turn.error_message = event.message
        attributes: dict[str, AttributeValue] = {
            sc.ERROR_TYPE: event.kind,
            sc.CLAUDECODE_ERROR_KIND: event.kind,
            sc.CLAUDECODE_ERROR_MESSAGE: self._clip(event.message),
        }
        if event.status is not None:
            attributes[sc.CLAUDECODE_ERROR_STATUS] = event.status
        turn.span.add_event(sc.EVENT_ERROR, attributes)

    def _on_other(self, turn: _Turn, event: Event) -> None:
        attributes: dict[str, AttributeValue] = {}
        name: str | None = None
        if isinstance(event, ApiRetry):
            name = sc.EVENT_API_RETRY
            attributes["attempt"] = event.attempt
            _put(attributes, "max_retries", event.max_retries)
            _put(attributes, "delay_ms", event.delay_ms)
            _put(attributes, "error_status", event.error_status)
            _put(attributes, "error", event.error)
        elif isinstance(event, RateLimit):
            name = sc.EVENT_RATE_LIMIT
            attributes["status"] = event.status
            _put(attributes, "rate_limit_type", event.rate_limit_type)
            _put(attributes, "resets_at", event.resets_at)
            _put(attributes, "utilization", event.utilization)
        elif isinstance(event, CompactBoundary):
            name = sc.EVENT_COMPACT_BOUNDARY
            _put(attributes, "trigger", event.trigger)
            _put(attributes, "pre_tokens", event.pre_tokens)
        elif isinstance(event, PermissionDenied):
            name = sc.EVENT_PERMISSION_DENIED
            attributes[sc.GEN_AI_TOOL_NAME] = event.tool_name
            _put(attributes, sc.GEN_AI_TOOL_CALL_ID, event.tool_call_id)
        if name is not None:
            turn.span.add_event(name, attributes)
        self._capture_event(turn.span, event)

    def _on_complete(self, turn: _Turn, event: Complete) -> None:
        span = turn.span
        if span.is_recording():  # a span that records nothing (no SDK) drops them: not built
            self._complete_attributes(span, event)
        self._capture_event(span, event)
        if not event.is_error:
            self._finish(turn, outcome="success", complete=event)
            return
        error_type = _error_type(turn, event)
        span.set_attribute(sc.ERROR_TYPE, error_type)
        description = turn.error_message or event.result or error_type
        span.set_status(Status(StatusCode.ERROR, self._clip(description)))
        interrupted = (
            turn.interrupt_requested
            or turn.error_kind == "interrupted"
            or (event.terminal_reason or "").startswith("aborted")
        )
        self._finish(
            turn,
            outcome="interrupted" if interrupted else "error",
            complete=event,
            error_type=error_type,
        )

    def _complete_attributes(self, span: trace.Span, event: Complete) -> None:
        tokens = event.tokens
        attributes: dict[str, AttributeValue] = {
            # Anthropic's input_tokens excludes the cached ones; the convention's includes them.
            sc.GEN_AI_USAGE_INPUT_TOKENS: tokens.input + tokens.cache_read + tokens.cache_creation,
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: tokens.output,
            sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: tokens.cache_read,
            sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: tokens.cache_creation,
            sc.CLAUDECODE_COST_USD: event.cost_usd,
            sc.CLAUDECODE_NUM_TURNS: event.num_turns,
            sc.CLAUDECODE_RESULT_SUBTYPE: event.subtype,
        }
        _put(attributes, sc.GEN_AI_RESPONSE_MODEL, event.model)
        _put(attributes, sc.CLAUDECODE_TERMINAL_REASON, event.terminal_reason)
        if event.stop_reason:
            attributes[sc.GEN_AI_RESPONSE_FINISH_REASONS] = [event.stop_reason]
        if event.synthetic:
            attributes[sc.CLAUDECODE_SYNTHETIC] = True
        if self._capture and event.result and not event.is_error:
            attributes[sc.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", self._clip(event.result))
        span.set_attributes(attributes)
