"""normalize: Claude Code tool calls and results as one tagged union of payloads.

A UI that renders an agent should not need to know Claude Code's tool names and argument
shapes. This package turns a ``tool_use`` block (name and input) into a
:data:`NormalizedPayload`, and enriches that payload from the matching ``tool_result``
block and the structured ``tool_use_result`` the CLI sends next to it::

    payload = normalize_tool_use(block["name"], block["input"])      # keep it by tool_use_id
    ...
    payload = normalize_tool_result(
        payload,
        content=result_block["content"],
        is_error=result_block.get("is_error"),
        tool_use_result=user_message.get("tool_use_result"),
    )
    title_for(payload), action_type_for(payload), encode_payload(payload)

It works on plain Python values (as decoded from JSON), has no I/O and no dependency on the
transport, and never raises on odd input: unknown shapes fall back to :class:`Generic`.
"""

from __future__ import annotations

from types import FunctionType

# First: decides whether the compiled or the pure modules are imported (see _native).
from . import _native  # noqa: F401
from ._codec import decode_payload, encode_payload
from ._diff import unified_diff
from ._titles import MAX_TITLE_LENGTH, action_type_for, title_for
from ._truncate import DEFAULT_MAX_OUTPUT_BYTES, truncate_text
from .payloads import (
    ActionType,
    AskUser,
    CodeSearch,
    CreateTask,
    Generic,
    HttpRequest,
    ManageTodos,
    Misc,
    ModifyFile,
    Mutation,
    MutationType,
    NormalizedPayload,
    Payload,
    Question,
    QuestionOption,
    ReadFile,
    ReadOutput,
    SearchMatch,
    SearchOutput,
    ShellExec,
    ShellOutput,
    ShowPlan,
    SubagentResult,
    SubagentTask,
    TodoItem,
    WebLink,
)
from .registry import normalize_tool_result, normalize_tool_use, split_mcp_name

__all__ = (
    "action_type_for",
    "ActionType",
    "AskUser",
    "CodeSearch",
    "CreateTask",
    "decode_payload",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "encode_payload",
    "Generic",
    "HttpRequest",
    "ManageTodos",
    "MAX_TITLE_LENGTH",
    "Misc",
    "ModifyFile",
    "Mutation",
    "MutationType",
    "normalize_tool_result",
    "normalize_tool_use",
    "NormalizedPayload",
    "Payload",
    "Question",
    "QuestionOption",
    "ReadFile",
    "ReadOutput",
    "SearchMatch",
    "SearchOutput",
    "ShellExec",
    "ShellOutput",
    "ShowPlan",
    "split_mcp_name",
    "SubagentResult",
    "SubagentTask",
    "title_for",
    "TodoItem",
    "truncate_text",
    "unified_diff",
    "WebLink",
)

# Show the public home in reprs and docs: normalize.ShellExec, not normalize.payloads.ShellExec.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type | FunctionType):
        _obj.__module__ = __name__
del _name, _obj
