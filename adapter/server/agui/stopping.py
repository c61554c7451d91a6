"""What stopping an AG-UI thread does, and what the stop route answers.

A thread's run in progress is stopped by the service (its CLI turn interrupted, the run ends
``RUN_FINISHED``). With no run of the thread's own going, its session may still be running a
turn that another client started on it (a prompt over ``/ws`` or the REST API, the web UI):
Stop on the thread's page means "stop the agent", so that turn is interrupted. A turn that
waits for the thread's own answer (an approval or a question its last run ended with) is
not running: the page answers it. Nothing running is answered as CopilotKit's runtime
answers it (``{"stopped": false, "message": "No active run for thread '…'."}``, 200), the
same every time.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from claudecode import ClaudeCodeError
from claudecode.internal import get_logger

from ...backend import SessionBackend

__all__ = ("StopOutcome", "stop_answer", "stop_idle")

_log = get_logger("claudecode.adapter.agui")

#: ``run``: the thread's run was stopped; ``turn``: a turn another client started on the
#: thread's session was interrupted; ``awaiting``: the turn waits for the thread's answer;
#: ``None``: nothing ran.
StopOutcome: TypeAlias = Literal["run", "turn", "awaiting"] | None

#: What CopilotKit's runtime hands the client with a stop that stopped something.
_INTERRUPT = {"type": "RUN_ERROR", "message": "Run stopped by user", "code": "STOPPED"}


async def stop_idle(
    backend: SessionBackend, session_id: str | None, *, waits_for_page: bool
) -> StopOutcome:
    """Stop a thread with no run in progress: interrupt its session's turn if one runs
    (``turn``), unless the turn waits for the page (``awaiting``); else ``None``."""
    if waits_for_page:
        return "awaiting"
    if session_id is None or not await _interrupt_turn(backend, session_id):
        return None
    return "turn"


async def _interrupt_turn(backend: SessionBackend, session_id: str) -> bool:
    """Interrupt the session's turn if one runs; whether one did."""
    try:
        info = await backend.info(session_id)
        if info.state not in ("busy", "waiting"):
            return False
        await backend.interrupt(session_id)
    except ClaudeCodeError as exc:
        # Gone, closed or unreachable: nothing this stop can end (the turn, if any, ended).
        _log.debug("agui.stop_turn_skipped", session_id=session_id, error=str(exc))
        return False
    _log.info("agui.stop_turn", session_id=session_id)
    return True


def stop_answer(thread_id: str, outcome: StopOutcome) -> dict[str, Any]:
    """The stop route's JSON body for ``outcome``."""
    if outcome == "run":
        return {"stopped": True, "interrupt": dict(_INTERRUPT)}
    if outcome == "turn":
        return {
            "stopped": True,
            "interrupt": dict(_INTERRUPT),
            "message": f"Interrupted the turn another client started on thread '{thread_id}'.",
        }
    message = f"No active run for thread '{thread_id}'."
    if outcome == "awaiting":
        message += " Its turn waits for the page's answer to an approval or a question."
    return {"stopped": False, "message": message}
