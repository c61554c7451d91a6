"""How a turn ends, for :class:`adapter.translate.Translator` (a base class, like
:class:`~adapter._stream_events.StreamEvents` below it).

A ``result`` line ends the turn the CLI ran: pending tool calls are completed (background
sub-agents' calls are kept), the result text is emitted when the turn showed no text, then
the context window, the :class:`~adapter.events.Complete` and, for a failed turn, an
:class:`~adapter.events.ErrorEvent` ("complete before error"). A turn that gets no ``result``
(the CLI exited, or an approved ``ExitPlanMode``) is finished with a synthetic ``Complete``.
The state lives on the translator.
"""

from __future__ import annotations

from claudecode.messages import AssistantMessage, ResultMessage

from . import _plain as plain
from ._stream_events import StreamEvents
from ._turn_state import BoundedMap
from .events import Complete, ErrorEvent, Event, MessageChunk, TurnError

__all__ = ("TurnEnding",)


class TurnEnding(StreamEvents):
    """``result`` handling and synthetic turn ends; the state lives on the translator."""

    _results: int
    _self_start_expected: bool
    _pending_assistant_uuid: str | None
    #: The request id of the turn's synthetic "API Error" message, for the turn's error.
    _api_error_request: str | None
    _last_committed: str | None
    _turn_model: str | None
    _model: str | None
    _background: BoundedMap[str, str | None]
    #: Open permission prompts: request id -> (tool call id, parent sub-agent call id).
    _permissions: dict[str, tuple[str | None, str | None]]

    def _on_result(self, msg: ResultMessage) -> list[Event]:
        self._results += 1
        self._open()  # a result with no open turn is a turn of its own
        if msg.origin is not None and msg.origin.get("kind") == "task-notification":
            self._self_start_expected = False
        events: list[Event] = []
        events += self._calls.complete_all(
            "error" if msg.is_error else "complete", keep=self._background_calls()
        )
        if not self._text_in_turn and msg.result:
            message_id = f"result:{msg.uuid or self._results}"
            events.append(MessageChunk(message_id=message_id, text=msg.result))
        self._context.learn_sizes(msg.model_usage)
        window = self._context.snapshot()
        if window is not None:
            events.append(window)
        if not msg.is_error and self._pending_assistant_uuid:
            self._last_committed = self._pending_assistant_uuid
        complete = plain.complete_of(msg, self._turn_model or self._model, self._last_committed)
        events.append(complete)
        if complete.error is not None:
            events.append(
                ErrorEvent(
                    message=complete.error.message,
                    kind=complete.error.kind,
                    status=complete.error.status,
                    request_id=(
                        self._api_error_request if complete.error.kind == "api_error" else None
                    ),
                )
            )
        self._end_turn()
        return events

    def _note_api_error(self, msg: AssistantMessage) -> None:
        """The CLI's synthetic message for a failed API call carries the request id that
        the failed result does not: kept for the turn's error."""
        if msg.is_api_error_message and msg.parent_tool_use_id is None and msg.request_id:
            self._api_error_request = msg.request_id

    def _background_calls(self) -> frozenset[str]:
        """The Agent calls of running background tasks: their sub-agents outlive the turn."""
        return frozenset(v for v in self._background.values() if v)

    def _end_turn(self) -> None:
        self._turn_open = False
        self._text_in_turn = False
        self._pending_assistant_uuid = None
        self._api_error_request = None
        # A background sub-agent's prompts outlive the turn (the CLI may still withdraw them).
        keep = self._background_calls()
        self._permissions = {r: p for r, p in self._permissions.items() if p[1] in keep}

    def _finish(self, reason: str, error: str | None) -> list[Event]:
        if not self._turn_open:
            return []
        events: list[Event] = []
        events += self._calls.complete_all("error" if error is not None else "complete")
        if error is None and self._pending_assistant_uuid:
            self._last_committed = self._pending_assistant_uuid
        events.append(
            Complete(
                is_error=error is not None,
                subtype="success" if error is None else "error_during_execution",
                terminal_reason=reason,
                model=self._turn_model or self._model,
                last_message_uuid=self._last_committed,
                synthetic=True,
                error=None if error is None else TurnError(kind="cli_exited", message=error),
            )
        )
        self._end_turn()
        return events
