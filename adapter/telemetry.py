"""OpenTelemetry spans and the canonical log line for a session's turns.

:class:`TurnTracer` watches one session: the session tells it when a prompt goes out
(:meth:`~TurnTracer.start_turn`), feeds it every normalized event
(:meth:`~TurnTracer.observe`), wraps its control requests in :meth:`~TurnTracer.control`, and
reports permission answers (:meth:`~TurnTracer.answered`). It uses the OpenTelemetry **API
only** and never configures anything: with no SDK installed every call is a cheap no-op, and
the spans go to whatever ``tracer_provider`` the application passes (the global one
otherwise).

Span names, kinds and attributes (GenAI semantic conventions) are listed in
``docs/observability.md``.

Content (prompts, tool arguments and results, the final text, the normalized events and the
raw protocol lines as span events) is recorded **only** when content capture is on, because
it can be sensitive. It is off by default; the standard
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` switches it on. Each text is cut
to ``max_content_chars``. Streaming deltas (text, reasoning, tool input, tool progress) are
never recorded one by one: there are hundreds per turn, more than a span keeps. Error
messages are diagnostics, not content, and are recorded either way.

When a turn ends, one structlog event ``turn.completed`` (the canonical log line) goes
through the ``claudecode.adapter`` logger with the session, turn number, duration, cost,
tokens, tool counts and outcome.

Tracing never breaks a session: a failure inside the tracer is logged (``telemetry.failed``)
and swallowed.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Literal

import msgspec
import structlog
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from claudecode._log import get_logger
from claudecode._version import __version__
from normalize import NormalizedPayload, split_mcp_name

from . import _semconv as sc
from ._telemetry_state import (
    _DELTAS,
    _TURN_STARTERS,
    CAPTURE_CONTENT_ENV,
    _error_type,
    _kind,
    _messages,
    _put,
    _Queued,
    _Turn,
    capture_from_env,
    log_turn,
)
from .events import (
    ApiRetry,
    CompactBoundary,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    PermissionCancelled,
    PermissionDenied,
    PermissionRequest,
    RateLimit,
    SessionStatus,
    ToolCall,
    ToolUpdate,
    encode_event,
)

__all__ = ("AGENT_NAME", "CAPTURE_CONTENT_ENV", "TURN_SPAN_NAME", "TurnTracer", "capture_from_env")

AGENT_NAME = "claude-code"
"""``gen_ai.agent.name`` of every turn span."""

TURN_SPAN_NAME = f"{sc.GEN_AI_OPERATION_INVOKE_AGENT} {AGENT_NAME}"
"""The name of the per-turn span: ``invoke_agent claude-code``."""

_PROPAGATOR = TraceContextTextMapPropagator()
_QUIET_TYPES = frozenset({*_DELTAS, ContextWindow})

Outcome = Literal["success", "error", "interrupted"]


class TurnTracer:
    """Turns one session's events and control-plane activity into spans and log lines.

    Args:
        session_id: Our id for the session; ``gen_ai.conversation.id`` until the CLI's own
            session id is known (from a ``session_status`` event), and ``session_id`` on the
            log line.
        tracer_provider: Where the spans go; the global provider when ``None``. Never set
            as the global one.
        capture_content: Record prompts, tool arguments and results, and the messages
            themselves. ``None`` (the default) reads :data:`CAPTURE_CONTENT_ENV`, which is
            off unless set.
        logger: The structlog logger for the canonical line; the ``claudecode.adapter``
            logger by default.
        max_content_chars: Each captured text is cut to this many characters.

    A prompt sent while a turn is still running is queued by the CLI; :meth:`start_turn`
    queues it here as well, and its span opens when the running turn completes. Events that
    arrive with no turn open (a background sub-agent that makes the CLI start a turn by
    itself) open a turn span of their own (``claudecode.turn.initiator=cli``).
    """

    def __init__(
        self,
        *,
        session_id: str,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool | None = None,
        logger: Any = None,
        max_content_chars: int = 4096,
    ) -> None:
        self._tracer = trace.get_tracer("claudecode", __version__, tracer_provider=tracer_provider)
        self._session_id = session_id
        self._conversation_id = session_id
        self._capture = capture_from_env() if capture_content is None else capture_content
        self._log: structlog.stdlib.BoundLogger = (
            get_logger("claudecode.adapter") if logger is None else logger
        )
        self._max_chars = max(max_content_chars, 0)
        self._model: str | None = None
        self._turn: _Turn | None = None
        self._queued: deque[_Queued] = deque()
        self._turns = 0
        self._closed = False

    # ------------------------------------------------------------------ public surface

    @property
    def capture_content(self) -> bool:
        """Whether content is recorded on spans."""
        return self._capture

    @property
    def conversation_id(self) -> str:
        """The ``gen_ai.conversation.id`` in use: the CLI's session id once known."""
        return self._conversation_id

    @property
    def turn_open(self) -> bool:
        """Whether a turn span is open."""
        return self._turn is not None

    def start_turn(
        self, prompt: str | None, *, model: str | None, parent_context: Context | None = None
    ) -> None:
        """A prompt went out: open its ``invoke_agent`` span (or queue it behind the open one).

        Args:
            prompt: The prompt text, recorded only with content capture on.
            model: The model asked for (``gen_ai.request.model``); the session's model when
                ``None``.
            parent_context: The parent of the span; the current context when ``None``.
        """
        try:
            self._closed = False
            if self._turn is not None:
                self._queued.append(_Queued(prompt, model, parent_context))
                return
            self._open_turn(prompt, model=model, parent_context=parent_context, initiator="user")
        except Exception:
            self._failed("start_turn")

    def traceparent(self) -> dict[str, str]:
        """``TRACEPARENT`` (and ``TRACESTATE``) for the open turn, for the CLI's environment.

        Empty when no turn is open or the span is not recording into a real trace.
        """
        turn = self._turn
        if turn is None or not turn.span.get_span_context().is_valid:
            return {}
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(turn.span))
        return {key.upper(): value for key, value in carrier.items()}

    def observe(self, event: Event) -> None:
        """Take one normalized event into account (never raises)."""
        # Hot path: streaming deltas inside an open turn only matter for content capture.
        if self._turn is not None and not self._capture and type(event) in _QUIET_TYPES:
            return
        try:
            self._observe(event)
        except Exception:
            self._failed("observe")

    def record_raw(
        self, line: str | bytes, *, direction: Literal["inbound", "outbound"] = "inbound"
    ) -> None:
        """Record one raw protocol line on the open turn's span (content capture only).

        Callers should skip ``stream_event`` lines: there are hundreds per turn.
        """
        turn = self._turn
        if not self._capture or turn is None:
            return
        try:
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            turn.span.add_event(
                sc.EVENT_RAW,
                {sc.CLAUDECODE_RAW_DIRECTION: direction, sc.CLAUDECODE_RAW_LINE: self._clip(text)},
            )
        except Exception:
            self._failed("record_raw")

    def answered(self, pending_id: str, decision: str) -> None:
        """A permission request was answered (``allow``, ``allow_always``, ``deny``): end it."""
        try:
            turn = self._turn
            span = turn.permissions.pop(pending_id, None) if turn is not None else None
            if span is not None:
                span.set_attribute(sc.CLAUDECODE_PERMISSION_DECISION, decision)
                span.end()
        except Exception:
            self._failed("answered")

    @contextlib.contextmanager
    def control(
        self,
        name: str,
        *,
        direction: Literal["inbound", "outbound"],
        **attrs: AttributeValue | None,
    ) -> Iterator[Span]:
        """A span around one control message, made current inside the ``with`` block.

        Named ``control {name}``; a child of the open turn, else of the current context (a
        root span when there is none). Each keyword becomes ``claudecode.control.{key}``
        (keys with a dot are used as given; ``None`` values are left out). An exception
        escaping the block sets status ``ERROR`` and ``error.type`` to its class name, and
        propagates. An ``interrupt`` during a turn makes that turn's outcome
        ``interrupted``.
        """
        turn = self._turn
        attributes: dict[str, AttributeValue] = {
            sc.CLAUDECODE_CONTROL_DIRECTION: direction,
            sc.CLAUDECODE_CONTROL_SUBTYPE: name,
        }
        for key, value in attrs.items():
            if value is not None:
                attributes[key if "." in key else sc.CLAUDECODE_CONTROL_PREFIX + key] = value
        span = self._tracer.start_span(
            f"control {name}",
            context=trace.set_span_in_context(turn.span) if turn is not None else None,
            kind=SpanKind.SERVER if direction == sc.DIRECTION_INBOUND else SpanKind.CLIENT,
            attributes=attributes,
        )
        if name == "interrupt" and turn is not None:
            turn.interrupt_requested = True
        try:
            with trace.use_span(
                span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                yield span
        except Exception as exc:
            span.set_attribute(sc.ERROR_TYPE, type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, self._clip(str(exc))))
            raise
        finally:
            span.end()

    def end(self, reason: str | None = None) -> None:
        """The session is over: end every open span; with a ``reason``, mark the turn ERROR.

        Prompts still queued never ran and get no span. Events observed afterwards open no
        turn until the next :meth:`start_turn`.
        """
        try:
            self._queued.clear()
            self._closed = True
            turn = self._turn
            if turn is None:
                return
            if reason is None:
                self._finish(turn, outcome="interrupted", complete=None, ended_by="session_closed")
                return
            error_type = turn.error_kind or sc.ERROR_TYPE_OTHER
            turn.span.set_attribute(sc.ERROR_TYPE, error_type)
            turn.span.set_status(Status(StatusCode.ERROR, self._clip(reason)))
            self._finish(
                turn,
                outcome="error",
                complete=None,
                ended_by="session_ended",
                error_type=error_type,
            )
        except Exception:
            self._failed("end")

    # ------------------------------------------------------------------ event handling

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

    # ------------------------------------------------------------------ turn lifecycle

    def _open_turn(
        self,
        prompt: str | None,
        *,
        model: str | None,
        parent_context: Context | None,
        initiator: Literal["user", "cli"],
    ) -> _Turn:
        self._turns += 1
        model = model or self._model
        attributes: dict[str, AttributeValue] = {
            sc.GEN_AI_OPERATION_NAME: sc.GEN_AI_OPERATION_INVOKE_AGENT,
            sc.GEN_AI_PROVIDER_NAME: sc.GEN_AI_PROVIDER_ANTHROPIC,
            sc.GEN_AI_AGENT_NAME: AGENT_NAME,
            sc.CLAUDECODE_SESSION_ID: self._session_id,
            sc.CLAUDECODE_TURN_NUMBER: self._turns,
            sc.CLAUDECODE_TURN_INITIATOR: initiator,
        }
        _put(attributes, sc.GEN_AI_CONVERSATION_ID, self._conversation_id or None)
        _put(attributes, sc.GEN_AI_REQUEST_MODEL, model)
        if self._capture and prompt is not None:
            attributes[sc.GEN_AI_INPUT_MESSAGES] = _messages("user", self._clip(prompt))
        span = self._tracer.start_span(
            TURN_SPAN_NAME, context=parent_context, kind=SpanKind.CLIENT, attributes=attributes
        )
        self._turn = _Turn(
            span=span,
            number=self._turns,
            started_ns=time.monotonic_ns(),
            model=model,
            traced=span.get_span_context().is_valid,
        )
        return self._turn

    def _finish(
        self,
        turn: _Turn,
        *,
        outcome: Outcome,
        complete: Complete | None,
        ended_by: str = "turn_ended",
        error_type: str | None = None,
    ) -> None:
        for span in turn.permissions.values():
            span.set_attribute(sc.CLAUDECODE_PERMISSION_CANCEL_REASON, ended_by)
            span.end()
        for span in reversed(turn.tools.values()):  # children (opened later) first
            span.set_attribute(sc.CLAUDECODE_SYNTHETIC, True)
            span.end()
        turn.permissions.clear()
        turn.tools.clear()
        turn.span.end()
        self._turn = None
        log_turn(
            self._log,
            turn,
            session_id=self._session_id,
            conversation_id=self._conversation_id,
            outcome=outcome,
            complete=complete,
            error_type=error_type,
        )
        if self._queued and not self._closed:
            queued = self._queued.popleft()
            self._open_turn(
                queued.prompt,
                model=queued.model,
                parent_context=queued.parent_context,
                initiator="user",
            )

    # ------------------------------------------------------------------ helpers

    def _capture_event(self, span: Span, event: Event) -> None:
        if not self._capture or isinstance(event, _DELTAS):
            return
        tag = type(event).__struct_config__.tag
        span.add_event(
            sc.EVENT_NORMALIZED,
            {
                sc.CLAUDECODE_EVENT_TYPE: str(tag),
                sc.CLAUDECODE_EVENT_JSON: self._clip(encode_event(event).decode()),
            },
        )

    def _payload_text(self, payload: NormalizedPayload) -> str:
        return self._clip(msgspec.json.encode(payload).decode())

    def _clip(self, text: str) -> str:
        if len(text) <= self._max_chars:
            return text
        return f"{text[: self._max_chars]}\u2026[{len(text) - self._max_chars} more chars]"

    def _failed(self, where: str) -> None:
        self._log.warning("telemetry.failed", where=where, exc_info=True)
