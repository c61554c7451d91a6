"""Adapter events -> AG-UI events for one run: pure, sans-IO, never raises.

:class:`RunTranslator` turns the normalized events of one session (:mod:`adapter.events`)
into the AG-UI events of one run, keeping every rule ``@ag-ui/client``'s ``verifyEvents``
enforces: ``RUN_STARTED`` first, echoing the request's ``threadId`` / ``runId``; nothing
open (text message, reasoning, tool call) when the run ends; exactly one terminal event
(``RUN_FINISHED`` or ``RUN_ERROR``), after which nothing more is emitted.

Mapping
-------
* ``message_chunk`` -> ``TEXT_MESSAGE_START`` / ``CONTENT`` / ``END``, one message per API
  message (``messageId`` = the adapter's ``message_id``; a message reopened after it was
  closed gets a ``:<n>`` suffix, so ids never repeat).
* ``reasoning`` -> ``REASONING_START`` + ``REASONING_MESSAGE_START`` / ``CONTENT`` /
  ``REASONING_MESSAGE_END`` + ``REASONING_END`` (id ``<message_id>:reasoning``).
* ``tool_input_delta`` is kept until the ``tool_call`` names the tool, then
  ``TOOL_CALL_START`` (``parentMessageId``: the last assistant text message of the run),
  ``TOOL_CALL_ARGS`` (the streamed JSON, or the input as JSON), ``TOOL_CALL_END``, and a
  ``CUSTOM`` ``claudecode.tool_payload`` with the normalized payload and title;
  ``tool_update`` -> ``TOOL_CALL_RESULT`` (the result as text) and the payload again, now
  with its result.
* a call of a frontend tool (``mcp__frontend__<name>``, see ``frontend_tools``) ->
  ``TOOL_CALL_START`` / ``ARGS`` / ``END`` under the page's own name, listed in
  :attr:`RunTranslator.awaiting_tools`; its result is the page's, so no ``TOOL_CALL_RESULT``.
* a ``permission_request`` -> a call of the approval tool (:data:`APPROVAL_TOOL`):
  ``TOOL_CALL_START`` / ``ARGS`` (the request: ``pendingId``, ``sessionId``, ``toolName``,
  ``input``, ``title``, ``options``...) / ``END``; :attr:`RunTranslator.awaiting` lists the
  calls the run ends with, pending.
* a ``question_request`` -> a call of the question tool (:data:`QUESTION_TOOL`): its args
  ``{pendingId, sessionId, toolCallId, questions: [{question, header, options: [{label,
  description}], multiSelect}]}``, listed in :attr:`RunTranslator.awaiting` too; a question
  settled in the same batch (the policy declined it) is not asked. ``permission_resolved``
  -> ``CUSTOM`` ``claudecode.permission_resolved``.
* sub-agent work (events with ``parent_tool_call_id``) -> ``CUSTOM`` ``claudecode.subagent``
  ``{parentToolCallId, event}``, so the chat shows the sub-agent's call, not its chatter.
* ``context_window``, ``mode_changed``, todo lists, ``complete`` (cost, tokens) ->
  ``STATE_DELTA`` (RFC 6902) on the state of :meth:`RunTranslator.start`'s
  ``STATE_SNAPSHOT``.
* ``rate_limit``, ``api_retry``, ``task``, ``compact_boundary``, ``permission_cancelled``,
  ``permission_denied``, ``tool_progress``, non-fatal ``error`` -> ``CUSTOM``
  ``claudecode.<type>`` with the adapter event as value.
* ``complete``: success -> ``RUN_FINISHED``; failure -> ``RUN_ERROR`` with the error's
  message and kind as ``code`` — unless the run was stopped (:meth:`RunTranslator.stop`),
  which ends it with ``RUN_FINISHED``. A ``cli_exited`` error -> ``RUN_ERROR``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from normalize import ManageTodos, NormalizedPayload, encode_payload

from ...backend import FRONTEND_TOOL_SERVER
from ...events import (
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
    Reasoning,
    SessionStatus,
    TaskEvent,
    ToolCall,
    ToolInputDelta,
    ToolProgress,
    ToolUpdate,
    encode_event,
)
from .events import (
    AguiEvent,
    CustomEvent,
    ReasoningEnd,
    ReasoningMessageContent,
    ReasoningMessageEnd,
    ReasoningMessageStart,
    ReasoningStart,
    RunError,
    RunFinished,
    RunStarted,
    StateDelta,
    StateSnapshot,
    TextMessageContent,
    TextMessageEnd,
    TextMessageStart,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallResult,
    ToolCallStart,
)
from .requests import APPROVAL_TOOL, QUESTION_TOOL, approval_args, interrupt_of, question_args
from .results import result_text
from .state import initial_state

__all__ = ("APPROVAL_TOOL", "QUESTION_TOOL", "RunTranslator", "ThreadMemory", "initial_state")

_CUSTOM_EVENTS: dict[type[Event], str] = {
    RateLimit: "claudecode.rate_limit",
    ApiRetry: "claudecode.api_retry",
    TaskEvent: "claudecode.task",
    CompactBoundary: "claudecode.compact_boundary",
    PermissionCancelled: "claudecode.permission_cancelled",
    PermissionDenied: "claudecode.permission_denied",
    PermissionResolved: "claudecode.permission_resolved",
    ToolProgress: "claudecode.tool_progress",
    AvailableCommands: "claudecode.commands",
}

_FRONTEND_PREFIX = f"mcp__{FRONTEND_TOOL_SERVER}__"

#: Error kinds that end a run when no ``complete`` carried them.
_FATAL_ERRORS = frozenset({"cli_exited"})

_MAX_KEPT_ARGS = 4 * 1024 * 1024


def _plain(event: Event) -> msgspec.Raw:
    """The adapter event in its public wire form, as JSON already encoded: a custom event's
    value is only ever encoded again (into the SSE frame), so it is not decoded into
    dicts in between."""
    return msgspec.Raw(encode_event(event))


@dataclass
class ThreadMemory:
    """What a thread's runs emitted so far: message ids and tool call ids."""

    message_ids: set[str] = field(default_factory=set)
    tool_calls: set[str] = field(default_factory=set)


class RunTranslator:
    """The AG-UI events of one run over a session's adapter events.

    Args:
        thread_id, run_id: echoed in ``RUN_STARTED`` and ``RUN_FINISHED``.
        session_id: the session the run drives (in approval requests and the state).
        clock: returns the time in integer milliseconds (``timestamp`` on every event);
            ``None`` leaves timestamps out.
        memory: what the thread's earlier runs emitted (the runs of one thread share one
            :class:`ThreadMemory`): message ids never repeat across them, and a result for a
            call nobody announced is preceded by its call, so the client never sees a result
            for an unknown call.
        frontend_tools: the names of the tools the page runs (offered to Claude as
            ``mcp__frontend__<name>``).
    """

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        *,
        session_id: str | None = None,
        clock: Callable[[], int] | None = None,
        memory: ThreadMemory | None = None,
        frontend_tools: Iterable[str] = (),
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.session_id = session_id
        self._clock = clock
        self._now: int | None = None  # the time stamped: read per adapter event, not AG-UI event
        self.started = False
        self.finished = False
        self.stopped = False
        #: Approval tool calls the run ended with, unanswered: ``toolCallId -> pendingId``.
        self.awaiting: dict[str, str] = {}
        #: Frontend tool calls waiting for the page's result: ``toolCallId -> tool name``.
        self.awaiting_tools: dict[str, str] = {}
        self._frontend = {f"{_FRONTEND_PREFIX}{name}": name for name in frontend_tools}
        self._frontend_calls: set[str] = set()
        self.state: dict[str, Any] = initial_state(session_id=session_id)
        self._text: str | None = None  # the open text message id
        self._reasoning: str | None = None  # the open reasoning id
        self._last_text: str | None = None  # parent of the next tool call
        memory = memory or ThreadMemory()
        self._used_ids = memory.message_ids
        self._id_map: dict[str, str] = {}  # adapter message id -> open AG-UI id
        self._args: dict[str, list[str]] = {}  # streamed tool input, by call id
        self._args_size = 0
        self._calls = memory.tool_calls
        #: Requests settled in the batch being translated (not to be asked).
        self._settled: set[str] = set()
        #: AG-UI 1.0 interrupts instead of approval / question tool calls (the client asked).
        self.use_interrupts = False
        #: The interrupts the run ends with (see :meth:`finish_interrupted`).
        self.interrupts: list[dict[str, Any]] = []

    def set_frontend_tools(self, names: Iterable[str]) -> None:
        """The names of the tools the page runs (see the constructor)."""
        self._frontend = {f"{_FRONTEND_PREFIX}{name}": name for name in names}

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, state: dict[str, Any] | None = None) -> list[AguiEvent]:
        """``RUN_STARTED`` and the ``STATE_SNAPSHOT`` (once)."""
        if self.started:
            return []
        self._tick()
        self.started = True
        if state is not None:
            self.state = {**self.state, **state}
        return [
            self._stamp(RunStarted(thread_id=self.thread_id, run_id=self.run_id)),
            self._stamp(StateSnapshot(snapshot=self.state)),
        ]

    def stop(self) -> None:
        """The user stopped the run: the failed turn that follows ends it as finished."""
        self.stopped = True

    def finish(self, result: Any = None) -> list[AguiEvent]:
        """Close everything open, then ``RUN_FINISHED`` (nothing if already ended)."""
        if self.finished:
            return []
        self._tick()
        out = self.start()
        out += self._close_all()
        out.append(
            self._stamp(RunFinished(thread_id=self.thread_id, run_id=self.run_id, result=result))
        )
        self.finished = True
        return out

    def finish_interrupted(self) -> list[AguiEvent]:
        """End the run with the AG-UI 1.0 ``interrupt`` outcome: the requests it waits for."""
        if self.finished:
            return []
        self._tick()
        out = self.start()
        out += self._close_all()
        outcome = {"type": "interrupt", "interrupts": self.interrupts}
        out.append(
            self._stamp(RunFinished(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome))
        )
        self.finished = True
        return out

    def error(self, message: str, code: str | None = None) -> list[AguiEvent]:
        """Close everything open, then ``RUN_ERROR`` (nothing if already ended)."""
        if self.finished:
            return []
        self._tick()
        out = self.start()
        out += self._close_all()
        out.append(self._stamp(RunError(message=message or "the run failed", code=code)))
        self.finished = True
        return out

    # -- events ----------------------------------------------------------------------------

    def feed_many(self, events: Iterable[Event]) -> list[AguiEvent]:
        """Translate a batch, in order."""
        batch = list(events)
        self.batch(batch)
        out: list[AguiEvent] = []
        for event in batch:
            out.extend(self.feed(event))
        return out

    def batch(self, events: Iterable[Event]) -> None:
        """Note the batch about to be fed one event at a time: a question settled in it (a
        policy's answer comes with the question) is not asked."""
        self._settled = {e.pending_id for e in events if type(e) is PermissionResolved}

    def feed(self, event: Event) -> list[AguiEvent]:
        """The AG-UI events for one adapter event (none once the run ended)."""
        if self.finished:
            return []
        self._tick()
        out = self.start()
        try:
            out += self._feed(event)
        except Exception as exc:  # a bug must not break the stream
            out.append(self._custom("claudecode.error", {"message": f"internal: {exc!r}"}))
        return out

    def _feed(self, event: Event) -> list[AguiEvent]:
        parent = getattr(event, "parent_tool_call_id", None)
        if parent is not None and not isinstance(event, PermissionRequest | QuestionRequest):
            return [
                self._custom(
                    "claudecode.subagent", {"parentToolCallId": parent, "event": _plain(event)}
                )
            ]
        kind = type(event)
        if kind is MessageChunk:
            assert isinstance(event, MessageChunk)
            return self._text_chunk(event.message_id, event.text)
        if kind is Reasoning:
            assert isinstance(event, Reasoning)
            return self._reasoning_chunk(event.message_id, event.text)
        if kind is ToolInputDelta:
            assert isinstance(event, ToolInputDelta)
            self._keep_args(event.tool_call_id, event.partial_json)
            return []
        if kind is ToolCall:
            assert isinstance(event, ToolCall)
            return self._tool_call(event)
        if kind is ToolUpdate:
            assert isinstance(event, ToolUpdate)
            return self._tool_update(event)
        if kind is PermissionRequest:
            assert isinstance(event, PermissionRequest)
            return self._approval(event)
        if kind is QuestionRequest:
            assert isinstance(event, QuestionRequest)
            return self._question(event)
        if kind is Complete:
            assert isinstance(event, Complete)
            return self._complete(event)
        if kind is ErrorEvent:
            assert isinstance(event, ErrorEvent)
            if event.kind in _FATAL_ERRORS:
                return self.error(event.message, event.kind)
            return [self._custom("claudecode.error", _plain(event))]
        if kind is ContextWindow:
            assert isinstance(event, ContextWindow)
            window = {"size": event.size, "used": event.used, "percent": event.percent}
            return self._set_state("contextWindow", window)
        if kind is ModeChanged:
            assert isinstance(event, ModeChanged)
            return self._set_state("permissionMode", event.mode)
        if kind is SessionStatus:
            assert isinstance(event, SessionStatus)
            out = self._set_state("model", event.model) if event.model else []
            if event.permission_mode:
                out += self._set_state("permissionMode", event.permission_mode)
            if event.cwd:
                out += self._set_state("cwd", event.cwd)
            return out
        name = _CUSTOM_EVENTS.get(kind)
        if name is not None:
            return [self._custom(name, _plain(event))]
        return []  # user_message, raw, ...: nothing the client shows

    # -- text and reasoning ------------------------------------------------------------------

    def _fresh_id(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self._used_ids:
            n += 1
            candidate = f"{base}:{n}"
        self._used_ids.add(candidate)
        return candidate

    def _text_chunk(self, message_id: str, text: str) -> list[AguiEvent]:
        if not text:
            return []
        out = self._close_reasoning()
        current = self._id_map.get(message_id)
        if current is None or current != self._text:
            out += self._close_text()
            current = self._fresh_id(message_id)
            self._id_map[message_id] = current
            self._text = current
            self._last_text = current
            out.append(self._stamp(TextMessageStart(message_id=current)))
        out.append(self._stamp(TextMessageContent(message_id=current, delta=text)))
        return out

    def _reasoning_chunk(self, message_id: str, text: str) -> list[AguiEvent]:
        if not text:
            return []
        key = f"{message_id}:reasoning"
        out: list[AguiEvent] = []
        current = self._id_map.get(key)
        if current is None or current != self._reasoning:
            out += self._close_text()
            out += self._close_reasoning()
            current = self._fresh_id(key)
            self._id_map[key] = current
            self._reasoning = current
            out.append(self._stamp(ReasoningStart(message_id=current)))
            out.append(self._stamp(ReasoningMessageStart(message_id=current, role="reasoning")))
        out.append(self._stamp(ReasoningMessageContent(message_id=current, delta=text)))
        return out

    def _close_text(self) -> list[AguiEvent]:
        if self._text is None:
            return []
        message_id, self._text = self._text, None
        return [self._stamp(TextMessageEnd(message_id=message_id))]

    def _close_reasoning(self) -> list[AguiEvent]:
        if self._reasoning is None:
            return []
        message_id, self._reasoning = self._reasoning, None
        return [
            self._stamp(ReasoningMessageEnd(message_id=message_id)),
            self._stamp(ReasoningEnd(message_id=message_id)),
        ]

    def _close_all(self) -> list[AguiEvent]:
        return self._close_text() + self._close_reasoning()

    # -- tools -------------------------------------------------------------------------------

    def _keep_args(self, tool_call_id: str, piece: str) -> None:
        if self._args_size + len(piece) > _MAX_KEPT_ARGS:
            return  # the input is rebuilt from the payload instead
        self._args.setdefault(tool_call_id, []).append(piece)
        self._args_size += len(piece)

    def _call(self, tool_call_id: str, name: str, args: str, parent: str | None) -> list[AguiEvent]:
        out = self._close_all()
        self._calls.add(tool_call_id)
        out.append(
            self._stamp(
                ToolCallStart(
                    tool_call_id=tool_call_id, tool_call_name=name, parent_message_id=parent
                )
            )
        )
        if args:
            out.append(self._stamp(ToolCallArgs(tool_call_id=tool_call_id, delta=args)))
        out.append(self._stamp(ToolCallEnd(tool_call_id=tool_call_id)))
        return out

    def _tool_call(self, event: ToolCall) -> list[AguiEvent]:
        if event.tool_call_id in self._calls:
            return []
        pieces = self._args.pop(event.tool_call_id, [])
        self._args_size -= sum(len(p) for p in pieces)
        streamed = "".join(pieces)
        args = streamed if _is_json_object(streamed) else _input_json(event.normalized)
        name = event.tool_name
        frontend = self._frontend.get(name)
        if frontend is not None:
            # The page runs it: it sees its own tool name, and the run ends for it to do so.
            name = frontend
            self.awaiting_tools[event.tool_call_id] = frontend
            self._frontend_calls.add(event.tool_call_id)
        out = self._call(event.tool_call_id, name, args, self._last_text)
        out.append(
            self._payload(
                event.tool_call_id, event.tool_name, event.title, "running", event.normalized
            )
        )
        return out

    def _tool_update(self, event: ToolUpdate) -> list[AguiEvent]:
        out: list[AguiEvent] = []
        if event.tool_call_id in self._frontend_calls or event.tool_name in self._frontend:
            # The page has this result already: it produced it.
            return [
                self._payload(
                    event.tool_call_id, event.tool_name, event.title, event.status, event.normalized
                )
            ]
        if event.tool_call_id not in self._calls:
            # Nobody announced the call (its tool_use was lost): announce it first.
            args = _input_json(event.normalized)
            out += self._call(event.tool_call_id, event.tool_name or "tool", args, self._last_text)
        else:
            out += self._close_all()
        out.append(
            self._stamp(
                ToolCallResult(
                    message_id=f"{event.tool_call_id}:result",
                    tool_call_id=event.tool_call_id,
                    content=result_text(event.normalized, event.status),
                )
            )
        )
        out.append(
            self._payload(
                event.tool_call_id, event.tool_name, event.title, event.status, event.normalized
            )
        )
        if isinstance(event.normalized, ManageTodos) and event.status == "complete":
            todos = [
                {"content": t.description, "status": t.status, "activeForm": t.active_form}
                for t in event.normalized.items
            ]
            out += self._set_state("todos", todos)
        return out

    def _payload(
        self, tool_call_id: str, tool_name: str, title: str, status: str, payload: NormalizedPayload
    ) -> CustomEvent:
        value = {
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "title": title,
            "status": status,
            # Encoded JSON, embedded as is when the frame is encoded (no decode in between:
            # a Write's payload is a whole file).
            "normalized": msgspec.Raw(encode_payload(payload)),
        }
        return self._custom("claudecode.tool_payload", value)

    def _approval(self, event: PermissionRequest) -> list[AguiEvent]:
        call_id = f"approval-{event.pending_id}"
        if call_id in self._calls:
            return []
        self.awaiting[call_id] = event.pending_id
        args = approval_args(event, self.session_id)
        if self.use_interrupts:
            self.interrupts.append(interrupt_of(call_id, args, event.title, event.tool_call_id))
            return []
        return self._call(call_id, APPROVAL_TOOL, args, self._last_text)

    def _question(self, event: QuestionRequest) -> list[AguiEvent]:
        call_id = f"question-{event.pending_id}"
        if call_id in self._calls or event.pending_id in self._settled:
            return []
        self.awaiting[call_id] = event.pending_id
        args = question_args(event, self.session_id)
        if self.use_interrupts:
            text = event.questions[0].question
            self.interrupts.append(interrupt_of(call_id, args, text, event.tool_call_id))
            return []
        return self._call(call_id, QUESTION_TOOL, args, self._last_text)

    # -- the end of a turn -------------------------------------------------------------------

    def _complete(self, event: Complete) -> list[AguiEvent]:
        tokens = event.tokens
        out = self._set_state("costUsd", event.cost_usd)
        out += self._set_state(
            "tokens",
            {
                "input": tokens.input,
                "output": tokens.output,
                "cacheRead": tokens.cache_read,
                "cacheCreation": tokens.cache_creation,
            },
        )
        if not event.is_error or self.stopped:
            return out + self.finish()
        error = event.error
        message = error.message if error is not None else (event.result or event.subtype)
        code = error.kind if error is not None else event.subtype
        return out + self.error(message, code)

    # -- state and helpers -------------------------------------------------------------------

    def _set_state(self, key: str, value: Any) -> list[AguiEvent]:
        if self.state.get(key) == value:
            return []
        self.state[key] = value
        return [
            self._stamp(StateDelta(delta=[{"op": "replace", "path": f"/{key}", "value": value}]))
        ]

    def _custom(self, name: str, value: Any) -> CustomEvent:
        event = CustomEvent(name=name, value=value)
        self._stamp(event)
        return event

    def _tick(self) -> None:
        self._now = None if self._clock is None else self._clock()

    def _stamp(self, event: Any) -> Any:
        if self._now is not None:
            event.timestamp = self._now
        return event


def _is_json_object(text: str) -> bool:
    if not text:
        return False
    try:
        # msgspec first (a tool's input can be a whole file: several times faster); the
        # standard library decides what msgspec refuses (NaN, 1e400), as it always did.
        return isinstance(msgspec.json.decode(text), dict)
    except msgspec.MsgspecError:
        pass
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _input_json(payload: NormalizedPayload) -> str:
    raw = getattr(payload, "input", None)
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False)
    data = msgspec.json.decode(encode_payload(payload))
    if isinstance(data, dict):
        data.pop("kind", None)
        data.pop("output", None)
        data.pop("tool", None)
        return json.dumps(data, ensure_ascii=False)
    return "{}"
