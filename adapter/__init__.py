"""adapter: Claude Code sessions as one normalized event stream, for UIs and orchestrators.

:class:`AgentSession` runs one CLI session (through :mod:`claudecode`), turns every message
into the events of :mod:`adapter.events` (a tagged union, the public wire schema), publishes
them to any number of subscribers, applies a permission policy and traces each turn with
OpenTelemetry. :class:`SessionManager` runs many at once; :class:`LocalBackend` serves them
to front ends through the :class:`SessionBackend` interface. :class:`Translator` is the pure
message -> event translation, usable on its own. ``claudecode-bridge run`` is a terminal front
end on the same channel.
"""

# First: decides whether the compiled or the pure modules are imported (normalize/_native.py).
import normalize._native  # noqa: F401

from . import _moved
from .backend import (
    FRONTEND_TOOL_SERVER,
    BackendUnavailableError,
    CliSessionInUseError,
    EventStream,
    FrontendToolBackend,
    HistoryBackend,
    LabelBackend,
    SessionBackend,
    SessionInfo,
    SessionKind,
    SessionSpec,
    SessionState,
    SharedBackend,
    history_dir_of,
)
from .config import SessionConfig
from .errors import AdapterError
from .events import (
    AnyEvent,
    ApiRetry,
    AvailableCommands,
    CompactBoundary,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionCancelled,
    PermissionDenied,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
    RateLimit,
    Raw,
    Reasoning,
    SessionStatus,
    TaskEvent,
    ToolCall,
    ToolInputDelta,
    ToolProgress,
    ToolUpdate,
    TurnError,
    UserMessage,
    decode_event,
    encode_event,
    event_schema,
)
from .fanout import EventHub, SubscriberDropped, Subscription
from .images import Image
from .local import LocalBackend
from .manager import PoolStatus, SessionManager, TooManySessionsError, UnknownSessionError
from .policies import PermissionDecision, PermissionPolicy
from .questions import InvalidAnswerError
from .session import AgentSession, UnknownPermissionError
from .telemetry import TurnTracer
from .translate import Translator

_moved.install()

__all__ = (
    "AdapterError",
    "AgentSession",
    "AnyEvent",
    "ApiRetry",
    "AvailableCommands",
    "BackendUnavailableError",
    "CliSessionInUseError",
    "CompactBoundary",
    "Complete",
    "ContextWindow",
    "decode_event",
    "encode_event",
    "ErrorEvent",
    "Event",
    "event_schema",
    "EventHub",
    "EventStream",
    "FRONTEND_TOOL_SERVER",
    "FrontendToolBackend",
    "history_dir_of",
    "HistoryBackend",
    "Image",
    "InvalidAnswerError",
    "LabelBackend",
    "LocalBackend",
    "MessageChunk",
    "ModeChanged",
    "PermissionCancelled",
    "PermissionDecision",
    "PermissionDenied",
    "PermissionPolicy",
    "PermissionRequest",
    "PermissionResolved",
    "PoolStatus",
    "QuestionRequest",
    "RateLimit",
    "Raw",
    "Reasoning",
    "SessionBackend",
    "SessionConfig",
    "SessionInfo",
    "SessionKind",
    "SessionManager",
    "SessionSpec",
    "SessionState",
    "SessionStatus",
    "SharedBackend",
    "SubscriberDropped",
    "Subscription",
    "TaskEvent",
    "ToolCall",
    "ToolInputDelta",
    "ToolProgress",
    "ToolUpdate",
    "TooManySessionsError",
    "Translator",
    "TurnError",
    "TurnTracer",
    "UnknownPermissionError",
    "UnknownSessionError",
    "UserMessage",
)
