"""The arguments of the frontend tool calls that ask the page: approvals and questions (pure).

A permission request is a call of :data:`APPROVAL_TOOL`, the agent's questions a call of
:data:`QUESTION_TOOL`; the page answers each with the call's result (see
:mod:`adapter.server.agui.inputs`). Unset fields are left out of the arguments.
"""

from __future__ import annotations

import json
from typing import Any

from ...events import PermissionRequest, QuestionRequest

__all__ = ("APPROVAL_TOOL", "QUESTION_TOOL", "approval_args", "interrupt_of", "question_args")

#: The name of the frontend tool that presents a permission request (render it with
#: CopilotKit's human-in-the-loop hook; answer with a ``role: "tool"`` message).
APPROVAL_TOOL = "claudecode_approval"

#: The name of the frontend tool that presents the agent's questions (AskUserQuestion): its
#: result (a ``role: "tool"`` message) answers them.
QUESTION_TOOL = "claudecode_question"


#: What an interrupt's ``payload`` is (``responseSchema``), by the kind of call it stands for.
_APPROVAL_RESPONSE = {
    "type": "object",
    "properties": {
        "behavior": {"enum": ["allow", "allow_always", "deny"]},
        "message": {"type": "string"},
        "updatedInput": {"type": "object"},
    },
    "required": ["behavior"],
}
_QUESTION_RESPONSE = {
    "type": "object",
    "properties": {
        "answers": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "decline": {"type": "boolean"},
        "message": {"type": "string"},
    },
}


def interrupt_of(call_id: str, args: str, message: str, tool_call_id: str | None) -> dict[str, Any]:
    """The AG-UI 1.0 ``Interrupt`` that stands for the call ``call_id`` (an approval or a
    question) for a client that takes interrupts instead of frontend tool calls: its id is
    the call id, ``metadata.claudecode`` the call's arguments, ``responseSchema`` what the
    ``resume`` payload is (the call's result would be the same)."""
    question = call_id.startswith("question-")
    interrupt: dict[str, Any] = {
        "id": call_id,
        "reason": "claudecode.question" if question else "claudecode.approval",
        "message": message,
        "responseSchema": _QUESTION_RESPONSE if question else _APPROVAL_RESPONSE,
        "metadata": {"claudecode": json.loads(args)},
    }
    if tool_call_id:
        interrupt["toolCallId"] = tool_call_id
    return interrupt


def _json(request: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in request.items() if v is not None}, ensure_ascii=False)


def approval_args(event: PermissionRequest, session_id: str | None) -> str:
    """The approval call's arguments: the request (``pendingId``, ``toolName``, ``input``...)."""
    return _json(
        {
            "pendingId": event.pending_id,
            "sessionId": session_id,
            "toolName": event.tool_name,
            "toolCallId": event.tool_call_id,
            "title": event.title,
            "actionType": event.action_type,
            "input": event.input,
            "options": [{"id": o.id, "label": o.label} for o in event.options],
            "decisionReason": event.decision_reason,
            "blockedPath": event.blocked_path,
            "parentToolCallId": event.parent_tool_call_id,
        }
    )


def question_args(event: QuestionRequest, session_id: str | None) -> str:
    """The question call's arguments: ``pendingId``, ``sessionId``, ``toolCallId`` and the
    ``questions`` with their ``header``, ``options`` (``label``, ``description``) and
    ``multiSelect``."""
    return _json(
        {
            "pendingId": event.pending_id,
            "sessionId": session_id,
            "toolCallId": event.tool_call_id,
            "parentToolCallId": event.parent_tool_call_id,
            "questions": [
                {
                    "question": q.question,
                    "header": q.header,
                    "options": [
                        {"label": o.label, "description": o.description} for o in q.options
                    ],
                    "multiSelect": q.multi_select,
                }
                for q in event.questions
            ],
        }
    )
