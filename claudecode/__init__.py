"""claudecode: a typed, async client for the Claude Code CLI's stream-json protocol.

Quick start::

    async with open_session(ClaudeCodeOptions(cwd=".")) as session:
        await session.send("Hello")
        async for message in session.receive_response():
            ...

Layers, lowest first: :mod:`claudecode.messages` / :mod:`claudecode.control` (the wire
messages as msgspec Structs), :class:`ClaudeCodeProtocol` (sans-IO framing, decoding and
control-plane bookkeeping), :class:`Transport` (bytes), :class:`Session` (the async client).
:mod:`claudecode.testing` ships a fake CLI for tests.
"""

from ._codec import decode_line, encode_message
from ._discovery import find_cli
from ._framing import LineBuffer, OversizedLine
from ._version import __version__
from .callbacks import CanUseTool, HookCallback, HookMatcher, PermissionTimeoutHook
from .content import (
    ContentBlock,
    ImageBlock,
    LargeText,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from .control import InitializeResult, OutboundControlResponse, OutboundMessage, RawControl
from .errors import (
    ClaudeCodeError,
    CLIError,
    CLIExitedError,
    CLINotFoundError,
    CLIStartError,
    ControlError,
    ControlRequestError,
    ControlTimeoutError,
    LineTooLongError,
    RemoteProtocolError,
    SessionClosedError,
    UsageError,
)
from .mcp import McpTool, SdkMcpServer
from .messages import (
    AssistantMessage,
    CanUseToolRequest,
    ControlCancelRequest,
    HookCallbackRequest,
    InboundControlRequest,
    InboundMessage,
    Lenient,
    MalformedLine,
    McpMessageRequest,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemInit,
    SystemMessage,
    UnknownMessage,
    UserMessage,
)
from .options import ClaudeCodeOptions
from .protocol import ClaudeCodeProtocol, PendingRequest
from .session import Session, open_session
from .transport import SubprocessTransport, Transport

__all__ = (
    "__version__",
    "AssistantMessage",
    "CanUseTool",
    "CanUseToolRequest",
    "ClaudeCodeError",
    "ClaudeCodeOptions",
    "ClaudeCodeProtocol",
    "CLIError",
    "CLIExitedError",
    "CLINotFoundError",
    "CLIStartError",
    "ContentBlock",
    "ControlCancelRequest",
    "ControlError",
    "ControlRequestError",
    "ControlTimeoutError",
    "decode_line",
    "encode_message",
    "find_cli",
    "HookCallback",
    "HookCallbackRequest",
    "HookMatcher",
    "ImageBlock",
    "InboundControlRequest",
    "InboundMessage",
    "InitializeResult",
    "LargeText",
    "Lenient",
    "LineBuffer",
    "LineTooLongError",
    "MalformedLine",
    "McpMessageRequest",
    "McpTool",
    "open_session",
    "OutboundControlResponse",
    "OutboundMessage",
    "OversizedLine",
    "PendingRequest",
    "PermissionTimeoutHook",
    "RateLimitEvent",
    "RawControl",
    "RemoteProtocolError",
    "ResultMessage",
    "SdkMcpServer",
    "Session",
    "SessionClosedError",
    "StreamEvent",
    "SubprocessTransport",
    "SystemInit",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "Transport",
    "UnknownBlock",
    "UnknownMessage",
    "UsageError",
    "UserMessage",
)
