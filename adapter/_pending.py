"""The requests a session holds open, permissions and questions alike: opening them (by the
policy, or for a person), their time limit, and the answers (:class:`PendingRequests`, a base
of :class:`~adapter.session.AgentSession`).

Every ``can_use_tool`` request of the CLI that a person must answer is kept by its request id
(the events' ``pending_id``) until it is answered, withdrawn by the CLI, timed out or the
session closes; an ``AskUserQuestion`` request is a question as well (``_questions``), answered
with :meth:`PendingRequests.answer_question` / :meth:`PendingRequests.decline_question`. Each
answer is published as one ``permission_resolved`` before it goes to the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio

from claudecode import CanUseToolRequest, InboundControlRequest
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
    _pending: dict[str, InboundControlRequest]
    _questions: dict[str, QuestionRequest]
    _timers: dict[str, anyio.CancelScope]

    def _spawn(self, fn: Any, *args: Any) -> anyio.CancelScope:
        raise NotImplementedError

    def _publish(self, events: Sequence[Event]) -> None:
        raise NotImplementedError

    async def _respond(self, req: InboundControlRequest, decision: PermissionDecision) -> None:
        raise NotImplementedError

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
            self._spawn(self._ask_custom, req, event, question)
            return []
        self._questions[req.request_id] = question
        return self._open_pending(req, question)

    def _open_pending(
        self,
        req: InboundControlRequest,
        event: PermissionRequest | QuestionRequest,
        timeout: float | None = None,
    ) -> list[Event]:
        self._pending[req.request_id] = req
        if timeout is None:
            timeout = self.config.permission_timeout
        if timeout is not None:
            self._timers[req.request_id] = self._spawn(self._expire, req.request_id, timeout)
        return [event]

    async def _ask_custom(
        self,
        req: InboundControlRequest,
        event: PermissionRequest,
        question: QuestionRequest | None = None,
    ) -> None:
        # permission_timeout bounds the whole request: the policy's own time counts, and a
        # policy that never returns is answered with a denial.
        timeout = self.config.permission_timeout
        deadline = None if timeout is None else anyio.current_time() + timeout
        decision: PermissionDecision | None = None
        with anyio.move_on_after(timeout if timeout is not None else math.inf) as scope:
            try:
                decision = await policy_decision(self.config.policy, event)
            except Exception as exc:
                _log.warning("adapter.policy_failed", session_id=self.id, error=repr(exc))
                decision = PermissionDecision("deny", f"permission policy failed: {exc}")
        if scope.cancelled_caught:
            _log.warning(
                "adapter.policy_timeout",
                session_id=self.id,
                pending_id=req.request_id,
                tool=event.tool_name,
                timeout=timeout,
            )
            decision = PermissionDecision(
                "deny", "the permission policy did not decide in time", interrupt=True
            )
        if question is not None and decision is not None:
            # A policy answers or declines a question; an allow without answers leaves it
            # to a person (see adapter.policies).
            settled = as_question_answer(question, event.input, decision, "policy")
            decision = None if settled is None else settled[0]
            if settled is not None:
                self._publish([question, settled[1]])
        if decision is None:
            left = None if deadline is None else max(0.0, deadline - anyio.current_time())
            if question is not None:
                self._questions[req.request_id] = question
            self._publish(self._open_pending(req, question or event, left))
        else:
            await self._respond(req, decision)

    async def _expire(self, pending_id: str, timeout: float) -> None:
        await anyio.sleep(timeout)
        asked = pending_id in self._questions
        req = self._cancel_pending(pending_id, "timeout")
        if req is not None:
            _log.info("adapter.permission_timeout", session_id=self.id, pending_id=pending_id)
            what = "question" if asked else "permission request"
            await self._respond(
                req, PermissionDecision("deny", f"no answer to the {what} in time", interrupt=True)
            )

    def _cancel_pending(
        self, pending_id: str, reason: Literal["timeout", "session_closed"]
    ) -> InboundControlRequest | None:
        req = self._pending.pop(pending_id, None)
        self._questions.pop(pending_id, None)
        timer = self._timers.pop(pending_id, None)
        if timer is not None and reason != "timeout":
            timer.cancel()
        if req is not None:
            self._publish([PermissionCancelled(pending_id=pending_id, reason=reason)])
        return req

    @property
    def pending_permissions(self) -> list[str]:
        """Ids of the permission requests (questions too) waiting for an answer."""
        return list(self._pending)

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
        req = self._pending.get(pending_id)
        body = req.request if req is not None else None
        return body.input if isinstance(body, CanUseToolRequest) else {}

    async def _settle(self, pending_id: str, settled: Settlement) -> None:
        decision, resolved = settled
        req = self._pending.pop(pending_id, None)
        if req is None:
            raise UnknownPermissionError(f"no open permission request {pending_id!r}")
        self._questions.pop(pending_id, None)
        timer = self._timers.pop(pending_id, None)
        if timer is not None:
            timer.cancel()
        self._publish([resolved])
        await self._respond(req, decision)
