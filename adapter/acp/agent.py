"""The ACP agent: JSON-RPC requests from an editor served through a :class:`SessionBackend`.

:class:`AcpAgent` is transport-agnostic: :meth:`AcpAgent.serve` reads byte chunks from any
async iterator and writes whole lines through an async ``send`` callable (the stdio wiring is
in :mod:`adapter.acp.command`). Each request runs in its own task, so a long
``session/prompt`` never blocks a ``session/cancel`` or a permission answer; every request
gets a result or an error (see :mod:`adapter.acp.jsonrpc` for the codes) and a bad frame
never stops the agent. When the input ends, every session is closed (its CLI reaped).

Per session, one task follows the backend's event stream from ``seq`` 1 and turns events
into ``session/update`` notifications (:mod:`adapter.acp.translate`); permission requests
become ``session/request_permission`` calls to the editor; a ``complete`` event ends the
running ``session/prompt`` with its stop reason.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc

from claudecode import ClaudeCodeError, UsageError
from claudecode._log import get_logger
from claudecode._version import __version__

from ..backend import SessionBackend, SessionSpec
from ..chat.history import (
    HistoryIndex,
    HistoryNotFoundError,
    config_dir,
    find_session_file,
    load_events,
)
from ..events import (
    Complete,
    ErrorEvent,
    Event,
    ModeChanged,
    PermissionCancelled,
    PermissionRequest,
    SessionStatus,
)
from ..fanout import SubscriberDropped
from ..manager import UnknownSessionError
from ..policies import PermissionDecision
from ..session import UnknownPermissionError
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    Invalid,
    JsonRpcError,
    LineSplitter,
    Notification,
    Request,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    parse_frame,
)
from .params import (
    CancelParams,
    CloseParams,
    InitializeParams,
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    PromptParams,
    SetConfigOptionParams,
    SetModeParams,
    cli_mcp_servers,
    decode_params,
    prompt_input,
)
from .translate import (
    SESSION_MODES,
    UpdateTranslator,
    decision_for_option,
    mode_state,
    permission_request_params,
    stop_reason,
)

__all__ = ("AcpAgent", "AgentOptions", "PROTOCOL_VERSION")

_log = get_logger("claudecode.adapter.acp")

#: The ACP protocol version this agent speaks.
PROTOCOL_VERSION = 1

#: Model choices offered besides the configured one: the CLI's own aliases.
_MODEL_ALIASES = (
    ("default", "Default"),
    ("sonnet", "Sonnet"),
    ("opus", "Opus"),
    ("haiku", "Haiku"),
)

#: Requests served at once (each session runs at most one prompt; the rest are short).
_MAX_REQUESTS = 256

#: Stored sessions per session/list page.
_PAGE = 100

Send = Callable[[bytes], Awaitable[None]]


@dataclass(frozen=True)
class AgentOptions:
    """What every session of this agent starts with.

    ``model``: the CLI model (``None``: the CLI's default). ``policy``: a built-in policy name
    (``supervised``, ``autonomous``, ``plan``; ``None``: the backend's default).
    ``permission_mode``: the CLI's starting mode. ``cwd``: run every session there instead of
    the directory the editor sends. ``cancel_grace``: seconds a cancelled
    turn may take to end before the prompt answers ``cancelled`` anyway. ``env``: where to
    look for the CLI's history files (``HOME``, ``CLAUDE_CONFIG_DIR``; default: ours).
    """

    model: str | None = None
    policy: str | None = None
    permission_mode: str | None = None
    cwd: str | None = None
    cancel_grace: float = 10.0
    env: dict[str, str] | None = None


@dataclass
class _Turn:
    done: anyio.Event = field(default_factory=anyio.Event)
    cancelled: bool = False
    result: Complete | None = None
    error: str | None = None


@dataclass
class _Session:
    id: str
    cwd: str
    mode: str
    model: str | None
    translator: UpdateTranslator
    turn: _Turn | None = None
    #: pending_id -> our request id to the editor
    asking: dict[str, int] = field(default_factory=dict)
    rejected_tools: set[str] = field(default_factory=set)
    scope: anyio.CancelScope | None = None
    last_error: str | None = None


@dataclass
class _Then:
    """A result, and what to do once it was sent (start following a new session)."""

    result: Any
    after: Callable[[], None]


@dataclass
class _Outgoing:
    done: anyio.Event = field(default_factory=anyio.Event)
    response: Response | None = None


class AcpAgent:
    """Serves ACP (protocol version 1) for the sessions of ``backend``."""

    def __init__(
        self, backend: SessionBackend, send: Send, options: AgentOptions | None = None
    ) -> None:
        self.backend = backend
        self.options = options or AgentOptions()
        self._send = send
        self._sessions: dict[str, _Session] = {}
        self._outgoing: dict[int, _Outgoing] = {}
        self._next_id = 0
        self._client_capabilities: dict[str, Any] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._history: HistoryIndex | None = None
        self._limiter = anyio.Semaphore(_MAX_REQUESTS)
        self._prompts: dict[str | int, str] = {}  # request id of a running prompt -> session
        self._methods: dict[str, Callable[[Any], Awaitable[Any]]] = {  # method -> handler
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "session/new": self._new_session,
            "session/load": self._load_session,
            "session/list": self._list_sessions,
            "session/prompt": self._prompt,
            "session/set_mode": self._set_mode,
            "session/set_config_option": self._set_config_option,
            "session/close": self._close_session,
        }

    # -- the loop ------------------------------------------------------------------------

    async def serve(self, chunks: AsyncIterator[bytes]) -> None:
        """Serve until ``chunks`` ends, then close every session."""
        splitter = LineSplitter()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                async for chunk in chunks:
                    for line in splitter.feed(chunk):
                        if line is None:
                            await self._send(
                                encode_error(None, INVALID_REQUEST, "Invalid request: too long")
                            )
                        else:
                            await self.handle_line(line)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shutdown()
                tg.cancel_scope.cancel()

    async def handle_line(self, line: bytes) -> None:
        """Act on one incoming line (requests run in their own task)."""
        frame = parse_frame(line)
        if isinstance(frame, Invalid):
            if frame.reply is not None:
                await self._send(frame.reply)
            else:
                _log.info("acp.frame_ignored", reason=frame.reason)
        elif isinstance(frame, Request):
            assert self._tg is not None
            # Bounded: past the limit the reader waits, and the pipe pushes back on the editor.
            await self._limiter.acquire()
            self._tg.start_soon(self._serve_request, frame)
        elif isinstance(frame, Notification):
            await self._notification(frame)
        elif isinstance(frame, Response):
            out = self._outgoing.pop(frame.id, None) if isinstance(frame.id, int) else None
            if out is not None:
                out.response = frame
                out.done.set()

    async def _serve_request(self, req: Request) -> None:
        # A prompt can be cancelled by its request id too ($/cancel_request).
        prompt_of = req.params.get("sessionId") if req.method == "session/prompt" else None
        if isinstance(prompt_of, str):
            self._prompts[req.id] = prompt_of
        try:
            await self._answer_request(req)
        finally:
            if isinstance(prompt_of, str):
                self._prompts.pop(req.id, None)
            self._limiter.release()

    async def _answer_request(self, req: Request) -> None:
        handler = self._methods.get(req.method)
        try:
            if handler is None:
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {req.method}")
            result = await handler(req.params)
        except JsonRpcError as exc:
            await self._send(encode_error(req.id, exc.code, exc.message, exc.data))
        except UnknownSessionError as exc:
            await self._send(encode_error(req.id, RESOURCE_NOT_FOUND, str(exc)))
        except (UsageError, ClaudeCodeError) as exc:
            await self._send(encode_error(req.id, INTERNAL_ERROR, str(exc)))
        except Exception as exc:  # never a stack trace to the client; the log has it
            _log.exception("acp.request_failed", method=req.method)
            await self._send(encode_error(req.id, INTERNAL_ERROR, f"Internal error: {exc}"))
        else:
            after = None
            if isinstance(result, _Then):
                result, after = result.result, result.after
            await self._send(encode_result(req.id, result))
            if after is not None:
                after()

    async def _notification(self, note: Notification) -> None:
        if note.method == "session/cancel":
            try:
                params = decode_params(note.params, CancelParams)
            except JsonRpcError:
                return
            session = self._sessions.get(params.session_id)
            if session is not None:
                await self._cancel(session)
        elif note.method == "$/cancel_request" and isinstance(note.params, dict):
            # Only a prompt is worth cancelling (it answers `cancelled`); other requests are
            # short and simply finish.
            rid = note.params.get("requestId")
            target = self._prompts.get(rid) if isinstance(rid, str | int) else None
            session = self._sessions.get(target) if target is not None else None
            if session is not None:
                await self._cancel(session)

    async def _shutdown(self) -> None:
        for out in self._outgoing.values():
            out.done.set()
        self._outgoing.clear()
        for session in list(self._sessions.values()):
            await self._end_session(session)

    async def _call(self, method: str, params: Any) -> tuple[int, _Outgoing]:
        self._next_id += 1
        request_id = self._next_id
        out = _Outgoing()
        self._outgoing[request_id] = out
        await self._send(encode_request(request_id, method, params))
        return request_id, out

    async def _notify_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        if updates:
            await self._send(
                b"".join(
                    encode_notification("session/update", {"sessionId": session_id, "update": u})
                    for u in updates
                )
            )

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: session {session_id}")
        return session

    # -- methods -------------------------------------------------------------------------

    async def _initialize(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, InitializeParams)
        self._client_capabilities = p.client_capabilities
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": True},
                "sessionCapabilities": {"close": {}, "list": {}},
            },
            "agentInfo": {
                "name": "claudecode-bridge",
                "title": "Claude Code (claudecode-bridge)",
                "version": __version__,
            },
            "authMethods": [],
        }

    async def _authenticate(self, params: Any) -> dict[str, Any]:
        # The CLI authenticates itself (its login or ANTHROPIC_API_KEY); nothing to do here.
        return {}

    def _spec(self, cwd: str, mcp: list[dict[str, Any]], **changes: Any) -> SessionSpec:
        return SessionSpec(
            cwd=cwd,
            model=self.options.model,
            policy=self.options.policy,
            permission_mode=self.options.permission_mode,
            mcp_servers=cli_mcp_servers(mcp),
            **changes,
        )

    def _config_options(self, session: _Session) -> list[dict[str, Any]]:
        choices = list(_MODEL_ALIASES)
        if self.options.model and all(v != self.options.model for v, _ in choices):
            choices.insert(1, (self.options.model, self.options.model))
        current = session.model or "default"
        if all(v != current for v, _ in choices):
            choices.append((current, current))
        return [
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": current,
                "options": [{"value": v, "name": n} for v, n in choices],
            }
        ]

    def _opened(self, session: _Session) -> dict[str, Any]:
        return {
            "modes": mode_state(session.mode),
            "configOptions": self._config_options(session),
        }

    async def _start(self, spec: SessionSpec, session_id: str) -> _Session:
        info = await self.backend.create(spec, session_id=session_id)
        session = _Session(
            id=session_id,
            cwd=spec.cwd or "",
            mode=info.permission_mode or "default",
            model=info.model,
            translator=UpdateTranslator(cwd=spec.cwd),
        )
        self._sessions[session_id] = session
        return session

    def _follow(self, session: _Session) -> None:
        assert self._tg is not None
        self._tg.start_soon(self._pump, session, name=f"acp session {session.id}")

    async def _new_session(self, params: Any) -> _Then:
        p = decode_params(params, NewSessionParams)
        session_id = str(uuid.uuid4())
        cwd = self.options.cwd or p.cwd
        session = await self._start(
            self._spec(cwd, p.mcp_servers, cli_session_id=session_id), session_id
        )
        # Updates (the slash commands first) only after the editor knows the session id.
        return _Then(
            {"sessionId": session_id, **self._opened(session)}, lambda: self._follow(session)
        )

    async def _load_session(self, params: Any) -> _Then:
        p = decode_params(params, LoadSessionParams)
        if p.session_id in self._sessions:
            raise JsonRpcError(INVALID_REQUEST, f"session {p.session_id} is open already")
        config = config_dir(self.options.env)
        cwd = self.options.cwd or p.cwd
        elsewhere = False
        try:
            try:
                path = find_session_file(p.session_id, cwd, config=config)
            except HistoryNotFoundError:
                path = find_session_file(p.session_id, None, config=config)
                elsewhere = True
        except HistoryNotFoundError:
            raise JsonRpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: session {p.session_id}"
            ) from None
        # The whole conversation goes to the editor before the answer, as ACP asks.
        replay = await anyio.to_thread.run_sync(load_events, path)
        if elsewhere:
            # The CLI resumes a session only from its own project directory: run it where the
            # transcript says it ran.
            recorded = next((e.cwd for e in replay if isinstance(e, SessionStatus)), None)
            cwd = recorded or cwd
        spec = self._spec(cwd, p.mcp_servers, resume=p.session_id)
        translator = UpdateTranslator(cwd=spec.cwd, replay=True)
        updates = [u for event in replay for u in translator.updates(event)]
        await self._notify_updates(p.session_id, updates)
        session = await self._start(spec, p.session_id)
        return _Then(self._opened(session), lambda: self._follow(session))

    async def _list_sessions(self, params: Any) -> dict[str, Any]:
        p = decode_params(params if params is not None else {}, ListSessionsParams)
        try:
            offset = int(p.cursor) if p.cursor else 0
        except ValueError:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: unknown cursor") from None
        if self._history is None:
            self._history = HistoryIndex(config_dir(self.options.env))
        index = self._history
        cwd = self.options.cwd or p.cwd
        stored = await anyio.to_thread.run_sync(lambda: index.list(cwd))
        listed = []
        for s in stored:
            where = s.cwd or cwd
            if not where:
                continue  # ACP needs a cwd to load it in
            info: dict[str, Any] = {"sessionId": s.session_id, "cwd": where}
            if s.title:
                info["title"] = s.title
            if s.last_activity:
                stamp = datetime.fromtimestamp(s.last_activity, UTC)
                info["updatedAt"] = stamp.isoformat().replace("+00:00", "Z")
            listed.append(info)
        page = listed[offset : offset + _PAGE]
        result: dict[str, Any] = {"sessions": page}
        if offset + _PAGE < len(listed):
            result["nextCursor"] = str(offset + _PAGE)
        return result

    async def _prompt(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, PromptParams)
        session = self._session(p.session_id)
        text, images = prompt_input(p.prompt)
        if session.turn is not None:
            raise JsonRpcError(INVALID_REQUEST, "a prompt is already running in this session")
        turn = session.turn = _Turn()
        try:
            await self.backend.prompt(session.id, text, images=images)
            await turn.done.wait()
        finally:
            session.turn = None
        if turn.cancelled:
            return {"stopReason": "cancelled"}
        if turn.result is None:
            raise JsonRpcError(INTERNAL_ERROR, turn.error or "the session ended during the turn")
        complete = turn.result
        reason = stop_reason(complete, cancelled=False)
        if complete.is_error and reason == "end_turn":
            failure = complete.error.message if complete.error is not None else None
            detail = failure or turn.error or complete.result
            raise JsonRpcError(INTERNAL_ERROR, detail or f"the turn failed: {complete.subtype}")
        return {"stopReason": reason}

    async def _set_mode(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, SetModeParams)
        session = self._session(p.session_id)
        if all(m["id"] != p.mode_id for m in SESSION_MODES):
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: unknown mode {p.mode_id!r}")
        await self.backend.set_permission_mode(session.id, p.mode_id)
        session.mode = p.mode_id
        return {}

    async def _set_config_option(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, SetConfigOptionParams)
        session = self._session(p.session_id)
        if p.config_id != "model" or not isinstance(p.value, str) or not p.value:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: no option {p.config_id!r}")
        await self.backend.set_model(session.id, None if p.value == "default" else p.value)
        session.model = None if p.value == "default" else p.value
        return {"configOptions": self._config_options(session)}

    async def _close_session(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, CloseParams)
        await self._end_session(self._session(p.session_id))
        return {}

    # -- sessions ------------------------------------------------------------------------

    async def _end_session(self, session: _Session) -> None:
        self._sessions.pop(session.id, None)
        if session.turn is not None:
            session.turn.error = "the session was closed"
            session.turn.done.set()
        with contextlib.suppress(UsageError, ClaudeCodeError):
            await self.backend.close(session.id)
        if session.scope is not None:
            session.scope.cancel()

    async def _cancel(self, session: _Session) -> None:
        turn = session.turn
        if turn is None or turn.cancelled:
            return
        turn.cancelled = True
        # The editor answers its open permission requests `cancelled` itself; the CLI must
        # not wait for those answers.
        for pending_id, request_id in list(session.asking.items()):
            session.asking.pop(pending_id, None)
            self._withdraw(request_id)
            await self._send(encode_notification("$/cancel_request", {"requestId": request_id}))
            with contextlib.suppress(UsageError, ClaudeCodeError):
                await self.backend.answer_permission(
                    session.id, pending_id, decision_for_option(None)
                )
        with contextlib.suppress(UsageError, ClaudeCodeError):
            await self.backend.interrupt(session.id)
        assert self._tg is not None
        self._tg.start_soon(self._cancel_guard, turn)

    async def _cancel_guard(self, turn: _Turn) -> None:
        # If the CLI never ends the interrupted turn, the prompt still answers `cancelled`.
        await anyio.sleep(self.options.cancel_grace)
        turn.done.set()

    def _withdraw(self, request_id: int) -> None:
        out = self._outgoing.pop(request_id, None)
        if out is not None:
            out.done.set()

    async def _pump(self, session: _Session) -> None:
        with anyio.CancelScope() as scope:
            session.scope = scope
            after = 0
            while True:
                try:
                    async with self.backend.subscribe(session.id, after_seq=after) as events:
                        while True:
                            batch = await events.receive_batch()
                            after = batch[-1].seq
                            await self._on_events(session, batch)
                except SubscriberDropped as exc:
                    after = exc.last_seq
                    continue
                except (anyio.EndOfStream, UnknownSessionError):
                    pass
                break
        if session.turn is not None:
            session.turn.error = session.last_error or "the session ended"
            session.turn.done.set()
        if self._sessions.get(session.id) is session:  # not a later session of the same id
            del self._sessions[session.id]

    async def _on_events(self, session: _Session, batch: list[Event]) -> None:
        updates: list[dict[str, Any]] = []
        ended: Complete | None = None
        for event in batch:
            updates += session.translator.updates(event)
            if isinstance(event, PermissionRequest):
                await self._notify_updates(session.id, updates)
                updates = []
                await self._ask(session, event)
            elif isinstance(event, PermissionCancelled):
                request_id = session.asking.pop(event.pending_id, None)
                if request_id is not None:
                    self._withdraw(request_id)
                    await self._send(
                        encode_notification("$/cancel_request", {"requestId": request_id})
                    )
            elif isinstance(event, ModeChanged):
                session.mode = event.mode
            elif isinstance(event, ErrorEvent):
                session.last_error = event.message
            elif isinstance(event, Complete):
                ended = event
        await self._notify_updates(session.id, updates)
        turn = session.turn
        if ended is not None and turn is not None:
            turn.result = ended
            turn.error = session.last_error if ended.is_error else None
            session.last_error = None
            turn.done.set()

    async def _ask(self, session: _Session, event: PermissionRequest) -> None:
        if event.tool_name in session.rejected_tools:
            await self._answer(
                session, event, PermissionDecision("deny", "The user always rejects this tool.")
            )
            return
        params = permission_request_params(session.id, event, session.cwd or None)
        request_id, out = await self._call("session/request_permission", params)
        session.asking[event.pending_id] = request_id
        assert self._tg is not None
        self._tg.start_soon(self._await_answer, session, event, request_id, out)

    async def _await_answer(
        self, session: _Session, event: PermissionRequest, request_id: int, out: _Outgoing
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
            await self._cancel(session)
            return
        if option_id == "reject_always":
            session.rejected_tools.add(event.tool_name)
        await self._answer(session, event, decision)

    async def _answer(
        self, session: _Session, event: PermissionRequest, decision: PermissionDecision
    ) -> None:
        with contextlib.suppress(UnknownPermissionError, UsageError, ClaudeCodeError):
            await self.backend.answer_permission(session.id, event.pending_id, decision)
            if decision.behavior != "deny" and event.tool_call_id:
                await self._notify_updates(
                    session.id, session.translator.running(event.tool_call_id)
                )
