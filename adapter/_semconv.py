"""Attribute names and values for the adapter's spans, spelled in one place.

The ``gen_ai.*`` names follow the OpenTelemetry GenAI semantic conventions (status:
Development). Their Python constants live under ``opentelemetry.semconv._incubating``, a
private path that may move at any release (the GenAI conventions themselves moved to their own
repository in 2026), so the adapter keeps its own copies here and
``tests/adapter/test_semconv.py`` compares them with the installed
``opentelemetry-semantic-conventions`` package so that drift shows up in CI.

The ``claudecode.*`` names are ours: what the conventions do not cover (cost, the normalized
tool kind, the control plane).
"""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------- gen_ai.* attributes

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"

# ------------------------------------------------------------------------ gen_ai.* values

#: ``gen_ai.operation.name`` of the per-turn span.
GEN_AI_OPERATION_INVOKE_AGENT: Final = "invoke_agent"
#: ``gen_ai.operation.name`` of the per-tool-call span.
GEN_AI_OPERATION_EXECUTE_TOOL: Final = "execute_tool"
#: ``gen_ai.provider.name`` of every span.
GEN_AI_PROVIDER_ANTHROPIC: Final = "anthropic"
#: ``gen_ai.tool.type`` of a built-in tool (the spec's "function": the agent runs it itself).
GEN_AI_TOOL_TYPE_FUNCTION: Final = "function"
#: ``gen_ai.tool.type`` of an MCP tool (the spec's "extension": an external service runs it).
GEN_AI_TOOL_TYPE_EXTENSION: Final = "extension"

# --------------------------------------------------------------------------- error.type

ERROR_TYPE: Final = "error.type"
#: The fallback ``error.type`` when nothing more specific is known.
ERROR_TYPE_OTHER: Final = "_OTHER"

# ------------------------------------------------------------------- claudecode.* (ours)

CLAUDECODE_SESSION_ID: Final = "claudecode.session.id"
CLAUDECODE_TURN_NUMBER: Final = "claudecode.turn.number"
#: ``user`` for a turn started by a prompt, ``cli`` for one the CLI started by itself.
CLAUDECODE_TURN_INITIATOR: Final = "claudecode.turn.initiator"
CLAUDECODE_COST_USD: Final = "claudecode.cost_usd"
CLAUDECODE_NUM_TURNS: Final = "claudecode.num_turns"
CLAUDECODE_TERMINAL_REASON: Final = "claudecode.terminal_reason"
CLAUDECODE_RESULT_SUBTYPE: Final = "claudecode.result.subtype"
CLAUDECODE_SYNTHETIC: Final = "claudecode.synthetic"
CLAUDECODE_TOOL_KIND: Final = "claudecode.tool.kind"
CLAUDECODE_TOOL_PARENT_CALL_ID: Final = "claudecode.tool.parent_call_id"
CLAUDECODE_CONTROL_DIRECTION: Final = "claudecode.control.direction"
CLAUDECODE_CONTROL_SUBTYPE: Final = "claudecode.control.subtype"
#: Prefix of the extra attributes given to ``TurnTracer.control``.
CLAUDECODE_CONTROL_PREFIX: Final = "claudecode.control."
CLAUDECODE_PERMISSION_PENDING_ID: Final = "claudecode.permission.pending_id"
CLAUDECODE_PERMISSION_ACTION_TYPE: Final = "claudecode.permission.action_type"
CLAUDECODE_PERMISSION_DECISION: Final = "claudecode.permission.decision"
CLAUDECODE_PERMISSION_CANCEL_REASON: Final = "claudecode.permission.cancel_reason"
CLAUDECODE_EVENT_TYPE: Final = "claudecode.event.type"
CLAUDECODE_EVENT_JSON: Final = "claudecode.event.json"
CLAUDECODE_RAW_DIRECTION: Final = "claudecode.raw.direction"
CLAUDECODE_RAW_LINE: Final = "claudecode.raw.line"
CLAUDECODE_ERROR_KIND: Final = "claudecode.error.kind"
CLAUDECODE_ERROR_STATUS: Final = "claudecode.error.status"
CLAUDECODE_ERROR_MESSAGE: Final = "claudecode.error.message"

#: Span event names.
EVENT_NORMALIZED: Final = "claudecode.event"
EVENT_RAW: Final = "claudecode.raw"
EVENT_ERROR: Final = "claudecode.error"
EVENT_API_RETRY: Final = "claudecode.api_retry"
EVENT_RATE_LIMIT: Final = "claudecode.rate_limit"
EVENT_COMPACT_BOUNDARY: Final = "claudecode.compact_boundary"
EVENT_PERMISSION_DENIED: Final = "claudecode.permission_denied"

#: ``claudecode.control.direction`` values.
DIRECTION_INBOUND: Final = "inbound"
DIRECTION_OUTBOUND: Final = "outbound"
