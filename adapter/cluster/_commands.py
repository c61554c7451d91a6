"""A worker applies a gateway's command to the session it hosts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._local_watch import prompt_title
from ..session import AgentSession
from .wire import (
    AnswerPermission,
    AnswerQuestion,
    Command,
    DeclineQuestion,
    Interrupt,
    Prompt,
    SetEffort,
    SetModel,
    SetPermissionMode,
)

if TYPE_CHECKING:  # pragma: no cover
    from ._hosted import Hosted

__all__ = ("session_command",)


async def session_command(session: AgentSession, command: Command, hosted: Hosted) -> bool:
    """Apply ``command`` if it is one a session runs itself; ``False`` for any other (close,
    create, label: the worker's own). Errors propagate, for the reply. A session's first
    prompt names it (``hosted.title``), as in one process."""
    if isinstance(command, Prompt):
        untitled = hosted.title is None
        if untitled:
            hosted.title = prompt_title(command.text)
        try:
            await session.prompt(command.text, images=command.images)
        except BaseException:
            if untitled:
                hosted.title = None
            raise
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
    elif isinstance(command, SetEffort):
        await session.set_effort(command.effort)
    elif isinstance(command, SetPermissionMode):
        await session.set_permission_mode(command.mode)
    else:
        return False
    return True
