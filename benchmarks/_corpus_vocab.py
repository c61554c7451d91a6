"""The corpus generator's fixed material: the session and model every line names, the words
text is drawn from, the tool, slash command and capability lists of ``system/init``, and the
compact JSON the CLI writes."""

from __future__ import annotations

import json
from typing import Any

__all__ = (
    "CAPABILITIES",
    "MODEL",
    "SESSION_ID",
    "SLASH",
    "TOOLS",
    "WORDS",
    "dumps",
)

SESSION_ID = "34bae207-b45d-4516-b9ab-119ad1ad1013"
MODEL = "claude-opus-5-5"


def _split(text: str) -> list[str]:
    return text.split()


WORDS = _split(
    "the a to of and in is it that for on with as this be are file function test value "
    "return data line stream session event message tool result error python import class "
    "def self none true false list dict string bytes async await read write decode encode "
    "buffer channel subscriber client adapter protocol json schema field type union struct "
    "I will now check we can see here should would could run command output directory path "
    "config option default timeout process exit code signal pipe stdout stdin stderr"
)

TOOLS = _split(
    "Task AskUserQuestion Bash CronCreate CronDelete CronList Edit EnterPlanMode EnterWorktree "
    "ExitPlanMode ExitWorktree ListAgents Monitor NotebookEdit Read ReportFindings "
    "ScheduleWakeup SendMessage Skill TaskStop ToolSearch WebFetch WebSearch Workflow Write"
)

SLASH = _split(
    "deep-research dataviz update-config verify debug code-review simplify batch "
    "fewer-permission-prompts doctor loop claude-api workflow-authoring run run-skill-generator "
    "plugin-authoring agents auto-mode-setup autocompact clear color compact config "
    "output-style context effort fast focus heapdump init mcp model rename security-review "
    "usage insights recap goal list-agents team-onboarding"
)

CAPABILITIES = _split(
    "interrupt_receipt_v1 interrupt_cancel_queued_v1 interrupt_send_now_v1 "
    "interrupt_requeue_taken_v1 msg_lifecycle_v1 request_marker_lists_v1 "
    "ask_user_question_unanswered_v1 lifecycle_wakeup_source_v1 sdk_mcp_tools_list_changed "
    "sdk_mcp_manifests mcp_read_resource_v1 mcp_tool_ui_meta_v1 ui_surface_v1 "
    "mcp_call_result_not_for_model_v1 mcp_call_soft_error_result_v1 "
    "mcp_call_check_permissions_v1 withdrawn_files_note_v2 withdrawn_tools_v1"
)


def dumps(obj: Any) -> bytes:
    """``obj`` as the CLI writes JSON: compact, UTF-8 unescaped."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
