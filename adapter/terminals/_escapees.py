"""Processes a terminal program left behind outside its process group.

Some agent CLIs start helpers that detach on purpose (a new session with ``setsid`` and a
double fork, e.g. Codex's app-server daemon): signalling the terminal's process group does
not reach them, and they outlive the session. Every terminal program gets a random marker
in its environment, which its descendants inherit even when they detach; when the session
ends, :func:`kill_marked` finds the processes that still carry it (Linux ``/proc``) and
kills them. A process that scrubs its environment escapes this sweep.
"""

from __future__ import annotations

import os
import secrets
import signal

from claudecode.internal import pids_with_env

__all__ = ("MARKER_VAR", "kill_marked", "marked_pids", "new_marker")

#: The environment variable that marks a terminal session's processes.
MARKER_VAR = "CLAUDECODE_BRIDGE_TERMINAL"


def new_marker() -> str:
    """A fresh, unguessable marker value for one session."""
    return secrets.token_hex(12)


def marked_pids(marker: str) -> list[int]:
    """Pids of the live processes whose environment carries ``marker`` (none without /proc)."""
    return pids_with_env(MARKER_VAR, marker)


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process that still carries ``marker``; the pids signalled."""
    killed: list[int] = []
    for pid in marked_pids(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        killed.append(pid)
    return killed
