"""A worker applies a gateway's command to the session it hosts."""

from __future__ import annotations

from ..session import AgentSession
from .wire import (
    AnswerPermission,
    AnswerQuestion,
    Command,
    DeclineQuestion,
    Interrupt,
    Prompt,
    SetModel,
    SetPermissionMode,
)

__all__ = ("session_command",)


async def session_command(session: AgentSession, command: Command) -> bool:
    """Apply ``command`` if it is one a session runs itself; ``False`` for any other (close,
    create: the worker's own). Errors propagate, for the reply."""
    if isinstance(command, Prompt):
        await session.prompt(command.text, images=command.images)
    elif isinstance(command, AnswerPermission):
        await session.answer_permission(command.pending_id, command.decision())
    elif isinstance(command, AnswerQuestion):
        await session.answer_question(command.pending_id, command.answers)
    elif isinstance(command, DeclineQuestion):
        await session.decline_question(command.pending_id, command.message)
    elif isinstance(command, Interrupt):
        await session.interrupt()
    elif isinstance(command, SetModel):
        await session.set_model(command.model)
    elif isinstance(command, SetPermissionMode):
        await session.set_permission_mode(command.mode)
    else:
        return False
    return True
