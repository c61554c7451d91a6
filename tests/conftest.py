"""Shared fixtures: every async test runs on asyncio and on trio."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per anyio backend."""
    return str(request.param)


# No per-example deadlines: this suite runs on small, busy machines, and speed is measured
# by the benchmarks, never by timed assertions in tests.
from hypothesis import settings  # noqa: E402

settings.register_profile("default", deadline=None)
settings.load_profile("default")


@pytest.fixture(autouse=True)
def _claudecode_logs_enabled() -> object:
    """Our loggers skip disabled levels before structlog sees them; enable them in tests so
    ``structlog.testing.capture_logs()`` captures debug and info events."""
    import logging

    logger = logging.getLogger("claudecode")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield None
    logger.setLevel(level)
