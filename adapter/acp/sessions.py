"""The ACP agent's open sessions, each followed from the backend to the editor.

Per session, one task follows the backend's event stream from ``seq`` 1 and turns events into
``session/update`` notifications (:mod:`adapter.acp.translate`); permission requests become
``session/request_permission`` calls to the editor, whose answers go back to the session; the
agent's questions become an ``elicitation/create`` form when the editor advertised form
elicitation, else one permission request per question whose options are the answers
(:mod:`adapter.acp.questions`); a ``complete`` event ends the running ``session/prompt`` with
its stop reason. Cancelling a
turn withdraws its open permission requests and interrupts the CLI; closing a session (or the
agent) closes it in the backend.

A backend that loses its sessions for a while (:class:`~adapter.BackendUnavailableError`: a
cluster gateway without NATS) ends the running prompt with an "unavailable" error (see
:func:`unavailable_error`) and the session stays open: its events are followed again from the
last one relayed once the backend is back, so nothing the session did meanwhile is lost.
Any other failure while following one session ends that session alone (logged), never the
agent and its other sessions.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import anyio

from claudecode import ClaudeCodeError, UsageError
from claudecode.internal import get_logger

from ..backend import BackendUnavailableError, SessionBackend, SessionSpec
from ..events import (
    AvailableCommands,
    Complete,
    ErrorEvent,
    Event,
    ModeChanged,
    ModelChoice,
    PermissionCancelled,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
)
from ..fanout import SubscriberDropped
from ..manager import UnknownSessionError
from ..policies import PermissionDecision
from ..questions import InvalidAnswerError
from ..session import UnknownPermissionError
from .config_options import config_options
from .jsonrpc import INTERNAL_ERROR, RESOURCE_NOT_FOUND, JsonRpcError, encode_notification
from .peer import JsonRpcPeer, Outgoing
from .questions import (
    Outcome,
    answers_of_elicitation,
    answers_of_permission,
    elicitation_params,
    permission_params,
)
from .translate import UpdateTranslator, decision_for_option, permission_request_params

__all__ = ("AcpSession", "SessionRelay", "Turn", "unavailable_error")

_log = get_logger("claudecode.adapter.acp")

#: Between two attempts to follow a session again while its backend is unavailable.
_RETRY_FIRST = 0.25
_RETRY_MAX = 5.0


def unavailable_error(exc: BackendUnavailableError) -> JsonRpcError:
    """The ACP error for a backend that cannot reach its sessions for now.

    ACP has no code of its own for it: ``-32603`` (the code ACP keeps for the agent's own
    failures), a message that says what happened and that a retry may work, and
    ``data`` ``{"reason": "unavailable", "retryable": true}`` for clients that act on it.
    """
    return JsonRpcError(
        INTERNAL_ERROR,
        f"Service unavailable: {exc} (nothing is lost: retry later)",
        {"reason": "unavailable", "retryable": True},
    )


@dataclass
class Turn:
    """The running ``session/prompt`` of a session."""

    done: anyio.Event = field(default_factory=anyio.Event)
    cancelled: bool = False
    result: Complete | None = None
    error: str | None = None
    #: The answer the prompt gets instead of a result (the backend became unavailable).
    failure: JsonRpcError | None = None


@dataclass
class AcpSession:
    """One open session as the editor sees it.

    ``id`` is the ACP session id (the CLI's session id); ``backend_id`` the session's id in
    the backend, which differs for a loaded session (see :meth:`SessionRelay.start`).
    """

    id: str
    backend_id: str
    cwd: str
    mode: str
    model: str | None
    translator: UpdateTranslator
    turn: Turn | None = None
    #: pending_id -> our request id to the editor
    asking: dict[str, int] = field(default_factory=dict)
    rejected_tools: set[str] = field(default_factory=set)
    #: The models the CLI listed (its ``initialize`` answer), and the agent's own model.
    models: list[ModelChoice] = field(default_factory=list)
    configured_model: str | None = None
    #: The effort chosen through the ``effort`` option (``None``: the model's default).
    effort: str | None = None
    scope: anyio.CancelScope | None = None
    last_error: str | None = None
    #: Turns whose prompt was answered "unavailable" while they ran on: their ``complete``,
    #: when the session is followed again, ends no prompt.
    orphaned_turns: int = 0


class SessionRelay:
    """The open sessions of one editor connection (``peer``) over ``backend``."""

    def __init__(self, backend: SessionBackend, peer: JsonRpcPeer, *, cancel_grace: float) -> None:
        self.backend = backend
        self.sessions: dict[str, AcpSession] = {}
        self._peer = peer
        self._cancel_grace = cancel_grace
        #: Whether the editor advertised form elicitation (set from its ``initialize``).
        self.elicitation_form = False

    def get(self, session_id: str) -> AcpSession:
        """The open session ``session_id``; a ``Resource not found`` error otherwise."""
        session = self.sessions.get(session_id)
        if session is None:
            raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: session {session_id}")
        return session

    async def start(
        self, spec: SessionSpec, session_id: str | None, *, backend_id: str | None = None
    ) -> AcpSession:
        """Create the session in the backend and hold it open (not followed yet).

        ``session_id`` is the editor's name for it; in the backend it is ``backend_id``
        (default: the same). A session loaded again needs an id of its own there: a cluster
        keeps a closed session's record and events for a while under its old id. ``None``:
        the id of the CLI session the backend chose (a backend that names its sessions).
        """
        info = await self.backend.create(spec, session_id=backend_id or session_id)
        if session_id is None:
            if info.cli_session_id is None:  # a backend that does not name them: a bug
                with contextlib.suppress(ClaudeCodeError):
                    await self.backend.close(info.id)
                raise JsonRpcError(INTERNAL_ERROR, "the backend named no CLI session")
            session_id = info.cli_session_id
        session = AcpSession(
            id=session_id,
            backend_id=info.id,
            cwd=spec.cwd or "",
            mode=info.permission_mode or "default",
            model=info.model,
            translator=UpdateTranslator(cwd=spec.cwd),
            configured_model=spec.model,
        )
        self.sessions[session_id] = session
        return session

    def follow(self, session: AcpSession) -> None:
        """Start relaying the session's events to the editor."""
        self._peer.start_soon(self._pump, session, name=f"acp session {session.id}")

    async def notify_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        """Send ``session/update`` notifications (one write for all of them)."""
        if updates:
            await self._peer.send(
                b"".join(
                    encode_notification("session/update", {"sessionId": session_id, "update": u})
                    for u in updates
                )
            )

    async def end(self, session: AcpSession) -> None:
        """Forget the session, end its prompt and close it in the backend."""
        self.sessions.pop(session.id, None)
        if session.turn is not None:
            session.turn.error = "the session was closed"
            session.turn.done.set()
        with contextlib.suppress(UsageError, ClaudeCodeError):
            await self.backend.close(session.backend_id)
        if session.scope is not None:
            session.scope.cancel()

    async def end_all(self) -> None:
        """:meth:`end` every open session."""
        for session in list(self.sessions.values()):
            await self.end(session)

    async def cancel(self, session: AcpSession) -> None:
        """Cancel the running turn: the prompt answers ``cancelled``."""
        turn = session.turn
        if turn is None or turn.cancelled:
            return
        turn.cancelled = True
        # The editor answers its open permission requests `cancelled` itself; the CLI must
        # not wait for those answers.
        for pending_id, request_id in list(session.asking.items()):
            session.asking.pop(pending_id, None)
            self._peer.withdraw(request_id)
            await self._peer.send(
                encode_notification("$/cancel_request", {"requestId": request_id})
            )
            with contextlib.suppress(UsageError, ClaudeCodeError):
                await self.backend.answer_permission(
                    session.backend_id, pending_id, decision_for_option(None)
                )
        with contextlib.suppress(UsageError, ClaudeCodeError):
            await self.backend.interrupt(session.backend_id)
        self._peer.start_soon(self._cancel_guard, turn, name="acp cancel guard")

    async def _cancel_guard(self, turn: Turn) -> None:
        # If the CLI never ends the interrupted turn, the prompt still answers `cancelled`.
        await anyio.sleep(self._cancel_grace)
        turn.done.set()

    async def _pump(self, session: AcpSession) -> None:
        with anyio.CancelScope() as scope:
            session.scope = scope
            try:
                await self._follow(session)
            except Exception:
                # A bug in relaying this session must not end the agent's other sessions.
                _log.exception("acp.session_relay_failed", session_id=session.id)
                session.last_error = "internal error while relaying the session (see the log)"
        if session.turn is not None:
            session.turn.error = session.last_error or "the session ended"
            session.turn.done.set()
        if self.sessions.get(session.id) is session:  # not a later session of the same id
            del self.sessions[session.id]

    async def _follow(self, session: AcpSession) -> None:
        """Relay the session's events until it ends; through outages of the backend."""
        after = 0
        retry = _RETRY_FIRST
        while True:
            try:
                async with self.backend.subscribe(session.backend_id, after_seq=after) as events:
                    while True:
                        batch = await events.receive_batch()
                        after = batch[-1].seq
                        retry = _RETRY_FIRST
                        await self._on_events(session, batch)
            except SubscriberDropped as exc:
                after = exc.last_seq
                continue
            except BackendUnavailableError as exc:
                self._unavailable(session, exc)
                await anyio.sleep(retry)
                retry = min(retry * 2, _RETRY_MAX)
                continue
            except (anyio.EndOfStream, UnknownSessionError):
                pass
            return

    def _unavailable(self, session: AcpSession, exc: BackendUnavailableError) -> None:
        # The running prompt answers now (the outage may last); the session stays open.
        turn = session.turn
        if turn is not None and not turn.done.is_set():
            _log.warning("acp.backend_unavailable", session_id=session.id, error=str(exc))
            turn.failure = unavailable_error(exc)
            session.orphaned_turns += 1
            turn.done.set()

    async def _on_events(self, session: AcpSession, batch: list[Event]) -> None:
        updates: list[dict[str, Any]] = []
        ended: Complete | None = None
        # A question the policy settled at once comes with its resolution: nothing to ask.
        settled = {e.pending_id for e in batch if isinstance(e, PermissionResolved)}
        for event in batch:
            updates += session.translator.updates(event)
            if isinstance(event, PermissionRequest):
                await self.notify_updates(session.id, updates)
                updates = []
                await self._ask(session, event)
            elif isinstance(event, QuestionRequest) and event.pending_id not in settled:
                await self.notify_updates(session.id, updates)
                updates = []
                await self._ask_question(session, event)
            elif isinstance(event, PermissionCancelled | PermissionResolved):
                # Withdrawn, or settled by someone else (another client of the backend).
                request_id = session.asking.pop(event.pending_id, None)
                if request_id is not None:
                    self._peer.withdraw(request_id)
                    await self._peer.send(
                        encode_notification("$/cancel_request", {"requestId": request_id})
                    )
            elif isinstance(event, ModeChanged):
                session.mode = event.mode
            elif isinstance(event, AvailableCommands) and event.models:
                session.models = list(event.models)
                options = config_options(
                    model=session.model,
                    configured_model=session.configured_model,
                    models=session.models,
                    effort=session.effort,
                )
                updates.append({"sessionUpdate": "config_option_update", "configOptions": options})
            elif isinstance(event, ErrorEvent):
                session.last_error = event.message
            elif isinstance(event, Complete):
                if session.orphaned_turns:
                    session.orphaned_turns -= 1
                else:
                    ended = event
        await self.notify_updates(session.id, updates)
        turn = session.turn
        if ended is not None and turn is not None:
            turn.result = ended
            turn.error = session.last_error if ended.is_error else None
            session.last_error = None
            turn.done.set()

    async def _ask(self, session: AcpSession, event: PermissionRequest) -> None:
        if event.tool_name in session.rejected_tools:
            await self._answer(
                session, event, PermissionDecision("deny", "The user always rejects this tool.")
            )
            return
        params = permission_request_params(session.id, event, session.cwd or None)
        request_id, out = await self._peer.call("session/request_permission", params)
        session.asking[event.pending_id] = request_id
        self._peer.start_soon(
            self._await_answer, session, event, request_id, out, name="acp permission"
        )

    async def _await_answer(
        self, session: AcpSession, event: PermissionRequest, request_id: int, out: Outgoing
    ) -> None:
        await out.done.wait()
        if session.asking.pop(event.pending_id, None) is None:
            return  # withdrawn (the CLI cancelled it, or the turn was cancelled)
        option_id: str | None = None
        response = out.response
        if response is not None and response.error is None and isinstance(response.result, dict):
            outcome = response.result.get("outcome")
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
                selected = outcome.get("optionId")
                option_id = selected if isinstance(selected, str) else ""
        updated = event.input
        meta = (
            response.result.get("_meta") if response and isinstance(response.result, dict) else None
        )
        if isinstance(meta, dict):
            mine = meta.get("claudeCode")
            if isinstance(mine, dict) and isinstance(mine.get("updatedInput"), dict):
                updated = mine["updatedInput"]
        decision = decision_for_option(option_id, updated_input=updated)
        if option_id is None and (response is None or response.error is not None):
            decision = PermissionDecision("deny", "The editor could not answer the request.")
        elif option_id is None:
            # `cancelled`: the editor cancelled the turn (it should also send session/cancel;
            # either way the prompt answers `cancelled`).
            await self._answer(session, event, decision)
            await self.cancel(session)
            return
        if option_id == "reject_always":
            session.rejected_tools.add(event.tool_name)
        await self._answer(session, event, decision)

    async def _ask_question(self, session: AcpSession, event: QuestionRequest) -> None:
        if not self.elicitation_form:
            self._peer.start_soon(
                self._ask_by_permissions, session, event, name="acp question (permissions)"
            )
            return
        params = elicitation_params(session.id, event)
        request_id, out = await self._peer.call("elicitation/create", params)
        session.asking[event.pending_id] = request_id
        self._peer.start_soon(
            self._await_elicitation, session, event, out, name="acp question (elicitation)"
        )

    async def _await_elicitation(
        self, session: AcpSession, event: QuestionRequest, out: Outgoing
    ) -> None:
        await out.done.wait()
        if session.asking.pop(event.pending_id, None) is None:
            return  # withdrawn
        response = out.response
        if response is None or response.error is not None:
            await self._settle_question(session, event, ("decline", {}), "the editor failed")
            return
        await self._settle_question(session, event, answers_of_elicitation(event, response.result))

    async def _ask_by_permissions(self, session: AcpSession, event: QuestionRequest) -> None:
        answers: dict[str, list[str]] = {}
        for index, question in enumerate(event.questions):
            params = permission_params(session.id, event, index, session.cwd or None)
            request_id, out = await self._peer.call("session/request_permission", params)
            session.asking[event.pending_id] = request_id
            await out.done.wait()
            if session.asking.pop(event.pending_id, None) is None:
                return  # withdrawn
            response = out.response
            option_id: str | None = None
            if response is None or response.error is not None:
                await self._settle_question(session, event, ("decline", {}), "the editor failed")
                return
            result = response.result if isinstance(response.result, dict) else {}
            outcome = result.get("outcome")
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
                selected = outcome.get("optionId")
                option_id = selected if isinstance(selected, str) else ""
            kind, label = answers_of_permission(event, index, option_id)
            if kind != "answer":
                await self._settle_question(session, event, (kind, {}))
                return
            answers[question.question] = [label]
        await self._settle_question(session, event, ("answer", answers))

    async def _settle_question(
        self, session: AcpSession, event: QuestionRequest, outcome: Outcome, why: str = ""
    ) -> None:
        kind, answers = outcome
        backend, sid, pending = self.backend, session.backend_id, event.pending_id
        with contextlib.suppress(UnknownPermissionError, UsageError, ClaudeCodeError):
            if kind == "answer":
                try:
                    await backend.answer_question(sid, pending, answers)
                except InvalidAnswerError as exc:
                    await backend.decline_question(sid, pending, f"the editor's answer: {exc}")
                    return
                if event.tool_call_id:
                    await self.notify_updates(
                        session.id, session.translator.running(event.tool_call_id)
                    )
                return
            await backend.decline_question(sid, pending, why or None)
        if kind == "cancel":
            await self.cancel(session)

    async def _answer(
        self, session: AcpSession, event: PermissionRequest, decision: PermissionDecision
    ) -> None:
        with contextlib.suppress(UnknownPermissionError, UsageError, ClaudeCodeError):
            await self.backend.answer_permission(session.backend_id, event.pending_id, decision)
            if decision.behavior != "deny" and event.tool_call_id:
                await self.notify_updates(
                    session.id, session.translator.running(event.tool_call_id)
                )
