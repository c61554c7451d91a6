"""adapter.server.agui: Claude Code sessions as AG-UI agents (and a CopilotKit runtime).

The translation is pure (:mod:`adapter.server.agui.translate`: adapter events -> AG-UI events for
one run, keeping every ordering rule of ``@ag-ui/client``); :mod:`adapter.server.agui.verify`
checks a stream against those rules; :mod:`adapter.server.agui.events` holds the AG-UI events the
bridge emits (only what both ``@ag-ui/client`` 1.0.0 and 0.0.59 accept) and the run input.

Custom events (``CUSTOM``, ``name`` / ``value``):

=================================  ==========================================================
``claudecode.tool_payload``        ``{toolCallId, toolName, title, status, normalized}``: the
                                   normalized payload of a tool call (``running``), then
                                   with its result (``complete`` / ``error``)
``claudecode.subagent``            ``{parentToolCallId, event}``: an adapter event of a
                                   sub-agent, under the ``Agent`` / ``Task`` call that runs it
``claudecode.rate_limit``,         the adapter event of that type (its public JSON form)
``claudecode.api_retry``,
``claudecode.task``,
``claudecode.compact_boundary``,
``claudecode.permission_cancelled``,
``claudecode.permission_denied``,
``claudecode.permission_resolved``,
``claudecode.tool_progress``,
``claudecode.commands``,
``claudecode.error`` (non-fatal)
=================================  ==========================================================

Approvals: a permission request is a call of the frontend tool :data:`APPROVAL_TOOL`
(arguments: the request); the agent's questions are calls of :data:`QUESTION_TOOL`
(arguments: the questions), answered by the tool's result; see the README.
"""

from .events import AguiEvent, RunAgentInput, decode_run_input, encode_event, sse_frame
from .results import result_text
from .translate import APPROVAL_TOOL, QUESTION_TOOL, RunTranslator, ThreadMemory, initial_state
from .verify import verify_events

__all__ = (
    "AguiEvent",
    "APPROVAL_TOOL",
    "decode_run_input",
    "encode_event",
    "initial_state",
    "QUESTION_TOOL",
    "result_text",
    "RunAgentInput",
    "RunTranslator",
    "sse_frame",
    "ThreadMemory",
    "verify_events",
)
