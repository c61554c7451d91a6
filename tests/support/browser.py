"""Pages in headless Chromium (the ``browser`` fixture of ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .timeouts import NODE_GUARD_MS

#: How often a page expression is evaluated again, in milliseconds.
PAGE_POLL_MS = 50


def open_webui(
    browser: Any,
    address: str,
    *,
    timeout_ms: int = NODE_GUARD_MS,
    init_script: str | None = None,
    **context: Any,
) -> Any:
    """The web UI at ``address`` (the whole URL, a ``#token=`` or ``#/s/ID`` fragment
    included) in a fresh browser context (``context``: Playwright's ``new_context``
    options), once it is connected; the page's uncaught errors collect in ``page.errors``.
    ``init_script`` runs in the page before its own scripts."""
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(timeout_ms)
    if init_script is not None:
        page.add_init_script(init_script)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(address)
    page.wait_for_selector(".conn.ok")
    return page


def start_session(page: Any) -> str:
    """Start a session from the web UI's landing form, as it is; the new session's id once
    the page has it."""
    page.click("#start button[type=submit]")
    page_until(page, "window.ccbState.current !== null")
    session_id: str = page.evaluate("window.ccbState.current")
    return session_id


def page_until(page: Any, expression: str, *, guard_ms: int = NODE_GUARD_MS) -> None:
    """Poll a JavaScript expression from here until it is true (the pages' CSP forbids the
    eval that Playwright's ``wait_for_function`` polls with); fail after ``guard_ms``."""
    for _ in range(guard_ms // PAGE_POLL_MS):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(PAGE_POLL_MS)
    raise AssertionError(f"never true: {expression}")


AXE = Path(__file__).resolve().parents[1] / "fixtures" / "axe-core" / "axe.min.js"
#: Serious and critical violations, as {rule: [the elements' selectors]}.
AXE_RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary) }));
}"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core (vendored from npm by scripts/vendor-webui) run inside the page: the serious
    and critical violations. Injected through the DevTools protocol, as the page's CSP
    (rightly) refuses inline scripts."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate("() => { " + AXE.read_text() + "\n}")
    found: list[dict[str, Any]] = page.evaluate(AXE_RUN)
    return found
