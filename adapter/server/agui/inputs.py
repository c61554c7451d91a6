"""What a run's input means for its session: the page's answers and messages (pure).

Approval answers (the ``content`` of the tool message for an approval call): JSON
``{"behavior": "allow" | "allow_always" | "deny", "message": "...", "updatedInput": {...}}``
(``{"approved": true}`` works too), or one of the words ``allow`` / ``approve`` / ``yes``,
``allow_always`` / ``always``, ``deny`` / ``reject`` / ``no``. Anything else denies.

Question answers (the ``content`` of the tool message for a question call): JSON
``{"answers": {question text: ["label", ...] | "label"}}`` (a label that is not an option is
a free-text answer), or ``{"decline": true, "message": "..."}``; anything else declines.

A user message becomes the prompt's text and images (``image`` / ``binary`` content parts
with an ``image/*`` MIME type and base64 data); the page's readable context (``context``)
follows the text.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Container
from typing import Any, Literal

from ...images import Image
from ...policies import PermissionDecision
from .events import RunAgentInput
from .requests import APPROVAL_TOOL, QUESTION_TOOL

__all__ = (
    "decision_from_answer",
    "new_user_messages",
    "page_tools",
    "prompt_from_message",
    "question_answer",
    "with_context",
)

#: Tool names Claude accepts (the MCP name ``mcp__frontend__<name>`` must stay valid).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def page_tools(run_input: RunAgentInput) -> dict[str, dict[str, Any]]:
    """The page's own tools, offered to Claude: not the approval and question tools, and only
    names Claude accepts."""
    return {
        tool.name: {"description": tool.description, "parameters": tool.parameters}
        for tool in run_input.tools
        if tool.name not in (APPROVAL_TOOL, QUESTION_TOOL) and _TOOL_NAME.fullmatch(tool.name)
    }


def decision_from_answer(content: Any) -> PermissionDecision:
    """A permission decision from the content of an approval tool message (see module)."""
    data: Any = content
    if isinstance(content, str):
        try:
            data = json.loads(content)
        except ValueError:
            data = content.strip()
    message = ""
    updated: dict[str, Any] | None = None
    behavior: Any = data
    if isinstance(data, dict):
        behavior = data.get("behavior", data.get("decision"))
        if behavior is None and isinstance(data.get("approved"), bool):
            behavior = "allow" if data["approved"] else "deny"
        message = str(data.get("message") or data.get("reason") or "")
        candidate = data.get("updatedInput", data.get("updated_input"))
        updated = candidate if isinstance(candidate, dict) else None
    word = str(behavior).strip().lower() if isinstance(behavior, str | bool) else ""
    if word in ("allow", "approve", "approved", "yes", "true", "accept"):
        return PermissionDecision("allow", updated_input=updated)
    if word in ("allow_always", "always", "allow-always"):
        return PermissionDecision("allow_always", updated_input=updated)
    if word in ("deny", "reject", "rejected", "no", "false", "denied"):
        return PermissionDecision("deny", message or "the user denied this")
    return PermissionDecision("deny", f"unrecognized approval answer: {str(content)[:200]}")


QuestionAnswer = tuple[Literal["answer", "decline"], dict[str, list[str]], str | None]


def question_answer(content: Any) -> QuestionAnswer:
    """Answers, or a decline and why, from the content of a question tool message."""
    data: Any = content
    if isinstance(content, str):
        try:
            data = json.loads(content)
        except ValueError:
            data = None
    if not isinstance(data, dict):
        return "decline", {}, f"unrecognized answer to the question: {str(content)[:200]}"
    message = data.get("message") if isinstance(data.get("message"), str) else None
    if data.get("decline") is True or data.get("declined") is True:
        return "decline", {}, message
    answers = data.get("answers")
    if not isinstance(answers, dict):
        return "decline", {}, f"unrecognized answer to the question: {str(content)[:200]}"
    out: dict[str, list[str]] = {}
    for text, picks in answers.items():
        if isinstance(picks, str):
            out[str(text)] = [picks] if picks else []
        elif isinstance(picks, list):
            out[str(text)] = [p for p in picks if isinstance(p, str)]
    return "answer", out, None


def prompt_from_message(message: dict[str, Any]) -> tuple[str, list[Image]]:
    """The text and images of a user message (string content or content parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[Image] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") in ("binary", "image"):
            mime = str(part.get("mimeType") or part.get("mime_type") or "")
            data = part.get("data")
            if mime.startswith("image/") and isinstance(data, str):
                with contextlib.suppress(ValueError):
                    images.append(Image.from_base64(mime, data))
    return "\n".join(texts), images


def with_context(text: str, run_input: RunAgentInput) -> str:
    """The prompt text with the page's readable context after it."""
    if not run_input.context:
        return text
    lines = [text, "", "Context from the application:"]
    for item in run_input.context:
        value = item.value if isinstance(item.value, str) else json.dumps(item.value)
        lines.append(f"- {item.description}: {value}")
    return "\n".join(lines)


def new_user_messages(known: Container[str], run_input: RunAgentInput) -> list[dict[str, Any]]:
    """The user messages of ``run_input`` whose ids are not ``known`` (its new prompt)."""
    return [m for m in run_input.messages if m.get("role") == "user" and m.get("id") not in known]
