"""Pages in headless Chromium (the ``browser`` fixture of ``tests/conftest.py``)."""

from __future__ import annotations

from typing import Any

from .timeouts import NODE_GUARD_MS

#: How often a page expression is evaluated again, in milliseconds.
PAGE_POLL_MS = 50


def page_until(page: Any, expression: str, *, guard_ms: int = NODE_GUARD_MS) -> None:
    """Poll a JavaScript expression from here until it is true (the pages' CSP forbids the
    eval that Playwright's ``wait_for_function`` polls with); fail after ``guard_ms``."""
    for _ in range(guard_ms // PAGE_POLL_MS):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(PAGE_POLL_MS)
    raise AssertionError(f"never true: {expression}")
