"""Terminal sessions over HTTP and WebSocket: a route provider for ``adapter.server``.

=======  ==========================  ================================================
GET      ``/api/terminals``          ``{"terminals", "agents", "allowed"}`` (below)
POST     ``/api/terminals``          ``{agent, cwd?, cols?, rows?, skip_permissions?}`` -> 201
GET      ``/api/terminals/{id}``     one :class:`~terminals.TerminalInfo`
DELETE   ``/api/terminals/{id}``     stop it; its final snapshot
POST     ``/api/terminals/{id}/remove``  take an ended one off the list; its last snapshot
WS       ``/ws/pty/{id}``            the terminal itself (below)
=======  ==========================  ================================================

``GET /api/terminals`` lists the caller's terminals (:class:`~terminals.TerminalInfo`), the
agents (:class:`~terminals.AgentStatus`) and whether the caller may open terminals
(``allowed``; a user without ``terminals`` gets 403 on ``POST``). Terminals of other users
answer like unknown ids (:class:`~adapter.terminals.OwnedTerminals`). Removing a terminal that
still runs is refused (409, "stop it first"): a running program is only ever stopped on
purpose, with ``DELETE``.

The WebSocket carries the terminal's bytes as **binary frames** both ways (output to the
viewer, keystrokes from it) and control as **JSON text frames**:

* server -> viewer: ``{"type": "status", "state", "can_type", "cols", "rows", "agent"}``
  (first, then on every change), the current screen as one binary frame right after the
  first status, live output, ``{"type": "resize", "cols", "rows"}``,
  ``{"type": "exit", "code", "signal", "signal_name", "reason"}`` (then close 1000) and
  ``{"type": "error", "code", "message"}`` for a refused frame (the socket stays open). A
  session that ended because its own tasks failed (exit reason ``failed``) sends, after its
  exit, an error with code ``failed`` and closes with 1011.
* viewer -> server: ``{"type": "resize", "cols", "rows"}``, ``{"type": "signal", "signal":
  "SIGINT"}`` (to the foreground job), ``{"type": "input", "data": "text"}`` (same as a
  binary frame) and ``{"type": "status"}`` (answered with a status frame).

Who may type (and resize, and signal) is the route's ``input_policy``: ``all`` viewers, or
only the ``first`` one still connected (the others watch; the next in line takes over when it
leaves). A viewer that falls too far behind is closed with 1013 (try again: it gets a fresh
screen). Unknown terminals are closed with 4404. The app's security middleware applies as to
every route: bearer token (``?token=`` on the handshake), foreign Origins refused.
"""

from __future__ import annotations

import secrets
import signal
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from adapter.server import ServerContext, json_error, json_response, read_json
from adapter.server.json_io import reject_nul
from claudecode.internal import get_logger

from ..owners import current_caller
from ..terminals._errors import (
    AgentUnavailableError,
    TerminalError,
    TerminalFailedError,
    UnknownTerminalError,
)
from ..terminals._manager import TerminalManager
from ..terminals._owned import OwnedTerminals
from ..terminals._types import TerminalExit, TerminalInfo, TerminalResized, TerminalStatus
from ..terminals._viewer import TerminalViewer, ViewerDroppedError

__all__ = (
    "InputPolicy",
    "TerminalCreate",
    "make_terminal_routes",
    "terminal_routes",
    "terminals_of",
)

_log = get_logger("claudecode.terminals.server")

#: ``all``: every viewer may type; ``first``: only the earliest viewer still connected.
InputPolicy: TypeAlias = Literal["all", "first"]

#: Largest input frame accepted (a paste is split by the browser terminal well below this).
MAX_INPUT_FRAME = 64 * 1024

#: Signals a viewer may send to the foreground job.
ALLOWED_SIGNALS = frozenset(
    {"SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGKILL", "SIGTSTP", "SIGCONT"}
    | {"SIGUSR1", "SIGUSR2"}
)

CLOSE_UNKNOWN = 4404
CLOSE_LAGGING = 1013
CLOSE_FAILED = 1011


class TerminalCreate(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /api/terminals``."""

    agent: str
    cwd: str | None = None
    cols: int = 80
    rows: int = 24
    skip_permissions: bool = False


class _Resize(msgspec.Struct, tag="resize", forbid_unknown_fields=True):
    cols: int
    rows: int


class _Signal(msgspec.Struct, tag="signal", forbid_unknown_fields=True):
    signal: str


class _Input(msgspec.Struct, tag="input", forbid_unknown_fields=True):
    data: str


class _Status(msgspec.Struct, tag="status", forbid_unknown_fields=True):
    pass


_ControlFrame: TypeAlias = _Resize | _Signal | _Input | _Status
_control_decoder = msgspec.json.Decoder(_ControlFrame)
_encoder = msgspec.json.Encoder()


def terminals_of(ctx: ServerContext) -> OwnedTerminals | None:
    """The terminal manager the terminal routes run for this app (``None`` if not mounted)."""
    return ctx.terminals


def _error(exc: TerminalError) -> Response:
    extra: dict[str, Any] = {}
    if isinstance(exc, AgentUnavailableError):
        extra = {"agent": exc.agent, "install_hint": exc.install_hint}
    return json_error(exc.http_status, str(exc), **extra)


class _Viewers:
    """Connected viewers of one terminal, in order, for the ``first`` input policy."""

    def __init__(self) -> None:
        self.order: list[TerminalViewer] = []


def make_terminal_routes(
    manager: Callable[[], TerminalManager] = TerminalManager,
    *,
    input_policy: InputPolicy | None = None,
    default_cwd: str | None = None,
) -> Callable[[ServerContext], list[BaseRoute]]:
    """A route provider for terminal sessions.

    Args:
        manager: makes the app's :class:`~terminals.TerminalManager` (run for the app's
            lifetime; every terminal is stopped at shutdown).
        input_policy: who may type (see the module docs); by default the server's
            ``ServerSettings.terminal_input`` (``serve --terminal-input``).
        default_cwd: the working directory when a request names none (default: the
            server's).
    """

    def provider(ctx: ServerContext) -> list[BaseRoute]:
        if not ctx.settings.terminals:
            return []  # serve --no-terminals: no shell reachable through this server
        policy: InputPolicy = input_policy or ctx.settings.terminal_input
        running = manager()
        # Every front end reaches the terminals through the ownership layer only.
        terminals = OwnedTerminals(running, audit=ctx.audit)
        ctx.terminals = terminals
        ctx.lifespan_hooks.append(lambda: running)
        ctx.endpoints.append(("terminals API", "/api/terminals"))
        viewers: dict[str, _Viewers] = {}

        async def list_terminals(request: Request) -> Response:
            body = {
                "terminals": terminals.list(),
                "agents": terminals.agents(),
                "allowed": current_caller().principal.terminals,
            }
            return json_response(body)

        async def create_terminal(request: Request) -> Response:
            body = await read_json(request, TerminalCreate)
            reject_nul(body, ("agent", "cwd"))
            session_id = "term-" + secrets.token_hex(8)
            try:
                info = await terminals.start(
                    session_id,
                    body.agent,
                    cwd=body.cwd or default_cwd,
                    cols=body.cols,
                    rows=body.rows,
                    skip_permissions=body.skip_permissions,
                )
            except TerminalError as exc:
                return _error(exc)
            return json_response(info, status=201)

        async def get_terminal(request: Request) -> Response:
            try:
                return json_response(terminals.get(request.path_params["id"]))
            except TerminalError as exc:
                return _error(exc)

        async def delete_terminal(request: Request) -> Response:
            try:
                return json_response(await terminals.stop(request.path_params["id"]))
            except TerminalError as exc:
                return _error(exc)

        async def remove_terminal(request: Request) -> Response:
            try:
                return json_response(terminals.remove(request.path_params["id"]))
            except TerminalError as exc:
                return _error(exc)

        async def pty_socket(websocket: WebSocket) -> None:
            session_id = websocket.path_params["id"]
            await websocket.accept()
            try:
                info = terminals.get(session_id)
            except UnknownTerminalError as exc:
                frame = {"type": "error", "code": "unknown", "message": str(exc)}
                await _send_json(websocket, frame)
                await websocket.close(CLOSE_UNKNOWN, "no such terminal")
                return
            scrollback = _int_param(websocket.query_params.get("scrollback"))
            client = (
                f"{websocket.client.host}:{websocket.client.port}" if websocket.client else None
            )
            _log.info("pty.connected", session_id=session_id, client=client)
            async with terminals.attach(session_id, scrollback=scrollback) as viewer:
                line = viewers.setdefault(session_id, _Viewers())
                line.order.append(viewer)
                connection = _Connection(websocket, terminals, viewer, line, policy)
                try:
                    await connection.run(info)
                finally:
                    _log.info("pty.closed", session_id=session_id, client=client)
                    was_first = line.order and line.order[0] is viewer
                    line.order.remove(viewer)
                    if not line.order:
                        viewers.pop(session_id, None)
                    elif was_first and policy == "first":
                        # The next viewer in line may type now: tell it.
                        successor = line.order[0]
                        current = _current_state(terminals, session_id)
                        if current is not None:
                            successor._push(TerminalStatus(state=current))

        return [
            Route("/api/terminals", list_terminals, methods=["GET"]),
            Route("/api/terminals", create_terminal, methods=["POST"]),
            Route("/api/terminals/{id}", get_terminal, methods=["GET"]),
            Route("/api/terminals/{id}", delete_terminal, methods=["DELETE"]),
            Route("/api/terminals/{id}/remove", remove_terminal, methods=["POST"]),
            WebSocketRoute("/ws/pty/{id}", pty_socket),
        ]

    return provider


#: The provider ``claudecode-bridge serve`` mounts (who may type: the server's settings).
terminal_routes = make_terminal_routes()


def _current_state(terminals: OwnedTerminals, session_id: str) -> Any:
    try:
        return terminals.get(session_id).state
    except UnknownTerminalError:
        return None


def _int_param(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return max(0, int(value))
    except ValueError:
        return None


async def _send_json(websocket: WebSocket, frame: dict[str, Any]) -> None:
    await websocket.send_text(_encoder.encode(frame).decode())


#: What a send or receive raises when the viewer went away: a disconnect, a broken socket
#: (OSError, uvicorn's ClientDisconnected), Starlette's refusal to use a closed socket.
_GONE = (
    WebSocketDisconnect,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    OSError,
    RuntimeError,
)


class _Connection:
    """One viewer's WebSocket: output out, keystrokes and control in."""

    def __init__(
        self,
        websocket: WebSocket,
        terminals: OwnedTerminals,
        viewer: TerminalViewer,
        line: _Viewers,
        policy: InputPolicy,
    ) -> None:
        self.websocket = websocket
        self.terminals = terminals
        self.viewer = viewer
        self.line = line
        self.policy = policy
        self.session_id = viewer.session_id
        self._send_lock = anyio.Lock()

    @property
    def can_type(self) -> bool:
        return self.policy == "all" or (bool(self.line.order) and self.line.order[0] is self.viewer)

    async def send_json(self, frame: dict[str, Any]) -> None:
        async with self._send_lock:
            await _send_json(self.websocket, frame)

    async def send_bytes(self, data: bytes) -> None:
        async with self._send_lock:
            await self.websocket.send_bytes(data)

    def status_frame(self, state: str) -> dict[str, Any]:
        try:
            info = self.terminals.get(self.session_id)
        except UnknownTerminalError:  # ended long ago and forgotten by the registry
            return {"type": "status", "state": "closed", "can_type": False}
        return {
            "type": "status",
            "state": state,
            "can_type": self.can_type and info.active,
            "cols": info.cols,
            "rows": info.rows,
            "agent": info.agent,
        }

    async def run(self, info: TerminalInfo) -> None:
        # A viewer that vanishes (no close frame, a reset) fails a send or a receive in
        # either task: the task group raises it in a group, caught here like a lone one.
        try:
            await self.send_json(self.status_frame(info.state))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump_out, tg.cancel_scope)
                await self._pump_in()
                tg.cancel_scope.cancel()
        except* _GONE:
            pass

    async def _pump_out(self, scope: anyio.CancelScope) -> None:
        try:
            async for batch in self.viewer:
                for item in batch:
                    if isinstance(item, bytes):
                        await self.send_bytes(item)
                    elif isinstance(item, TerminalStatus):
                        await self.send_json(self.status_frame(item.state))
                    elif isinstance(item, TerminalResized):
                        size = {"cols": item.cols, "rows": item.rows}
                        await self.send_json({"type": "resize", **size})
                    elif isinstance(item, TerminalExit):
                        await self.send_json(
                            {
                                "type": "exit",
                                "code": item.code,
                                "signal": item.signal,
                                "signal_name": item.signal_name,
                                "reason": item.reason,
                            }
                        )
        except ViewerDroppedError as exc:
            await self.send_json({"type": "error", "code": "lagging", "message": str(exc)})
            await self.websocket.close(CLOSE_LAGGING, "viewer fell behind")
        except TerminalFailedError as exc:
            await self.send_json({"type": "error", "code": "failed", "message": str(exc)})
            await self.websocket.close(CLOSE_FAILED, "terminal failed")
        else:
            await self.websocket.close(1000, "terminal ended")
        scope.cancel()

    async def _pump_in(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("bytes")
            if data is not None:
                await self._input(data)
                continue
            text = message.get("text")
            if text is not None:
                await self._control(text)

    async def _refuse(self, code: str, message: str) -> None:
        await self.send_json({"type": "error", "code": code, "message": message})

    async def _input(self, data: bytes) -> None:
        if len(data) > MAX_INPUT_FRAME:
            await self._refuse("too_large", f"input frames are limited to {MAX_INPUT_FRAME} bytes")
            return
        if not self.can_type:
            await self._refuse("read_only", "another viewer has the keyboard")
            return
        try:
            await self.terminals.send_input(self.session_id, data)
        except TerminalError as exc:
            await self._refuse("closed", str(exc))

    async def _control(self, text: str) -> None:
        if len(text) > MAX_INPUT_FRAME:
            limit = f"control frames are limited to {MAX_INPUT_FRAME} bytes"
            await self._refuse("too_large", limit)
            return
        try:
            frame = _control_decoder.decode(text)
        except RecursionError:
            await self._refuse("bad_frame", "control frames are flat JSON objects")
            return
        except msgspec.ValidationError as exc:
            await self._refuse("bad_frame", f"invalid control frame: {exc}")
            return
        except msgspec.DecodeError:
            await self._refuse("bad_frame", "control frames are JSON objects")
            return
        if isinstance(frame, _Status):
            state = _current_state(self.terminals, self.session_id) or "closed"
            await self.send_json(self.status_frame(state))
            return
        if isinstance(frame, _Input):
            await self._input(frame.data.encode("utf-8", "surrogatepass"))
            return
        if not self.can_type:
            await self._refuse("read_only", "another viewer has the keyboard")
            return
        if isinstance(frame, _Resize):
            try:
                await self.terminals.resize(self.session_id, frame.cols, frame.rows)
            except TerminalError as exc:
                await self._refuse("bad_frame", str(exc))
            return
        if frame.signal not in ALLOWED_SIGNALS:
            await self._refuse("bad_frame", f"signal must be one of {sorted(ALLOWED_SIGNALS)}")
            return
        sent = await self.terminals.signal(self.session_id, signal.Signals[frame.signal])
        if not sent:
            await self._refuse("closed", "no process received the signal")
