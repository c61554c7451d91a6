"""Bookkeeping for :mod:`adapter.telemetry`: per-turn state and small attribute helpers."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from normalize import NormalizedPayload

from .events import (
    Complete,
    MessageChunk,
    PermissionRequest,
    Reasoning,
    ToolCall,
    ToolInputDelta,
    ToolProgress,
)

__all__ = (
    "CAPTURE_CONTENT_ENV",
    "capture_from_env",
)

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable that switches content capture on by default (``true``)."""

#: How a turn ended, on the canonical log line.
Outcome = Literal["success", "error", "interrupted"]

_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})
_DELTAS = (MessageChunk, Reasoning, ToolInputDelta, ToolProgress)
_TURN_STARTERS = (MessageChunk, Reasoning, ToolCall, ToolInputDelta, PermissionRequest, Complete)


def capture_from_env() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content capture.

    ``true`` (any case), ``1``, ``span_only`` and ``span_and_event`` mean yes; anything
    else, or nothing, means no.
    """
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURE_ON


@dataclass(eq=False)
class _Turn:
    span: Span
    number: int
    started_ns: int
    model: str | None
    tool_calls: int = 0
    tool_errors: int = 0
    error_kind: str | None = None
    error_message: str | None = None
    interrupt_requested: bool = False
    #: The turn's span belongs to a real trace (an OpenTelemetry SDK is configured).
    traced: bool = True
    tools: dict[str, Span] = field(default_factory=dict)
    permissions: dict[str, Span] = field(default_factory=dict)


@dataclass(frozen=True)
class _Queued:
    prompt: str | None
    model: str | None
    parent_context: Context | None


def _kind(payload: NormalizedPayload) -> str:
    return str(type(payload).__struct_config__.tag)


def _put(attributes: dict[str, AttributeValue], key: str, value: AttributeValue | None) -> None:
    if value is not None:
        attributes[key] = value


def _messages(role: str, text: str) -> str:
    """One message in the conventions' ``gen_ai.*.messages`` JSON shape."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _error_type(turn: _Turn, event: Complete) -> str:
    if event.subtype != "success":
        return event.subtype
    if turn.error_kind is not None:
        return turn.error_kind
    if event.terminal_reason and event.terminal_reason != "completed":
        return event.terminal_reason
    return "api_error"


def log_turn(
    logger: Any,
    turn: _Turn,
    *,
    session_id: str,
    conversation_id: str,
    outcome: str,
    complete: Complete | None,
    error_type: str | None,
) -> None:
    """Write the canonical ``turn.completed`` line for ``turn``."""
    tokens = complete.tokens if complete is not None else None
    span_context = turn.span.get_span_context()
    logger.info(
        "turn.completed",
        session_id=session_id,
        conversation_id=conversation_id,
        turn=turn.number,
        duration_ms=round((time.monotonic_ns() - turn.started_ns) / 1e6, 3),
        cost_usd=complete.cost_usd if complete is not None else 0.0,
        input_tokens=tokens.input if tokens is not None else 0,
        output_tokens=tokens.output if tokens is not None else 0,
        cache_read_tokens=tokens.cache_read if tokens is not None else 0,
        cache_creation_tokens=tokens.cache_creation if tokens is not None else 0,
        tool_calls=turn.tool_calls,
        tool_errors=turn.tool_errors,
        outcome=outcome,
        error_type=error_type,
        model=(complete.model if complete is not None else None) or turn.model,
        num_turns=complete.num_turns if complete is not None else 0,
        stop_reason=complete.stop_reason if complete is not None else None,
        trace_id=trace.format_trace_id(span_context.trace_id) if span_context.is_valid else None,
    )
