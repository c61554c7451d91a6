"""The requests a session asks a person or its policy about, permissions and questions alike:
opening them, the answers, and what their end looks like (:class:`PendingRequests`, a base of
:class:`~adapter.session.AgentSession`).

The open requests themselves and their time limit are :class:`claudecode.Session`'s: it keeps
every ``can_use_tool`` request until it is answered, withdrawn by the CLI or timed out
(``permission_timeout``, which it enforces and reports through ``on_permission_timeout``).
What is this module's own is who answers each one: the ids a person must answer
(``_asked``, the events' ``pending_id``), the ones a ``custom`` policy is still deciding
(``_deciding``), and which of them are questions (``_questions``, an ``AskUserQuestion``
request, answered with :meth:`PendingRequests.answer_question` /
:meth:`PendingRequests.decline_question`). Each answer is published as one
``permission_resolved`` before it goes to the CLI; a timeout as one ``permission_cancelled``
before the CLI reads the denial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio

from claudecode import CanUseToolRequest, InboundControlRequest, Session
from claudecode.internal import get_logger

from . import _plain as plain
from .config import SessionConfig
from .errors import InvalidAnswerError, UnknownPermissionError
from .events import (
    Event,
    PermissionCancelled,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
)
from .policies import PermissionDecision, policy_decision
from .questions import (
    AUTONOMOUS_DECLINE,
    Settlement,
    answer,
    as_question_answer,
    check_answers,
    decline,
    decline_message,
)

__all__ = ("PendingRequests",)

_log = get_logger("claudecode.adapter.session")


class PendingRequests:
    """The open requests of a session (see the module); the session provides the rest."""

    config: SessionConfig
    id: str
    _client: Session | None
    #: Ids asked of a person, in the order they were asked (published): a dict for its order.
    _asked: dict[str, None]
    _deciding: dict[str, anyio.CancelScope]
    _questions: dict[str, QuestionRequest]

    def _spawn(self, fn: Any, *args: Any) -> anyio.CancelScope:
        raise NotImplementedError

    def _publish(self, events: Sequence[Event]) -> None:
        raise NotImplementedError

    async def _respond(self, req: InboundControlRequest, decision: PermissionDecision) -> None:
        raise NotImplementedError

    def _open_request(self, request_id: str) -> InboundControlRequest | None:
        client = self._client
        return None if client is None else client.open_permission_request(request_id)

    def _question(self, req: InboundControlRequest, event: PermissionRequest) -> list[Event]:
        question = plain.question_event(event)
        if question is None:  # nothing a person could answer: the model learns why
            no_question = PermissionDecision(
                "deny", "AskUserQuestion called with no valid questions."
            )
            self._spawn(self._respond, req, no_question)
            return []
        policy = self.config.policy
        if policy.name == "autonomous":
            # Published (asked, then declined) so that a UI shows what the model wanted to know.
            decision, resolved = decline(question, AUTONOMOUS_DECLINE, AUTONOMOUS_DECLINE, "policy")
            self._spawn(self._respond, req, decision)
            return [question, resolved]
        if policy.name == "custom":
            self._ask_policy(req, event, question)
            return []
        self._questions[req.request_id] = question
        return self._ask_person(req, question)

    def _ask_person(
        self, req: InboundControlRequest, event: PermissionRequest | QuestionRequest
    ) -> list[Event]:
        self._asked[req.request_id] = None
        return [event]

    def _ask_policy(
        self,
        req: InboundControlRequest,
        event: PermissionRequest,
        question: QuestionRequest | None = None,
    ) -> None:
        self._deciding[req.request_id] = self._spawn(self._ask_custom, req, event, question)

    async def _ask_custom(
        self,
        req: InboundControlRequest,
        event: PermissionRequest,
        question: QuestionRequest | None = None,
    ) -> None:
        # No clock of its own: permission_timeout (the client's) bounds the whole request,
        # the policy's time included, and stops this task when it runs out.
        try:
            try:
                decision = await policy_decision(self.config.policy, event)
            except Exception as exc:
                _log.warning("adapter.policy_failed", session_id=self.id, error=repr(exc))
                decision = PermissionDecision("deny", f"permission policy failed: {exc}")
        finally:
            self._deciding.pop(req.request_id, None)
        if self._open_request(req.request_id) is None:
            return  # the CLI withdrew it meanwhile: nothing to answer, nothing to show
        if question is not None and decision is not None:
            # A policy answers or declines a question; an allow without answers leaves it
            # to a person (see adapter.policies).
            settled = as_question_answer(question, event.input, decision, "policy")
            decision = None if settled is None else settled[0]
            if settled is not None:
                self._publish([question, settled[1]])
        if decision is None:
            if question is not None:
                self._questions[req.request_id] = question
            self._publish(self._ask_person(req, question or event))
        else:
            await self._respond(req, decision)

    def _timed_out(self, req: InboundControlRequest) -> None:
        """The client's ``on_permission_timeout``: it denies ``req`` right after this."""
        pending_id = req.request_id
        deciding = self._deciding.pop(pending_id, None)
        if deciding is not None:
            deciding.cancel()
            body = req.request
            _log.warning(
                "adapter.policy_timeout",
                session_id=self.id,
                pending_id=pending_id,
                tool=body.tool_name if isinstance(body, CanUseToolRequest) else "",
                timeout=None if self._client is None else self._client.options.permission_timeout,
            )
        elif self._cancel_pending(pending_id, "timeout"):
            _log.info("adapter.permission_timeout", session_id=self.id, pending_id=pending_id)

    def _withdrawn(self, pending_id: str) -> None:
        """The CLI cancelled the request (its ``permission_cancelled`` comes from the
        translator, in order with the rest of the batch)."""
        self._asked.pop(pending_id, None)
        self._questions.pop(pending_id, None)
        deciding = self._deciding.pop(pending_id, None)
        if deciding is not None:
            deciding.cancel()

    def _cancel_pending(
        self, pending_id: str, reason: Literal["timeout", "session_closed"]
    ) -> bool:
        """Stop asking a person about ``pending_id`` and say so; False when nobody was."""
        if pending_id not in self._asked:
            return False
        self._asked.pop(pending_id, None)
        self._questions.pop(pending_id, None)
        self._publish([PermissionCancelled(pending_id=pending_id, reason=reason)])
        return True

    @property
    def pending_permissions(self) -> list[str]:
        """Ids of the permission requests (questions too) waiting for a person's answer, in
        the order they were asked of a person: the order of their events in the session's
        history. (A request a ``custom`` policy deferred is asked when the policy gives up,
        after later requests it let through to a person at once.)"""
        client = self._client
        if client is None or not self._asked:
            return []
        return [rid for rid in self._asked if client.open_permission_request(rid) is not None]

    @property
    def pending_questions(self) -> list[str]:
        """Ids of the open requests that are questions (a subset of
        :attr:`pending_permissions`)."""
        return list(self._questions)

    async def answer_permission(self, pending_id: str, decision: PermissionDecision) -> None:
        """Answer an open :class:`~adapter.events.PermissionRequest`.

        An open question (:class:`~adapter.events.QuestionRequest`) may be answered here too:
        ``deny`` declines it, ``allow`` with ``updated_input={"answers": {...}}`` answers it
        (as :meth:`answer_question` does, unchecked).

        Raises:
            UnknownPermissionError: no such request is open (answered, cancelled, expired).
            InvalidAnswerError: an ``allow`` without answers for a question.
        """
        question = self._questions.get(pending_id)
        settled: Settlement | None
        if question is None:
            message = decision.message if decision.behavior == "deny" else None
            resolved = PermissionResolved(
                pending_id=pending_id, decision=decision.behavior, by="user", message=message
            )
            settled = (decision, resolved)
        else:
            settled = as_question_answer(question, self._input_of(pending_id), decision, "user")
            if settled is None:
                raise InvalidAnswerError(
                    f"{pending_id!r} is a question: answer it with answers (answer_question)"
                )
        await self._settle(pending_id, settled)

    async def answer_question(self, pending_id: str, answers: Mapping[str, Sequence[str]]) -> None:
        """Answer an open :class:`~adapter.events.QuestionRequest`: ``{question text: [labels]}``
        (a label not among the options is a free-text answer; an empty list skips a question).

        Raises:
            UnknownPermissionError: no such question is open.
            InvalidAnswerError: the answers do not fit the questions.
        """
        question = self._questions.get(pending_id)
        if question is None:
            raise UnknownPermissionError(f"no open question {pending_id!r}")
        checked = check_answers(question, answers)
        await self._settle(
            pending_id, answer(question, self._input_of(pending_id), checked, "user")
        )

    async def decline_question(self, pending_id: str, message: str | None = None) -> None:
        """Decline an open question: the model reads that the user would not answer (and
        ``message`` when given) and goes on.

        Raises:
            UnknownPermissionError: no such question is open.
        """
        question = self._questions.get(pending_id)
        if question is None:
            raise UnknownPermissionError(f"no open question {pending_id!r}")
        await self._settle(pending_id, decline(question, decline_message(message), message, "user"))

    def _input_of(self, pending_id: str) -> dict[str, Any]:
        req = self._open_request(pending_id)
        body = req.request if req is not None else None
        return body.input if isinstance(body, CanUseToolRequest) else {}

    async def _settle(self, pending_id: str, settled: Settlement) -> None:
        decision, resolved = settled
        req = self._open_request(pending_id) if pending_id in self._asked else None
        if req is None:
            raise UnknownPermissionError(f"no open permission request {pending_id!r}")
        self._asked.pop(pending_id, None)
        self._questions.pop(pending_id, None)
        # Published, then answered, with no wait in between: the client cannot time the
        # request out in the middle (its timer runs only when this task waits).
        self._publish([resolved])
        await self._respond(req, decision)
