"""The WebSocket endpoint ``/ws`` over a :class:`~adapter.backend.SessionBackend`.

Mounted by ``claudecode-bridge serve`` (route provider :func:`ws_routes`); the app's
:class:`~adapter.server.SecurityMiddleware` has already checked the ``Origin`` and the bearer
token (header, or ``?token=`` for browsers) before a handshake reaches it.

One connection runs three tasks: the reader (frames in order, one request at a time, each
answered by an ``ack`` / ``error`` carrying its ``request_id``), the writer (one bounded
queue of outgoing frames), and the session list (``session_list`` on connect, then the
``session_changed`` frames the endpoint's one :class:`~adapter.ws.status.StatusFeed` hands
it, paced so that they never hold up the sessions' events). Each subscription adds a pump
task that moves the session's events into the queue, waiting while it holds ``max_queue``
frames. Nothing waits on a slow client
but its own tasks: its events pile up in the session's bounded subscriber queue
(``SessionConfig.subscriber_buffer``), and when that overflows the backend drops the
subscription and the connection is closed with
:data:`~adapter.ws.protocol.CLOSE_SLOW_CONSUMER` (4001); the client reconnects and
subscribes with ``since_seq`` — the session and the other clients never wait.

Errors in a request become an ``error`` frame; an unexpected exception is logged and
answered with code ``internal`` (no details); the handler never crashes the server.
"""

from __future__ import annotations

import base64
import binascii
import collections
import contextlib
import os
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from claudecode import UsageError
from claudecode._log import get_logger

from ..backend import (
    SessionBackend,
    SessionInfo,
    SessionSpec,
    history_dir_of,
)
from ..chat.history import (
    HistoryIndex,
    HistoryNotFoundError,
    config_dir,
    find_session_file,
    load_events,
)
from ..events import Event
from ..fanout import SubscriberDropped
from ..policies import PermissionDecision
from ..server.app import ServerContext
from .encoded import event_text
from .errors import error_of
from .protocol import (
    CLOSE_FRAME_TOO_LARGE,
    CLOSE_INTERNAL,
    CLOSE_SLOW_CONSUMER,
    CLOSE_UNSUPPORTED_VERSION,
    PROTOCOL_VERSION,
    Ack,
    ClientFrame,
    CloseSession,
    CreateSession,
    Error,
    Hello,
    History,
    Interrupt,
    ListHistory,
    ListSessions,
    PermissionResponse,
    Ping,
    Pong,
    Prompt,
    ServerFrame,
    SessionChanged,
    SessionList,
    SetModel,
    SetPermissionMode,
    Snapshot,
    Subscribe,
    Unsubscribe,
    decode_client_frame,
    encode_frame,
)
from .status import StatusFeed
from .views import SessionViews

if TYPE_CHECKING:
    from terminals import TerminalManager

__all__ = ("DEFAULT_MAX_QUEUE", "WebSocketConnection", "ws_routes")

_log = get_logger("claudecode.adapter.ws")

#: Outgoing frames a client may have waiting before it is disconnected as too slow.
DEFAULT_MAX_QUEUE: Final = 4096
_CLOSE_GRACE = 30.0
_SLOW = "too slow: reconnect and subscribe with since_seq"


#: What a send or receive raises when the client went away or the socket broke.
_GONE = (WebSocketDisconnect, OSError, RuntimeError, anyio.BrokenResourceError)


class _Close(Exception):
    """End the connection with a close code."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class WebSocketConnection:
    """One client connection (see the module docs)."""

    def __init__(
        self,
        ws: WebSocket,
        backend: SessionBackend,
        views: SessionViews,
        history: HistoryIndex,
        feed: StatusFeed,
        *,
        max_frame_bytes: int,
        max_queue: int = DEFAULT_MAX_QUEUE,
        shutting_down: anyio.Event | None = None,
        terminals: TerminalManager | None = None,
    ) -> None:
        self.ws = ws
        self.terminals = terminals
        self.backend = backend
        self.views = views
        self.history = history
        self.feed = feed
        self.max_frame_bytes = max_frame_bytes
        self.max_queue = max_queue
        self.shutting_down = shutting_down
        self._out: collections.deque[str] = collections.deque()
        self._wakeup = anyio.Event()
        self._room = anyio.Event()
        self._close: _Close | None = None
        self._writing = False
        self._send_error: Exception | None = None
        self._subs: dict[str, anyio.CancelScope] = {}
        #: Sessions being subscribed to (their state changes count from before the snapshot).
        self._subscribing: set[str] = set()
        #: Whether the client asked for the session list (then it gets every state change).
        self._watching_list = False
        self._tg: anyio.abc.TaskGroup | None = None
        self._handlers: dict[type[Any], Callable[[Any], Any]] = {
            Hello: self._hello,
            CreateSession: self._create,
            ListSessions: self._list,
            Subscribe: self._subscribe,
            Unsubscribe: self._unsubscribe,
            Prompt: self._prompt,
            PermissionResponse: self._permission,
            Interrupt: self._interrupt,
            SetModel: self._set_model,
            SetPermissionMode: self._set_mode,
            CloseSession: self._close_session,
            ListHistory: self._list_history,
            Ping: self._ping,
        }

    # ------------------------------------------------------------------ outgoing

    def send(self, frame: ServerFrame) -> None:
        """Queue a frame (replies and session changes; events go through :meth:`_send_event`)."""
        if self._close is not None:
            return
        self._out.append(encode_frame(frame).decode())
        self._wakeup.set()

    async def _emit(self, text: str) -> None:
        """Write a frame: at once when nothing is queued or being written (one task switch
        less per frame: the writer task would only pass it on), else through the queue,
        once it has room. A slow client holds up only its own subscriptions, whose events
        then wait in the session's bounded subscriber queue."""
        if self._close is not None:
            return
        if not self._out and not self._writing:
            self._writing = True
            try:
                await self.ws.send_text(text)
            except Exception as exc:  # as if the writer had failed: the connection ends
                self._send_error = exc
                assert self._tg is not None
                self._tg.cancel_scope.cancel()
            finally:
                self._writing = False
                if self._out or self._close is not None:
                    self._wakeup.set()
            return
        while len(self._out) >= self.max_queue and self._close is None:
            self._room = anyio.Event()
            await self._room.wait()
        if self._close is None:
            self._out.append(text)
            self._wakeup.set()

    def backlog(self) -> int:
        """Frames waiting to be written (for the :class:`StatusFeed`)."""
        return len(self._out)

    def wants(self, session_id: str) -> bool:
        """Whether this client follows ``session_id``'s state (for the :class:`StatusFeed`):
        every session's once it asked for the list, else those it subscribed to."""
        return self._watching_list or session_id in self._subs or session_id in self._subscribing

    def put_status(self, text: str) -> None:
        """Queue a ``session_changed`` frame from the :class:`StatusFeed` (never waits: the
        feed holds back a connection whose writer is behind)."""
        if self._close is None:
            self._out.append(text)
            self._wakeup.set()

    async def _send_event(self, event: Event) -> None:
        """Write an event frame (see :meth:`_emit`)."""
        await self._emit(event_text(event))

    def _end(self, code: int, reason: str, *, flush: bool = True) -> None:
        """Close with ``code``: after the queued frames (``flush``) or at once (a writer
        stuck on a client that does not read)."""
        if self._close is None:
            self._close = _Close(code, reason)
        self._wakeup.set()
        self._room.set()
        if not flush and self._tg is not None:
            self._tg.cancel_scope.cancel()

    async def _writer(self) -> None:
        while True:
            if not self._writing:  # else a frame is being written at once (see _emit)
                self._writing = True
                try:
                    while self._out:
                        await self.ws.send_text(self._out.popleft())
                        if len(self._out) < self.max_queue:
                            self._room.set()
                finally:
                    self._writing = False
                self.feed.resume(self)  # caught up: state changes held back may come
                if self._close is not None:
                    assert self._tg is not None
                    self._tg.cancel_scope.cancel()
                    return
            await self._wakeup.wait()
            self._wakeup = anyio.Event()

    # ------------------------------------------------------------------ main loop

    async def run(self) -> None:
        """Serve the (accepted) connection until the client leaves or it is closed."""
        gone = False
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._writer)
                tg.start_soon(self._watch)
                if self.shutting_down is not None:
                    tg.start_soon(self._on_shutdown, self.shutting_down)
                tg.start_soon(self._reader_then_stop)
        except* _GONE:
            gone = True  # the client went away (or the socket broke): nothing to tell it
        if self._send_error is not None:
            if not isinstance(self._send_error, _GONE):
                raise self._send_error
            gone = True
        close = self._close
        _log.debug("ws.closing", close=repr(close), gone=gone)
        if close is not None and not gone:
            # A client that stopped reading gets a while to take the close frame.
            with anyio.move_on_after(_CLOSE_GRACE), contextlib.suppress(Exception):
                await self.ws.close(close.code, close.reason)

    async def _on_shutdown(self, event: anyio.Event) -> None:
        await event.wait()
        self._end(1001, "server shutting down")

    async def _reader_then_stop(self) -> None:
        await self._reader()
        if self._close is None:
            assert self._tg is not None
            self._tg.cancel_scope.cancel()

    async def _reader(self) -> None:
        while self._close is None:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            data: str | bytes | None = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            if len(data) > self.max_frame_bytes:
                self._end(CLOSE_FRAME_TOO_LARGE, f"frame over {self.max_frame_bytes} bytes")
                return
            frame = decode_client_frame(data)
            if isinstance(frame, Error):
                self.send(frame)
                continue
            await self._handle(frame)

    async def _handle(self, frame: ClientFrame) -> None:
        try:
            await self._handlers[type(frame)](frame)
        except Exception as exc:
            code, message = error_of(exc)
            if code == "internal":
                _log.exception("ws.request_failed", frame_type=type(frame).__name__)
            self.send(
                Error(
                    code=code,
                    message=message,
                    request_id=frame.request_id,
                    session_id=getattr(frame, "session_id", None),
                )
            )

    # ------------------------------------------------------------------ session list

    async def _watch(self) -> None:
        """``session_list`` on connect, then ``session_changed`` from the
        :class:`StatusFeed` (and the terminal manager) for as long as the connection lasts:
        of every session once the client asked for the list (``list_sessions``), else of
        the sessions it subscribed to."""
        remove: Callable[[], None] | None = None
        if self.terminals is not None:
            from terminals.server import as_session_info

            def changed(info: Any) -> None:
                if self._watching_list:
                    self.send(SessionChanged(session=as_session_info(info)))

            remove = self.terminals.add_listener(changed)
        self.feed.attach(self)  # before the list: nothing between the two is lost
        try:
            self.send(SessionList(sessions=await self._sessions()))
            self.feed.resume(self)
            await anyio.sleep_forever()
        finally:
            self.feed.detach(self)
            if remove is not None:
                remove()

    async def _sessions(self) -> list[SessionInfo]:
        """The chat sessions, then the terminal sessions (``kind="terminal"``)."""
        sessions = await self.backend.list()
        if self.terminals is not None:
            from terminals.server import as_session_info

            sessions.extend(as_session_info(info) for info in self.terminals.list())
        return sessions

    def _is_terminal(self, session_id: str) -> bool:
        return self.terminals is not None and any(
            info.id == session_id for info in self.terminals.list()
        )

    # ------------------------------------------------------------------ requests

    async def _hello(self, frame: Hello) -> None:
        if frame.version != PROTOCOL_VERSION:
            self.send(
                Error(
                    code="unsupported_version",
                    message=f"this server speaks version {PROTOCOL_VERSION}",
                    request_id=frame.request_id,
                )
            )
            self._end(CLOSE_UNSUPPORTED_VERSION, "unsupported protocol version")
            return
        if frame.client_id:
            _log.debug("ws.hello", client_id=frame.client_id[:100])
        self.send(Ack(request_id=frame.request_id, version=PROTOCOL_VERSION))

    async def _create(self, frame: CreateSession) -> None:
        if frame.kind == "terminal":
            await self._create_terminal(frame)
            return
        spec = SessionSpec(
            cwd=frame.cwd,
            model=frame.model,
            policy=frame.policy,
            permission_mode=frame.permission_mode,
            resume=frame.resume,
            resume_session_at=frame.resume_session_at,
            fork=frame.fork,
        )
        info = await self.backend.create(spec)
        if frame.resume:
            await self._seed(info.id, frame.resume, frame.cwd or info.cwd)
        self.send(Ack(request_id=frame.request_id, session_id=info.id, session=info))

    async def _create_terminal(self, frame: CreateSession) -> None:
        if self.terminals is None:
            raise UsageError("terminal sessions are not served here")
        if not frame.agent:
            raise UsageError("a terminal session needs an agent")
        from terminals.server import as_session_info

        terminal = await self.terminals.start(
            "term-" + secrets.token_hex(8),
            frame.agent,
            cwd=frame.cwd,
            cols=frame.cols,
            rows=frame.rows,
            skip_permissions=frame.skip_permissions,
        )
        info = as_session_info(terminal)
        self.send(Ack(request_id=frame.request_id, session_id=info.id, session=info))

    async def _seed(self, session_id: str, resumed: str, cwd: str | None) -> None:
        """Show the resumed conversation from the CLI's stored transcript, when there is one
        on this machine (a resume from elsewhere just starts without it)."""

        def load() -> list[Event]:
            try:
                path = find_session_file(resumed, cwd, config=self.history.config)
            except HistoryNotFoundError:
                try:
                    path = find_session_file(resumed, config=self.history.config)
                except HistoryNotFoundError:
                    return []
            return load_events(path)

        events = await anyio.to_thread.run_sync(load)
        if events:
            self.views.seed(session_id, events)

    async def _list(self, frame: ListSessions) -> None:
        # Watching from before the list is read: no change between the two is lost, and
        # none goes out before the list.
        self._watching_list = True
        self.feed.hold(self)
        try:
            sessions = await self._sessions()
            self.send(SessionList(request_id=frame.request_id, sessions=sessions))
        finally:
            self.feed.resume(self)

    async def _subscribe(self, frame: Subscribe) -> None:
        old = self._subs.pop(frame.session_id, None)
        if old is not None:
            old.cancel()
        assert self._tg is not None
        self._subscribing.add(frame.session_id)
        try:
            await self._tg.start(self._pump, frame)
        finally:
            self._subscribing.discard(frame.session_id)

    async def _pump(
        self,
        frame: Subscribe,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        session_id = frame.session_id
        started = False
        with anyio.CancelScope() as scope:
            try:
                after = frame.since_seq
                while True:
                    snapshot: Snapshot | None = None
                    if after is None:
                        info = await self.backend.info(session_id)
                        chat = self.views.snapshot(session_id)
                        snapshot = Snapshot(session_id=session_id, session=info, chat=chat)
                        after = chat.last_seq
                    try:
                        async with self.backend.subscribe(session_id, after_seq=after) as stream:
                            if stream.gap and snapshot is None:
                                after = None  # the history lost events: a snapshot instead
                                continue
                            if not started:
                                self._subs[session_id] = scope
                                self.send(Ack(request_id=frame.request_id, session_id=session_id))
                                started = True
                                task_status.started()
                            if snapshot is not None:
                                self.send(snapshot)
                            while True:
                                for event in await stream.receive_batch():
                                    after = event.seq
                                    await self._send_event(event)
                    except SubscriberDropped:
                        # The session's queue for this client overflowed: the client is too slow.
                        self._end(CLOSE_SLOW_CONSUMER, _SLOW, flush=False)
                        return
            except anyio.EndOfStream:
                pass  # the session ended; its last events were sent
            except Exception as exc:
                if not started:
                    raise
                code, message = error_of(exc)
                _log.warning("ws.subscription_failed", session_id=session_id, error=message)
                self.send(Error(code=code, message=message, session_id=session_id))
            finally:
                if self._subs.get(session_id) is scope:
                    del self._subs[session_id]

    async def _unsubscribe(self, frame: Unsubscribe) -> None:
        scope = self._subs.pop(frame.session_id, None)
        if scope is not None:
            scope.cancel()
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _prompt(self, frame: Prompt) -> None:
        images: list[tuple[str, bytes]] = []
        for image in frame.images:
            try:
                images.append((image.media_type, base64.b64decode(image.data, validate=True)))
            except (binascii.Error, ValueError) as exc:
                raise UsageError(f"an image is not valid base64: {exc}") from None
        await self.backend.prompt(frame.session_id, frame.text, images=images)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _permission(self, frame: PermissionResponse) -> None:
        decision = PermissionDecision(
            frame.decision, message=frame.message or "", updated_input=frame.updated_input
        )
        await self.backend.answer_permission(frame.session_id, frame.pending_id, decision)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _interrupt(self, frame: Interrupt) -> None:
        await self.backend.interrupt(frame.session_id)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _set_model(self, frame: SetModel) -> None:
        await self.backend.set_model(frame.session_id, frame.model)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _set_mode(self, frame: SetPermissionMode) -> None:
        await self.backend.set_permission_mode(frame.session_id, frame.mode)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _close_session(self, frame: CloseSession) -> None:
        if self.terminals is not None and self._is_terminal(frame.session_id):
            await self.terminals.stop(frame.session_id)
        else:
            await self.backend.close(frame.session_id)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _list_history(self, frame: ListHistory) -> None:
        cwd = frame.cwd
        limit = max(1, min(frame.limit, 1000))
        sessions = await anyio.to_thread.run_sync(lambda: self.history.list(cwd, limit=limit))
        self.send(History(request_id=frame.request_id, sessions=sessions))

    async def _ping(self, frame: Ping) -> None:
        self.send(Pong(request_id=frame.request_id))


def ws_routes(ctx: ServerContext, *, max_queue: int = DEFAULT_MAX_QUEUE) -> list[BaseRoute]:
    """The ``/ws`` route (a route provider for :func:`~adapter.server.create_app`)."""
    views = SessionViews(ctx.backend)
    feed = StatusFeed(ctx.backend)
    # The CLI keeps transcripts where its own environment says (HOME / CLAUDE_CONFIG_DIR);
    # a backend whose sessions run elsewhere (a cluster gateway) says where its copy is.
    history = HistoryIndex(
        history_dir_of(ctx.backend)
        or config_dir({**os.environ, **ctx.settings.session_defaults.env})
    )
    ctx.lifespan_hooks.append(views.running)
    ctx.lifespan_hooks.append(feed.running)
    ctx.endpoints.append(("WebSocket", "/ws"))

    def terminals_of(ctx: ServerContext) -> TerminalManager | None:
        """This app's terminal manager, if the terminal routes are mounted."""
        try:
            from terminals.server import terminals_of as lookup
        except ImportError:  # the terminals extra is not installed: chat sessions only
            return None
        return lookup(ctx)

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        connection = WebSocketConnection(
            ws,
            ctx.backend,
            views,
            history,
            feed,
            max_frame_bytes=ctx.settings.max_body_bytes,
            max_queue=max_queue,
            shutting_down=ctx.shutting_down,
            terminals=terminals_of(ctx),
        )
        try:
            await connection.run()
        except Exception:
            _log.exception("ws.connection_failed")
            with anyio.move_on_after(_CLOSE_GRACE), contextlib.suppress(Exception):
                await ws.close(CLOSE_INTERNAL, "internal error")

    return [WebSocketRoute("/ws", endpoint)]
