"""A drop-in for ``claude-agent-sdk``: its public Python API on top of this client.

Moving a program over is changing one import::

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, query   # before
    from claudecode.sdk import ClaudeAgentOptions, ClaudeSDKClient, query     # after

``query()``, ``ClaudeSDKClient`` (connect / query / receive_messages / receive_response /
interrupt / set_permission_mode / set_model / get_mcp_status / get_server_info /
disconnect, ``async with``), ``ClaudeAgentOptions``, the message and content-block
dataclasses with the SDK's attributes (stream events carry the raw API event as a dict),
``tool`` / ``create_sdk_mcp_server``, ``HookMatcher(matcher=, hooks=)``,
``PermissionResultAllow`` / ``PermissionResultDeny`` / ``ToolPermissionContext`` and the
error classes behave as in claude-agent-sdk 0.2.189: the same CLI flags, the same
``initialize`` request, the same answers to permission requests and hooks. The program
gets this client's decoding speed, line limits (an over-long line is skipped, not fatal),
typed errors and tracing.

What differs:

* The command line has the same flags, plus ``-p`` (print mode, which the SDK leaves to
  the CLI to infer); the inline JSON of ``--mcp-config`` and ``--settings`` goes through a
  private temporary file instead of the command line (same content, secrets off argv).
  The environment has ``CLAUDE_CODE_ENTRYPOINT=sdk-py`` as in the SDK,
  but not ``CLAUDE_AGENT_SDK_VERSION`` or ``CLAUDE_CODE_SDK_READS_SESSION_STATE``; a
  ``null`` in ``initialize`` (``"hooks": null``) is left out instead.
* ``transport=`` (the SDK's ``Transport`` class) is not accepted: the CLI is always run as
  a subprocess from the options (``cli_path`` included). Use :class:`claudecode.Session`
  with a :class:`claudecode.Transport` for custom transports.
* Not supported (absent from :class:`ClaudeAgentOptions`): ``session_store`` /
  ``session_store_flush`` / ``load_timeout_ms`` (transcript mirroring). ``client_app`` is
  passed on; the SDK's derived app label (off in 0.2.189 for every CLI) is not.
  ``debug_stderr`` is accepted and ignored (the SDK ignores it too unless a debug flag is
  passed; use ``stderr=``).
* ``max_buffer_size`` is the longest line accepted, as in the SDK, but a longer line is
  skipped (the client logs it) instead of ending the session with an error.
* Errors: the SDK's classes are raised (``CLINotFoundError``, ``ProcessError``,
  ``CLIConnectionError``) and each also inherits from this client's own
  (``claudecode.CLINotFoundError``, ``claudecode.CLIExitedError``). A control request the
  CLI refuses raises :class:`claudecode.ControlRequestError` and one it never answers
  :class:`claudecode.ControlTimeoutError` (the SDK raises bare ``Exception``).
  ``CLIJSONDecodeError`` and ``MessageParseError`` exist for imports but are never raised:
  malformed lines and unknown messages are skipped.
* Dict-valued fields (``usage``, ``model_usage``, ``StreamEvent.event``,
  ``SystemMessage.data``, ``permission_denials``) are built from this client's typed
  messages, not kept from the raw line: every field the client models is there (a null
  one included), but ``SystemMessage.data`` lacks keys the client does not model (such as
  ``analytics_disabled`` on ``init``). The test suite checks this against the official
  parser on every recorded CLI line.
* Options are checked when :class:`ClaudeAgentOptions` is built: a wrong type is a
  :class:`claudecode.UsageError` (a ``ValueError`` / ``TypeError`` or a CLI error in the SDK).
* A ``TypedDict`` input schema with ``NotRequired`` keys in a module that uses
  ``from __future__ import annotations`` keeps those keys optional (on Python 3.11 the SDK
  marks them required).
"""

from .._version import __version__
from ..options import SdkPluginConfig, SystemPromptFile, SystemPromptPreset, ToolsPreset
from .client import ClaudeSDKClient
from .errors import (
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    MessageParseError,
    ProcessError,
    ResultError,
)
from .mcp import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server, tool
from .messages import (
    AssistantMessage,
    ContentBlock,
    DeferredToolUse,
    HookEventMessage,
    Message,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from .options import AgentDefinition, ClaudeAgentOptions
from .permissions import (
    CanUseTool,
    HookCallback,
    HookContext,
    HookEvent,
    HookMatcher,
    PermissionBehavior,
    PermissionMode,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    PermissionUpdateDestination,
    ToolPermissionContext,
)
from .query import query

__all__ = (
    "__version__",
    "AgentDefinition",
    "AssistantMessage",
    "CanUseTool",
    "ClaudeAgentOptions",
    "ClaudeSDKClient",
    "ClaudeSDKError",
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "ContentBlock",
    "create_sdk_mcp_server",
    "DeferredToolUse",
    "HookCallback",
    "HookContext",
    "HookEvent",
    "HookEventMessage",
    "HookMatcher",
    "McpSdkServerConfig",
    "Message",
    "MessageParseError",
    "PermissionBehavior",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PermissionUpdateDestination",
    "ProcessError",
    "query",
    "RateLimitEvent",
    "RateLimitInfo",
    "ResultError",
    "ResultMessage",
    "SdkMcpTool",
    "SdkPluginConfig",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "SystemPromptFile",
    "SystemPromptPreset",
    "TaskNotificationMessage",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TextBlock",
    "ThinkingBlock",
    "tool",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolsPreset",
    "ToolUseBlock",
    "UserMessage",
)
