"""The sans-IO translator: typed CLI messages in, normalized events out.

:class:`Translator` is pure: no I/O, no clock, no anyio. The session feeds it every message
it reads from the CLI (:meth:`Translator.feed`), asks it for the event of a permission prompt
(:meth:`Translator.permission_request`) and tells it when the CLI answered ``initialize``
(:meth:`Translator.initialized`) or went away (:meth:`Translator.close`). It returns events
without ``seq``/``session_id``; the session stamps them. No method ever raises: an internal
surprise becomes an :class:`~adapter.events.ErrorEvent` of kind ``internal`` and the stream
goes on.

Theory of operation
-------------------
**Turns.** A turn opens with ``system/init`` (sent once per turn) or any message of model
activity (``system/status`` requesting, ``stream_event``, ``assistant``, a non-replayed
``user``, ``tool_progress``, a permission prompt) and closes with its ``result``. A ``result``
with no open turn is just another turn. :meth:`~Translator.finish_turn` closes a turn that
gets no ``result`` (after an ``ExitPlanMode`` approval) with a synthetic
:class:`~adapter.events.Complete`.

**Outstanding work, as the CLI reports it.** :attr:`~Translator.busy` is true while a turn
runs or a prompt we sent (:meth:`~Translator.prompt_sent`, with its ``uuid``) has not started
yet. Turns are counted from what the CLI says, not from what was sent: a prompt sent while a
turn runs is queued by the CLI (``command_lifecycle`` ``queued``) and runs after that turn's
``result`` (``started``), so the session stays busy across both; a turn the CLI starts by
itself (a background sub-agent finished: a second ``system/init`` ... ``result`` with
``origin.kind == "task-notification"``) makes it busy too. A CLI that reports no
``command_lifecycle`` (older versions) runs prompts in order: each turn that opens takes the
oldest prompt not yet started. Background tasks (``task_started`` with ``is_backgrounded``)
stay in :attr:`~Translator.background_tasks` until their ``task_notification``; after one,
:attr:`~Translator.self_start_expected` holds until the CLI opens the turn that reports it.

**Text.** Text streams token by token from ``stream_event`` deltas (``message_id`` is the
``message_start`` id). The per-block ``assistant`` lines repeat it and are de-duplicated
against what streamed (see :mod:`adapter._turn_state`); without partial messages the
``assistant`` line is the text, emitted once. ``result.result`` is emitted only when no
main-chain text at all was emitted in the turn (Kandev's rule), under the message id
``result:<result uuid>``.

**Tool calls.** The :class:`~adapter.events.ToolCall` is emitted when the ``assistant`` line
with the complete ``tool_use`` block arrives (it comes before the block's
``content_block_stop``), so ``normalized`` is built from the real input.
:class:`~adapter.events.ToolInputDelta` events that stream before it already carry the
``tool_use`` id from ``content_block_start``. If a block stops and no ``assistant`` line
announced it, the ToolCall is emitted at ``content_block_stop`` from the streamed JSON.
Results (``tool_result`` blocks of ``user`` lines) complete the call with the payload
enriched by :func:`normalize.normalize_tool_result`; calls still pending when the ``result``
arrives are completed synthetically (``error`` when the turn failed), before the
:class:`~adapter.events.Complete`. Sub-agent activity carries ``parent_tool_call_id``.

**Order on ``result``.** Pending tool calls completed, then the result text (if no text was
emitted), the :class:`~adapter.events.ContextWindow` (when changed), the
:class:`~adapter.events.Complete`, and last an :class:`~adapter.events.ErrorEvent` when the
result is an error ("complete before error", as Kandev). The ``Complete`` of a failed turn
carries the same kind, message and status in ``error``, so a consumer that stops at
``Complete`` still knows what went wrong.

**Message UUIDs.** Main-chain ``user`` UUIDs are committed at once; ``assistant`` UUIDs only
when a successful ``result`` confirms them. The last committed UUID is
``Complete.last_message_uuid`` (usable as ``--resume-session-at``).

**Duplicates.** Every line the CLI writes has its own ``uuid``. A line whose ``uuid`` was
already seen is dropped, except ``stream_event`` lines: those are never checked. The CLI can
write a ``user`` / ``assistant`` / ``result`` / ``system`` line again (a resumed session
replays its transcript), but it never repeats a ``stream_event`` (they are not in the
transcript), and checking them would cost a set lookup on every token. Text is bounded per
message anyway (:mod:`adapter._turn_state`), so an ``assistant`` line never repeats text
that streamed; a stream event fed twice would be shown twice.

**Control requests are not turns.** The ``user`` line that echoes a ``set_model``
(``<local-command-stdout>``, between turns) opens no turn, even without ``isReplay``.

**Nothing to show.** ``keep_alive``, ``system/thinking_tokens``, ``system/status``
without a permission mode, ``system/hook_*``, ``command_lifecycle``, signature and citation
deltas, ``ping``, and control requests/responses (the session's business) give no event.
Messages that are modelled by :mod:`claudecode` but have no event of their own
(``tool_use_summary``, ``prompt_suggestion``, ``auth_status``, ``system/files_persisted``,
``system/elicitation_complete``, ``system/local_command_output``, ``system/informational``,
an SSE ``error`` the CLI recovers from) and unknown messages pass through as
:class:`~adapter.events.Raw`.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Final

from claudecode.content import (
    LARGE_TEXT_BYTES,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    WebSearchToolResultBlock,
)
from claudecode.control import InitializeResult
from claudecode.internal import LiteInbound, StreamEventLite, get_logger
from claudecode.messages import (
    AssistantMessage,
    AuthStatus,
    CommandLifecycle,
    ControlCancelRequest,
    InboundControlRequest,
    MalformedLine,
    PromptSuggestion,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemApiRetry,
    SystemBackgroundTasksChanged,
    SystemCompactBoundary,
    SystemElicitationComplete,
    SystemFilesPersisted,
    SystemInformational,
    SystemInit,
    SystemLocalCommandOutput,
    SystemPermissionDenied,
    SystemStatus,
    SystemTaskNotification,
    SystemTaskProgress,
    SystemTaskStarted,
    SystemTaskUpdated,
    ToolProgress,
    ToolUseSummary,
    UnknownMessage,
    UserMessage,
)
from claudecode.messages import RateLimit as LegacyRateLimit
from normalize import normalize_tool_use, title_for
from normalize._native import restore_class_doc

from . import _plain as plain
from ._context import DEFAULT_CONTEXT_WINDOW, ContextTracker
from ._system_events import SystemEvents
from ._tools import ToolCalls
from ._turn_state import BoundedMap, SeenIds, TextLedger
from .events import (
    AvailableCommands,
    Command,
    ErrorEvent,
    Event,
    McpServer,
    MessageChunk,
    PermissionCancelled,
    PermissionRequest,
    Raw,
    Reasoning,
)
from .events import ToolProgress as ToolProgressEvent

__all__ = ("Translator",)

_log = get_logger(__name__)

_SYNTHETIC_MODEL: Final = "<synthetic>"
_LOCAL_COMMAND: Final = "<local-command-"
#: Messages with a ``type`` of their own that carry nothing to show but are kept as ``raw``.
_RAW_TYPES: Final[tuple[type[Any], ...]] = (
    ToolUseSummary,
    PromptSuggestion,
    AuthStatus,
    SystemFilesPersisted,
    SystemElicitationComplete,
    SystemLocalCommandOutput,
    SystemInformational,
)


class Translator(SystemEvents):
    """Turns the CLI's typed messages into normalized events. Pure; never raises.

    Args:
        resumed: the session resumes an earlier CLI session (``SessionStatus.status`` is
            ``"resumed"`` instead of ``"new"``).
        work_dir: shorten paths under this directory in tool titles (defaults to the ``cwd``
            of ``system/init``).
        default_context_window: the window size assumed until a result reports one.
    """

    def __init__(
        self,
        *,
        resumed: bool = False,
        work_dir: str | None = None,
        default_context_window: int = DEFAULT_CONTEXT_WINDOW,
    ) -> None:
        self._resumed = resumed
        self._work_dir = work_dir
        self._announced = False
        self._closed = False
        self._session_id: str | None = None
        self._model: str | None = None
        self._mode: str | None = None
        self._cli_version: str | None = None
        self._cwd: str | None = None
        self._tools: list[str] = []
        self._mcp: list[McpServer] = []
        # turn state
        self._turn_open = False
        self._text_in_turn = False
        self._turn_model: str | None = None
        self._pending_assistant_uuid: str | None = None
        self._api_error_request: str | None = None
        self._last_committed: str | None = None
        # open permission prompts: request id -> (tool call id, parent sub-agent call id)
        self._permissions: dict[str, tuple[str | None, str | None]] = {}
        # per-message / per-id memories
        self._ledger = TextLedger()
        self._calls = ToolCalls(lambda: self._work_dir or self._cwd)
        self._context = ContextTracker(default_context_window)
        self._seen = SeenIds(2048)
        self._current_message: BoundedMap[str | None, str] = BoundedMap(64)
        self._merge_into: list[Event] | None = None
        self._agents: BoundedMap[str, str] = BoundedMap(256)
        self._task_tools: BoundedMap[str, str] = BoundedMap(256)
        self._results = 0
        # outstanding work (see "Outstanding work" above)
        self._awaiting: deque[str] = deque()  # our prompts not started yet, oldest first
        self._starting = False  # command_lifecycle said one started; its turn opens next
        self._lifecycle_seen = False  # the CLI reports command_lifecycle (2.1.332)
        self._background: BoundedMap[str, str | None] = BoundedMap(256)  # task -> Agent call
        self._self_start_expected = False

    # ----------------------------------------------------------------- properties

    @property
    def turn_open(self) -> bool:
        """Whether a turn started and has not ended yet."""
        return self._turn_open

    @property
    def busy(self) -> bool:
        """Whether a turn runs or a prompt we sent has not started yet (see the module doc)."""
        return self._turn_open or self._starting or bool(self._awaiting)

    @property
    def background_tasks(self) -> tuple[str, ...]:
        """Ids of background tasks the CLI started and has not reported finished."""
        return tuple(self._background.keys())

    @property
    def self_start_expected(self) -> bool:
        """A background task finished and the CLI has not yet opened the turn reporting it."""
        return self._self_start_expected

    @property
    def pending_tool_calls(self) -> tuple[str, ...]:
        """The ids of announced tool calls without a result, oldest first."""
        return tuple(self._calls.pending)

    @property
    def last_committed_uuid(self) -> str | None:
        """The UUID of the last message that is safe to resume at."""
        return self._last_committed

    @property
    def session_id(self) -> str | None:
        """The CLI's session id (from ``system/init``)."""
        return self._session_id

    @property
    def model(self) -> str | None:
        """The model the CLI reports in ``system/init``."""
        return self._model

    # ------------------------------------------------------------------ public API

    def feed(self, message: LiteInbound) -> list[Event]:
        """Translate one message from the CLI into zero or more events.

        A message whose ``uuid`` was seen before gives nothing, unless it is a
        ``stream_event`` (see "Duplicates" in the module documentation).
        """
        try:
            cls = type(message)
            if cls is StreamEvent or cls is StreamEventLite:
                return self._dispatch(message)
            uuid = getattr(message, "uuid", None)
            if uuid and type(uuid) is str and not self._seen.add(uuid):
                return []
        except Exception as exc:
            return [self._internal(exc, message)]
        return self._dispatch(message)

    def _dispatch(self, message: LiteInbound) -> list[Event]:
        """:meth:`feed` without the duplicate check (done by the caller)."""
        try:
            # The frequent classes called directly (a native call when compiled; through the
            # table below each is a Python-level call); same handlers as the table.
            if type(message) is StreamEventLite or type(message) is StreamEvent:
                return self._on_stream(message)
            if type(message) is AssistantMessage:
                return self._on_assistant(message)
            if type(message) is UserMessage:
                return self._on_user(message)
            if type(message) is SystemStatus:
                return self._on_status(message)
            handler = _HANDLERS.get(type(message))
            if handler is not None:
                return handler(self, message)
            convert = _STATELESS.get(type(message))
            if convert is not None:
                return convert(message)
            if isinstance(message, _RAW_TYPES):
                return [plain.raw_of(message)]
            return []
        except Exception as exc:
            return [self._internal(exc, message)]

    def feed_many(self, messages: Iterable[LiteInbound]) -> list[Event]:
        """Translate several messages at once (what one read produced).

        Same events as :meth:`feed` one by one, except that adjacent text, reasoning and
        tool-input deltas of the same message or call come out merged (same text): cheaper
        for everyone downstream. Runs of text, thinking and tool-input deltas inside an open
        turn take a fast path that accounts for the whole run at once.
        """
        batch = messages if isinstance(messages, list) else list(messages)
        out: list[Event] = []
        self._merge_into = out
        try:
            self._feed_batch(batch, out)
        finally:
            self._merge_into = None
        return out

    def prompt_sent(self, uuid: str) -> None:
        """We sent a prompt with this ``uuid``: busy until the CLI starts (and ends) its turn."""
        self._awaiting.append(uuid)

    def prompt_failed(self, uuid: str) -> None:
        """The prompt ``uuid`` never reached the CLI: forget it."""
        with contextlib.suppress(ValueError):
            self._awaiting.remove(uuid)

    def initialized(self, result: InitializeResult) -> list[Event]:
        """The CLI answered ``initialize``: its slash commands as :class:`AvailableCommands`."""
        try:
            self._cli_version = result.claude_code_version or self._cli_version
            if not self._announced and result.current_permission_mode:
                self._mode = result.current_permission_mode
            commands = [
                Command(name=c.name, description=c.description, argument_hint=c.argument_hint)
                for c in result.commands
                if c.name
            ]
            models = plain.model_choices(result.models)
            return [AvailableCommands(commands=commands, models=models)]
        except Exception as exc:
            return [self._internal(exc, result)]

    def permission_request(self, req: InboundControlRequest) -> PermissionRequest:
        """The :class:`PermissionRequest` event of a ``can_use_tool`` control request.

        ``pending_id`` is the control ``request_id``: answer through the session with it.
        A request of another subtype gives a best-effort event (the tool named in a hook's
        input, or an empty name); this method never raises.
        """
        try:
            event = plain.permission_event(req, self._parent_of, self._work_dir or self._cwd)
            self._open(event.parent_tool_call_id)
            self._permissions[req.request_id] = (event.tool_call_id, event.parent_tool_call_id)
            return event
        except Exception as exc:
            _log.warning("translator.internal_error", error=repr(exc), exc_info=True)
            payload = normalize_tool_use("", {})
            return PermissionRequest(
                pending_id=getattr(req, "request_id", ""),
                tool_name="",
                input={},
                normalized=payload,
                title=title_for(payload),
                options=[plain.ALLOW, plain.DENY],
            )

    def finish_turn(self, reason: str = "completed") -> list[Event]:
        """End the open turn without a ``result`` (e.g. after an ``ExitPlanMode`` approval).

        Completes every pending tool call (synthetic :class:`ToolUpdate`) and emits a
        synthetic :class:`Complete` whose ``terminal_reason`` is ``reason``. Nothing when
        no turn is open.
        """
        try:
            return self._finish(reason, error=None)
        except Exception as exc:
            return [self._internal(exc, None)]

    def close(self, error: str | None = None) -> list[Event]:
        """The CLI went away: end the open turn, plus an ``ErrorEvent(kind="cli_exited")``.

        With ``error`` the synthetic :class:`Complete` is an error and pending tool calls end
        as ``error``. A CLI that goes away in the middle of a turn (or before a prompt we sent
        started) is an error even when it exited cleanly: the turn never got its ``result``.
        Calling it again gives nothing.
        """
        if self._closed:
            return []
        self._closed = True
        try:
            if error is None and self.busy:
                error = "the CLI exited in the middle of a turn"
            if self._awaiting:
                self._awaiting.clear()
                self._turn_open = True  # the prompt's turn ends here, unanswered
            events = self._finish("cli_exited", error=error)
            if not events:
                # No turn open: a background sub-agent's calls (outside any turn) end with
                # the CLI as well, or their ToolCall would never get its ToolUpdate.
                events += self._calls.complete_all("error" if error is not None else "complete")
            if error is not None:
                events.append(ErrorEvent(message=error, kind="cli_exited"))
            return events
        except Exception as exc:
            return [self._internal(exc, None)]

    # ------------------------------------------------------------------- helpers

    def _internal(self, exc: Exception, message: object) -> ErrorEvent:
        _log.warning(
            "translator.internal_error",
            error=repr(exc),
            message_type=type(message).__name__,
            exc_info=True,
        )
        return ErrorEvent(
            message=f"internal error translating {type(message).__name__}: {exc!r}",
            kind="internal",
        )

    def _open(self, parent: str | None = None) -> None:
        # A sub-agent's own activity is not a turn: a background one goes on between turns.
        if self._turn_open or parent is not None:
            return
        self._turn_open = True
        if self._starting:
            self._starting = False  # the prompt command_lifecycle said started
        elif self._lifecycle_seen or not self._awaiting:
            self._self_start_expected = False  # a turn the CLI started by itself
        else:
            self._awaiting.popleft()  # no command_lifecycle: prompts run in order

    def _note_agent(self, agent_id: str | None, parent: str | None) -> None:
        if agent_id and parent:
            self._agents.set(agent_id, parent)

    def _note_model(self, model: str | None) -> None:
        if model and model != _SYNTHETIC_MODEL:
            self._turn_model = model
            self._context.use_model(model)

    # ---------------------------------------------------------- assistant / user

    def _on_assistant(self, msg: AssistantMessage) -> list[Event]:
        parent = msg.parent_tool_use_id
        self._open(parent)
        self._note_agent(msg.agent_id, parent)
        self._note_api_error(msg)
        message = msg.message
        message_id = message.id
        if parent is None:
            if msg.uuid:
                self._pending_assistant_uuid = msg.uuid
            if message.model != _SYNTHETIC_MODEL:
                self._note_model(message.model)
                self._context.observe(message_id, message.usage)
        events: list[Event] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                text = self._ledger.delivered(message_id, "text", block.text)
                if text:
                    if parent is None:
                        self._text_in_turn = True
                    events.append(
                        MessageChunk(message_id=message_id, text=text, parent_tool_call_id=parent)
                    )
            elif isinstance(block, ThinkingBlock):
                text = self._ledger.delivered(message_id, "thinking", block.thinking)
                if text:
                    events.append(
                        Reasoning(message_id=message_id, text=text, parent_tool_call_id=parent)
                    )
            elif isinstance(block, (ToolUseBlock, ServerToolUseBlock)):
                events += self._calls.announce(block.id, block.name, block.input, parent)
            elif isinstance(block, WebSearchToolResultBlock):
                events += self._calls.result(block.tool_use_id, block.content, False, None, parent)
            elif isinstance(block, UnknownBlock):
                events.append(
                    Raw(message_type="assistant", subtype=block.block_type, data=block.data)
                )
        return events

    def _on_user(self, msg: UserMessage) -> list[Event]:
        if msg.is_replay:
            return []
        parent = msg.parent_tool_use_id
        content = msg.message.content
        if parent is None and isinstance(content, str) and content.startswith(_LOCAL_COMMAND):
            # The CLI's echo of a control request (set_model) between turns: not a turn,
            # whether or not the CLI marks it as a replay (2.1.332 does).
            return []
        self._open(parent)
        self._note_agent(msg.agent_id, parent)
        if parent is None and msg.uuid:
            self._last_committed = msg.uuid
            self._pending_assistant_uuid = None
        if isinstance(content, str):
            return []
        results = [b for b in content if isinstance(b, ToolResultBlock)]
        if not results:
            return []
        structured: Any = None
        # A huge structured result (the CLI repeats a tool's whole output there) would cost
        # several times its size as Python strings; the block's text, of which the payload
        # keeps only the head (a LargeText at that size), stands for it.
        if len(results) == 1 and len(msg.tool_use_result) <= LARGE_TEXT_BYTES:
            try:
                structured = msg.tool_use_result_value()
            except Exception:
                structured = None
        events: list[Event] = []
        for block in results:
            self._drop_permissions_of(block.tool_use_id)
            events += self._calls.result(
                block.tool_use_id, block.content, block.is_error is True, structured, parent
            )
        return events

    def _drop_permissions_of(self, tool_id: str) -> None:
        if not self._permissions:
            return  # the common case: no prompt open
        for request_id, (tool, _) in list(self._permissions.items()):
            if tool == tool_id:
                del self._permissions[request_id]

    # ------------------------------------------------------------- control plane

    def _parent_of(self, tool_use_id: str | None, agent_id: str | None) -> str | None:
        parent = self._calls.parent_of(tool_use_id)
        if parent is None and agent_id:
            parent = self._agents.get(agent_id)
        return parent

    def _on_cancel(self, msg: ControlCancelRequest) -> list[Event]:
        if msg.request_id not in self._permissions:
            return []
        del self._permissions[msg.request_id]
        return [PermissionCancelled(pending_id=msg.request_id, reason="cancelled_by_cli")]

    def _on_tool_progress(self, msg: ToolProgress) -> list[Event]:
        self._open(msg.parent_tool_use_id)
        return [
            ToolProgressEvent(
                tool_call_id=msg.tool_use_id or "",
                tool_name=msg.tool_name,
                elapsed_seconds=msg.elapsed_time_seconds,
                parent_tool_call_id=msg.parent_tool_use_id,
            )
        ]


_Handler = Callable[[Translator, Any], list[Event]]
_Plain = Callable[[Any], list[Event]]

_STATELESS: Final[dict[type[Any], _Plain]] = {
    SystemApiRetry: plain.api_retry,
    SystemCompactBoundary: plain.compact_boundary,
    SystemPermissionDenied: plain.permission_denied,
    RateLimitEvent: plain.rate_limit,
    LegacyRateLimit: plain.rate_limit,
    UnknownMessage: plain.unknown,
    MalformedLine: plain.malformed,
}
"""Messages whose events depend on nothing but the message."""

_HANDLERS: Final[dict[type[Any], _Handler]] = {
    SystemInit: Translator._on_init,
    SystemStatus: Translator._on_status,
    SystemTaskStarted: Translator._on_task,
    SystemTaskProgress: Translator._on_task,
    SystemTaskUpdated: Translator._on_task,
    SystemTaskNotification: Translator._on_task,
    SystemBackgroundTasksChanged: Translator._on_task,
    StreamEvent: Translator._on_stream,
    StreamEventLite: Translator._on_stream,
    AssistantMessage: Translator._on_assistant,
    UserMessage: Translator._on_user,
    ResultMessage: Translator._on_result,
    ToolProgress: Translator._on_tool_progress,
    ControlCancelRequest: Translator._on_cancel,
    CommandLifecycle: Translator._on_lifecycle,
}
"""Dispatch by exact message class; classes not listed give nothing (or ``raw``)."""

# Compiled (mypyc), the class has no docstring of its own: the one above, from the source.
restore_class_doc(Translator)
