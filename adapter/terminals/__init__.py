"""Terminal sessions: any agent CLI (Claude Code, Codex, Cursor Agent, Gemini, Copilot) or a
shell in a pseudo-terminal, its screen kept on the server and streamed to any number of
viewers, its keyboard and size driven from them.

::

    async with TerminalManager() as terminals:
        await terminals.start("t1", "shell", cwd="/tmp", cols=100, rows=30)
        async with terminals.attach("t1") as viewer:
            await terminals.send_input("t1", "echo hello\\r")
            for item in await viewer.receive():
                ...  # bytes (output) or TerminalStatus / TerminalResized / TerminalExit
        await terminals.stop("t1")

This package shares the server, authentication and session registry with the stream-json
front ends, never their protocol code.
"""

from __future__ import annotations

from ._agents import AGENTS, Agent, AgentStatus, ScreenHook, accept_claude_folder_trust
from ._env import TERMINAL_ENV
from ._errors import (
    AgentUnavailableError,
    InvalidTerminalSizeError,
    TerminalClosedError,
    TerminalError,
    TerminalExistsError,
    TerminalFailedError,
    TerminalRunningError,
    TooManyTerminalsError,
    UnknownAgentError,
    UnknownTerminalError,
)
from ._listing import as_session_info
from ._manager import TerminalManager, TerminalStartError
from ._owned import OwnedTerminals
from ._screen import TerminalScreen
from ._types import (
    TerminalExit,
    TerminalInfo,
    TerminalResized,
    TerminalState,
    TerminalStatus,
    ViewerItem,
)
from ._viewer import TerminalViewer, ViewerDroppedError

__all__ = (
    "accept_claude_folder_trust",
    "Agent",
    "AGENTS",
    "AgentStatus",
    "AgentUnavailableError",
    "as_session_info",
    "InvalidTerminalSizeError",
    "OwnedTerminals",
    "ScreenHook",
    "TERMINAL_ENV",
    "TerminalClosedError",
    "TerminalError",
    "TerminalExistsError",
    "TerminalExit",
    "TerminalFailedError",
    "TerminalInfo",
    "TerminalManager",
    "TerminalResized",
    "TerminalRunningError",
    "TerminalScreen",
    "TerminalStartError",
    "TerminalState",
    "TerminalStatus",
    "TerminalViewer",
    "TooManyTerminalsError",
    "UnknownAgentError",
    "UnknownTerminalError",
    "ViewerDroppedError",
    "ViewerItem",
)
