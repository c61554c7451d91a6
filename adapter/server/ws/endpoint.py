"""The WebSocket endpoint ``/ws`` over a :class:`~adapter.backend.SessionBackend`.

Mounted by ``claudecode-bridge serve`` (route provider :func:`ws_routes`); the app's
:class:`~adapter.server.SecurityMiddleware` has already checked the ``Origin`` and the bearer
token (header, or ``?token=`` for browsers) before a handshake reaches it.

One connection runs three tasks: the reader (frames in order, one request at a time, each
answered by an ``ack`` / ``error`` carrying its ``request_id``), the writer (one bounded
queue of outgoing frames), and the session list (``session_list`` on connect, then the
``session_changed`` frames the endpoint's one :class:`~adapter.server.ws.status.StatusFeed` hands
it, paced so that they never hold up the sessions' events). Each subscription adds a pump
task that moves the session's events into the queue, waiting while it holds ``max_queue``
frames. Nothing waits on a slow client
but its own tasks: its events pile up in the session's bounded subscriber queue
(``SessionConfig.subscriber_buffer``), and when that overflows the backend drops the
subscription and the connection is closed with
:data:`~adapter.server.ws.protocol.CLOSE_SLOW_CONSUMER` (4001); the client reconnects and
subscribes with ``since_seq`` — the session and the other clients never wait.

Errors in a request become an ``error`` frame; an unexpected exception is logged and
answered with code ``internal`` (no details); the handler never crashes the server.

:class:`WebSocketConnection` is put together from one mixin per job: :mod:`.outbox` (the
frame queue, the writer, the close), :mod:`.subscriptions` (the pumps) and :mod:`.handlers`
(the other requests); this module keeps the connection's main loop, its reader, the session
list and the route.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from claudecode.internal import get_logger

from ...backend import SessionInfo, history_dir_of
from ...history.transcripts import HistoryIndex, config_dir
from ...owners import OwnedBackend, current_caller
from ...terminals import as_session_info
from ..agents import Agent
from ..app import ServerContext
from ..input_checks import utf8_length
from .errors import error_of
from .handlers import RequestHandlers
from .outbox import Close, Outbox
from .protocol import (
    CLOSE_FRAME_TOO_LARGE,
    CLOSE_INTERNAL,
    ClientFrame,
    CloseSession,
    CreateSession,
    DeleteSession,
    Error,
    GetImage,
    Hello,
    Interrupt,
    ListHistory,
    ListSessions,
    PermissionResponse,
    Ping,
    Prompt,
    QuestionResponse,
    SessionChanged,
    SessionList,
    SetModel,
    SetPermissionMode,
    Subscribe,
    Unsubscribe,
    UpdateSession,
    decode_client_frame,
)
from .status import StatusFeed
from .subscriptions import Subscriptions
from .views import SessionViews

if TYPE_CHECKING:
    from adapter.terminals import OwnedTerminals

__all__ = ("DEFAULT_MAX_QUEUE", "DEFAULT_MAX_QUEUE_BYTES", "WebSocketConnection", "ws_routes")

_log = get_logger("claudecode.adapter.ws")

#: Outgoing frames a client may have waiting before it is disconnected as too slow.
DEFAULT_MAX_QUEUE: Final = 4096
#: Bytes of outgoing frames a client may have waiting before it is closed as too slow
#: (:data:`~adapter.server.ws.protocol.CLOSE_SLOW_CONSUMER`): a client that sends requests
#: and never reads the replies. Events wait for room at half of it instead.
DEFAULT_MAX_QUEUE_BYTES: Final = 32 * 1024 * 1024
_CLOSE_GRACE = 30.0
#: Error messages can quote what the client sent: they are cut to this many characters.
_MAX_ERROR_MESSAGE = 1000


#: What a send or receive raises when the client went away or the socket broke.
_GONE = (WebSocketDisconnect, OSError, RuntimeError, anyio.BrokenResourceError)


def _client_of(ws: WebSocket) -> str | None:
    """The peer's address, as a log line names it."""
    return f"{ws.client.host}:{ws.client.port}" if ws.client is not None else None


class WebSocketConnection(Outbox, Subscriptions, RequestHandlers):
    """One client connection (see the module docs)."""

    def __init__(
        self,
        ws: WebSocket,
        backend: OwnedBackend,
        views: SessionViews,
        history: HistoryIndex,
        feed: StatusFeed,
        *,
        max_frame_bytes: int,
        max_queue: int = DEFAULT_MAX_QUEUE,
        max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES,
        shutting_down: anyio.Event | None = None,
        terminals: OwnedTerminals | None = None,
        agents: tuple[Agent, ...] = (),
    ) -> None:
        self.ws = ws
        self.agents = agents
        #: Who this connection serves (its handshake's identity).
        self.caller = current_caller()
        self.terminals = terminals
        self.backend = backend
        self.views = views
        self.history = history
        self.feed = feed
        self.max_frame_bytes = max_frame_bytes
        self.max_queue = max_queue
        self.max_queue_bytes = max_queue_bytes
        self._queued_bytes = 0
        self.shutting_down = shutting_down
        self._out: collections.deque[str] = collections.deque()
        self._wakeup = anyio.Event()
        self._room = anyio.Event()
        self._close: Close | None = None
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
            QuestionResponse: self._question,
            Interrupt: self._interrupt,
            SetModel: self._set_model,
            SetPermissionMode: self._set_mode,
            CloseSession: self._close_session,
            UpdateSession: self._update_session,
            DeleteSession: self._delete_session,
            ListHistory: self._list_history,
            GetImage: self._get_image,
            Ping: self._ping,
        }

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
        _log.info(
            "ws.closed",
            client=_client_of(self.ws),
            code=None if close is None or gone else close.code,
            reason="client gone" if gone else close.reason if close is not None else "client left",
        )
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
            # Bytes, not characters: a text frame of 3-byte characters is three times its
            # length (measured only when its length alone cannot tell).
            size = len(data)
            if size > self.max_frame_bytes or (
                4 * size > self.max_frame_bytes and utf8_length(data) > self.max_frame_bytes
            ):
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
                    message=message[:_MAX_ERROR_MESSAGE],
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
            sessions.extend(as_session_info(info) for info in self.terminals.list())
        return sessions

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

    def _is_terminal(self, session_id: str) -> bool:
        return self.terminals is not None and any(
            info.id == session_id for info in self.terminals.list()
        )


def ws_routes(
    ctx: ServerContext,
    *,
    max_queue: int = DEFAULT_MAX_QUEUE,
    max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES,
) -> list[BaseRoute]:
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

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        _log.info("ws.connected", client=_client_of(ws))
        connection = WebSocketConnection(
            ws,
            ctx.backend,
            views,
            history,
            feed,
            max_frame_bytes=ctx.settings.max_body_bytes,
            max_queue=max_queue,
            max_queue_bytes=max_queue_bytes,
            shutting_down=ctx.shutting_down,
            terminals=ctx.terminals,
            agents=ctx.settings.agents,
        )
        try:
            await connection.run()
        except Exception:
            _log.exception("ws.connection_failed")
            with anyio.move_on_after(_CLOSE_GRACE), contextlib.suppress(Exception):
                await ws.close(CLOSE_INTERNAL, "internal error")

    return [WebSocketRoute("/ws", endpoint)]
