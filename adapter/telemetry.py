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

This module holds the tracer's public surface, its control-plane spans and the turns' lifecycle
(open, queue, finish); what each event records on the spans is in
:mod:`adapter._telemetry_events`, content capture in :mod:`adapter._telemetry_content`, the
per-turn bookkeeping and the canonical log line in :mod:`adapter._telemetry_state`.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Literal

import structlog
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from claudecode import __version__
from claudecode.internal import get_logger

from . import _semconv as sc
from ._telemetry_content import ContentCapture
from ._telemetry_events import TurnEventSpans
from ._telemetry_state import (
    _DELTAS,
    CAPTURE_CONTENT_ENV,
    Outcome,
    _messages,
    _put,
    _Queued,
    _Turn,
    capture_from_env,
    log_turn,
)
from .events import Complete, ContextWindow, Event

__all__ = ("AGENT_NAME", "CAPTURE_CONTENT_ENV", "TURN_SPAN_NAME", "TurnTracer", "capture_from_env")

AGENT_NAME = "claude-code"
"""``gen_ai.agent.name`` of every turn span."""

TURN_SPAN_NAME = f"{sc.GEN_AI_OPERATION_INVOKE_AGENT} {AGENT_NAME}"
"""The name of the per-turn span: ``invoke_agent claude-code``."""

_PROPAGATOR = TraceContextTextMapPropagator()
_QUIET_TYPES = frozenset({*_DELTAS, ContextWindow})


class TurnTracer(TurnEventSpans, ContentCapture):
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

    def rename(self, session_id: str) -> None:
        """Our id for the session is ``session_id`` from now on (the conversation id too,
        until the CLI's own is known)."""
        if self._conversation_id == self._session_id:
            self._conversation_id = session_id
        self._session_id = session_id

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

    # ------------------------------------------------------------------ helpers

    def _failed(self, where: str) -> None:
        self._log.warning("telemetry.failed", where=where, exc_info=True)
