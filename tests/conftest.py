"""Shared fixtures: every async test runs on asyncio and on trio."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

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


#: Debian's Chromium, driven headless by Playwright (its own browser download cannot work here).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the page tests; missing Chromium fails under CI, skips elsewhere."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not os.access(CHROMIUM, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is required here (scripts/test-deps.d/10-chromium.sh)")
        pytest.skip(f"no {CHROMIUM}")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def bench_results() -> Callable[..., dict[str, Any]]:
    """Results as ``python -m benchmarks`` writes them, made of the given sections on a
    made-up machine: what the benchmark smoke tests render with ``benchmarks.report``."""

    def results(command: str = "python -m benchmarks", **sections: Any) -> dict[str, Any]:
        return {
            "started": "now",
            "command": command,
            "elapsed_s": 0.0,
            "loadavg_start": "0",
            "loadavg_end": "0",
            "machine": {
                "nproc": 2,
                "cpu": "cpu",
                "memory_gib": 1,
                "os": "Linux",
                "python": "3.11",
                "implementation": "CPython",
                "packages": {},
            },
            **sections,
        }

    return results
