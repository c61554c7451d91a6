"""The package's tracer and the trace context handed to the CLI."""

from __future__ import annotations

from opentelemetry import propagate, trace

from ._version import __version__

__all__ = ("tracer", "trace_env")

tracer = trace.get_tracer("claudecode", __version__)


def trace_env() -> dict[str, str]:
    """``TRACEPARENT``/``TRACESTATE`` for the CLI when a span is active, so its spans join."""
    if not trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    try:
        propagate.inject(carrier)
    except Exception:  # a broken propagator must never stop a session
        return {}
    wanted = ("traceparent", "tracestate")
    return {key.upper(): value for key, value in carrier.items() if key in wanted}
