"""adapter.chat: the chat view model.

Pure and sans-IO; stored sessions come from :mod:`adapter.history`::

    view = ChatView()
    delta = view.apply(events)          # live events from a subscription ...
    view.apply(load_events(path))       # ... or a stored session
    view.snapshot()                     # everything a UI draws, JSON-serializable

The history functions this package re-exported before 0.2.0 (``list_sessions``,
``load_events``, ``resume_spec``, ...) still resolve here, with a DeprecationWarning.
"""

from __future__ import annotations

from .._moved import moved_names
from ..history.usertext import UserText, parse_user_text
from .entries import (
    AssistantText,
    ChatEntry,
    CommandEntry,
    ErrorEntry,
    InterruptEntry,
    NoticeEntry,
    PermissionEntry,
    QuestionEntry,
    ReadGroup,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
)
from .view import ChatDelta, ChatSnapshot, ChatTurn, ChatUsage, ChatView

__all__ = (
    "AssistantText",
    "ChatDelta",
    "ChatEntry",
    "ChatSnapshot",
    "ChatTurn",
    "ChatUsage",
    "ChatView",
    "CommandEntry",
    "ErrorEntry",
    "InterruptEntry",
    "NoticeEntry",
    "parse_user_text",
    "PermissionEntry",
    "QuestionEntry",
    "ReadGroup",
    "ReasoningEntry",
    "ToolEntry",
    "UserEntry",
    "UserText",
)

__getattr__ = moved_names(
    __name__,
    {
        name: "adapter.history"
        for name in (
            "HistoryIndex",
            "HistoryNotFoundError",
            "HistorySession",
            "config_dir",
            "find_session_file",
            "list_sessions",
            "load_events",
            "project_slug",
            "resume_spec",
        )
    },
)
