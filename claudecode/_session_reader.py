"""The reading half of a :class:`~claudecode.session.Session` (a mixin): the reader task
and the consumer's side.

One reader task turns stdout bytes into messages through the sans-IO
:class:`~claudecode.protocol.ClaudeCodeProtocol`:

* control responses wake the waiting request (``await session.interrupt()`` etc.);
* control requests from the CLI go to their callback (:mod:`claudecode._session_inbound`),
  a ``control_cancel_request`` cancels that callback's task; a permission request with no
  callback is delivered as a message;
* everything else goes, one batch per read, into a bounded channel. When the consumer falls
  ``message_buffer`` batches behind, the reader stops reading and the CLI blocks on its
  stdout: back-pressure, and nothing unbounded.

When the output ends, the reader waits for the CLI's exit and records why it ended; the
consumer's side (:meth:`SessionReader.messages` and friends) raises that reason after the
last message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._log import get_logger
from .errors import ClaudeCodeError, CLIExitedError, CLIStartError
from .messages import (
    ControlCancelRequest,
    InboundControlRequest,
    InboundMessage,
    MalformedLine,
    ResultMessage,
    SystemInit,
    UnknownMessage,
)
from .options import ClaudeCodeOptions
from .protocol import ClaudeCodeProtocol
from .transport import Transport

__all__ = ("SessionReader",)

_log = get_logger("claudecode.session")


#: Messages the reader looks at before passing them on.
_ROUTED = frozenset(
    {InboundControlRequest, ControlCancelRequest, SystemInit, ResultMessage, UnknownMessage}
)


class SessionReader:
    """The reader task and the consumer's side of a session (a ``Session`` mixin)."""

    options: ClaudeCodeOptions
    exit_code: int | None
    session_id: str | None
    _protocol: ClaudeCodeProtocol
    _send_stream: MemoryObjectSendStream[list[InboundMessage]]
    _recv_stream: MemoryObjectReceiveStream[list[InboundMessage]]
    _on_messages: Callable[[list[InboundMessage]], None] | None
    _batch: list[InboundMessage]
    _batch_pos: int
    _handlers: dict[str, anyio.CancelScope]
    _first_write: anyio.Event
    _got_output: anyio.Event
    _exited: anyio.Event
    _failure: ClaudeCodeError | None
    _closing: bool
    _prompts_unanswered: int
    _cli_turn_open: bool

    if TYPE_CHECKING:  # the Session and its other mixins provide these

        @property
        def transport(self) -> Transport: ...

        def _dispatch(self, req: InboundControlRequest) -> bool: ...

        def _refuse_unknown_request(self, message: UnknownMessage) -> None: ...

        def _stop_permission_timer(self, request_id: str) -> None: ...

    async def _reader(self) -> None:
        transport = self.transport
        protocol = self._protocol
        send = self._send_stream
        sink = self._on_messages
        try:
            while True:
                data = await transport.receive()
                if data and not self._got_output.is_set():
                    self._got_output.set()
                messages = protocol.receive_data(data)
                batch = self._route(messages) if messages else messages
                if batch and sink is None:
                    await send.send(batch)  # yields to the consumer (a checkpoint)
                else:
                    if batch and sink is not None:
                        sink(batch)
                    # Once per read: the transport returns at once while the CLI's output
                    # keeps coming, and a CLI writing without pause must not starve others.
                    await anyio.lowlevel.checkpoint()
                if not data:
                    break
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the consumer went away; shutting down below
        except Exception as exc:  # never leave waiters hanging on a reader crash
            _log.error("reader.crashed", error=repr(exc))
            if self._failure is None:
                self._failure = CLIExitedError(f"reading the CLI's output failed: {exc!r}", None)
            with anyio.CancelScope(shield=True):
                await transport.aclose(force=True)
            if not protocol.at_eof:
                protocol.receive_data(b"")
        finally:
            with anyio.CancelScope(shield=True):
                await self._on_eof(transport)
                send.close()

    async def _on_eof(self, transport: Transport) -> None:
        code: int | None = None
        with anyio.move_on_after(self.options.close_grace + self.options.kill_after + 1) as scope:
            code = await transport.wait()
        if scope.cancelled_caught:
            await transport.aclose(force=True)
            code = transport.returncode
        self.exit_code = code
        if self._failure is None and not self._closing and code not in (0, None):
            self._failure = CLIExitedError(
                f"the Claude Code CLI exited unexpectedly with code {code}",
                code,
                transport.stderr_tail,
            )
        elif self._failure is None and not self._closing and self.turn_open:
            # Exit code 0, but a turn had begun and never got its result: that is no
            # success, whatever the code says.
            self._failure = CLIExitedError(
                "the Claude Code CLI exited in the middle of a turn (before its result)",
                code,
                transport.stderr_tail,
            )
        self._exited.set()
        _log.debug("cli.exited", returncode=code, closing=self._closing)

    def _route(self, messages: list[InboundMessage]) -> list[InboundMessage]:
        """Start handlers for control requests; return what goes to the consumer."""
        if _ROUTED.isdisjoint(map(type, messages)):  # one C-level pass, no generator
            return messages  # the common batch: deltas and other plain messages
        out: list[InboundMessage] = []
        for message in messages:
            kind = message.__class__
            if kind is InboundControlRequest:
                assert isinstance(message, InboundControlRequest)
                if not self._dispatch(message):
                    out.append(message)
                continue
            if kind is ControlCancelRequest:
                assert isinstance(message, ControlCancelRequest)
                scope = self._handlers.pop(message.request_id, None)
                if scope is not None:
                    scope.cancel()
                self._stop_permission_timer(message.request_id)
            elif kind is SystemInit or kind is ResultMessage:
                assert isinstance(message, SystemInit | ResultMessage)
                self.session_id = message.session_id or self.session_id
                self._count_turn(message)
            elif kind is UnknownMessage:
                assert isinstance(message, UnknownMessage)
                if message.type == "control_request":
                    self._refuse_unknown_request(message)
            out.append(message)
        return out

    def _count_turn(self, message: SystemInit | ResultMessage) -> None:
        if isinstance(message, SystemInit):
            self._cli_turn_open = True  # the CLI began a turn (ours, or one of its own)
            return
        self._cli_turn_open = False
        origin = message.origin or {}
        if origin.get("kind") != "task-notification" and self._prompts_unanswered:
            self._prompts_unanswered -= 1

    @property
    def turn_open(self) -> bool:
        """True while a turn is under way: a prompt we sent has no result yet, or the CLI
        began a turn (``system/init``) that has not ended."""
        return self._prompts_unanswered > 0 or self._cli_turn_open

    async def _watchdog(self) -> None:
        await self._first_write.wait()
        with anyio.move_on_after(self.options.spawn_timeout):
            await self._got_output.wait()
            return
        if self._exited.is_set() or self._closing:
            return
        tail = self.transport.stderr_tail
        self._failure = CLIStartError(
            f"the CLI wrote nothing within {self.options.spawn_timeout:g} s of its first input",
            tail,
        )
        _log.warning("cli.watchdog_fired", timeout=self.options.spawn_timeout)
        await self.transport.aclose(force=True)

    # -- the consumer's side -----------------------------------------------------------

    def messages(self) -> AsyncIterator[InboundMessage]:
        """Iterate over every message from the CLI, in order, until its output ends.

        Ends quietly when the CLI exits cleanly between turns or the session is closed;
        raises the reason (:class:`CLIExitedError`, :class:`CLIStartError`) after the last
        message otherwise — also when the CLI exits with code 0 in the middle of a turn
        (after a prompt, before its result): ``CLIExitedError`` with ``exit_code`` 0.
        """
        return _MessageIterator(self)

    async def receive_batch(self) -> list[InboundMessage]:
        """The next batch of messages (those one read of stdout produced).

        For consumers that want to skip per-message scheduling. Raises ``anyio.EndOfStream``
        at the clean end, or the failure (see :meth:`messages`).
        """
        if self._batch_pos < len(self._batch):
            rest = self._batch[self._batch_pos :]
            self._batch, self._batch_pos = [], 0
            return rest
        try:
            return await self._recv_stream.receive()
        except anyio.EndOfStream:
            if self._failure is not None:
                raise self._failure from None
            raise

    async def receive_response(self) -> AsyncIterator[InboundMessage]:
        """Messages up to and including the next :class:`ResultMessage` (one turn).

        A result line with fields of the wrong type still arrives as a ``ResultMessage``
        (decoded leniently, see ``message.lenient``). One that cannot be read at all (cut off,
        longer than ``max_line_bytes``) arrives as a :class:`MalformedLine` whose
        ``type_hint`` is ``"result"``, and ends the turn just the same:
        a turn never waits for a result that already came.
        """
        async for message in self.messages():
            yield message
            kind = type(message)
            if kind is ResultMessage:
                return
            if kind is MalformedLine and message.type_hint == "result":  # type: ignore[union-attr]
                return

    async def _next_message(self) -> InboundMessage:
        if self._batch_pos >= len(self._batch):
            try:
                self._batch = await self._recv_stream.receive()
            except anyio.EndOfStream:
                if self._failure is not None:
                    raise self._failure from None
                raise StopAsyncIteration from None
            self._batch_pos = 0
        message = self._batch[self._batch_pos]
        self._batch_pos += 1
        return message


class _MessageIterator:
    __slots__ = ("_session",)

    def __init__(self, session: SessionReader) -> None:
        self._session = session

    def __aiter__(self) -> _MessageIterator:
        return self

    async def __anext__(self) -> InboundMessage:
        return await self._session._next_message()
