"""The writing half of a :class:`~claudecode.session.Session` (a mixin): prompts, any outbound
message, answers to the CLI's control requests and our own control requests, one writer at a
time, each write bounded where the CLI may have stopped reading its input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from . import control as ctl
from ._log import get_logger
from .errors import (
    ClaudeCodeError,
    CLIExitedError,
    ControlRequestError,
    ControlTimeoutError,
    SessionClosedError,
)
from .options import ClaudeCodeOptions
from .protocol import ClaudeCodeProtocol, PendingRequest
from .transport import Transport

__all__ = ("SessionWriter",)

_log = get_logger("claudecode.session")


class SessionWriter:
    """Writing to the CLI's stdin, and waiting for its exit (a ``Session`` mixin)."""

    options: ClaudeCodeOptions
    exit_code: int | None
    _protocol: ClaudeCodeProtocol
    _transport: Transport | None
    _write_lock: anyio.Lock
    _handlers: dict[str, anyio.CancelScope]
    _first_write: anyio.Event
    _exited: anyio.Event
    _failure: ClaudeCodeError | None
    _closed: bool
    _prompts_unanswered: int

    if TYPE_CHECKING:  # the Session and its other mixins provide these

        @property
        def transport(self) -> Transport: ...

        def _stop_permission_timer(self, request_id: str) -> None: ...

    async def _write(
        self, data: bytes, *, timeout: float | None = None, what: str = "write"
    ) -> None:
        """Write ``data`` to the CLI's stdin, one writer at a time.

        With ``timeout``, waiting for the other writers and the write itself are bounded:
        :class:`ControlTimeoutError` when it runs out. A write cut off in the middle leaves
        the CLI's input holding part of a line, so the session ends then (the CLI, which has
        not read its input for that long, is killed and the reason reported).
        """
        if not data:
            return
        if self._closed:
            raise SessionClosedError("the session is closed")
        if self._exited.is_set():
            raise self._exit_error()
        sending = False
        limit = timeout if timeout is not None and timeout > 0 else math.inf
        try:
            with anyio.move_on_after(limit) as scope:
                async with self._write_lock:
                    sending = True
                    await self.transport.send(data)
                    sending = False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            with anyio.move_on_after(self.options.close_grace + self.options.kill_after + 2):
                await self._exited.wait()
            raise self._exit_error() from exc
        if scope.cancelled_caught:
            assert timeout is not None
            if sending:
                await self._input_stuck(timeout)
            _log.warning("write.timed_out", what=what, timeout=timeout, cut_off=sending)
            raise ControlTimeoutError(
                what, timeout, f"the CLI did not take our {what} within {timeout:g} s"
            )
        self._first_write.set()

    async def _input_stuck(self, timeout: float) -> None:
        if self._failure is None:
            self._failure = CLIExitedError(
                f"the CLI did not read its input for {timeout:g} s (a write was cut off); "
                "it was stopped",
                None,
                self._transport_tail(),
            )
        with anyio.CancelScope(shield=True):
            await self.transport.aclose(force=True)

    def _exit_error(self) -> ClaudeCodeError:
        if self._failure is not None:
            return self._failure
        return CLIExitedError(
            "the Claude Code CLI has exited", self.exit_code, self._transport_tail()
        )

    def _transport_tail(self) -> str:
        return self._transport.stderr_tail if self._transport is not None else ""

    async def send(
        self,
        prompt: str | Sequence[Mapping[str, Any] | Any],
        *,
        uuid: str | None = None,
        parent_tool_use_id: str | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> None:
        """Send a user message: text, or a list of content blocks (text, image, ...).

        ``origin`` (``{"kind": "human"}``) tells the CLI where the prompt comes from; it is
        handed back on the turn's result.

        Raises:
            SessionClosedError: the session was closed.
            CLIExitedError: the CLI is gone.
        """
        message = ctl.user_message(
            prompt,
            uuid=uuid,
            parent_tool_use_id=parent_tool_use_id,
            client_composed=self.options.verbatim_prompts,
            origin=origin,
        )
        await self.send_message(message)

    async def send_message(self, message: ctl.OutboundMessage) -> None:
        """Write any outbound message as it is (``keep_alive``,
        ``update_environment_variables``, a hand-built ``user`` message...).

        Control requests should go through :meth:`request` (which waits for the answer) and
        control responses through :meth:`respond`; both are checked here the same way.
        """
        data = self._protocol.send(message)
        if not isinstance(message, ctl.UserInput):
            await self._write(data)
            return
        # Counted before the write: the result may be read before the write returns.
        self._prompts_unanswered += 1
        try:
            await self._write(data)
        except BaseException:
            self._prompts_unanswered -= 1
            raise

    async def respond(self, response: ctl.OutboundControlResponse) -> None:
        """Send the answer to a control request the CLI made (see the request's helpers).

        An answer to a request the CLI has cancelled meanwhile, or that ``permission_timeout``
        answered already, is dropped silently.

        Raises:
            UsageError: the response answers no open request.
            ControlTimeoutError: the CLI did not take the answer within ``control_timeout``
                (it stopped reading its input).
        """
        request_id = response.response.request_id
        scope = self._handlers.get(request_id)
        data = self._protocol.send(response)
        self._stop_permission_timer(request_id)
        if scope is not None and not data:
            return
        await self._write(data, timeout=self.options.control_timeout, what="control_response")

    async def request(self, body: Any, *, timeout: float | None = None) -> dict[str, Any] | None:
        """Send a control request body and return the CLI's success body.

        Raises:
            ControlTimeoutError: no answer within ``timeout`` (default ``control_timeout``),
                which also bounds writing the request: a CLI that does not read its input
                cannot hold it (or the answers to its permission requests) forever.
            ControlRequestError: the CLI answered with an error.
            CLIExitedError: the CLI exited before answering.
        """
        if self._exited.is_set():
            raise self._exit_error()
        pending, data = self._protocol.start_request(body)
        done = anyio.Event()
        pending.on_done = done.set
        limit = self.options.control_timeout if timeout is None else timeout
        # One bound for the write (the CLI may not be reading its input) and the answer.
        deadline = anyio.current_time() + (limit if limit > 0 else math.inf)
        try:
            await self._write(data, timeout=limit if limit > 0 else None, what=pending.subtype)
        except BaseException:
            self._protocol.abandon_request(pending)
            raise
        with anyio.move_on_after(deadline - anyio.current_time()):
            await done.wait()
        return await self._outcome(pending, limit)

    async def _outcome(self, pending: PendingRequest, limit: float) -> dict[str, Any] | None:
        if not pending.done:
            self._protocol.abandon_request(pending)
            raise ControlTimeoutError(pending.subtype, limit)
        if pending.exited:
            with anyio.move_on_after(self.options.close_grace + self.options.kill_after + 2):
                await self._exited.wait()
            raise self._exit_error()
        if pending.failure is not None:
            raise ControlRequestError(
                pending.subtype, pending.failure.error, pending.failure.error_code
            )
        return pending.result

    async def wait_exit(self) -> int | None:
        """Wait until the CLI's output ended and it exited; return its exit code."""
        await self._exited.wait()
        return self.exit_code
