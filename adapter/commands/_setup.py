"""Configuration that only entry points do: logging and the OpenTelemetry SDK.

Libraries never call these; ``claudecode-bridge`` does, once, at start.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

import structlog

__all__ = ("add_demo_home_argument", "configure_logging", "configure_tracing")


def configure_logging(
    verbosity: int = 0,
    *,
    json_logs: bool = False,
    level_name: str | None = None,
    also: tuple[str, ...] = (),
) -> None:
    """Send our structlog/stdlib logs to stderr (never stdout, which carries output).

    ``level_name`` (``debug``, ``info``, ``warning``, ``error``) wins over ``verbosity``
    (0: warnings, 1: info, 2: debug); ``json_logs`` renders one JSON object per line
    instead of readable lines; ``also`` names other stdlib loggers (a server's) that go
    through the same handler at the same level.
    """
    if level_name is not None:
        level = logging.getLevelNamesMapping()[level_name.upper()]
    else:
        level = (
            logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
        )
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso"),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    for name in ("claudecode", *also):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False


def configure_tracing(endpoint: str | None) -> Any:
    """A TracerProvider exporting over OTLP/HTTP, or ``None`` when tracing is off.

    ``endpoint`` is the collector's base URL (``http://localhost:4318``); ``None`` falls back
    to ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``.
    """
    env_endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if endpoint is None and not env_endpoint:
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:  # the 'otel' extra is not installed
        raise SystemExit(
            "tracing needs the OpenTelemetry SDK: pip install 'claudecode-bridge[otel]'"
        ) from exc
    exporter = (
        OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
        if endpoint
        else OTLPSpanExporter()
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "claudecode-bridge"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def add_demo_home_argument(parser: argparse.ArgumentParser) -> None:
    """``--demo-home DIR`` (for the commands that take ``--demo``)."""
    parser.add_argument(
        "--demo-home",
        metavar="DIR",
        help="with --demo: keep the demo's sessions (and its working directory) in DIR, for "
        "history and resume on the next run (default: a temporary home removed at exit)",
    )
