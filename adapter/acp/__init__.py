"""Claude Code as an Agent Client Protocol (ACP) agent for editors.

``claudecode-bridge acp`` runs an :class:`AcpAgent` on stdin/stdout: editors such as Zed
spawn it and drive Claude Code sessions over ACP's JSON-RPC. The pieces:

* :mod:`adapter.acp.jsonrpc` — JSON-RPC 2.0 framing and error codes, without I/O;
* :mod:`adapter.acp.translate` — adapter events as ACP ``session/update`` payloads, tool
  kinds, permission options, stop reasons, without I/O;
* :mod:`adapter.acp.params` — the methods' params, MCP servers and prompt content;
* :mod:`adapter.acp.peer` — the JSON-RPC peer: a task per request, errors instead of stack
  traces, our own requests to the editor matched with their responses;
* :mod:`adapter.acp.sessions` — the open sessions, followed from the backend to the editor
  (``session/update``, permission round trips, cancel, close);
* :mod:`adapter.acp.agent` — the agent's methods over a
  :class:`~adapter.backend.SessionBackend` (``session/load`` replays the CLI's stored
  transcript via :mod:`adapter.history.transcripts`);
* :mod:`adapter.commands.acp` — the stdio command.

(The PyPI package ``agent-client-protocol`` imports as top-level ``acp``; this subpackage is
``adapter.acp`` and does not shadow it.)
"""

from __future__ import annotations

from .agent import PROTOCOL_VERSION, AcpAgent, AgentOptions
from .jsonrpc import JsonRpcError, LineSplitter, parse_frame
from .translate import (
    PERMISSION_OPTIONS,
    SESSION_MODES,
    UpdateTranslator,
    decision_for_option,
    permission_request_params,
    stop_reason,
    tool_kind,
)

__all__ = (
    "AcpAgent",
    "AgentOptions",
    "decision_for_option",
    "JsonRpcError",
    "LineSplitter",
    "parse_frame",
    "PERMISSION_OPTIONS",
    "permission_request_params",
    "PROTOCOL_VERSION",
    "SESSION_MODES",
    "stop_reason",
    "tool_kind",
    "UpdateTranslator",
)
