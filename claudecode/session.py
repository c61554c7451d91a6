"""The async session: one CLI process, its reader task, and the control plane around it.

``async with Session(options) as session:`` spawns the CLI, starts the reader, sends
``initialize`` (unless switched off) and hands back a session that sends prompts, streams
typed messages and runs control requests. The task group lives in the ``async with`` — never
in an async generator — so leaving the block early, by ``break``, exception or cancellation,
always ends the process and reaps it.

One reader task turns stdout bytes into messages through the sans-IO
:class:`~claudecode.protocol.ClaudeCodeProtocol`:

* control responses wake the waiting request (``await session.interrupt()`` etc.);
* control requests from the CLI run their callback (``can_use_tool``, hooks, in-process MCP
  servers) in their own task, so a slow approval never blocks the stream; a
  ``control_cancel_request`` cancels that task; a permission request with no callback is
  delivered as a message and answered with :meth:`Session.respond`;
* everything else goes, one batch per read, into a bounded channel. When the consumer falls
  ``message_buffer`` batches behind, the reader stops reading and the CLI blocks on its
  stdout: back-pressure, and nothing unbounded.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from . import control as ctl
from ._discovery import find_cli
from ._log import get_logger
from ._private_args import PrivateArgFiles
from ._session_inbound import InboundControl
from ._tasks import TaskSet
from ._telemetry import trace_env
from .callbacks import CanUseTool, HookCallback, HookMatcher
from .errors import (
    ClaudeCodeError,
    CLIExitedError,
    CLIStartError,
    ControlRequestError,
    ControlTimeoutError,
    SessionClosedError,
    UsageError,
)
from .mcp import SdkMcpServer
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
from .protocol import ClaudeCodeProtocol, PendingRequest
from .session_control import ControlRequests
from .transport import SubprocessTransport, Transport

__all__ = ("Session", "open_session")

_log = get_logger("claudecode.session")


#: Messages the reader looks at before passing them on.
_ROUTED = frozenset(
    {InboundControlRequest, ControlCancelRequest, SystemInit, ResultMessage, UnknownMessage}
)


class Session(InboundControl, ControlRequests):
    """A running Claude Code CLI and the stream-json conversation with it.

    Args:
        options: what to run and how (:class:`ClaudeCodeOptions`); defaults work.
        can_use_tool: answers permission requests (sent over stdio). Without it the CLI
            decides by its permission mode and denies what would need a prompt, unless
            ``options.permission_prompt_tool_name="stdio"``: then the requests arrive as
            messages (:class:`InboundControlRequest`) to answer with :meth:`respond`.
        hooks: ``{"PreToolUse": [HookMatcher("Bash", [callback])], ...}``, registered at
            ``initialize``.
        mcp_servers: in-process MCP servers, declared to the CLI and answered here.
        transport: a ready transport (tests, remote CLIs); by default the CLI is spawned as a
            subprocess from ``options``.
        on_messages: called in the reader task with each batch of messages *instead of*
            queuing them for :meth:`messages` — for consumers that process messages
            synchronously and want no extra task hop. It must not block or raise. The end
            of the stream is still reported by :meth:`receive_batch` / :meth:`messages`.
    """

    def __init__(
        self,
        options: ClaudeCodeOptions | None = None,
        *,
        can_use_tool: CanUseTool | None = None,
        hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
        mcp_servers: Sequence[SdkMcpServer] = (),
        transport: Transport | None = None,
        on_messages: Callable[[list[InboundMessage]], None] | None = None,
    ) -> None:
        self.options = options or ClaudeCodeOptions()
        # Fails early (UsageError) when a callback and a non-stdio prompt tool are both given.
        self.options.prompt_tool(has_callback=can_use_tool is not None)
        self._on_messages = on_messages
        self._can_use_tool = can_use_tool
        self._hook_config: dict[str, list[dict[str, Any]]] = {}
        self._hook_callbacks: dict[str, HookCallback] = {}
        self._hook_timeouts: dict[str, float | None] = {}
        for event, matchers in (hooks or {}).items():
            entries = self._hook_config.setdefault(event, [])
            for matcher in matchers:
                ids = []
                for callback in matcher.callbacks:
                    callback_id = f"hook_{len(self._hook_callbacks)}"
                    self._hook_callbacks[callback_id] = callback
                    self._hook_timeouts[callback_id] = matcher.timeout
                    ids.append(callback_id)
                entry: dict[str, Any] = {"matcher": matcher.matcher, "hookCallbackIds": ids}
                if matcher.timeout is not None:
                    entry["timeout"] = matcher.timeout
                if matcher.on_failure is not None:
                    entry["onFailure"] = matcher.on_failure
                entries.append(entry)
        self._mcp_servers = {server.name: server for server in mcp_servers}
        self._transport = transport
        self._protocol = ClaudeCodeProtocol(max_line_bytes=self.options.max_line_bytes)
        self._send_stream: MemoryObjectSendStream[list[InboundMessage]]
        self._recv_stream: MemoryObjectReceiveStream[list[InboundMessage]]
        self._send_stream, self._recv_stream = anyio.create_memory_object_stream[
            list[InboundMessage]
        ](self.options.message_buffer)
        self._batch: list[InboundMessage] = []
        self._batch_pos = 0
        self._write_lock = anyio.Lock()
        self._handlers: dict[str, anyio.CancelScope] = {}
        self._stack: contextlib.AsyncExitStack | None = None
        self._tasks: TaskSet | None = None
        self._first_write = anyio.Event()
        self._got_output = anyio.Event()
        self._exited = anyio.Event()
        self._failure: ClaudeCodeError | None = None
        self._closing = False
        self._closed = False
        self._prompts_unanswered = 0
        self._arg_files = PrivateArgFiles()
        self._cli_turn_open = False
        self._started = False
        self.exit_code: int | None = None
        self.session_id: str | None = None
        self.initialize_result: ctl.InitializeResult | None = None

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._started:
            raise UsageError("a Session can be entered only once")
        self._started = True
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._transport is None:
                self._transport = self._build_transport()
            tg = await stack.enter_async_context(anyio.create_task_group())
            self._stack = stack
            await self._transport.start(tg)
            self._tasks = TaskSet(tg)
            self._tasks.spawn(self._reader, name="claudecode reader")
            self._tasks.spawn(self._watchdog, name="claudecode spawn watchdog")
            if self.options.initialize:
                await self.initialize()
        except BaseException:
            await self._shutdown(force=True)
            self._stack = None
            try:
                # Our tasks end cleanly once cancelled; exiting without the exception keeps
                # the task group from wrapping it in an ExceptionGroup.
                await stack.__aexit__(None, None, None)
            finally:
                self._recv_stream.close()
                self._send_stream.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self._shutdown(force=exc_type is not None)
        stack, self._stack = self._stack, None
        try:
            if stack is not None:
                # Pass no exception in: the task group would wrap the caller's own exception
                # in an ExceptionGroup. It still propagates, since we return None.
                await stack.__aexit__(None, None, None)
            return None
        finally:
            self._recv_stream.close()
            self._send_stream.close()

    async def close(self) -> None:
        """Close gracefully: deny open permission requests, close stdin, reap the CLI.

        Messages the CLI writes while exiting are still delivered to :meth:`messages`.
        """
        await self._shutdown(force=False)

    async def _shutdown(self, *, force: bool) -> None:
        if self._closing:
            return
        self._closing = True
        transport = self._transport
        with anyio.CancelScope(shield=True):
            for scope in list(self._handlers.values()):
                scope.cancel()
            if not force and transport is not None:
                # Before the session counts as closed: a closed session writes nothing.
                await self._deny_open_requests("the session was closed")
            self._closed = True
            if transport is not None:
                await transport.aclose(force=force)
            self._arg_files.remove()
            with anyio.move_on_after(2):
                await self._exited.wait()
        if self._tasks is not None:
            self._tasks.cancel_all()

    def _build_transport(self) -> Transport:
        opts = self.options
        executable = find_cli(opts.cli_path)
        argv = opts.to_argv(
            executable,
            sdk_mcp_servers=list(self._mcp_servers),
            permission_callback=self._can_use_tool is not None,
        )
        env = opts.build_env(trace_env())
        # Inline JSON (an MCP config with tokens, settings) goes through private files:
        # argv is readable by every local user.
        argv = self._arg_files.externalize(argv)
        return SubprocessTransport(
            argv,
            cwd=opts.cwd,
            env=env,
            close_grace=opts.close_grace,
            kill_after=opts.kill_after,
            stderr_tail_lines=opts.stderr_tail_lines,
            on_stderr=opts.stderr,
            user=opts.user,
        )

    @property
    def transport(self) -> Transport:
        """The transport under this session."""
        if self._transport is None:
            raise UsageError("the session has not been started")
        return self._transport

    @property
    def pid(self) -> int | None:
        """The CLI's process id, when it runs as a subprocess."""
        return getattr(self._transport, "pid", None)

    @property
    def closed(self) -> bool:
        """True once the session was closed or the CLI's output ended."""
        return self._closed or self._exited.is_set()

    # -- reading ---------------------------------------------------------------------

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

    # -- writing ---------------------------------------------------------------------

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
    ) -> None:
        """Send a user message: text, or a list of content blocks (text, image, ...).

        Raises:
            SessionClosedError: the session was closed.
            CLIExitedError: the CLI is gone.
        """
        message = ctl.user_message(
            prompt,
            uuid=uuid,
            parent_tool_use_id=parent_tool_use_id,
            client_composed=self.options.verbatim_prompts,
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

        An answer to a request the CLI has cancelled meanwhile is dropped silently.

        Raises:
            UsageError: the response answers no open request.
            ControlTimeoutError: the CLI did not take the answer within ``control_timeout``
                (it stopped reading its input).
        """
        scope = self._handlers.get(response.response.request_id)
        data = self._protocol.send(response)
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


class _MessageIterator:
    __slots__ = ("_session",)

    def __init__(self, session: Session) -> None:
        self._session = session

    def __aiter__(self) -> _MessageIterator:
        return self

    async def __anext__(self) -> InboundMessage:
        return await self._session._next_message()


def open_session(
    options: ClaudeCodeOptions | None = None,
    *,
    can_use_tool: CanUseTool | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    mcp_servers: Sequence[SdkMcpServer] = (),
    transport: Transport | None = None,
    on_messages: Callable[[list[InboundMessage]], None] | None = None,
) -> Session:
    """Create a :class:`Session`; use it as ``async with open_session(...) as session:``."""
    return Session(
        options,
        can_use_tool=can_use_tool,
        hooks=hooks,
        mcp_servers=mcp_servers,
        transport=transport,
        on_messages=on_messages,
    )
