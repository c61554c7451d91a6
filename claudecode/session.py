"""The async session: one CLI process, its reader task, and the control plane around it.

``async with Session(options) as session:`` spawns the CLI, starts the reader, sends
``initialize`` (unless switched off) and hands back a session that sends prompts, streams
typed messages and runs control requests. The task group lives in the ``async with`` — never
in an async generator — so leaving the block early, by ``break``, exception or cancellation,
always ends the process and reaps it.

:class:`Session` is this lifecycle (start, close, the transport) plus one mixin per job:

* :class:`~claudecode._session_reader.SessionReader`: the reader task (stdout bytes to
  messages, one batch per read into a bounded channel: back-pressure, nothing unbounded) and
  the consumer's side (:meth:`Session.messages`, :meth:`Session.receive_response`, ...);
* :class:`~claudecode._session_writer.SessionWriter`: prompts, outbound messages, answers
  and control requests written to stdin, one writer at a time;
* :class:`~claudecode._session_inbound.InboundControl`: the CLI's control requests answered
  by their callbacks (``can_use_tool``, hooks, in-process MCP servers), each in its own task;
* :class:`~claudecode.session_control.ControlRequests`: one method per control request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from . import control as ctl
from ._discovery import find_cli
from ._private_args import PrivateArgFiles
from ._session_inbound import InboundControl
from ._session_reader import SessionReader
from ._session_writer import SessionWriter
from ._tasks import TaskSet
from ._telemetry import trace_env
from .callbacks import CanUseTool, HookCallback, HookMatcher, PermissionTimeoutHook
from .errors import ClaudeCodeError, UsageError
from .mcp import SdkMcpServer
from .messages import CanUseToolRequest, InboundControlRequest, InboundMessage
from .options import ClaudeCodeOptions
from .protocol import ClaudeCodeProtocol
from .session_control import ControlRequests
from .transport import SubprocessTransport, Transport

__all__ = ("Session", "open_session")


class Session(SessionReader, SessionWriter, InboundControl, ControlRequests):
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
        on_permission_timeout: called with a permission request (``can_use_tool``) that
            ``options.permission_timeout`` answered because nobody did in time: the session
            denies it (``interrupt=True``) right after the call returns, so whatever the
            caller reports comes before anything the CLI does about the denial. Called for
            requests waiting in the message stream and for those whose ``can_use_tool``
            callback did not return in time alike; an answer to the request from then on
            is dropped silently (as one to a request the CLI cancelled). It runs in the
            session's own task and must not block; what it raises is logged and ignored.

    Open permission requests are the session's to keep: :attr:`open_permission_requests`
    lists the ones not answered yet (nor cancelled by the CLI, nor timed out), and
    :meth:`open_permission_request` finds one by its id. A caller that answers them keeps
    no table of its own.
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
        on_permission_timeout: PermissionTimeoutHook | None = None,
    ) -> None:
        self.options = options or ClaudeCodeOptions()
        # Fails early (UsageError) when a callback and a non-stdio prompt tool are both given.
        self.options.prompt_tool(has_callback=can_use_tool is not None)
        self._on_messages = on_messages
        self._on_permission_timeout = on_permission_timeout
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
        # The expiry of each open permission request that waits in the message stream.
        self._permission_timers: dict[str, anyio.CancelScope] = {}
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
            for scope in [*self._handlers.values(), *self._permission_timers.values()]:
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
    def mcp_servers(self) -> list[SdkMcpServer]:
        """The in-process MCP servers this session serves."""
        return list(self._mcp_servers.values())

    @property
    def open_permission_requests(self) -> tuple[InboundControlRequest, ...]:
        """The permission requests (``can_use_tool``) nobody has answered yet, oldest first:
        neither answered (by :meth:`respond`, a ``can_use_tool`` callback or
        ``permission_timeout``) nor cancelled by the CLI."""
        return tuple(
            req
            for req in self._protocol.open_inbound_requests
            if isinstance(req.request, CanUseToolRequest)
        )

    def open_permission_request(self, request_id: str) -> InboundControlRequest | None:
        """The open permission request with this id (see :attr:`open_permission_requests`);
        ``None`` once it was answered, cancelled or timed out."""
        req = self._protocol.open_inbound_request(request_id)
        if req is None or not isinstance(req.request, CanUseToolRequest):
            return None
        return req

    @property
    def closed(self) -> bool:
        """True once the session was closed or the CLI's output ended."""
        return self._closed or self._exited.is_set()


def open_session(
    options: ClaudeCodeOptions | None = None,
    *,
    can_use_tool: CanUseTool | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    mcp_servers: Sequence[SdkMcpServer] = (),
    transport: Transport | None = None,
    on_messages: Callable[[list[InboundMessage]], None] | None = None,
    on_permission_timeout: PermissionTimeoutHook | None = None,
) -> Session:
    """Create a :class:`Session`; use it as ``async with open_session(...) as session:``."""
    return Session(
        options,
        can_use_tool=can_use_tool,
        hooks=hooks,
        mcp_servers=mcp_servers,
        transport=transport,
        on_messages=on_messages,
        on_permission_timeout=on_permission_timeout,
    )
