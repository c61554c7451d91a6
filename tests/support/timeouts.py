"""The hang guard: how long one wait may take before a test fails instead of hanging.

These are hang guards, never timing assertions (speed is measured by the benchmarks): they
only have to be long enough for a busy 2-core machine. Scale them all at once with
``CLAUDECODE_BRIDGE_TEST_TIMEOUT`` (seconds, default 60).
"""

from __future__ import annotations

import os

#: Any one wait in the tests: a fake CLI's turn, a server answering, a PTY printing.
HANG_GUARD = float(os.environ.get("CLAUDECODE_BRIDGE_TEST_TIMEOUT", "60"))

#: Waits that span a Node.js process (the real Claude Code CLI's turn against the local fake
#: Messages API, a page in Chromium): Node starts slowly on a loaded machine.
NODE_GUARD = 2 * HANG_GUARD

#: The same bound in the milliseconds Playwright counts in.
NODE_GUARD_MS = int(NODE_GUARD * 1000)

#: Waits that span nats-servers (re)starting, a JetStream leader election or a TLS handshake
#: with a fresh server.
RESTART_GUARD = 2 * HANG_GUARD

#: Waits that span several processes started and reaped: servers, workers or agents (every
#: one imports the whole adapter first), the CLIs inside them and the children they leave.
PROCESSES_GUARD = 3 * HANG_GUARD
